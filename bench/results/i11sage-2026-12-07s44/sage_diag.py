from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
c = {c.name: c for c in all_contracts()}["sage_attention"]
rep = prove(triton_kernel(c, "sm_90a", label="candidate"), triton_kernel(c, "sm_80"), TermStore())
r = rep.result
print("VERDICT", r.verdict[:200])
for s in r.suspects[:3]:
    print("SUSPECT", repr(s)[:1500])
