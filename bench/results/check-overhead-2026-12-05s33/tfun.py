import sys, os, time, importlib
sys.path.insert(0,'.')
import tcgen05, ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import all_contracts
from symexec import load_program
from symexec.check.run import new_run, run_checked
name=sys.argv[1]; targets=sys.argv[2:]
c={c.name:c for c in all_contracts()}[name]
compiled=compile_contract(c,'sm_80')
prog=load_program(ptx_parser.parse(compiled.ptx,'x.ptx'),compiled.entry)
launch=launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
spent={}
for t in targets:
    mod,cls,meth=t.split(':'); C=getattr(importlib.import_module(mod),cls); f=C.__dict__[meth]
    def w(*a,_f=f,_t=t,**k):
        t0=time.process_time(); r=_f(*a,**k); spent[_t]=spent.get(_t,0)+time.process_time()-t0; return r
    setattr(C,meth,w)
run_checked(new_run(prog,launch),prog,launch)
best=1e9; bs={}
for i in range(int(os.environ.get("REPS","3"))):
    spent.clear(); t0=time.process_time(); run_checked(new_run(prog,launch),prog,launch); d=time.process_time()-t0
    if d<best: best=d; bs=dict(spent)
print(name, f"check {best*1000:.1f} ms", {k.split(':')[-1]:round(v*1000,1) for k,v in bs.items()})
