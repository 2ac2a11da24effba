"""in-process A/B: Clocks._release_uniform/_join_uniform on (branch) vs off (base: the per-CTA, per-kind path)"""
import sys, time
sys.path.insert(0, '.')
N = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import hb
from symexec.check.run import record_report
ru, ju = hb.Clocks._release_uniform, hb.Clocks._join_uniform
off = lambda self, *a: False
def side(on):
    hb.Clocks._release_uniform = ru if on else off
    hb.Clocks._join_uniform = ju if on else off
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
        for s in ('base', 'branch'):
            side(s == 'branch')
            t0 = time.process_time()
            rep = run_checked(new_run(prog, launch), prog, launch)
            best[s] = min(best[s], time.process_time() - t0)
            m = msgs(rep)
            assert out.setdefault(s, m) == m
    side(True)
    assert out['base'] == out['branch'], k
    print(f"{k}: base {best['base']*1e3:.1f} ms branch {best['branch']*1e3:.1f} ms ratio {best['branch']/best['base']:.3f} verdict {out['base'][0]} findings {len(out['base'][1])} same", flush=True)
