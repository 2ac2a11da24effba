"""in-process A/B: races._runs (branch) vs per-event runs (base construction); least CPU of N rounds each"""
import sys, time
sys.path.insert(0, '.')
N = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
import symexec.check.races as R
new_runs = R._runs
def per_event(events, ids):
    return [(e.flat, e.consecutive, r) for e, r in zip(events, ids)]
def msgs(rep):
    return (rep.verdict, [getattr(f, 'message', str(f)) for f in rep.findings])
for k in ks:
    c = {c.name: c for c in all_contracts()}[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    run_checked(new_run(prog, launch), prog, launch)
    best = {'base': 1e9, 'branch': 1e9}; out = {}
    for i in range(N):
        for side in ('base', 'branch'):
            R._runs = per_event if side == 'base' else new_runs
            t0 = time.process_time()
            rep = run_checked(new_run(prog, launch), prog, launch)
            best[side] = min(best[side], time.process_time() - t0)
            m = msgs(rep)
            assert out.setdefault(side, m) == m
    assert out['base'] == out['branch'], k
    print(f"{k}: base {best['base']*1e3:.1f} ms branch {best['branch']*1e3:.1f} ms ratio {best['branch']/best['base']:.3f} verdict {out['base'][0]} findings {len(out['base'][1])} same")
