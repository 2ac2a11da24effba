"""CPU seconds of one kernel's term run (run_side, safety report made before timing)."""
import sys, time, resource
from pathlib import Path
from volta.equiv_cli import spec_kernel
from semantics.terms import TermStore
from proofs.prove import run_side, safety_report
ptx, launch = sys.argv[1], sys.argv[2]
k, spec, mod = spec_kernel(Path(ptx), 'x', Path(launch))
rep = safety_report(k)
T = TermStore()
t0 = time.process_time()
r, side = run_side(k, T, rep)
import resource; print(f"{time.process_time() - t0:.2f}", len(T), r.outcome.value, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10, "MiB")
