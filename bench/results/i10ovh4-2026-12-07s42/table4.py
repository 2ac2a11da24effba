"""table4.py DIR: the ABBA bench (full-base1, full-branch1, full-branch2, full-base2 .json in DIR) as one markdown
table: per kernel and side the least plain and the least check CPU s over its two runs (as the bench keeps the
least of its repeats), their ratio, and branch/base of check CPU; then each run's summary line."""
import json, math, sys
from pathlib import Path
d = Path(sys.argv[1])
runs = {n: {r["kernel"]: r for r in json.load(open(d / f"full-{n}.json"))} for n in ("base1", "branch1", "branch2", "base2")}
def side(a, b):
    return {k: {"plain_s": min(a[k]["plain_s"], b[k]["plain_s"]), "check_s": min(a[k]["check_s"], b[k]["check_s"]),
                "verdicts": {a[k]["verdict"], b[k]["verdict"]}} for k in a}
base, br = side(runs["base1"], runs["base2"]), side(runs["branch1"], runs["branch2"])
mark = lambda r: f"**{r:.2f}x**" if r > 3 else f"{r:.2f}x"
print("| kernel | base plain s | base check s | base ratio | branch plain s | branch check s | branch ratio | branch/base check | verdict (all 4 runs) |")
print("|---|---|---|---|---|---|---|---|---|")
rel, rb, rr = [], [], []
for k in sorted(base):
    x, y = base[k], br[k]
    v = x["verdicts"] | y["verdicts"]
    assert len(v) == 1, (k, v)
    a, b = x["check_s"] / x["plain_s"], y["check_s"] / y["plain_s"]
    rb.append(a); rr.append(b); rel.append(y["check_s"] / x["check_s"])
    print(f"| {k} | {x['plain_s']:.3f} | {x['check_s']:.3f} | {mark(a)} | {y['plain_s']:.3f} | {y['check_s']:.3f} | {mark(b)} | "
          f"{rel[-1]:.3f} | {v.pop()} |")
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
ks = sorted(base)
for name, rs in (("base", rb), ("branch", rr)):
    over = [f"{k} {r:.2f}" for k, r in zip(ks, rs) if r > 3]
    print(f"\n- {name} (least of both runs): geometric mean {gm(rs):.2f}x, worst {max(rs):.2f}x, {sum(r <= 3 for r in rs)}/{len(rs)} "
          f"within 3x; over: {', '.join(over)}")
print(f"- branch/base check CPU s: geometric mean {gm(rel):.3f}, range {min(rel):.3f}-{max(rel):.3f}")
print(f"- branch/base plain CPU s: geometric mean {gm([br[k]['plain_s'] / base[k]['plain_s'] for k in ks]):.3f}")
for n, r in runs.items():
    rs = [x["ratio"] for x in r.values()]
    over = [f"{k} {x['ratio']:.2f}" for k, x in sorted(r.items()) if x["ratio"] > 3]
    print(f"- run {n}: geometric mean {gm(rs):.2f}x, worst {max(rs):.2f}x, {sum(x <= 3 for x in rs)}/{len(rs)} within 3x; over: {', '.join(over)}")
