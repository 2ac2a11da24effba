"""sub.py KERNEL: process-time of the race detector's methods (each includes those it calls) in the last of 3 check runs."""
import sys, time, functools
sys.path.insert(0,'.')
import bench.check_overhead as co
from harness.suite import all_contracts
from symexec.check import races
import numpy as np
name=sys.argv[1]
c={c.name:c for c in all_contracts()}[name]
compiled=co.compile_contract(c,'sm_80')
prog=co.load_program(co.ptx_parser.parse(compiled.ptx,'x.ptx'),compiled.entry)
launch=co.launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
spent={}
def wrap(obj, name, label=None):
    f=getattr(obj,name)
    label=label or name
    @functools.wraps(f)
    def g(*a,**k):
        t=time.process_time()
        try: return f(*a,**k)
        finally: spent[label]=spent.get(label,0)+time.process_time()-t
    setattr(obj,name,g)
for m in ("_pairs","_reads","_test","_push_reads","_step","_record_all","_atomics","_same_instruction","_ordered","_gc","_sync_edges"):
    wrap(races.RaceDetector,m)
wrap(races._BufferState,"entries","entries"); wrap(races._BufferState,"padded","padded")
wrap(races,"lexsort3")
for r in range(3):
    spent.clear()
    t=time.process_time(); co.run_checked(co.new_run(prog,launch),prog,launch); tot=time.process_time()-t
print(f"total {tot*1000:.1f}")
for k,v in sorted(spent.items(), key=lambda x:-x[1]): print(f"{k:20s} {v*1000:.1f}")
