"""Shared prelude of this folder's scripts (run from a tree's root, PYTHONPATH=.): the suite kernel
sys.argv[1] compiled for sm_80 at its verify instance; `prog`, `launch`, `run_checked`, `new_run`."""
import sys
sys.path.insert(0, '.')
import ptx_parser, tcgen05  # noqa: F401
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import all_contracts
from symexec import load_program, run_kernel  # noqa: F401
from symexec.check.run import new_run, run_checked  # noqa: F401
c = {c.name: c for c in all_contracts()}[sys.argv[1]]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
run_checked(new_run(prog, launch), prog, launch)
