"""abtable.py DIR: the alternating A/B rounds (ab-base-N.json, ab-branch-N.json) as a markdown table."""
import json, sys, glob, os
d = sys.argv[1]
runs = {}
for p in sorted(glob.glob(os.path.join(d, "ab-*-*.json"))):
    side, n = os.path.basename(p)[3:-5].rsplit("-", 1)
    for r in json.load(open(p)):
        runs.setdefault(r["kernel"], {}).setdefault(side, []).append((int(n), r))
print("| kernel | base ratio (plain ms / check ms), rounds 1, 2 | branch ratio (plain ms / check ms), rounds 1, 2 |")
print("|---|---|---|")
for k in sorted(runs):
    cell = lambda side: ", ".join(f"{r['ratio']:.2f} ({r['plain_s']*1e3:.0f} / {r['check_s']*1e3:.0f})"
                                  for _, r in sorted(runs[k][side], key=lambda x: x[0]))
    print(f"| {k} | {cell('base')} | {cell('branch')} |")
