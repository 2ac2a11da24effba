"""census.py K: which instructions write registers in check mode, tainted or not, with lanes count."""
import sys, collections, time
sys.path.insert(0, '.')
k = sys.argv[1]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import shadow
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
cnt = collections.Counter(); tm = collections.Counter()
orig = shadow.Tracker.on_write_reg
def w(self, name, value, width, mask, full, old=None):
    t0 = time.perf_counter()
    key = (self.ins.name if self.ins else '?', bool(self.tainted), int(self.control), full, self.loaded is not None, self.collective, self.n)
    r = orig(self, name, value, width, mask, full, old)
    tm[key] += time.perf_counter() - t0
    cnt[key] += 1
    return r
run_checked(new_run(prog, launch), prog, launch)
shadow.Tracker.on_write_reg = w
run_checked(new_run(prog, launch), prog, launch)
tot = sum(tm.values())
print("total on_write_reg s", tot)
for key, t in tm.most_common(30):
    print(f"{t:.4f} {cnt[key]:6d} {t/cnt[key]*1e6:7.1f}us", key)
