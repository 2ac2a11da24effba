"""Base and branch proofs (pairs.py's JSON lines, argv[1] and argv[2]) agree pair by pair: outcome, reason, suspect
count, suspects, proved element counts per buffer and method, safety verdicts, replicated-store flags."""
import json, sys

KEYS = ["outcome", "reason", "suspect_count", "suspects", "proofs", "checks", "replicated"]


def rows(path):
    return {(r["contract"], tuple(r["pair"])): r for r in map(json.loads, open(path))}


base, branch = rows(sys.argv[1]), rows(sys.argv[2])
bad = 0
for k in sorted(base):
    b, r = base[k], branch.get(k)
    diff = ["missing"] if r is None else [f for f in KEYS if b[f] != r[f]]
    bad += bool(diff)
    print(*k, "same" if not diff else f"DIFFERENT {diff}", b["outcome"],
          sum(p[1] for p in b["proofs"]), {m: n for p in b["proofs"] for m, n in p[2].items()})
print(f"{len(base)} pairs, {bad} different, {len(set(branch) - set(base))} only on the branch")
sys.exit(1 if bad else 0)
