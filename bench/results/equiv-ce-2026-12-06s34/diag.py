"""Compare only loss[0] of ce_zloss_smem_row vs Triton and print the differing monomials."""
import sys, time
from pathlib import Path
import proofs.prove as P
import proofs.equivalence as E
from proofs.normal import Normalizer, Rat
from volta.equiv_cli import run_equivalence
ONLY = sys.argv[2] if len(sys.argv) > 2 else "loss"
orig = E.compare_outputs
SAVED = {}
def patched(T, cand, ref, **kw):
    for s in (cand, ref):
        s.outputs = {k: v for k, v in s.outputs.items() if k == ONLY}
        o = s.outputs[ONLY]
        keep = o.elements < 1
        import dataclasses
        s.outputs[ONLY] = dataclasses.replace(o, elements=o.elements[keep], terms=o.terms[keep], bits=o.bits[keep], stores=o.stores[keep] if len(o.stores)==len(keep) else o.stores, atomics=o.atomics[keep] if len(o.atomics)==len(keep) else o.atomics, writer=o.writer[keep] if len(o.writer)==len(keep) else o.writer)
    N = kw.get("normalizer")
    oe = N.equal
    def eq(x, y):
        r = oe(x, y)
        SAVED["pair"] = (N, x, y, r)
        return r
    N.equal = eq
    return orig(T, cand, ref, **kw)
P.compare_outputs = patched
t = time.process_time()
r = run_equivalence(Path(sys.argv[1]), contract='cross_entropy_zloss', timeout=900)
print("VERDICT", r.verdict, time.process_time() - t)
N, x, y, res = SAVED["pair"]
print("equal:", res)
xe, ye = N.expand(x), N.expand(y)
def monos(f):
    return f.num if isinstance(f, Rat) else {}
print("dens", getattr(xe, 'den', None), getattr(ye, 'den', None))
a, b = monos(xe), monos(ye)
onlya = {m: c for m, c in a.items() if b.get(m) != c}
onlyb = {m: c for m, c in b.items() if a.get(m) != c}
print("cand monos", len(a), "ref", len(b), "diff", len(onlya), len(onlyb))
for name, d in (("cand-only", onlya), ("ref-only", onlyb)):
    for m, c in list(d.items())[:6]:
        print(name, c, " * ".join(f"{N._atom_text(m[i], 3)}^{m[i+1]}" for i in range(0, len(m), 2)))
        for i in range(0, len(m), 2):
            print("    atom", m[i], N.atoms[m[i]])
import pickle
