import sys, time, resource
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
name = sys.argv[1]
ARCH = sys.argv[2] if len(sys.argv) > 2 else "sm_100a"
c = {c.name: c for c in all_contracts()}[name]
ref_arch = next(a for a in ("sm_80", "sm_89", "sm_120") if int(a[3:]) >= c.min_arch)
rep = prove(triton_kernel(c, ARCH, label="candidate"), triton_kernel(c, ref_arch), TermStore())
r = rep.result
ru = resource.getrusage(resource.RUSAGE_SELF)
gaps = sorted({g.describe()[:120] for g in rep.sides["candidate"].gaps})
print(f"RESULT {name} vs {ref_arch}: {r.verdict[:200]} elements={sum(p.elements for p in r.proofs)} suspects={r.suspect_count} "
      f"checks={[x.verdict for x in rep.checks.values()]} cpu={ru.ru_utime+ru.ru_stime:.1f} maxrss={ru.ru_maxrss/1024:.0f}MiB gaps={gaps[:3]}", flush=True)
