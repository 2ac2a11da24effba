"""Compare records/base-NAME.json with records/branch-NAME.json (record.py's lines): verdict, findings, notes,
assumptions and stats, the two trees' paths in source locations mapped to one.

    python bench/results/i10bs-2026-12-06s38/compare.py gemm_block_scaled gemm_accumulate attention_tma
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent / "records"
ROOTS = ("/tmp/i10bs_base/", "/work/wt/i10bs/")


def load(tree: str, name: str) -> dict:
    text = (HERE / f"{tree}-{name}.json").read_text().strip().splitlines()[-1]
    for r in ROOTS:
        text = text.replace(r, "/TREE/")
    return json.loads(text)


for name in sys.argv[1:]:
    a, b = load("base", name), load("branch", name)
    print(name, a["verdict"], b["verdict"], "check CPU s", a["check_cpu_s"], "->", b["check_cpu_s"])
    for k in ["verdict", "findings", "notes", "assumptions"]:
        print("   same", k, a[k] == b[k])
        if a[k] != b[k]:
            for x in a[k]:
                if x not in b[k]:
                    print("     only base:", str(x)[:400])
            for x in b[k]:
                if x not in a[k]:
                    print("     only branch:", str(x)[:400])
    print("   stats differ:", {k: (a["stats"].get(k), b["stats"].get(k)) for k in sorted(set(a["stats"]) | set(b["stats"]))
                               if a["stats"].get(k) != b["stats"].get(k)})
