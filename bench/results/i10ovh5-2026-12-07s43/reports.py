"""reports.py K...: repr of each sm_80 suite kernel's check report (run_checked on an enumerating run, as
bench/check_overhead.py), one line per kernel; run in two trees and diff."""
import sys
sys.path.insert(0, '.')
names = sys.argv[1:]; sys.argv = ['x']
from bench.check_overhead import *
for c in all_contracts():
    if names and c.name not in names:
        continue
    try:
        compiled = compile_contract(c, 'sm_80')
    except Exception as e:  # a contract for a newer target
        continue
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    print(c.name, repr(run_checked(new_run(prog, launch), prog, launch)), flush=True)
