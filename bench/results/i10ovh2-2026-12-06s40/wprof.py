"""wprof.py K [sort] [n]: plain and check CPU (least of 3), then cProfile of one warm check run (after 2 warm-ups and the timed ones)."""
import sys, cProfile, pstats, io, time
k = sys.argv[1]; sort = sys.argv[2] if len(sys.argv) > 2 else 'tottime'; n = int(sys.argv[3]) if len(sys.argv) > 3 else 40
sys.path.insert(0, '.')
sys.argv = ['x']
from bench.check_overhead import *
from bench.check_overhead import _best
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
for _ in range(2):
    run_checked(new_run(prog, launch), prog, launch)
pt, _ = _best(lambda: run_kernel(prog, launch), 3)
ct, _ = _best(lambda: run_checked(new_run(prog, launch), prog, launch), 3)
print(f"plain {pt:.3f} check {ct:.3f} ratio {ct/pt:.2f}")
pr = cProfile.Profile()
pr.enable()
run_checked(new_run(prog, launch), prog, launch)
pr.disable()
pstats.Stats(pr).sort_stats(sort).print_stats(n)
