#!/usr/bin/env bash
# Runs every test, installing and starting what they need first: Debian's fio
# and tools (scripts/install-deps.sh) and a one-node Ceph cluster
# (scripts/testenv/ceph), stopped again when the tests end. Tests that need
# root (loop devices, the cluster) run when this is run as root, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --release --workspace
env_file=$(scripts/testenv/ceph up)
trap 'scripts/testenv/ceph down' EXIT
# shellcheck disable=SC1090
source "$env_file"
cargo test --workspace --release -- --test-threads=2
