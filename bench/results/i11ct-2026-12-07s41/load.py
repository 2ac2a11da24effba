"""The comparisons of one contract's cross-target pairs from dump.py's pickle, process CPU timed: load.py NAME."""
import sys, time, pickle
from proofs.normal import Normalizer
from proofs.equivalence import compare_outputs

name = sys.argv[1]
import semantics.terms as st
T, sides, pairs, sorts, mods_ = pickle.load(open(f"/tmp/i11ct/{name}.pkl", "rb"))
for s in sorts:
    st.sort_id(s)
for m in mods_:
    st.mods_id(m)
assert st.SORTS == sorts and st._MODS == mods_
N = Normalizer(T, keep_roots=True)
t0 = time.process_time()
for ca, ra in pairs:
    t1 = time.process_time()
    res = compare_outputs(T, sides[ca], sides[ra], normalizer=N)
    print(ca, ra, res.verdict, res.stats, "cpu", round(time.process_time() - t1, 1), flush=True)
print("compare total cpu", round(time.process_time() - t0, 1))
