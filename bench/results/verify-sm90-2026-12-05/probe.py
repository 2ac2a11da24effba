import sys, time, resource, os
sys.path.insert(0, os.getcwd())
name, mode = sys.argv[1], sys.argv[2]
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
c = get(name)
compiled = compile_contract(c, "sm_90a", instance="bench")
print("after compile", rss(), flush=True)
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, compiled, arrays, "bench")
del arrays
print("after launch", rss(), "buffers MiB", sum(a.nbytes for a in launch.buffers.values())/2**20, flush=True)
module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
prog = load_program(module, compiled.entry)
print("after load", rss(), flush=True)
c0 = time.process_time()
if mode == "prof":
    import cProfile, pstats
    pr = cProfile.Profile(); pr.enable()
    report = check_kernel(prog, launch)
    pr.disable()
    pr.dump_stats(f"/tmp/i10f/{name}.prof")
elif mode == "mem":
    import tracemalloc
    tracemalloc.start(25)
    report = check_kernel(prog, launch)
else:
    report = check_kernel(prog, launch)
print("verdict", report.verdict, report.stats.get("grid_method"), "cpu", time.process_time()-c0, "peak", rss(), flush=True)
if mode == "mem":
    cur, peak = tracemalloc.get_traced_memory(); print("traced peak MiB", peak/2**20)
