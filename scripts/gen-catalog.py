#!/usr/bin/env python3
"""Regenerate the pass catalog of one LLVM version from its own `opt`.

    scripts/gen-catalog.py 22        # writes passes/llvm22.tsv and passes/o3.llvm22.txt
    scripts/gen-catalog.py 19 --check  # exit 1 if the committed files are stale

The catalog is data read by src/seq/catalog.rs. It lists every IR transform pass that
`opt-N -print-passes` prints (module, CGSCC, function, loop-nest and loop passes; not
analyses, not machine passes), each with every level it exists at and its parameter
syntax. Hand-written knowledge (sets, unsafe passes, legacy names) lives in other files
of passes/ so that regenerating never loses it.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Passes that need MemorySSA and so must sit in `loop-mssa(...)`: `print-passes` does not
# say which, LLVM aborts at run time ("LICM requires MemorySSA") when they do not.
# Every other loop pass belongs in plain `loop(...)`: inside `loop-mssa`, a pass that does
# not preserve MemorySSA makes LLVM abort (shared/notes/fuzzing-lessons.md).
NEEDS_MEMORYSSA = {"licm", "lnicm"}

CATEGORY_LEVEL = {
    "Module passes": "module",
    "Module passes with params": "module",
    "CGSCC passes": "cgscc",
    "CGSCC passes with params": "cgscc",
    "Function passes": "function",
    "Function passes with params": "function",
    "LoopNest passes": "loop",
    "Loop passes": "loop",
    "Loop passes with params": "loop",
}

# Analyses are listed too, so that `require<X>` and `invalidate<X>` take the level of X.
ANALYSIS_LEVEL = {
    "Module analyses": "module",
    "Module alias analyses": "module",
    "CGSCC analyses": "cgscc",
    "Function analyses": "function",
    "Function alias analyses": "function",
    "Loop analyses": "loop",
}


def split_params(entry: str):
    """`loop-unroll<O0;O1>` -> ("loop-unroll", "O0;O1"); `print<domtree>` stays whole.

    Only the last top-level `<...>` group is the parameter syntax, and only for the
    "with params" categories: `print<structural-hash><detailed>` is the pass
    `print<structural-hash>` with parameters `detailed`.
    """
    if not entry.endswith(">"):
        return entry, None
    depth = 0
    for i in range(len(entry) - 1, -1, -1):
        if entry[i] == ">":
            depth += 1
        elif entry[i] == "<":
            depth -= 1
            if depth == 0:
                return entry[:i], entry[i + 1 : -1]
    raise ValueError(f"unbalanced <> in {entry!r}")


def catalog(opt: str):
    text = subprocess.run([opt, "-print-passes"], check=True, capture_output=True, text=True).stdout
    passes = {}  # name -> {"kind": "pass"|"analysis", "levels": [...], "params": str|None}
    analyses = {}
    category = None
    for line in text.splitlines():
        if not line.startswith("  "):
            category = line.rstrip(":")
            continue
        entry = line.strip()
        if category in ANALYSIS_LEVEL:
            name, params = split_params(entry) if entry.endswith(">") and "<" in entry else (entry, None)
            info = analyses.setdefault(name, {"kind": "analysis", "levels": [], "params": params})
            if ANALYSIS_LEVEL[category] not in info["levels"]:
                info["levels"].append(ANALYSIS_LEVEL[category])
            continue
        level = CATEGORY_LEVEL.get(category)
        if level is None:
            continue
        name, params = split_params(entry) if category.endswith("with params") else (entry, None)
        if level == "loop" and name in NEEDS_MEMORYSSA:
            level = "loop-mssa"
        info = passes.setdefault(name, {"kind": "pass", "levels": [], "params": None})
        if level not in info["levels"]:
            info["levels"].append(level)
        if params is not None:
            info["params"] = params
    for name in BUILTIN_PIPELINES:
        passes.setdefault(name, {"kind": "pass", "levels": ["module"], "params": "O0;O1;O2;O3;Os;Oz"})
    return passes, analyses


# Whole pipelines that every PassBuilder parses as module passes, but that `-print-passes`
# lists only from LLVM 20 on.
BUILTIN_PIPELINES = ["default", "thinlto-pre-link", "thinlto", "lto-pre-link", "lto"]


def o3_transforms(opt: str, passes):
    """The transform passes of `default<O3>`, in first-use order, without parameters."""
    empty = "define void @f() {\n  ret void\n}\n"
    out = subprocess.run(
        [opt, "-passes=default<O3>", "-print-pipeline-passes", "-disable-output", "-"],
        input=empty, check=True, capture_output=True, text=True,
    ).stdout
    seen = []
    adaptors = {"module", "cgscc", "function", "loop", "loop-mssa", "devirt", "repeat"}
    for token in re.split(r"[,()]", out):
        token = token.strip()
        if not token:
            continue
        name = token if token in passes else split_params(token)[0]
        if name in adaptors or name.startswith(("require<", "invalidate<")) or name in ("require", "invalidate"):
            continue
        if name in passes and name not in seen:
            seen.append(name)
    return seen


def render(version: str):
    opt = f"/usr/lib/llvm-{version}/bin/opt"
    passes, analyses = catalog(opt)
    lines = [
        f"# Generated by scripts/gen-catalog.py from `opt-{version} -print-passes`. Do not edit.",
        "# name<TAB>pass|analysis<TAB>levels (outermost first)<TAB>parameter syntax or -",
    ]
    for table in (passes, analyses):
        for name in sorted(table):
            info = table[name]
            params = info["params"] if info["params"] is not None else "-"
            lines.append(f"{name}\t{info['kind']}\t{','.join(info['levels'])}\t{params}")
    o3 = [
        f"# Generated by scripts/gen-catalog.py: transform passes of `default<O3>` in LLVM {version},",
        "# first-use order, parameters dropped.",
    ] + o3_transforms(opt, passes)
    return "\n".join(lines) + "\n", "\n".join(o3) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    version = sys.argv[1]
    check = "--check" in sys.argv[2:]
    tsv, o3 = render(version)
    targets = {ROOT / "passes" / f"llvm{version}.tsv": tsv, ROOT / "passes" / f"o3.llvm{version}.txt": o3}
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text() != text]
    if check:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)} (run scripts/gen-catalog.py {version})")
        sys.exit(1 if stale else 0)
    for p, text in targets.items():
        p.parent.mkdir(exist_ok=True)
        p.write_text(text)
        print(f"wrote {p.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
