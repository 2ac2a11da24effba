import sys, time, resource
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import run_side
from semantics.terms import TermStore
name, arch = sys.argv[1], sys.argv[2]
c = {c.name: c for c in all_contracts()}[name]
k = triton_kernel(c, arch)
t = time.process_time()
rep, side = run_side(k, TermStore())
ru = resource.getrusage(resource.RUSAGE_SELF)
print(f"SIDE {name} {arch} {rep.verdict} run_side_cpu={time.process_time()-t:.2f} proc_cpu={ru.ru_utime+ru.ru_stime:.2f} maxrss={ru.ru_maxrss/1024:.0f}MiB gaps={len(side.gaps)}")
