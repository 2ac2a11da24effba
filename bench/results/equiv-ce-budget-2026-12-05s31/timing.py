import sys, time, collections, gc
sys.path.insert(0, '.')
import numpy as np
from harness.equivalence import triton_kernel
import tests.test_equivalence_suite as TS
from proofs.prove import prove
import proofs.normal as NM, proofs.lemmas as LM
from semantics.terms import TermStore
acc = collections.Counter(); cnt = collections.Counter()
depth = [0]
def wrap(obj, name, label):
    f = getattr(obj, name)
    def w(*a, **k):
        t = time.process_time()
        try: return f(*a, **k)
        finally: acc[label] += time.process_time() - t; cnt[label] += 1
    setattr(obj, name, w)
wrap(NM.Normalizer, 'equal', 'equal')
wrap(NM.Normalizer, 'table', 'table')
wrap(NM.Normalizer, '_support', '_support')
wrap(NM.Normalizer, '_packed_cmp', '_packed_cmp')
wrap(NM.Normalizer, '_bits_cmp', '_bits_cmp')
wrap(NM.Normalizer, '_float_view', '_float_view')
import proofs.lemmas
wrap(proofs.lemmas, 'prove_support', 'prove_support')
import proofs.equivalence as EQ
wrap(EQ, '_group_instances', 'group')
gct = [0.0, None]
def cb(phase, info):
    if phase == 'start': gct[1] = time.process_time()
    else:
        acc[f'gc{info["generation"]}'] += time.process_time() - gct[1]; cnt[f'gc{info["generation"]}'] += 1
gc.callbacks.append(cb)
c = TS.CONTRACTS[sys.argv[1]]
store = TermStore()
pairs = TS._pairs(sys.argv[1])
if len(sys.argv) > 2: pairs = pairs[:int(sys.argv[2])]
t0 = time.process_time()
for cand, ref in pairs:
    t = time.process_time()
    rep = prove(triton_kernel(c, cand, label="candidate"), triton_kernel(c, ref), store)
    print(cand, ref, rep.result.verdict, round(time.process_time() - t, 1), rep.seconds, rep.result.stats, flush=True)
print('total', time.process_time() - t0)
for k, v in sorted(acc.items(), key=lambda x: -x[1]): print(f'{k:15s} {v:8.1f} {cnt[k]}')
import resource; print('maxrss MiB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)
