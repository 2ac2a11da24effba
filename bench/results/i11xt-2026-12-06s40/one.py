import sys, time; sys.path.insert(0, "/tmp/i11xt")
from sides import sides
from proofs.equivalence import compare_outputs
from proofs.normal import Normalizer
name, ca, ra = sys.argv[1:4]
T, cs, rs = sides(name, ca, ra)
t0 = time.process_time()
res = compare_outputs(T, cs, rs, normalizer=Normalizer(T, keep_roots=True))
print(res.verdict, res.stats, [(p.buffer, p.methods) for p in res.proofs], "compare cpu", round(time.process_time() - t0, 1))
