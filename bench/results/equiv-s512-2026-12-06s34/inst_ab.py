"""A/B of proofs.instances in one process on dump_state.py's store: the base tree's module (argv[2]) and this
tree's, alternately, on the S = 512 group (CPU s per whole-group check; answers compared)."""
import importlib.util, pickle, sys, time

import numpy as np

import semantics.terms as st

path = sys.argv[1]
with open(path, "rb") as f:
    sorts, mods_, T, cand, ref = pickle.load(f)
for s in sorts:
    st.sort_id(s)
for m in mods_:
    st.mods_id(m)
import proofs.instances as new

spec = importlib.util.spec_from_file_location("base_instances", sys.argv[2])
old = importlib.util.module_from_spec(spec)
sys.modules["base_instances"] = old
spec.loader.exec_module(old)
c, r = cand.outputs["O"], ref.outputs["O"]
assert (c.elements == r.elements).all()
roots = np.stack([c.terms, r.terms], axis=1).astype(np.int64)
pair, members = roots[0], roots[1:]
keys = T.node_keys()
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
for i in range(rounds):
    for name, mod in (("base", old), ("branch", new)):
        t0 = time.process_time()
        plan = mod.prepare(T, pair)
        t1 = time.process_time()
        ok = mod.instances(T, pair, members, plan=plan, keys=keys)
        t2 = time.process_time()
        print(name, "prepare", round(t1 - t0, 2), "instances", round(t2 - t1, 2), "passed", int(ok.sum()), flush=True)
        if name == "base":
            want = ok
        else:
            assert (ok == want).all()
