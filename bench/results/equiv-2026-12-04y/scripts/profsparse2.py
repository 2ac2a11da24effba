"""cProfile of the sparse instructions (<= 1/4 of lanes) of one 64-CTA batch of the naive kernel's term run."""
import sys, time, cProfile, pstats
from pathlib import Path
from volta.equiv_cli import spec_kernel
from semantics.terms import TermStore
from proofs.prove import run_side, safety_report
from symexec import machine as M
k, spec, mod = spec_kernel(Path('examples/pairs/attention/naive.ptx'), 'reference', Path(sys.argv[1]))
rep = safety_report(k)
T = TermStore()
pr = cProfile.Profile()
orig = M.Machine._run_data
tot = [0.0]
def timed(ctx, ins, fn, mask):
    sparse = int(mask.sum()) <= mask.size // 4 and ctx.b.batch_id == 1
    if sparse:
        t = time.process_time(); pr.enable()
    orig(ctx, ins, fn, mask)
    if sparse:
        pr.disable(); tot[0] += time.process_time() - t
M.Machine._run_data = staticmethod(timed)
t0 = time.process_time()
run_side(k, T, rep)
print('run', time.process_time() - t0, 'sparse', tot[0], 'nodes', len(T))
pr.dump_stats("/tmp/i11c/s.prof"); st = pstats.Stats(pr); st.sort_stats("tottime").print_stats(60)
