"""ab.py N K...: in one process, N rounds of each kernel (order off-on, then on-off, ...) with the shortcut off (state.barrier_forgets patched to
False: main's behaviour) and on; least CPU of each side, and whether verdict, finding messages and notes agree."""
import sys, time
sys.path.insert(0, '.')
n = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
import symexec.check.run as RUN
orig = RUN.barrier_forgets
def rep(r):
    return (r.verdict, [f.message for f in r.findings], list(r.notes))
for k in ks:
    c = {c.name: c for c in all_contracts()}[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {True: 1e9, False: 1e9}; reps = {}
    for i in range(n):
        for on in ((False, True) if i % 2 == 0 else (True, False)):  # alternating order: the second run of
            # a pair ran ~4% slower with both sides the same (an A/A at this load)
            RUN.barrier_forgets = orig if on and not __import__('os').environ.get('AA') else (lambda p: False)
            t0 = time.process_time()
            r = run_checked(new_run(prog, launch), prog, launch)
            t = time.process_time() - t0
            best[on] = min(best[on], t); reps[on] = rep(r)
    print(f"{k}: {'A/A ' if __import__('os').environ.get('AA') else ''}generic_only={orig(prog)} base {best[False]*1e3:.1f} ms  branch {best[True]*1e3:.1f} ms  ratio {best[True]/best[False]:.3f} same={reps[True]==reps[False]}", flush=True)
