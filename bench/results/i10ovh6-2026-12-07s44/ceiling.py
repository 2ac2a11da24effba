"""ceiling.py ROUNDS K...: check CPU s with value numbers (as shipped) vs with CheckState.numbered forced False
(taints only: what a check run that never numbered would cost; its verdicts are not valid, timing only)."""
import sys, time
sys.path.insert(0, '.')
rounds = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
by = {c.name: c for c in all_contracts()}
for k in ks:
    c = by[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {True: 1e9, False: 1e9}
    for r in range(rounds + 1):
        for numbered in ((True, False) if r % 2 else (False, True)):
            run = new_run(prog, launch)
            run.state.numbered = numbered
            t0 = time.process_time(); run_checked(run, prog, launch); dt = time.process_time() - t0
            if r:
                best[numbered] = min(best[numbered], dt)
    print(f"{k}: numbered {best[True]:.3f} s, taints only {best[False]:.3f} s ({best[False]/best[True]:.3f})", flush=True)
