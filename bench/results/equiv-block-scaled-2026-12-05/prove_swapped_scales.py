import re
import ptx_parser
from harness.compile import compile_contract
from harness.equivalence import contract_kernel, triton_kernel
from harness.suite import get
from proofs.prove import prove
from semantics.terms import TermStore
c = get("gemm_block_scaled")
ptx = compile_contract(c, "sm_120").ptx
mma = next(l for l in ptx.splitlines() if "mma.sync" in l and ".block_scale" in l)
ops = re.search(r", (%r\d+), \{ 0, 0 \}, (%r\d+), \{ 0, 0 \};", mma)
sw = mma.replace(ops.group(0), f", {ops.group(2)}, {{ 0, 0 }}, {ops.group(1)}, {{ 0, 0 }};")
m = ptx_parser.parse(ptx.replace(mma, sw, 1), "x.ptx")
r = prove(contract_kernel(c, m, "sm_120"), triton_kernel(c, "sm_120"), TermStore()).result
print(r.verdict, r.suspect_count, [(p.buffer, p.elements, p.methods) for p in r.proofs], r.suspects[0].why)
