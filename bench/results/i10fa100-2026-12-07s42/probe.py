import sys, time, resource
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import grid as G
name = sys.argv[1] if len(sys.argv) > 1 else "flash_attention"
arch = sys.argv[2] if len(sys.argv) > 2 else "sm_100a"
c = get(name)
comp = compile_contract(c, arch, instance="bench")
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, comp, arrays, "bench"); del arrays
prog = load_program(ptx_parser.parse(comp.ptx, f"{name}.ptx"), comp.entry)
print("grid", launch.grid, flush=True)
c0 = time.process_time()
with time_limit(200):
    r, why = G.check_symbolic(prog, launch)
print("sym", r and r.verdict, "|", why, "|", r and r.notes[:4], r and r.stats.get("grid_method"), r and r.stats.get("trip_patterns"), r and r.stats.get("early_leavers"))
print("cpu", time.process_time() - c0, "rss MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)
