"""Phases of run_equivalence on the dion candidate, CPU seconds each (no profiler)."""
import resource, sys, time
from pathlib import Path
import numpy as np
import tcgen05  # noqa
from volta.equiv_cli import question
from proofs.prove import safety_report, run_side
from proofs import equivalence as E, instances as I
from proofs.normal import Normalizer
from proofs.precision import precision_findings
from proofs.differential import differential
from semantics.terms import TermStore
def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
acc = {}
def timed(name, f):
    def g(*a, **k):
        t = time.process_time()
        try: return f(*a, **k)
        finally: acc[name] = acc.get(name, 0) + time.process_time() - t
    return g
orig_inst = I.instances
def inst(T, rep, members, **kw):
    t = time.process_time(); ok = orig_inst(T, rep, members, **kw)
    print(f"  instances: {members.shape[0]} members, {int(ok.sum())} ok, {time.process_time()-t:.1f} s", flush=True)
    acc["instances"] = acc.get("instances", 0) + time.process_time() - t
    return ok
I.instances = inst
Normalizer.of = timed("N.of", Normalizer.of)
Normalizer.equal = timed("N.equal", Normalizer.equal)
q = question(Path(sys.argv[1]), contract="dion_update", reference_arch=(sys.argv[2] if len(sys.argv) > 2 else None))
def phase(name, t0): print(f"{name}: {time.process_time() - t0:.1f} s CPU, peak {rss()} MiB", flush=True)
T = TermStore()
t = time.process_time(); s = {k.label: safety_report(k) for k in (q.candidate, q.reference)}; phase("safety", t)
t = time.process_time(); d = differential(q.candidate, q.reference, q.draws(), q.tolerance); phase(f"differential (differs {d.witness is not None})", t)
sides = {}
for k in (q.candidate, q.reference):
    t = time.process_time(); _, sides[k.label] = run_side(k, T, s[k.label]); phase(f"term run {k.label}", t)
print("nodes", len(T))
for k, sd in sides.items():
    print(k, {n: o.elements.size for n, o in sd.outputs.items()})
t = time.process_time()
res = E.compare_outputs(T, sides["candidate"], sides["reference"], normalizer=Normalizer(T)); phase("compare", t)
print(res.outcome, res.suspect_count, res.stats, [p.__dict__ for p in res.proofs], acc)
class R: pass
r = R(); r.store = T; r.sides = sides; r.result = res
t = time.process_time(); p = precision_findings(r); phase(f"precision ({len(p)})", t)
