"""Compare reports.py's JSON lines of two trees: the same report (verdict, findings, notes, assumptions, grid method,
loops summarised) per (arch, contract, instance), or what differs; CPU of each side.
usage: python compare.py BASE.jsonl BRANCH.jsonl"""
import json
import sys


def load(path: str) -> dict:
    out = {}
    for line in open(path):
        r = json.loads(line)
        out[(r["arch"], r["contract"], r["instance"])] = r
    return out


a, b = load(sys.argv[1]), load(sys.argv[2])
for key in sorted(set(a) | set(b)):
    x, y = a.get(key), b.get(key)
    if x is None or y is None:
        print(key, "missing on one side")
        continue
    rx, ry = x["report"], y["report"]
    same = rx == ry
    print(*key, f"base {x['cpu']:.1f}s branch {y['cpu']:.1f}s", rx.get("verdict", rx.get("error"))[:40],
          "IDENTICAL" if same else "DIFFERS")
    if not same:
        for k in sorted(set(rx) | set(ry)):
            if rx.get(k) != ry.get(k):
                print("   ", k, "base:", str(rx.get(k))[:300])
                print("   ", k, "branch:", str(ry.get(k))[:300])
