"""Fingerprint of one kernel's term run: CPU s, node count, a hash of the store's columns and of every output's terms/bits."""
import sys, time, hashlib
from pathlib import Path
import numpy as np
from volta.equiv_cli import spec_kernel
from semantics.terms import TermStore
from proofs.prove import run_side, safety_report
k, spec, mod = spec_kernel(Path(sys.argv[1]), 'x', Path(sys.argv[2]))
rep = safety_report(k)
T = TermStore()
t0 = time.process_time()
r, side = run_side(k, T, rep)
cpu = time.process_time() - t0
h = hashlib.sha256()
for col in (T._op, T._sort, T._aux, T._off, T._nk, T._kids):
    h.update(np.ascontiguousarray(col.view).tobytes())
for name, o in sorted(side.outputs.items()) if isinstance(side.outputs, dict) else enumerate(side.outputs):
    for a in (o.elements, o.terms, o.bits, o.stores, o.atomics, o.writer):
        h.update(np.ascontiguousarray(a).tobytes())
h.update(repr([g.describe() for g in side.gaps]).encode())
import resource
print(f"cpu {cpu:.2f} nodes {len(T)} {r.outcome.value} fp {h.hexdigest()[:16]} peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB")
