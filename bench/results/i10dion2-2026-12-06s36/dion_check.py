import sys, time, json
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel
arch = sys.argv[1]
c = get("dion_update")
compiled = compile_contract(c, arch, instance="bench")
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, compiled, arrays, "bench")
del arrays
c0 = time.process_time()
module = ptx_parser.parse(compiled.ptx, "dion_update.ptx")
prog = load_program(module, compiled.entry)
with time_limit(900):
    rep = check_kernel(prog, launch)
print(json.dumps({"arch": arch, "verdict": rep.verdict, "grid": str(rep.stats.get("grid_method")),
                  "loops": rep.stats.get("loops_summarised"), "cpu_check": time.process_time() - c0,
                  "notes": [n[:400] for n in rep.notes[:8]]}, indent=1))
