"""abrun.py ROUNDS K...: in-process A/B of whole check runs: state.Tracker is base's (symexec/check/_shadow_base.py,
A) or the branch's (B), alternating per round (ABBA...); least process time per side; the report's repr must be equal."""
import sys, time, os
sys.path.insert(0, '.')
rounds = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import state, shadow as B, _shadow_base as A
by = {c.name: c for c in all_contracts()}
for k in ks:
    c = by[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {"A": 1e9, "B": 1e9}; reps = {}
    for r in range(rounds + 1):
        order = ("A", "B") if r % 4 in (0, 3) else ("B", "A")
        for side in order:
            state.Tracker = A.Tracker if side == "A" else B.Tracker
            t0 = time.process_time()
            rep = run_checked(new_run(prog, launch), prog, launch)
            dt = time.process_time() - t0
            if r:
                best[side] = min(best[side], dt)
            reps[side] = repr(rep)
        assert reps["A"] == reps["B"], k
    print(f"{k}: base {best['A']:.3f} s branch {best['B']:.3f} s branch/base {best['B']/best['A']:.3f} (reports equal)", flush=True)
