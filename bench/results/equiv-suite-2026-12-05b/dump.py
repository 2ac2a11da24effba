"""Dump (T, c_roots, r_roots) of each _group_instances call of a contract's first pair."""
import pickle, sys, time
import numpy as np
import proofs.equivalence as E
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore

name, cand, ref, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
c = {c.name: c for c in all_contracts()}[name]
calls = []
orig = E._group_instances
class Stop(Exception): pass
def dump(T, cr, rr):
    calls.append((cr.copy(), rr.copy()))
    t0 = time.process_time()
    res = orig(T, cr, rr)
    print("group_instances", cr.size, "cpu", round(time.process_time() - t0, 2), "instances", int((res >= 0).sum()), flush=True)
    calls[-1] = calls[-1] + (res,)
    with open(out, "wb") as f:
        import semantics.terms as ST
        pickle.dump((T, calls, (ST.SORTS, ST._SORT_IDS, ST._MODS, ST._MODS_IDS)), f, protocol=5)
    if len(sys.argv) > 5 and cr.size > 0: raise Stop
    return res
E._group_instances = dump
T = TermStore()
t0 = time.process_time()
try:
    rep = prove(triton_kernel(c, cand, label="candidate"), triton_kernel(c, ref), T)
    print(rep.result.verdict, rep.seconds)
except Stop:
    pass
print("cpu", time.process_time() - t0)
