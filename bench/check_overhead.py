"""Check mode's cost over plain emulation, per suite kernel, measured in the same run.

    python bench/check_overhead.py [--arch sm_80 ...] [--repeat 3] [--json out.json] [--profile K] [--parts] [names...]

For each suite contract at its verify instance: the same program and launch run (1) plainly on the
emulator (`symexec.run_kernel`, what `volta run` does) and (2) in check mode over the same CTAs
(`symexec.check.run.run_checked` on an enumerating check run: the observer, value shadows,
happens-before clocks, and the race, barrier and bounds checks over the record). Both exclude
compiling, parsing and input generation; each is the least CPU time (process time, not wall
time: the machine is shared) of --repeat runs. Prints the ratio
check / plain per kernel and target, the geometric mean and the worst (the goal: within 3x on
every kernel). --profile K: cProfile of the check run of kernel K (first --arch), top functions
by own time, for bench/results/. --parts: per kernel, the CPU seconds of check mode's parts (the
race detector's windows, the value shadows' hooks, the instruction context's begin), each timed
around its entry point with process_time: cProfile's per-call cost inflates the many small calls
(it showed the record columns' appends at 12x their real cost), these timers do not.
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


#: check mode's parts timed by --parts: (label, module, class, method); a part's time includes the
#: parts it calls (races.flush includes races._pairs)
PARTS = (("access (shadows of memory + race detector)", "symexec.check.state", "CheckState", "access"),
         ("races.flush (race detector windows)", "symexec.check.races", "RaceDetector", "flush"),
         ("races._pairs", "symexec.check.races", "RaceDetector", "_pairs"),
         ("races.entries", "symexec.check.races", "_BufferState", "entries"),
         ("races._record_all (records of a window)", "symexec.check.races", "RaceDetector", "_record_all"),
         ("shadow.on_load", "symexec.check.shadow", "Tracker", "on_load"),
         ("shadow.on_store", "symexec.check.shadow", "Tracker", "on_store"),
         ("shadow.on_write_reg (value numbers of results)", "symexec.check.shadow", "Tracker", "on_write_reg"),
         ("shadow._collective", "symexec.check.shadow", "Tracker", "_collective"),
         ("shadow.on_read_reg", "symexec.check.shadow", "Tracker", "on_read_reg"),
         ("exec.begin (per instruction)", "symexec.check.exec", "CheckedExec", "begin"))


def parts(c, arch: str, repeat: int) -> dict:
    """CPU seconds of each of PARTS in one check run of kernel c (outermost calls only: a recursive
    part is not counted twice), beside plain and check totals."""
    import functools
    import importlib

    spent: dict[str, float] = {}
    saved = []
    for label, mod, cls_name, meth in PARTS:
        cls = getattr(importlib.import_module(mod), cls_name)
        f = cls.__dict__[meth]
        saved.append((cls, meth, f))
        depth = [0]

        def timed(*a, _f=f, _label=label, _depth=depth, **k):
            _depth[0] += 1
            t0 = time.process_time()
            try:
                return _f(*a, **k)
            finally:
                _depth[0] -= 1
                if _depth[0] == 0:
                    spent[_label] = spent.get(_label, 0.0) + time.process_time() - t0
        setattr(cls, meth, functools.wraps(f)(timed))
    try:
        compiled = compile_contract(c, arch)
        prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
        launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
        plain, _ = _best(lambda: run_kernel(prog, launch), repeat)
        spent.clear()
        t0 = time.process_time()
        run_checked(new_run(prog, launch), prog, launch)
        check = time.process_time() - t0
    finally:
        for cls, meth, f in saved:
            setattr(cls, meth, f)
    return {"kernel": c.name, "arch": arch, "plain_s": plain, "check_s": check, "parts": spent}


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
    ap.add_argument("--parts", action="store_true", help="CPU seconds of check mode's parts per kernel")
    args = ap.parse_args()
    by_name = {c.name: c for c in all_contracts()}
    if args.profile:
        print(profile(by_name[args.profile], args.arch[0]))
        return 0
    if args.parts:
        got = [parts(by_name[n], args.arch[0], args.repeat) for n in (args.names or by_name)]
        print("| kernel | plain s | check s | " + " | ".join(p[0] for p in PARTS) + " |")
        print("|---" * (3 + len(PARTS)) + "|")
        for g in got:
            print(f"| {g['kernel']} | {g['plain_s']:.3f} | {g['check_s']:.3f} | "
                  + " | ".join(f"{g['parts'].get(p[0], 0.0):.3f}" for p in PARTS) + " |")
        if args.json:
            args.json.write_text(json.dumps(got, indent=1))
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
