import faulthandler, signal; faulthandler.register(signal.SIGUSR1, all_threads=True)
import sys, time, cProfile, pstats, resource
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program
from symexec.check import check_kernel
name, arch = sys.argv[1], sys.argv[2]
out = sys.argv[3] if len(sys.argv) > 3 else None
c = get(name)
compiled = compile_contract(c, arch, instance="bench")
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, compiled, arrays, "bench")
del arrays
c0 = time.process_time()
module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
prog = load_program(module, compiled.entry)
if out:
    pr = cProfile.Profile(); pr.enable()
import symexec.check.grid as G
for _n in ("_represent", "_prove"):
    _f = getattr(G, _n)
    def _w(*a, _f=_f, _n=_n, **k):
        t = time.process_time(); r = _f(*a, **k); print("PHASE", _n, round(time.process_time() - t, 1), "s CPU", flush=True); return r
    setattr(G, _n, _w)
report = check_kernel(prog, launch)
if out:
    pr.disable(); pr.dump_stats(out)
print("cpu", time.process_time() - c0, "rss MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(report.verdict, report.stats.get("grid_method"), report.stats.get("loops_summarised"))
for n in report.notes: print("NOTE", n[:400])
