"""nn.py K: how many product_numbers calls one check run of suite kernel K makes, by lane count."""
import sys, collections
sys.path.insert(0,'.')
k=sys.argv[1]; sys.argv=['x']
from bench.check_overhead import *
import symexec.check.shadow as S
cnt=collections.Counter()
f=S.product_numbers
def g(key,k,a,*r):
    cnt[a.shape[0]]+=1; return f(key,k,a,*r)
S.product_numbers=g
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
run_checked(new_run(prog, launch), prog, launch)
print(k, launch.num_ctas, cnt)
