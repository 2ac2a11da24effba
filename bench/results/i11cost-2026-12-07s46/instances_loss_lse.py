import sys, time, gc
sys.path.insert(0, "bench/results/i11ce3-2026-12-07s43")
from load import load
import numpy as np
T, cand, ref = load(__import__("os").environ.get("CE_PKL", "ce.pkl"))
gc.disable()
from proofs.instances import instances, prepare
from semantics.termeval import subgraph
for name in ("loss", "lse"):
    c, r = cand.outputs[name], ref.outputs[name]
    print(name, c.elements, c.terms, r.terms)
    print(" shapes", T.shape[c.terms], T.shape[r.terms])
    pair = np.array([c.terms[0], r.terms[0]])
    print(" nodes", subgraph(T, pair).size)
    t = time.process_time()
    plan = prepare(T, pair)
    keys = T.node_keys()
    ok = instances(T, pair, np.stack([c.terms[1:], r.terms[1:]], axis=1), plan=plan, keys=keys)
    print(" ok", ok, "cpu", round(time.process_time() - t, 2))
