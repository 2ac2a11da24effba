import sys, time, os
from pathlib import Path
from volta.equiv_cli import spec_kernel
from semantics.terms import TermStore
from proofs.prove import run_side, safety_report
from symexec import machine as M
k, spec, mod = spec_kernel(Path('examples/pairs/attention/naive.ptx'), 'reference', Path(sys.argv[1]))
rep = safety_report(k)
lanes = int(sys.argv[2])
orig = M.Machine.__init__
def init(self, *a, **kw):
    orig(self, *a, **kw)
    if self.ctas is None:
        self.batch_ctas = max(1, lanes // self.launch.threads_per_block)
M.Machine.__init__ = init
import resource
T = TermStore()
t0 = time.process_time()
r, side = run_side(k, T, rep)
print(lanes, 'run', round(time.process_time() - t0, 2), len(T), r.outcome, 'maxrss MiB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
