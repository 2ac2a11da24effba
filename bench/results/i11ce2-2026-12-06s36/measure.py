import sys, time, resource
from pathlib import Path
from volta.equiv_cli import run_equivalence
p = Path(sys.argv[1])
t=time.process_time()
r = run_equivalence(p, contract='cross_entropy_zloss', timeout=900)
print("VERDICT", r.verdict, "cpu", time.process_time()-t, "maxrss_MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)
for n in r.notes[:10]: print("NOTE", n)
eq = r.stats.get("equivalence", {})
print({k: v for k, v in eq.items() if k != 'proofs'})
for pr in eq.get("proofs", []): print(pr)
