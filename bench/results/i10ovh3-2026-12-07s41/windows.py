"""windows.py K: per window of shared-memory accesses the race detector tests, its events (kind, bytes, pc) and the
pages' granules (bincount), and each drop_ordered call (CTAs, bytes forgotten); one check run of suite kernel K."""
import sys, collections
sys.path.insert(0, '.')
k = sys.argv[1]; sys.argv = ['x']
from bench.check_overhead import *
import numpy as np
import symexec.check.races as RC
ost = RC.RaceDetector._step
def step(self, buf, events, ids):
    if buf.space.name == 'SHARED':
        c = collections.Counter((e.kind, e.flat.shape[1], e.pc) for e in events)
        st = self._buffers[buf]
        print("step", len(events), sorted(c.items())[:12], "gran", np.bincount(st.gran.dense(whole_pages=True) if st._dense else np.zeros(1,int)))
    return ost(self, buf, events, ids)
RC.RaceDetector._step = step
od = RC.RaceDetector.drop_ordered
def d(self, *a):
    x = od(self, *a); print("drop", a[1].tolist(), x); return x
RC.RaceDetector.drop_ordered = d
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
print(launch.block, launch.grid, launch.dynamic_shared_bytes, prog.shared_size())
run_checked(new_run(prog, launch), prog, launch)
