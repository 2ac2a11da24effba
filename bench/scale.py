"""Suite-wide checks over every core through Ray, against one process, measured in the same run.

    python bench/scale.py [--cpus N] [--address ADDR] [--suite] [--limit K] [--json out.json]

Workloads (each item is one `volta check`):
- regress: every case of tests/regression (what `volta regress tests/regression` runs), each
  checked against its header's expected verdict;
- --suite: also every suite contract's Triton PTX at its verify instance on sm_90a (`volta check
  --contract NAME`), the verdicts printed beside it.

Baseline: the items one after another in this process (`LocalExecutor.map`). Scaled: the same
items as Ray CPU tasks (`taic_agent.scale.RayExecutor.map`: a local Ray instance with --cpus CPUs,
default every core, or the cluster at --address), timed from submission to the last result, Ray's
start excluded (printed apart). Prints wall seconds, the ratio serial / Ray, the verdicts of both
(they must agree) and the cores used. Speedups are bounded by the cores: 2 on the CI machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def regress_item(path: str) -> tuple[str, str, str]:
    """(case, expected, actual) of one regression case."""
    from ptx_parser import ParseError
    from volta.check_cli import check_file, header

    p = Path(path)
    expected = header(p).get("expect", "")
    try:
        actual = check_file(p, timeout=300.0).verdict
    except (ParseError, ValueError, KeyError) as e:
        actual = f"bad_input: {str(e).splitlines()[0][:60]}"
    return p.name, expected, actual


def suite_item(name: str) -> tuple[str, str, str]:
    from harness.compile import compile_contract
    from harness.suite import get

    import tempfile

    from volta.check_cli import check_file

    ref = compile_contract(get(name), "sm_90a", "verify")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"{name}.ptx"
        p.write_text(ref.ptx)
        try:
            v = check_file(p, contract=name, arch="sm_90a", timeout=300.0).verdict
        except Exception as e:  # noqa: BLE001 - a bench row, not a crash
            v = f"error: {type(e).__name__}"
    return f"suite:{name}", "", v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--address", default=None)
    ap.add_argument("--suite", action="store_true", help="also check every suite contract's Triton PTX")
    ap.add_argument("--limit", type=int, default=0, help="only the first K regression cases")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    from harness.suite import names
    from taic_agent.scale import LocalExecutor, RayExecutor

    cases = sorted(str(p) for p in (ROOT / "tests" / "regression").glob("*.ptx"))
    if args.limit:
        cases = cases[:args.limit]
    work = [(regress_item, c) for c in cases] + ([(suite_item, n) for n in names()] if args.suite else [])
    if args.suite:  # compile once up front (cached), so neither side pays Triton's compile
        from harness.compile import compile_contract
        from harness.suite import get

        for n in names():
            compile_contract(get(n), "sm_90a", "verify")

    def run_all(ex) -> tuple[float, list[tuple[str, str, str]]]:
        t0 = time.perf_counter()
        out = []
        for fn in (regress_item, suite_item):
            items = [x for f, x in work if f is fn]
            if items:
                out += ex.map(fn, items)
        return time.perf_counter() - t0, out

    serial_s, serial = run_all(LocalExecutor())
    t0 = time.perf_counter()
    ray_ex = RayExecutor(args.address, num_cpus=None if args.address else args.cpus)
    start_s = time.perf_counter() - t0
    try:
        ray_s, scaled = run_all(ray_ex)
    finally:
        ray_ex.close()
    agree = serial == scaled
    mismatched = [r for r in serial if r[1] and not (r[2] == r[1] or r[2].split(":")[0] == r[1])]
    result = {"items": len(work), "regression_cases": len(cases), "suite": bool(args.suite), "cpus": ray_ex.cpus,
              "serial_s": round(serial_s, 2), "ray_s": round(ray_s, 2), "ray_start_s": round(start_s, 2),
              "speedup": round(serial_s / ray_s, 3) if ray_s else None, "verdicts_agree": agree,
              "expected_mismatches": [list(r) for r in mismatched], "executor": ray_ex.description}
    load = os.getloadavg()[0]
    result["load_average"] = round(load, 2)
    print(f"{len(work)} checks ({len(cases)} regression cases" + (", every suite contract" if args.suite else "")
          + f") on {ray_ex.description}; load average {load:.1f} when done"
          + (" (a busy machine: the ratio says little)" if load > ray_ex.cpus else ""))
    print(f"  one process: {serial_s:8.2f} s")
    print(f"  Ray:         {ray_s:8.2f} s  (+ {start_s:.1f} s to start Ray)")
    print(f"  ratio one process / Ray: {serial_s / ray_s:.2f}x on {ray_ex.cpus} CPUs; verdicts "
          + ("agree" if agree else "DIFFER"))
    if mismatched:
        print(f"  {len(mismatched)} regression case(s) differ from their expected verdict: {mismatched[:5]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
