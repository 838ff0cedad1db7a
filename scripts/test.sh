#!/usr/bin/env bash
# Runs every test, installing what they need first. Tests that need root (loop
# devices) run when this is run as root, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --release --workspace
cargo test --workspace --release -- --test-threads=2
