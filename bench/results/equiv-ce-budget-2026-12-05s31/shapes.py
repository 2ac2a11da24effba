import sys, time, collections
sys.path.insert(0, '.')
import numpy as np
from harness.equivalence import triton_kernel
import tests.test_equivalence_suite as TS
from proofs.prove import run_side
from proofs.normal import Normalizer
import proofs.lemmas as LM
from semantics.terms import TermStore
c = TS.CONTRACTS['cross_entropy_zloss']
T = TermStore()
cand = triton_kernel(c, sys.argv[1], label='candidate'); ref = triton_kernel(c, 'sm_80')
_, sc = run_side(cand, T); _, sr = run_side(ref, T)
N = Normalizer(T)
def abstract(nodes):
    return tuple((str(T.node(x).op.name), T.node(x).sort.width) for x in nodes)
sup = collections.Counter(); ps = collections.Counter(); ex = {}
orig_s = Normalizer._support
def s(self, i, nodes, leaves):
    a = abstract(nodes); sup[a] += 1; ex.setdefault(a, i)
    return orig_s(self, i, nodes, leaves)
Normalizer._support = s
orig_p = LM.prove_support
def p(T_, k, nodes, leaves, mb):
    r = orig_p(T_, k, nodes, leaves, mb); ps[(abstract(nodes), r is not None)] += 1; return r
LM.prove_support = p
tab = collections.Counter()
orig_t = Normalizer.table
def t(self, i):
    tab[T.node(i).op.name] += 1
    return orig_t(self, i)
Normalizer.table = t
B = sys.argv[3] if len(sys.argv) > 3 else 'logits'; o, r = sc.outputs[B], sr.outputs[B]
n = int(sys.argv[2])
idx = np.arange(n)
nfs = N.of(np.concatenate([o.terms[idx], r.terms[idx]]))
print('table by op', tab)
for a, k in sup.most_common(): 
    print(k, a)
    for x in sorted(__import__('semantics.termeval', fromlist=['x']).small_subgraph(T, ex[a])): print('     ', T.node(x))
for a, k in ps.most_common(): print('PS', k, a)
