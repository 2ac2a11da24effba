import sys, os, time, collections
sys.path.insert(0,'.')
import tcgen05, ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import all_contracts
from symexec import load_program
from symexec.check.run import new_run, run_checked
import symexec.check.shadow as S
name=sys.argv[1]
c={c.name:c for c in all_contracts()}[name]
compiled=compile_contract(c,'sm_80')
prog=load_program(ptx_parser.parse(compiled.ptx,'x.ptx'),compiled.entry)
launch=launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
cnt=collections.Counter(); tm=collections.Counter()
orig=S.Tracker._result
def r(self,value,width):
    t=time.process_time(); out=orig(self,value,width); d=time.process_time()-t
    ins=self.ins; key=(ins.name if ins else '?', 'coll' if self.collective else ('load' if self.loaded is not None else ('T' if self.tainted else '-')), self.n)
    cnt[key]+=1; tm[key]+=d; return out
S.Tracker._result=r
run_checked(new_run(prog,launch),prog,launch)
for k,v in tm.most_common(25): print(f"{v*1000:7.1f} ms {cnt[k]:6d} {k}")
