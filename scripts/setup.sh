#!/usr/bin/env bash
# Install everything ctos needs on Debian 12 (bookworm) and build the release binaries.
# Idempotent: packages already present are not fetched again, builds are incremental.
#
#   scripts/setup.sh            # packages + both builds (LLVM 22 default, LLVM 19)
#   SKIP_BUILD=1 scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# LLVM 22 comes from bookworm-security, LLVM 19 from bookworm. Polly and zstd are needed
# to link LLVM statically, libstdc++-12-dev to link its C++ runtime statically too;
# libcsmith-dev holds csmith.h; cvise reduces C programs; libclang-rt holds the UBSan/ASan
# runtimes that screen programs for undefined behaviour.
PACKAGES=(
  llvm-22-dev clang-22 libclang-22-dev llvm-22-tools libpolly-22-dev libclang-rt-22-dev
  llvm-19-dev clang-19 libclang-19-dev llvm-19-tools libpolly-19-dev libclang-rt-19-dev
  libzstd-dev libstdc++-12-dev csmith libcsmith-dev cvise python3 python3-pip
  # Headless browser: the tests load the HTML reports in it and read its console.
  chromium
  # For agents (`--opt`) built against LLVMs that use libc++, like the LLVM 23 below.
  libc++-22-dev libc++abi-22-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi

for v in 22 19; do
  [ -x "/usr/lib/llvm-$v/bin/llvm-config" ] || { echo "setup: LLVM $v did not install" >&2; exit 1; }
done

if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install Rust (https://rustup.rs) and run this again" >&2
  exit 1
fi

# A newer LLVM than the one linked, to test `--opt` with (tests/agent.rs).
# Its own line: a failure inside `echo "$(…)"` would not stop this script.
llvm23=$(bash scripts/install-llvm23.sh)
echo "setup: LLVM 23 at $llvm23"

if [ -z "${SKIP_BUILD:-}" ]; then
  # .cargo/config.toml points llvm-sys at /usr/lib/llvm-22 and /usr/lib/llvm-19.
  cargo build --release --locked
  cargo build --release --locked --no-default-features --features llvm19 --target-dir target/llvm19
  echo "setup: built target/release/ctos (LLVM 22) and target/llvm19/release/ctos (LLVM 19)"
fi
