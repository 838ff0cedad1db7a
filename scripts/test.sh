#!/usr/bin/env bash
# Runs every test, installing and starting what they need first: Debian's fio
# and tools (scripts/install-deps.sh), a one-node Ceph cluster with its RADOS
# Gateway (scripts/testenv/ceph) and a Swift all-in-one (scripts/testenv/swift),
# stopped again when the tests end. Tests that need root (loop devices, the
# cluster, the Swift disk image) run when this is run as root, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Style and layering first: they fail in seconds, before any server starts.
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
scripts/check-layers.sh
# The `ci` profile (Cargo.toml): release's optimisation without thin LTO,
# which linked each of ~55 test binaries across every crate (about half of
# the run). `cargo build --release` stays the users' build.
cargo build --profile ci --workspace
# Free space where the cluster's OSD files and the build live: a full disk
# otherwise shows only as some tool's exit status.
df -h . /tmp >&2
env_file=$(scripts/testenv/ceph up)
trap 'scripts/testenv/ceph down; scripts/testenv/swift down' EXIT
swift_env=$(scripts/testenv/swift up)
# shellcheck disable=SC1090
source "$env_file"
# shellcheck disable=SC1090
source "$swift_env"
cargo test --workspace --profile ci -- --test-threads=2
