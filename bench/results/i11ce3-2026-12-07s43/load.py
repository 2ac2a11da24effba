import pickle
import semantics.terms as TT
def load(path="ce.pkl"):
    sorts, mods_, T, cand, ref = pickle.load(open(path, "rb"))
    for s in sorts: TT.sort_id(s)
    for m in mods_: TT.mods_id(m)
    assert TT.SORTS == sorts and TT._MODS == mods_, "registry mismatch"
    return T, cand, ref
