"""CPU of the differential test and the two safety reports alone (attention S=512), optional cProfile."""
import cProfile, sys, time
from pathlib import Path
from volta.equiv_cli import question
from proofs.differential import differential
from proofs.prove import safety_report
P = Path("examples/pairs")
q = question(P/"attention/fast.ptx", reference=P/"attention/naive.ptx", launch_path=P/"attention/fast.s512.json", reference_launch=P/"attention/naive.s512.json")
def go():
    t = {}
    for k in (q.candidate, q.reference):
        c0 = time.process_time(); r = safety_report(k); t["safety " + k.label] = round(time.process_time() - c0, 2)
    c0 = time.process_time(); d = differential(q.candidate, q.reference, q.draws(), q.tolerance); t["differential"] = round(time.process_time() - c0, 2)
    print(t, d.witness, d.draws_tried)
if len(sys.argv) > 1:
    cProfile.run("go()", sys.argv[1])
else:
    go()
