"""Emulation time of each suite kernel vs Triton's interpreter on the same kernel and shape.

    python bench/emulate.py [--arch sm_80] [--repeat 3] [names...]

Both run the verification-sized instance on the same inputs in the same run: the interpreter in
a subprocess (TRITON_INTERPRET=1 must be set before Triton is imported), the emulator here.
Prints per-kernel seconds and the ratio emulator / interpreter (both: one launch, tracing and
parsing excluded; the emulator's parse+load+run time is shown beside), and the geometric mean.
Target: <= 10x (3x is where we want to be).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from harness.emulate import emulate  # noqa: E402
from harness.interp_dump import interpreter_outputs  # noqa: E402
from harness.suite import all_contracts  # noqa: E402
from symexec import ExecError  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cap = int("".join(ch for ch in args.arch[3:] if ch.isdigit()))
    contracts = [c for c in all_contracts() if (not args.names or c.name in args.names) and cap >= c.min_arch]
    console = Console()
    interp = interpreter_outputs([c.name for c in contracts], ["normal"], repeat=args.repeat)
    table = Table(title=f"Emulator vs Triton interpreter, verify instances, {args.arch} (best/mean of {args.repeat})")
    for col in ("kernel", "grid", "interpreter ms", "emulator ms", "ratio", "+parse ms", "steps"):
        table.add_column(col, justify="right")
    ratios = []
    for c in contracts:
        arrays = c.make_inputs("verify", "normal", 0)
        try:
            emulate(c, args.arch, arrays=arrays, compare=False)  # compile + warm caches
            best = total = math.inf
            steps = 0
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                r = emulate(c, args.arch, arrays=arrays, compare=False)
                total = min(total, time.perf_counter() - t0)  # parse + load + run (compile cached)
                best = min(best, r.seconds)  # the run alone, as the interpreter's time is
                steps = r.steps
        except ExecError as e:
            table.add_row(c.name, str(c.resolve().grid), "", "", f"[yellow]{str(e)[:40]}", "", "")
            continue
        ti = float(interp[f"__seconds__/{c.name}/normal"])
        ratio = best / ti
        ratios.append(ratio)
        table.add_row(c.name, str(c.resolve().grid), f"{ti * 1e3:.1f}", f"{best * 1e3:.1f}", f"{ratio:.2f}x",
                      f"{total * 1e3:.1f}", str(steps))
    console.print(table)
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        console.print(f"GEOMEAN emulator/interpreter = {gm:.2f}x over {len(ratios)} kernels "
                      f"(max {max(ratios):.2f}x; target <= 10x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
