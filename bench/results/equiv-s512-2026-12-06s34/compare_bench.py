"""Load dump_state.py's pickle and time the output comparison alone (CPU s); print a digest of its
result (per buffer: methods, codes, instance_of) so two trees' results can be compared exactly."""
import gc, hashlib, pickle, sys, time

import numpy as np

from proofs.equivalence import compare_outputs
from proofs.normal import Normalizer

path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/i11s512_state.pkl"
t0 = time.process_time()
with open(path, "rb") as f:
    sorts, mods_, T, cand, ref = pickle.load(f)
import semantics.terms as st
for s in sorts:
    st.sort_id(s)
for m in mods_:
    st.mods_id(m)
assert st.SORTS == sorts and st._MODS == mods_, "sort/mods registries differ from the dumped run's"
print("load cpu", round(time.process_time() - t0, 2), len(T), "nodes", flush=True)
gc.disable()
import os
c0 = time.process_time(); o0 = os.times()
res = compare_outputs(T, cand, ref, normalizer=Normalizer(T))
c1 = time.process_time(); o1 = os.times()
h = hashlib.sha256()
for name, both, ct, rt, codes in res.obligations:
    for a in (both, ct, rt, codes, res.instance_of.get(name, np.zeros(0))):
        h.update(np.ascontiguousarray(a).tobytes())
print(res.outcome.value, [(p.buffer, p.elements, p.methods) for p in res.proofs], res.suspect_count)
print("compare cpu", round(c1 - c0, 2), "user", round(o1.user - o0.user, 2), "sys", round(o1.system - o0.system, 2), "digest", h.hexdigest()[:16], "instances", res.stats.get("instances"))
