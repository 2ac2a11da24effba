"""Compare records/r2-base-NAME.json with records/r2-branch-NAME.json (record.py's lines): verdict,
findings, notes, assumptions and stats, the worktree path in source locations mapped."""

import json
from pathlib import Path

HERE = Path(__file__).parent / "records"


def load(tree: str, name: str) -> dict:
    text = (HERE / f"r2-{tree}-{name}.json").read_text().strip().splitlines()[-1]
    return json.loads(text.replace("/work/wt/i10gemm100-base/", "/work/wt/i10gemm100/"))


for name in ["gemm_fp16", "gemm_silu", "gemm_block_scaled"]:
    a, b = load("base", name), load("branch", name)
    print(name, a["verdict"], b["verdict"], "check CPU s", a["check_cpu_s"], "->", b["check_cpu_s"])
    for k in ["verdict", "findings", "notes", "assumptions"]:
        print("   same", k, a[k] == b[k])
    print("   stats differ:", {k: (a["stats"].get(k), b["stats"].get(k)) for k in sorted(set(a["stats"]) | set(b["stats"]))
                               if a["stats"].get(k) != b["stats"].get(k)})
