# (measurement script of bench/results/i11fp8-2026-12-07s44; run from the worktree root with PYTHONPATH=.)
# gemm_fp8 sm_90a with the second wgmma of its first group reading the first's B descriptor (WRONG_B of test_async_terms)
import re, resource, sys
import ptx_parser
from harness.compile import compile_contract
from harness.equivalence import contract_kernel, triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
c = {c.name: c for c in all_contracts()}["gemm_fp8"]
D = re.compile(r"\}, (%rd\d+), (%rd\d+), (%p\d+|[01]),")
ptx = compile_contract(c, "sm_90a").ptx
lines = ptx.splitlines()
at = [i for i, ln in enumerate(lines) if "wgmma.mma_async" in ln][:2]
ds = [D.search(lines[i]) for i in at]
print("wgmma lines", len(at), [bool(d) for d in ds], [d.groups() for d in ds if d])
if not all(ds) or len(at) < 2:
    sys.exit("no two wgmma with descriptors")
d1 = ds[1]
lines[at[1]] = lines[at[1]][:d1.start()] + f"}}, {d1.group(1)}, {ds[0].group(2)}, {d1.group(3)}," + lines[at[1]][d1.end():]
mod = ptx_parser.parse("\n".join(lines) + "\n", "gemm_fp8.sm_90a.wrong_b.ptx")
rep = prove(contract_kernel(c, mod, "sm_90a"), triton_kernel(c, "sm_89"), TermStore())
r = rep.result
ru = resource.getrusage(resource.RUSAGE_SELF)
print("SEEDED", r.verdict, "suspects", r.suspect_count, "of", sum(p.elements for p in r.proofs),
      r.suspects[0].why if r.suspects else "", "gaps", len(rep.sides["candidate"].gaps), f"cpu={ru.ru_utime+ru.ru_stime:.1f}")
