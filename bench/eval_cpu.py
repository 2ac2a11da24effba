"""`harness.evaluate` on the CPU for Triton's own PTX of each contract: the verdict (the honest
reference must be accepted) and where the time goes, as a ratio to the `volta check` stage measured
in the same run.

    python bench/eval_cpu.py [NAMES...] [--arch sm_90a] [--seed 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import suite  # noqa: E402
from harness.compile import compile_contract, parse_arch  # noqa: E402
from harness.judge.pipeline import EvalOptions, evaluate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--json")
    ns = ap.parse_args(argv)
    cap = parse_arch(ns.arch)
    contracts = [suite.get(n) for n in ns.names] if ns.names else [c for c in suite.all_contracts()
                                                                    if c.min_arch <= cap]
    print(f"{'contract':<22} {'verdict':<9} {'total s':>8} {'numeric s':>9} {'verify s':>8} {'total/verify':>12}")
    rows, bad = [], 0
    for c in contracts:
        ref = compile_contract(c, ns.arch, "verify")
        t0 = time.perf_counter()
        r = evaluate(c, ref.ptx, name=f"{c.name}.ptx", arch=ns.arch, options=EvalOptions(seed=ns.seed))
        total = time.perf_counter() - t0
        num, ver = r.stage("numeric").seconds, r.stage("verify").seconds
        bad += r.verdict.value != "accepted"
        rows.append({"contract": c.name, "verdict": r.verdict.value, "total_s": total, "numeric_s": num,
                     "verify_s": ver, "problems": [str(p) for p in r.problems]})
        print(f"{c.name:<22} {r.verdict.value:<9} {total:8.1f} {num:9.1f} {ver:8.1f} "
              f"{total / ver if ver else float('inf'):12.2f}", flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    print(f"# {len(rows)} contracts, {len(rows) - bad} accepted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
