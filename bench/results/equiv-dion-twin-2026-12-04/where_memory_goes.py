"""Where the memory goes in the term path (the path before the differential test): each phase with its
CPU seconds and the peak RSS so far, under a 4 GiB address-space ceiling."""
import resource, time, traceback, sys
from pathlib import Path
import tcgen05  # noqa
from volta.equiv_cli import question
from proofs.prove import safety_report, run_side
from proofs.equivalence import compare_outputs
from proofs.normal import Normalizer
from semantics.terms import TermStore
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
def phase(name, t0): print(f"{name}: {time.process_time() - t0:.1f} s CPU, peak {rss()} MiB, nodes {len(T)}", flush=True)
q = question(Path(sys.argv[1]), contract="dion_update", reference_arch="sm_80")
T = TermStore()
t = time.process_time(); s = {k.label: safety_report(k) for k in (q.candidate, q.reference)}; phase("safety checks", t)
sides = {}
for k in (q.candidate, q.reference):
    t = time.process_time(); _, sides[k.label] = run_side(k, T, s[k.label]); phase(f"term run {k.label}", t)
t = time.process_time()
try:
    res = compare_outputs(T, sides["candidate"], sides["reference"], normalizer=Normalizer(T))
    phase("compare", t); print(res.outcome, res.suspect_count, res.stats)
except MemoryError:
    phase("compare (MemoryError)", t); traceback.print_exc(limit=-12)
