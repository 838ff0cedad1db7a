#!/usr/bin/env bash
# The crate boundaries are the architecture: renderers and the result model
# must build without any engine (no hyper, rustls, libloading, io-uring, and
# none of storbench's engine or runner crates), so a report can be rendered
# anywhere from a results directory. Fails naming what leaked in.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for crate in storbench-report storbench-model storbench-html; do
  tree=$(cargo tree -q -p "$crate" -e normal --prefix none)
  for banned in storbench-engine storbench-runner hyper rustls libloading io-uring tokio; do
    if grep -qE "^$banned v" <<<"$tree"; then
      echo "check-layers: $crate depends on $banned" >&2
      status=1
    fi
  done
done
# The binary writes through out!/say! (crates/cli/src/main.rs): println! and
# eprintln! panic when the reader has gone (`storbench rados bench | head`),
# which ended a measuring run without its results.
if leaks=$(grep -rnP '(?<![\w])e?print(ln)?!\(' crates/cli/src crates/runner/src crates/fleet/src); then
  echo "check-layers: println!/eprintln! in the binary's code (use out!/say!, or write and ignore the error):" >&2
  echo "$leaks" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "check-layers: report, html and model build without engines; no panicking prints"
exit "$status"
