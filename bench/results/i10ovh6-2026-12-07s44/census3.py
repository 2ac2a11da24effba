import sys, collections
sys.path.insert(0, '.')
k = sys.argv[1]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import shadow
import numpy as np
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
cnt = collections.Counter()
orig = shadow._LoadElements.__init__
def init(self, bh, bp, bt, nb):
    orig(self, bh, bp, bt, nb)
    cnt[(self.plain, self.untainted, float((self.taint != 0).mean()).__round__(2), float(self.whole.mean()).__round__(2), bh.shape)] += 1
shadow._LoadElements.__init__ = init
run_checked(new_run(prog, launch), prog, launch)
for key, v in cnt.most_common(12):
    print(v, key)
