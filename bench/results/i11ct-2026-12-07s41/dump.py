"""Term runs of one contract's cross-target pairs only (no comparison), pickled for study: dump.py NAME."""
import sys, time, pickle
from harness.equivalence import triton_kernel
from proofs.prove import run_side, safety_report
from semantics.terms import TermStore
sys.path.insert(0, "tests")
from test_equivalence_suite import _pairs, CONTRACTS

name = sys.argv[1]
c = CONTRACTS[name]
store = TermStore()
sides = {}
t0 = time.process_time()
for ca, ra in _pairs(name):
    for a in (ca, ra):
        if a not in sides:
            k = triton_kernel(c, a)
            sides[a] = run_side(k, store)[1]
print("runs cpu", round(time.process_time() - t0, 1), len(store))
with open(f"/tmp/i11ct/{name}.pkl", "wb") as f:
    import semantics.terms as st
    pickle.dump((store, sides, _pairs(name), list(st.SORTS), list(st._MODS)), f, protocol=5)
