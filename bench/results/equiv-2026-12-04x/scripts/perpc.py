"""Time each instruction of the reference's term run (one batch of 64 CTAs at S=512) by pc and active lanes."""
import sys, time, collections
from pathlib import Path
import numpy as np
from volta.equiv_cli import spec_kernel
from semantics.terms import TermStore
from proofs.prove import run_side
from symexec import machine as M
k, spec, mod = spec_kernel(Path('examples/pairs/attention/naive.ptx'), 'reference', Path(sys.argv[1]))
acc = collections.defaultdict(lambda: [0, 0.0, 0])
orig = M.Machine._run_data
def timed(ctx, ins, fn, mask):
    t = time.process_time()
    orig(ctx, ins, fn, mask)
    a = acc[ctx.pc]; a[0] += 1; a[1] += time.process_time() - t; a[2] = int(mask.sum())
M.Machine._run_data = staticmethod(timed)
from symexec.check.findings import Report
T = TermStore()
from proofs.prove import safety_report
rep = safety_report(k)
acc.clear()
t0 = time.process_time()
run_side(k, T, rep)
tot = time.process_time() - t0
print('run', tot, 'nodes', len(T))
items = sorted(acc.items(), key=lambda kv: -kv[1][1])
s_sparse = sum(v[1] for p, v in acc.items() if v[2] <= 0.25 * 16384)
print('in instructions', sum(v[1] for v in acc.values()), 'sparse', s_sparse)
for pc, (c, t, m) in items[:30]:
    print(pc, c, round(t, 3), m, k.prog.code[pc].name if hasattr(k.prog.code[pc], 'name') else k.prog.code[pc])
