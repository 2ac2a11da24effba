"""Base vs branch rows of bench/verify.py JSON records: check CPU s, peak MiB, ratio, and whether the verdict,
findings, notes, grid method and loop summaries are the same.

    python compare.py records/base1.json records/branch1.json
"""

from __future__ import annotations

import json
import sys

FIELDS = ("verdict", "findings", "notes", "grid_method", "loops_summarised")


def rows(path: str) -> dict:
    return {(r["contract"], r["arch"]): r for r in json.load(open(path))["records"]}


def main(base: str, branch: str) -> None:
    a, b = rows(base), rows(branch)
    print("| contract (bench) | arch | base check CPU s / MiB | branch check CPU s / MiB | ratio | verdict | "
          "same verdict, findings, notes, method | loop summary base -> branch | load base / branch |")
    print("|---|---|--:|--:|--:|---|---|---|---|")
    for key, rb in b.items():
        ra = a.get(key)
        if ra is None:
            continue
        va, vb = ra["volta"], rb["volta"]
        same = [f for f in FIELDS[:4] if va.get(f) != vb.get(f)]

        def summ(v: dict) -> str:
            return ", ".join(f"p{s['period']} from {s['from_iteration']} skip {s['iterations_skipped']}"
                             for s in v.get("loops_summarised") or []) or "-"

        print(f"| {key[0]} | {key[1]} | {va['cpu_seconds']:.2f} / {va.get('peak_rss_mib', 0):.0f} | "
              f"{vb['cpu_seconds']:.2f} / {vb.get('peak_rss_mib', 0):.0f} | {vb['cpu_seconds'] / va['cpu_seconds']:.2f} | "
              f"{vb['verdict']} | {'yes' if not same else 'NO: ' + ', '.join(same)} | {summ(va)} -> {summ(vb)} | "
              f"{ra['load_average'][0]:.1f} / {rb['load_average'][0]:.1f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
