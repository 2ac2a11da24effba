"""prof.py K [N]: cProfile of the race detector's flush only, over the second check run of K (first warms caches)."""
import sys, cProfile, pstats, io, time
sys.path.insert(0, '.')
k = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import races
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
t0 = time.process_time(); run_kernel(prog, launch); print("plain", time.process_time() - t0)
run_checked(new_run(prog, launch), prog, launch)
orig = races.RaceDetector.flush
pr = cProfile.Profile()
tot = [0.0, 0]
def flush(self):
    t = time.process_time(); pr.enable()
    try: return orig(self)
    finally:
        pr.disable(); tot[0] += time.process_time() - t; tot[1] += 1
races.RaceDetector.flush = flush
t0 = time.process_time(); run_checked(new_run(prog, launch), prog, launch); print("check", time.process_time() - t0, "flush", tot)
for key in ("tottime", "cumulative"):
    buf = io.StringIO(); pstats.Stats(pr, stream=buf).sort_stats(key).print_stats(n); print(buf.getvalue())
