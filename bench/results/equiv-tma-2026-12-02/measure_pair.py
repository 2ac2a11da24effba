# Measures one equivalence pair: PYTHONPATH=. python bench/results/equiv-tma-2026-12-02/measure_pair.py NAME CAND_ARCH REF_ARCH
import sys, time, resource, os
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
C = {c.name: c for c in all_contracts()}
name, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
t0, c0 = time.time(), time.process_time()
rep = prove(triton_kernel(C[name], a, label="candidate"), triton_kernel(C[name], b), TermStore())
r = rep.result
print(name, a, b, r.outcome, r.verdict[:400])
for s in r.suspects[:3]: print("  suspect", s.buffer, s.element, s.why, str(s.candidate)[:200])
for label, side in rep.sides.items():
    for g in side.gaps[:5]: print("  gap", label, g.describe())
print({k: v.verdict for k, v in rep.checks.items()})
print(f"CPU {time.process_time()-c0:.1f} s wall {time.time()-t0:.1f} s RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB load {os.getloadavg()[0]:.1f}")
