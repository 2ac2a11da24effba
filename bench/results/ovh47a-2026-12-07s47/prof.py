import sys, cProfile, pstats, io, time
sys.path.insert(0, ".")
sys.argv=[sys.argv[0]]+sys.argv[1:]
import bench.check_overhead as co
from harness.suite import all_contracts
import ptx_parser
name=sys.argv[1]; arch=sys.argv[2] if len(sys.argv)>2 else "sm_80"
c={c.name:c for c in all_contracts()}[name]
compiled=co.compile_contract(c,arch)
prog=co.load_program(ptx_parser.parse(compiled.ptx,f"{name}.ptx"),compiled.entry)
launch=co.launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
for _ in range(3):
    co.run_checked(co.new_run(prog,launch),prog,launch); co.run_kernel(prog,launch)
N=int(sys.argv[3]) if len(sys.argv)>3 else 20
t=time.process_time()
for _ in range(N): co.run_kernel(prog,launch)
p=(time.process_time()-t)/N
t=time.process_time()
for _ in range(N): co.run_checked(co.new_run(prog,launch),prog,launch)
ck=(time.process_time()-t)/N
print(f"plain {p*1e3:.2f} ms check {ck*1e3:.2f} ms ratio {ck/p:.2f}")
pr=cProfile.Profile(); pr.enable()
for _ in range(N): co.run_checked(co.new_run(prog,launch),prog,launch)
pr.disable()
s=io.StringIO(); pstats.Stats(pr,stream=s).sort_stats(sys.argv[4] if len(sys.argv)>4 else "tottime").print_stats(45); print(s.getvalue())
