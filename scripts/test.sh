#!/usr/bin/env bash
# The test suite, against the real LLVM 22 (default build) and LLVM 19 (feature llvm19).
# Needs ../shared beside the checkout (the development bugs) and scripts/setup.sh done.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --locked
cargo test --release --locked --no-default-features --features llvm19 --target-dir target/llvm19
