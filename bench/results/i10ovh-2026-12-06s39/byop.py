"""byop.py KERNEL: process-time of Tracker.on_write_reg per opcode (T tainted inputs, C collective, L load) in the last of 3 check runs."""
import sys, time, collections
sys.path.insert(0,'.')
import bench.check_overhead as co
from harness.suite import all_contracts
from symexec.check import shadow
name=sys.argv[1]
c={c.name:c for c in all_contracts()}[name]
compiled=co.compile_contract(c,'sm_80')
prog=co.load_program(co.ptx_parser.parse(compiled.ptx,'x.ptx'),compiled.entry)
launch=co.launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
f=shadow.Tracker.on_write_reg
T=collections.defaultdict(lambda:[0.0,0])
def g(self,*a,**k):
    t=time.process_time()
    try: return f(self,*a,**k)
    finally:
        key=(self.ins.opcode+"".join(sorted(self.ins.modifiers))) if self.ins is not None else "?"
        key+=(" T" if self.tainted else "")+(" C" if self.collective else "")+(" L" if self.loaded is not None else "")
        e=T[key]; e[0]+=time.process_time()-t; e[1]+=1
shadow.Tracker.on_write_reg=g
for r in range(3):
    T.clear(); t=time.process_time(); co.run_checked(co.new_run(prog,launch),prog,launch); tot=time.process_time()-t
print("total", tot, "lanes", launch.num_ctas)
for k,(v,n) in sorted(T.items(), key=lambda x:-x[1][0])[:18]: print(f"{k:40s} {v*1000:7.2f} ms {n:5d} calls {v/n*1e6:6.1f} us")
