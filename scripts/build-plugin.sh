#!/usr/bin/env bash
# Build ctos's agent (llvm-plugin/agent.cpp) for an external LLVM, against that LLVM's own
# headers and C++ library, so that `--opt PATH` can load it into that LLVM's `opt`.
#
#   scripts/build-plugin.sh [LLVM_CONFIG]     # default: llvm-config-22
#
# Prints the path of the built ctos-agent.so, and builds ctos-heap.so beside it (the strict
# heap's allocator, src/sandbox/heap.c, which ctos preloads into that opt). ctos runs this
# same script (embedded in the binary) when `--opt` names an LLVM it has no agent for yet;
# it then sets
#   CTOS_AGENT_SRC  a folder holding llvm-plugin/agent.cpp, src/llvm/pipeline.h,
#                   src/llvm/poison_checks.cpp, src/llvm/ub_rules.h, src/coverage/traps.h
#                   and src/sandbox/heap.c
#   CTOS_AGENT_OUT  the folder to build into
set -euo pipefail

llvm_config=${1:-llvm-config-22}
command -v "$llvm_config" >/dev/null || [ -x "$llvm_config" ] || {
  echo "build-plugin: $llvm_config not found (give the llvm-config of the LLVM to build for)" >&2
  exit 2
}
root=$(cd "$(dirname "$0")/.." && pwd)
src=${CTOS_AGENT_SRC:-$root}
version=$("$llvm_config" --version)
bindir=$("$llvm_config" --bindir)
libdir=$("$llvm_config" --libdir)
includedir=$("$llvm_config" --includedir)

# A plugin must use the C++ library its LLVM was built with: libc++ builds (like the PyPI
# wheels) crash or fail to load a libstdc++ plugin. Their opt or libLLVM names libc++.so.
stdlib=libstdc++
for f in "$bindir/opt" "$libdir"/libLLVM*.so*; do
  if [ -f "$f" ] && grep -qa 'libc++\.so' "$f"; then
    stdlib=libc++
    break
  fi
done

out=${CTOS_AGENT_OUT:-$root/llvm-plugin/build/$version-$stdlib}
mkdir -p "$out"

# A clang++ that knows this LLVM's headers: its own, else Debian's newest.
cxx=""
for c in "$bindir/clang++" clang++-22 clang++-21 clang++-20 clang++-19 clang++; do
  if command -v "$c" >/dev/null 2>&1; then
    cxx=$c
    break
  fi
done
[ -n "$cxx" ] || { echo "build-plugin: no clang++ found (apt install clang-22)" >&2; exit 2; }

# -z now: the agent's calls into LLVM are bound once, in the fork server, not again in
# every child it forks (a lookup in libLLVM's symbol table per first call).
flags=(-shared -fPIC -O2 -std=c++17 -fno-rtti -fno-exceptions -w -Wl,-z,now
  -D__STDC_CONSTANT_MACROS -D__STDC_FORMAT_MACROS -D__STDC_LIMIT_MACROS -I"$includedir")
if [ "$stdlib" = libc++ ]; then
  flags+=(-stdlib=libc++)
fi
# Per process: two ctos processes may build the same agent at once.
"$cxx" -x c -shared -fPIC -O2 "$src/src/sandbox/heap.c" -o "$out/ctos-heap.so.tmp.$$"
mv "$out/ctos-heap.so.tmp.$$" "$out/ctos-heap.so"
# Poison tracking (src/llvm/poison_checks.cpp) instruments the optimized program in the
# agent's child before it runs, as the in-process engine does.
"$cxx" "${flags[@]}" "$src/llvm-plugin/agent.cpp" "$src/src/llvm/poison_checks.cpp" -o "$out/ctos-agent.so.tmp.$$"
mv "$out/ctos-agent.so.tmp.$$" "$out/ctos-agent.so"
echo "$out/ctos-agent.so"
