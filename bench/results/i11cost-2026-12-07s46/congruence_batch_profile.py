import sys, time, gc, cProfile, pstats
sys.path.insert(0, "bench/results/i11ce3-2026-12-07s43")
from load import load
import numpy as np
T, cand, ref = load(__import__("os").environ.get("CE_PKL", "ce.pkl"))
from proofs.normal import Normalizer
gc.disable()
N = Normalizer(T)
c, r = cand.outputs["logits"], ref.outputs["logits"]
cs, rs = c.terms.tolist(), r.terms.tolist()
t = time.process_time(); N.equal_congruent(cs[:1], rs[:1]); print("first", time.process_time() - t)
t = time.process_time(); s0 = N.steps
pr = cProfile.Profile(); pr.enable()
got = N.equal_congruent(cs[1:1025], rs[1:1025])
pr.disable()
print("1024 elems", time.process_time() - t, N.steps - s0, got.all())
pstats.Stats(pr).sort_stats("tottime").print_stats(35)
