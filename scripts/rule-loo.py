#!/usr/bin/env python3
"""Leave-one-out over the file ranking's stands-out rule, on kept rankings.

    locseq eval ../shared/bench --time 60 --rankings DIR      # once per LLVM build
    python3 scripts/rule-loo.py DIR [DIR...]

When the culprit's files hold no failure-specific code and no stack names another file,
src/localize/rank.rs lets another file rank first if its spectrum score is STANDS_OUT
times the next one's (and, since issue 65, only when the failure is wrong output). This
re-ranks each kept isolation under every variant of that rule from the evidence the
ranking kept, chooses the variant that does best on all bugs but one, and judges it on
the one left out. Variants are ordered narrowest first (the rule firing least); among
equals the narrowest is chosen. A bug kept from several builds is left out as one.
"""
import glob
import json
import math
import sys

VARIANTS = [(math.inf, True)] + [(t, w) for t in (10, 5, 3, 2) for w in (True, False)]


def name(v):
    t, wrong_only = v
    if t == math.inf:
        return "never"
    return f"{t}x, {'wrong output only' if wrong_only else 'any failure'}"


def is_core(path):
    return path.startswith(("llvm/lib/IR/", "llvm/lib/Support/"))


def fix_rank(record, variant):
    """The best fix file's place when the stands-out rule is `variant`."""
    ranking, fix = record["ranking"], set(record["fix_files"])
    culprit = [f for f in ranking if f["evidence"]["culprit"]]
    specific = max((f["evidence"]["failure_specific"] for f in culprit), default=None)
    stacked = any(f["evidence"]["placed"] == "stack" for f in ranking)
    by_spectrum = sorted(ranking, key=lambda f: (is_core(f["path"]) and not f["evidence"]["culprit"], f["evidence"]["spectrum_rank"]))
    if specific != 0 or stacked:
        order = ranking
    else:
        limit, wrong_only = variant
        applies = record["failure"]["kind"] == "wrong-code" or not wrong_only
        others = sorted((f for f in ranking if not f["evidence"]["culprit"] and not is_core(f["path"])), key=lambda f: -f["score"])
        leads = applies and (len(others) == 1 or (len(others) > 1 and others[0]["score"] >= limit * others[1]["score"]))
        order = by_spectrum if leads else sorted(by_spectrum, key=lambda f: not f["evidence"]["culprit"])
    return min((i + 1 for i, f in enumerate(order) if f["path"] in fix), default=len(order) + 1)


def score(records, variant):
    ranks = [fix_rank(r, variant) for r in records]
    return (sum(r <= 1 for r in ranks), sum(r <= 3 for r in ranks), sum(r <= 5 for r in ranks), -sum(ranks))


def main(dirs):
    records = []
    for d in dirs:
        for path in sorted(glob.glob(f"{d}/*.json")):
            record = json.load(open(path))
            record["where"] = d
            records.append(record)
    if not records:
        sys.exit(f"no kept rankings in {' '.join(dirs)} (locseq eval --rankings DIR)")
    bugs = sorted({r["bug"] for r in records})
    print(f"{len(records)} isolations of {len(bugs)} bugs\n")
    print(f"{'variant':<28} top1 top3 top5  rank sum")
    for v in VARIANTS:
        t1, t3, t5, neg = score(records, v)
        print(f"{name(v):<28} {t1:>4} {t3:>4} {t5:>4} {-neg:>9}")
    print(f"\n{'left out':<10} {'chosen on the others':<28} ranks when left out")
    held = []
    for bug in bugs:
        others = [r for r in records if r["bug"] != bug]
        chosen = max(VARIANTS, key=lambda v: (score(others, v), -VARIANTS.index(v)))
        mine = [fix_rank(r, chosen) for r in records if r["bug"] == bug]
        held.extend(mine)
        print(f"{bug:<10} {name(chosen):<28} {' '.join(map(str, mine))}")
    top = lambda n: sum(r <= n for r in held)
    print(f"\nleft out: top1 {top(1)}, top3 {top(3)}, top5 {top(5)} of {len(held)} isolations")
    best = max(VARIANTS, key=lambda v: (score(records, v), -VARIANTS.index(v)))
    print(f"chosen on every bug: {name(best)}")


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
