"""Differential check: every _times_indicator result against the general product loop (same dict, same order)."""
import sys, time
from pathlib import Path
import proofs.normal as NM
from proofs.normal import Normalizer, _mono_mul
from volta.equiv_cli import run_equivalence
orig = Normalizer._times_indicator
n = [0, 0]
def general(self, a, mb):
    out = {}
    for ma, ca in a.items():
        m, c = _mono_mul(ma, mb, self._merge_exp2, self._special)
        p = ca * 1 if c == 1 else ca * 1 * c
        old = out.get(m)
        v = p if old is None else old + p
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out
def checked(self, a, mb):
    r = orig(self, a, mb)
    g = general(self, a, mb)
    n[0] += 1
    n[1] += len(a)
    assert list(r.items()) == list(g.items()), (a, mb, r, g)
    assert all(type(r[k]) is type(g[k]) for k in r)
    return r
Normalizer._times_indicator = checked
t = time.process_time()
r = run_equivalence(Path(sys.argv[1]), contract=sys.argv[2], timeout=1500)
print("VERDICT", r.verdict, time.process_time() - t, "checked", n)
