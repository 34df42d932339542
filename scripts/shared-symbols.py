#!/usr/bin/env python3
"""Count the code symbols that several members of Debian's libLLVM*.a define, by kind.

Those are the ones coverage leaves out of file attribution (build.rs marks them shared):
weak/COMDAT copies of templates and inline header code, and same-named local functions.
Usage: scripts/shared-symbols.py 22|19
"""
import collections, glob, subprocess, sys

v = sys.argv[1]
where = collections.defaultdict(set)
kind = {}
members_by_name = collections.defaultdict(set)
for a in sorted(glob.glob(f"/usr/lib/llvm-{v}/lib/libLLVM*.a")):
    lib = a.rsplit("/", 1)[1]
    out = subprocess.run(["nm", "-A", "--defined-only", a], capture_output=True, text=True).stdout
    for line in out.splitlines():
        # archive:member:address type name
        path, sep, rest = line.partition(".a:")
        member, _, fields = rest.partition(":")
        parts = fields.split()
        if not sep or len(parts) < 3:
            continue
        t, sym = parts[1], parts[2]
        members_by_name[member].add(lib)
        if t in "tT" or t in "Ww":
            where[sym].add((lib, member))
            k = "weak" if t in "Ww" else ("local" if t == "t" else "global")
            kind[sym] = k if kind.get(sym, k) == k else "mixed"
multi = collections.Counter(kind[s] for s, m in where.items() if len(m) > 1)
print(f"LLVM {v}: {len(where)} code symbols; defined by several members: {dict(multi)}")
print(f"member names defining symbols in several libraries: {sum(1 for m in members_by_name.values() if len(m) > 1)}")
