import time
from harness.equivalence import triton_kernel
from harness.suite import get
from proofs.prove import prove
from semantics.terms import TermStore
c = get("gemm_block_scaled")
t = time.process_time()
store = TermStore()
rep = prove(triton_kernel(c, "sm_120", label="candidate"), triton_kernel(c, "sm_120"), store)
r = rep.result
print("verdict:", r.verdict)
print("proofs:", [(p.buffer, p.elements, p.methods) for p in r.proofs])
print("assumptions:", r.assumptions)
print("checks:", {k: v.verdict for k, v in rep.checks.items()})
print("cpu", time.process_time() - t, "terms", len(store))
