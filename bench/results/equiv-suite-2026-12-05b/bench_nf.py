import pickle, sys, time
import numpy as np
from proofs.normal import Normalizer, TooBig
T, calls, reg = pickle.load(open(sys.argv[1], "rb"))
import semantics.terms as ST
ST.SORTS[:] = reg[0]; ST._SORT_IDS.clear(); ST._SORT_IDS.update(reg[1]); ST._MODS[:] = reg[2]; ST._MODS_IDS.clear(); ST._MODS_IDS.update(reg[3])
cr, rr, res = [c for c in calls if c[0].size][0]
solo = np.nonzero(res < 0)[0]
lim = int(sys.argv[2]) if len(sys.argv) > 2 else solo.size
solo = solo[:lim]
N = Normalizer(T)
t0 = time.process_time(); t_of = t_eq = 0.0
bad = 0
for s in range(0, solo.size, 256):
    idx = solo[s:s + 256]
    a = time.process_time()
    nfs = N.of(np.concatenate([cr[idx], rr[idx]]))
    t_of += time.process_time() - a
    k = idx.size
    a = time.process_time()
    for x, y in zip(nfs[:k], nfs[k:]):
        if not N.equal(x, y): bad += 1
    t_eq += time.process_time() - a
print("solo", solo.size, "bad", bad, "of", round(t_of, 1), "equal", round(t_eq, 1), "total", round(time.process_time() - t0, 1), "steps", N.steps, "atoms", len(N.atoms), "resets", N.cache_resets)
