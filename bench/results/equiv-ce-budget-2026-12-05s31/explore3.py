import sys, time
sys.path.insert(0, '.')
import numpy as np
from harness.equivalence import triton_kernel
import tests.test_equivalence_suite as TS
from proofs.prove import run_side
from proofs.normal import Normalizer
from semantics.terms import TermStore
c = TS.CONTRACTS['cross_entropy_zloss']
T = TermStore()
cand = triton_kernel(c, sys.argv[1], label='candidate'); ref = triton_kernel(c, 'sm_80')
_, sc = run_side(cand, T); _, sr = run_side(ref, T)
o, r = sc.outputs['logits'], sr.outputs['logits']
idx = np.arange(0, 12000, 3)
for mode in ('full', 'short', 'full', 'short'):
    N = Normalizer(T)
    nfs = N.of(np.concatenate([o.terms[idx], r.terms[idx]]))
    k = len(idx); hits = 0
    t = time.process_time()
    for j in range(k):
        x, y = nfs[j], nfs[j + k]
        if mode == 'full':
            N._work = 10**9; N._budget = 10**9
            e = N._equal(x, y) or N._equal(N.expand(x), N.expand(y))
        else:
            e = N._equal(x, y) or N._equal_atoms_expanded(x, y)
            hits += e
        assert e
    print(mode, round(time.process_time() - t, 3), hits, flush=True)
