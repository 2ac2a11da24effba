"""timers.py K mod:Class:method ...: process-time of those methods (outermost calls only), best of 5 check runs."""
import sys, time, functools, collections
sys.path.insert(0, '.')
k = sys.argv[1]; extra = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
import importlib
T = collections.Counter(); C = collections.Counter()
depth = collections.Counter()
def wrap(cls, name, label):
    f = cls.__dict__[name]
    @functools.wraps(f)
    def g(*a, **kw):
        depth[label] += 1
        t0 = time.process_time()
        try: return f(*a, **kw)
        finally:
            depth[label] -= 1
            if depth[label] == 0:
                T[label] += time.process_time() - t0; C[label] += 1
    setattr(cls, name, g)
for e in extra:
    mod, cls, meth = e.split(':')
    m = importlib.import_module(mod)
    wrap(getattr(m, cls), meth, f"{cls}.{meth}")
import symexec.check.run as RUN
import os
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
best = None
for _ in range(5):
    T.clear(); C.clear()
    t0 = time.process_time()
    run_checked(new_run(prog, launch), prog, launch)
    t = time.process_time() - t0
    if best is None or t < best[0]: best = (t, dict(T), dict(C))
print(k, f"{best[0]*1e3:.1f}")
for l, v in sorted(best[1].items(), key=lambda x: -x[1]): print(f"  {l:35s} {best[2][l]:6d} {v*1e3:8.2f} ms {v/best[2][l]*1e6:7.1f} us")
