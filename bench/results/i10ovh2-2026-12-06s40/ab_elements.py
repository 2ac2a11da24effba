"""in-process A/B of the vector load's element numbers: _LoadElements.numbers (branch) vs per element _bytes_number (base)"""
import sys, time
sys.path.insert(0, '.')
N = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import shadow as SH
new = SH.Tracker._element_of
def old(self, got, j, value):
    taint = got.taint[:, j]
    if not SH.some(taint):
        return None, None
    taint = taint.copy()
    h = got.first[:, j].copy()
    part = ~got.whole[:, j]
    if not SH.every(taint):
        part &= taint != 0
    if SH.some(part):
        nb = got.nb
        th, tp = got.bh[part, j * nb:(j + 1) * nb], got.bp[part, j * nb:(j + 1) * nb]
        h[part] = SH._bytes_number(th, tp)
    return self._numbered(h, taint, value), taint
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
            SH.Tracker._element_of = new if s == 'branch' else old
            t0 = time.process_time()
            rep = run_checked(new_run(prog, launch), prog, launch)
            best[s] = min(best[s], time.process_time() - t0)
            m = msgs(rep)
            assert out.setdefault(s, m) == m
    SH.Tracker._element_of = new
    assert out['base'] == out['branch'], k
    print(f"{k}: base {best['base']*1e3:.1f} ms branch {best['branch']*1e3:.1f} ms ratio {best['branch']/best['base']:.3f} verdict {out['base'][0]} findings {len(out['base'][1])} same", flush=True)
