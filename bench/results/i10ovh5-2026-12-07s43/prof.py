"""prof.py K [N]: cProfile of the second check run of kernel K (the first warms caches), top N by own time and by cumulative."""
import sys, cProfile, pstats, io
sys.path.insert(0, '.')
k = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
sys.argv = ['x']
from bench.check_overhead import *
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
run_checked(new_run(prog, launch), prog, launch)
pr = cProfile.Profile(); pr.enable()
run_checked(new_run(prog, launch), prog, launch)
pr.disable()
for key in ("tottime", "cumulative"):
    buf = io.StringIO(); pstats.Stats(pr, stream=buf).sort_stats(key).print_stats(n); print(buf.getvalue())
