import sys, time, resource, os, threading, tracemalloc
sys.path.insert(0, os.getcwd())
name = sys.argv[1]
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program
from symexec.check import check_kernel
c = get(name)
compiled = compile_contract(c, "sm_90a", instance="bench")
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, compiled, arrays, "bench")
del arrays
module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
prog = load_program(module, compiled.entry)
tracemalloc.start(30)
best = [0, None]
stop = False
def poll():
    while not stop:
        cur, _ = tracemalloc.get_traced_memory()
        if cur > best[0] * 1.03 and cur > 300 * 2**20:
            best[0] = cur
            best[1] = tracemalloc.take_snapshot()
        time.sleep(0.02)
t = threading.Thread(target=poll, daemon=True); t.start()
report = check_kernel(prog, launch)
stop = True; t.join()
print("verdict", report.verdict, "traced peak", tracemalloc.get_traced_memory()[1]/2**20, "snap at", best[0]/2**20)
snap = best[1]
for stat in snap.statistics("traceback")[:6]:
    print("====", stat.size/2**20, "MiB", stat.count)
    for line in stat.traceback.format()[-30:]:
        print(line)
