"""Run compare_outputs on the captured state. args: [limit] [prof-out]"""
import sys, time, gc, resource
sys.path.insert(0, __import__("os").path.dirname(__file__))
from load import load
import numpy as np
T, cand, ref = load(__import__("os").environ.get("CE_PKL", "ce.pkl"))
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 0
if limit:
    for side in (cand, ref):
        o = side.outputs["logits"]
        o.elements, o.terms, o.bits = o.elements[:limit], o.terms[:limit], o.bits[:limit]
from proofs.equivalence import compare_outputs
gc.disable()
t0 = time.process_time()
if len(sys.argv) > 2:
    import cProfile
    pr = cProfile.Profile(); pr.enable()
    res = compare_outputs(T, cand, ref)
    pr.disable(); pr.dump_stats(sys.argv[2])
else:
    res = compare_outputs(T, cand, ref)
print("cpu", round(time.process_time() - t0, 2), res.verdict, [ (p.buffer, p.methods) for p in res.proofs], res.stats)
