#!/usr/bin/env bash
# The test suite, against the real LLVM 22 (default build) and LLVM 19 (feature llvm19).
# Needs ../shared beside the checkout (the development bugs) and scripts/setup.sh done.
# Every test binary of both builds runs even when one fails, so one run shows all that broke.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
cargo test --release --locked --no-fail-fast || status=1
# The LLVM 19 build leaves out the tests of C-source mutation (Hermes, DiWi's C rules and
# their ingredients): they mutate with libclang 22 in both builds (LIBCLANG_PATH in
# .cargo/config.toml) and differ only in the clang that compiles the mutants; about half
# of its unit tests' time went to running them again.
c_mutation=(--skip mutate::hermes:: --skip mutate::witness::rules:: --skip mutate::witness::ingredients::)
cargo test --release --locked --no-fail-fast --no-default-features --features llvm19 --target-dir target/llvm19 \
  -- "${c_mutation[@]}" || status=1
# The benches are not run here (they time things), but they must still compile.
cargo bench --locked --no-run || status=1
exit $status
