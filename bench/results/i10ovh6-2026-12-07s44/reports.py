"""reports.py K...: the repr of run_checked's report (sm_80, the verify instance, an enumerating run) per kernel, the
tree's path normalised: run in two trees and diff the outputs."""
import os, sys
sys.path.insert(0, '.')
ks = sys.argv[1:]
sys.argv = ['x']
from bench.check_overhead import *
by = {c.name: c for c in all_contracts()}
for k in ks or sorted(by):
    c = by[k]
    if c.min_arch > 80:
        continue
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    rep = run_checked(new_run(prog, launch), prog, launch)
    print(k, repr(rep).replace(os.getcwd(), '.'), flush=True)
