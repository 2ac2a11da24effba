# bench/results/i11wg-2026-12-07s43/prove_sm90a.py, plus the stage seconds (rep.seconds) at the end
import sys, time, resource
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
name = sys.argv[1]
c = {c.name: c for c in all_contracts()}[name]
ref_arch = next(a for a in ("sm_80", "sm_89", "sm_120") if int(a[3:]) >= c.min_arch)
rep = prove(triton_kernel(c, "sm_90a", label="candidate"), triton_kernel(c, ref_arch), TermStore())
r = rep.result
ru = resource.getrusage(resource.RUSAGE_SELF)
gaps = sorted({g.describe()[:120] for g in rep.sides["candidate"].gaps})
print(f"RESULT {name} vs {ref_arch}: {r.verdict[:200]} elements={sum(p.elements for p in r.proofs)} suspects={r.suspect_count} "
      f"checks={[x.verdict for x in rep.checks.values()]} cpu={ru.ru_utime+ru.ru_stime:.1f} maxrss={ru.ru_maxrss/1024:.0f}MiB gaps={gaps[:3]}", flush=True)
print("SECONDS", rep.seconds, flush=True)  # wall seconds per stage (check / run / compare)
