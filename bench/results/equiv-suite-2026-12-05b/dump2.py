"""Run the suite test's pairs of a contract in one store; time each _group_instances call (CPU)."""
import sys, time, resource
import numpy as np
import proofs.equivalence as E
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
sys.path.insert(0, "/work/wt/i11g/tests/equivalence")
name = sys.argv[1]
c = {c.name: c for c in all_contracts()}[name]
orig = E._group_instances
tot = [0.0]
def timed(T, cr, rr):
    t0 = time.process_time()
    res = orig(T, cr, rr)
    dt = time.process_time() - t0; tot[0] += dt
    print("group_instances", cr.size, "cpu", round(dt, 2), "instances", int((res >= 0).sum()), "len(T)", len(T), flush=True)
    return res
E._group_instances = timed
ARCHES = ["sm_80", "sm_89", "sm_120"]
have = [a for a in ARCHES if int(a[3:]) >= c.min_arch]
pairs = [(a, have[0]) for a in have[1:]] or [(have[0], have[0])]
T = TermStore()
t0 = time.process_time()
for ca, ra in pairs:
    t1 = time.process_time()
    rep = prove(triton_kernel(c, ca, label="candidate"), triton_kernel(c, ra), T)
    print(ca, ra, rep.result.verdict, "cpu", round(time.process_time() - t1, 1), rep.seconds, rep.result.stats, flush=True)
print("total cpu", round(time.process_time() - t0, 1), "grouping", round(tot[0], 1), "maxrss MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
