"""events.py K: process-time of the check state's and the sync log's observer hooks (on_*) per call, last of 3 check runs."""
import sys, time, functools, collections
sys.path.insert(0, '.')
k = sys.argv[1]
sys.argv = ['x']
from bench.check_overhead import *
import symexec.check.state as S
import symexec.check.timeline as TL
T = collections.Counter(); C = collections.Counter()
def wrap(cls, name, label):
    f = cls.__dict__[name]
    @functools.wraps(f)
    def g(*a, **kw):
        t0 = time.process_time()
        try: return f(*a, **kw)
        finally:
            T[label] += time.process_time() - t0; C[label] += 1
    setattr(cls, name, g)
for cls, lab in ((S.CheckState, 'state'), (TL.SyncLog, 'sync')):
    for n in list(cls.__dict__):
        if n.startswith('on_') and callable(cls.__dict__[n]):
            wrap(cls, n, f"{lab}.{n}")
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
for _ in range(3):
    T.clear(); C.clear()
    t0 = time.process_time()
    run_checked(new_run(prog, launch), prog, launch)
    t = time.process_time() - t0
print(k, f"{t*1e3:.1f}")
for l, v in T.most_common(20): print(f"  {l:35s} {C[l]:6d} {v*1e3:8.2f} ms {v/C[l]*1e6:7.1f} us")
