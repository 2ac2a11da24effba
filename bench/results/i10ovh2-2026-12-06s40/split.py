"""split.py K1,K2,...: where check time goes, by switching parts off in turn (least CPU of 5 runs each): the full check;
no race detector (CheckState.races False: no stamps, no records; clocks and sync log still run); no clocks and sync log
either (new_run(races=False)); no value numbers either (Tracker.numbered False); memory shadows' on_load/on_store stubbed
too. Differences: detector, clocks+sync, numbering, memory shadows, and the rest (taint hooks, events, report) over plain."""
import sys, time
sys.path.insert(0, '.')
ks = sys.argv[1].split(',')
sys.argv = ['x']
from bench.check_overhead import *
from bench.check_overhead import _best
import symexec.check.state as S
import symexec.check.shadow as SH
for k in ks:
    c = {c.name: c for c in all_contracts()}[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    pt, _ = _best(lambda: run_kernel(prog, launch), 5)
    def mk(races=True, numbered=True, clocked=True):
        def f():
            # races=False with clocks: a full run whose accesses skip the detector (CheckState.races) but whose
            # clocks and sync log run; clocked=False: new_run(races=False), which hooks neither
            r = new_run(prog, launch, races=races or clocked)
            r.state.races = races
            r.state.numbered = numbered
            r.state.tracker.numbered = numbered
            return run_checked(r, prog, launch)
        return f
    full, _ = _best(mk(), 5)
    nor, _ = _best(mk(races=False), 5)
    noc, _ = _best(mk(races=False, clocked=False), 5)
    non, _ = _best(mk(races=False, clocked=False, numbered=False), 5)
    # no memory shadows either
    so, sl = SH.Tracker.on_store, SH.Tracker.on_load
    SH.Tracker.on_store = lambda self, *a, **kw: (None, None)
    SH.Tracker.on_load = lambda self, *a, **kw: None
    try:
        nom, _ = _best(mk(races=False, clocked=False, numbered=False), 5)
    finally:
        SH.Tracker.on_store, SH.Tracker.on_load = so, sl
    print(f"{k}: plain {pt*1e3:.1f} | check {full*1e3:.1f} ({full/pt:.2f}x) | detector {1e3*(full-nor):.1f} clocks+sync {1e3*(nor-noc):.1f} numbering {1e3*(noc-non):.1f} memshadows {1e3*(non-nom):.1f} rest {1e3*(nom-pt):.1f}")
