"""Before/after table from check_overhead.py --json records (same kernels)."""
import json, math, sys
runs = [(lbl, {r["kernel"]: r for r in json.load(open(p))}) for lbl, p in (a.split("=") for a in sys.argv[1:])]
names = sorted(runs[0][1])
hdr = "| kernel | " + " | ".join(f"{l} plain s | {l} check s | {l} ratio" for l, _ in runs) + " | verdicts |"
print(hdr); print("|" + "---|" * (2 + 3 * len(runs)))
for k in names:
    cells = []
    for l, d in runs:
        r = d[k]; cells += [f"{r['plain_s']:.3f}", f"{r['check_s']:.3f}", f"{r['ratio']:.2f}"]
    v = {d[k]["verdict"] for _, d in runs}
    print(f"| {k} | " + " | ".join(cells) + f" | {'/'.join(sorted(v))} |")
print()
for l, d in runs:
    rs = [d[k]["ratio"] for k in names]
    g = math.exp(sum(map(math.log, rs)) / len(rs)); w = max(names, key=lambda k: d[k]["ratio"])
    chk = math.exp(sum(math.log(d[k]["check_s"]) for k in names) / len(names))
    print(f"- {l}: geometric mean {g:.2f}x, worst {d[w]['ratio']:.2f}x ({w}), {sum(r <= 3 for r in rs)}/{len(rs)} within 3x; "
          f"over 3x: {', '.join(k for k in names if d[k]['ratio'] > 3)}")
