"""One kernel's check (or, with PLAIN=1, plain) run R times at its verify instance on sm_80, for py-spy:
    K=dion_update R=5 python bench/results/check-overhead-2026-12-02d/runk.py   (from the repository root)"""
import sys, os, time
sys.path.insert(0, '.')
import tcgen05  # noqa
import ptx_parser
from harness.suite import all_contracts
from harness.compile import compile_contract
from harness.emulate import launch_for
from symexec import load_program, run_kernel
from symexec.check.run import new_run, run_checked
name = os.environ.get('K', 'dion_update'); reps = int(os.environ.get('R', '5'))
c = [c for c in all_contracts() if c.name == name][0]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
t0 = time.process_time()
for _ in range(reps):
    if os.environ.get('PLAIN'):
        run_kernel(prog, launch)
    else:
        r = run_checked(new_run(prog, launch), prog, launch)
print(name, 'cpu per run', (time.process_time() - t0) / reps, file=sys.stderr)
