"""ab.py N K...: in-process A/B of re-coarsening (apply recoarsen-tried.patch first; off = main's detector), rounds alternating the order, least
process time of N per side; asserts the same verdict, findings and notes."""
import sys, time
sys.path.insert(0,'.')
n = int(sys.argv[1]); names = sys.argv[2:]; sys.argv=['x']
from bench.check_overhead import *
for k in names:
    c = {c.name: c for c in all_contracts()}[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{k}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {False: 9e9, True: 9e9}; reps = {}
    def one(on):
        r = new_run(prog, launch); r.state.detector.recoarsen = on
        t = time.process_time(); rep = run_checked(r, prog, launch); dt = time.process_time() - t
        best[on] = min(best[on], dt); reps.setdefault(on, repr(rep))
        assert repr(rep) == reps[on]
    one(False)
    for i in range(n):
        for on in ((False, True) if i % 2 else (True, False)):
            one(on)
    assert reps[False] == reps[True], k
    print(f"{k}: off {best[False]*1e3:.1f} ms, on {best[True]*1e3:.1f} ms, on/off {best[True]/best[False]:.3f}", flush=True)
