"""table.py BASE.json BRANCH.json: the per-kernel markdown table (check s, ratio) of two bench runs."""
import json, math, sys
a = {r["kernel"]: r for r in json.load(open(sys.argv[1]))}
b = {r["kernel"]: r for r in json.load(open(sys.argv[2]))}
print("| kernel | base plain s | base check s | base ratio | branch plain s | branch check s | branch ratio | branch/base check | verdict (both) |")
print("|---|---|---|---|---|---|---|---|---|")
rel = []
for k in sorted(a):
    x, y = a[k], b[k]
    rel.append(y["check_s"] / x["check_s"])
    assert x["verdict"] == y["verdict"]
    mark = lambda r: f"**{r:.2f}x**" if r > 3 else f"{r:.2f}x"
    print(f"| {k} | {x['plain_s']:.3f} | {x['check_s']:.3f} | {mark(x['ratio'])} | {y['plain_s']:.3f} | {y['check_s']:.3f} | "
          f"{mark(y['ratio'])} | {rel[-1]:.3f} | {x['verdict']} |")
for name, d in (("base", a), ("branch", b)):
    rs = [r["ratio"] for r in d.values()]
    over = [f"{k} {r['ratio']:.2f}" for k, r in sorted(d.items()) if r["ratio"] > 3]
    print(f"\n- {name}: geometric mean {math.exp(sum(map(math.log, rs)) / len(rs)):.2f}x, worst {max(rs):.2f}x, "
          f"{sum(r <= 3 for r in rs)}/{len(rs)} within 3x; over: {', '.join(over)}")
print(f"- branch/base check CPU s: geometric mean {math.exp(sum(map(math.log, rel)) / len(rel)):.3f}, "
      f"range {min(rel):.3f}-{max(rel):.3f}")
pl = [b[k]["plain_s"] / a[k]["plain_s"] for k in a]
print(f"- branch/base plain CPU s: geometric mean {math.exp(sum(map(math.log, pl)) / len(pl)):.3f}")
