"""Count the cells (node x member) and distinct (node, image) pairs of the instance check's two passes on
dump_state.py's store (instrumented _down/_bottom_up; answers unchanged)."""
import pickle, time, numpy as np, sys
import semantics.terms as st
with open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/i11s512_state.pkl", "rb") as f:
    sorts, mods_, T, cand, ref = pickle.load(f)
for s in sorts: st.sort_id(s)
for m in mods_: st.mods_id(m)
import proofs.instances as I
tot = {"cells":0, "distinct":0, "edges":0, "firsts":0, "chk":0, "in_i":0, "steps":0, "chunks":0}
real = I._down
def _down(T, d, M, S, ok, key, cols):
    Y = M[d.rows, cols]
    tot["cells"] += Y.size
    tot["edges"] += d.ep.size * Y.shape[1]
    tot["chk"] += d.chk.size * Y.shape[1]
    tot["firsts"] += d.first.size * Y.shape[1]
    tot["in_i"] += int((d.aux_shift > 0).sum()) * Y.shape[1]  # INPUT rows
    tot["steps"] += 1
    x = (np.arange(Y.shape[0], dtype=np.int64)[:, None] << 32) | Y.astype(np.int64)
    tot["distinct"] += np.unique(x).size
    return real(T, d, M, S, ok, key, cols)
I._down = _down
rb = I._bottom_up
def _bottom_up(T, p, M, S):
    tot["up_nodes"] = sum(g.rows.size for g in p.up); tot["up_cells"] = tot.get("up_cells",0) + sum(g.rows.size for g in p.up) * M.shape[1]
    U = np.concatenate([g.rows for g in p.up])
    tot["ties"] = p.ties[0].size
    tot["chunks"] += 1
    r = rb(T, p, M, S)
    x = (np.arange(U.size, dtype=np.int64)[:, None] << 32) | M[U].astype(np.int64)
    tot["up_distinct"] = tot.get("up_distinct",0) + np.unique(x).size
    return r
I._bottom_up = _bottom_up
from proofs.equivalence import compare_outputs
from proofs.normal import Normalizer
t=time.process_time()
res = compare_outputs(T, cand, ref, normalizer=Normalizer(T))
print(res.outcome, time.process_time()-t)
print(tot)
