import sys, time
sys.path.insert(0, '.')
import ptx_parser, tcgen05
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import all_contracts
from symexec import load_program, run_kernel
from symexec.check.run import new_run, run_checked
name, n = sys.argv[1], int(sys.argv[2])
c = {c.name: c for c in all_contracts()}[name]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
run_checked(new_run(prog, launch), prog, launch); run_kernel(prog, launch)
bp = bc = 1e9
for _ in range(n):  # plain and check alternating: the same load for both
    t0 = time.process_time(); run_kernel(prog, launch); bp = min(bp, time.process_time() - t0)
    t0 = time.process_time(); run_checked(new_run(prog, launch), prog, launch); bc = min(bc, time.process_time() - t0)
print(f"{name} plain {bp*1000:.1f} ms check {bc*1000:.1f} ms ratio {bc/bp:.2f}")
