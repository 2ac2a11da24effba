"""Check mode's cost over plain emulation, per suite kernel, measured in the same run.

    python bench/check_overhead.py [--arch sm_80 ...] [--repeat 3] [--json out.json] [--profile K] [names...]

For each suite contract at its verify instance: the same program and launch run (1) plainly on the
emulator (`symexec.run_kernel`, what `volta run` does) and (2) in check mode over the same CTAs
(`symexec.check.run.run_checked` on an enumerating check run: the observer, value shadows,
happens-before clocks, and the race, barrier and bounds checks over the record). Both exclude
compiling, parsing and input generation; each is the least CPU time (process time, not wall
time: the machine is shared) of --repeat runs. Prints the ratio
check / plain per kernel and target, the geometric mean and the worst (the goal: within 3x on
every kernel). --profile K: cProfile of the check run of kernel K (first --arch), top functions
by own time, for bench/results/.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import ptx_parser  # noqa: E402
import tcgen05  # noqa: E402,F401  (plugs the tensor-core unit into the machine)
from harness.compile import compile_contract  # noqa: E402
from harness.emulate import launch_for  # noqa: E402
from harness.suite import all_contracts  # noqa: E402
from symexec import load_program, run_kernel  # noqa: E402
from symexec.check.run import new_run, run_checked  # noqa: E402


def _best(fn, repeat: int) -> tuple[float, object]:
    """The least CPU time of this process (user + system) over `repeat` calls: on a shared machine,
    wall time measures the other users' load too."""
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def measure(c, arch: str, repeat: int) -> dict:
    compiled = compile_contract(c, arch)
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    plain, _ = _best(lambda: run_kernel(prog, launch), repeat)
    check, report = _best(lambda: run_checked(new_run(prog, launch), prog, launch), repeat)
    return {"kernel": c.name, "arch": arch, "ctas": launch.num_ctas, "plain_s": plain, "check_s": check,
            "ratio": check / plain, "verdict": report.verdict}


def profile(c, arch: str, top: int = 25) -> str:
    compiled = compile_contract(c, arch)
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    pr = cProfile.Profile()
    pr.enable()
    run_checked(new_run(prog, launch), prog, launch)
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", nargs="+", default=["sm_80"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--profile", default=None, metavar="KERNEL")
    args = ap.parse_args()
    by_name = {c.name: c for c in all_contracts()}
    if args.profile:
        print(profile(by_name[args.profile], args.arch[0]))
        return 0
    rows = []
    console = Console()
    for arch in args.arch:
        cap = int("".join(ch for ch in arch[3:] if ch.isdigit()))
        for c in by_name.values():
            if (args.names and c.name not in args.names) or cap < c.min_arch:
                continue
            rows.append(measure(c, arch, args.repeat))
            console.print(f"{c.name} {arch}: plain {rows[-1]['plain_s']:.3f} s, check {rows[-1]['check_s']:.3f} s, "
                          f"x{rows[-1]['ratio']:.2f}", highlight=False)
    t = Table(title="check mode / plain emulation (verify instance, same CTAs, best of %d)" % args.repeat)
    for col in ("kernel", "arch", "CTAs", "plain s", "check s", "ratio", "verdict"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["kernel"], r["arch"], str(r["ctas"]), f"{r['plain_s']:.3f}", f"{r['check_s']:.3f}",
                  f"{r['ratio']:.2f}", r["verdict"])
    console.print(t)
    if rows:
        gm = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
        worst = max(rows, key=lambda r: r["ratio"])
        console.print(f"geometric mean {gm:.2f}x; worst {worst['ratio']:.2f}x ({worst['kernel']} {worst['arch']}); "
                      f"{sum(r['ratio'] <= 3 for r in rows)}/{len(rows)} within 3x", highlight=False)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
