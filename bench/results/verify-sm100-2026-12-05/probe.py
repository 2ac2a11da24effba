import sys, time, resource, os
sys.path.insert(0, os.getcwd())
name, arch, mode = sys.argv[1], sys.argv[2], sys.argv[3]
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel
import logging
if os.environ.get("LOG"): logging.basicConfig(level=logging.DEBUG)
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
c = get(name)
inst = os.environ.get("INST", "bench")
compiled = compile_contract(c, arch, instance=inst)
arrays = c.make_inputs(inst, "normal", 0, lazy=True)
launch = launch_for(c, compiled, arrays, inst)
del arrays
module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
prog = load_program(module, compiled.entry)
c0 = time.process_time()
with time_limit(float(os.environ.get("TL", "300"))):
  if mode == "prof":
    import cProfile
    pr = cProfile.Profile(); pr.enable()
    report = check_kernel(prog, launch)
    pr.disable()
    pr.dump_stats(f"/tmp/i10g/{name}_{arch}.prof")
  else:
    report = check_kernel(prog, launch)
print("verdict", report.verdict, "cpu", round(time.process_time()-c0,2), "peak", round(rss()), flush=True)
for k, v in report.stats.items():
    if k in ("grid_method","loops_summarised") or "loop" in k or "grid" in k: print(" stat", k, str(v)[:300])
for n in report.notes: print(" note", n[:600])
for f in report.findings[:5]: print(" finding", f.kind.value, f.message[:300])
