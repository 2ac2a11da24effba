import dataclasses, time, tempfile
import ptx_parser
from harness.compile import compile_contract
from harness.equivalence import contract_kernel, triton_kernel
from harness.suite import get
from proofs.prove import prove
from semantics.terms import TermStore
c = get("gemm_block_scaled")
t = time.process_time()
c8 = dataclasses.replace(c, num_warps=8)
comp = compile_contract(c8, "sm_120", cache=False, directory=tempfile.mkdtemp())
print("compile cpu", time.process_time() - t, comp.ptx.count("block_scale"))
open("/tmp/i11bs/gbs_w8.ptx", "w").write(comp.ptx)
text = f"// volta-launch: grid=(cdiv(M, 128), cdiv(N, 128), 1) block=(256, 1, 1) shared={comp.shared}\n" + comp.ptx
print("shared", comp.shared)
m = ptx_parser.parse(text, "w8.ptx")
t = time.process_time()
k = contract_kernel(c, m, "sm_120", source=text)
print("launch block", k.launch.block)
r = prove(k, triton_kernel(c, "sm_120"), TermStore()).result
print(r.verdict, r.suspect_count, [(p.buffer, p.elements, p.methods) for p in r.proofs], "cpu", time.process_time() - t)
