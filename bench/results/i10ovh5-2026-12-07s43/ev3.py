"""ev3.py K: detector entry counts on kernel K with re-coarsening off and on (needs recoarsen-tried.patch applied):
entries computed (refinement passes included), entries tested (_pairs), refinements, windows."""
import sys, time
sys.path.insert(0,'.')
k=sys.argv[1]; sys.argv=['x']
from bench.check_overhead import *
import symexec.check.races as rc
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, "b.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
cnt = {'ent':0, 'final':0, 'refine':0, 'steps':0}
oe = rc._BufferState.entries
def entries(self, flat):
    got = oe(self, flat)
    if isinstance(got, tuple): cnt['ent'] += got[0].size
    return got
rc._BufferState.entries = entries
op = rc.RaceDetector._pairs
def pairs(self, st, byte, rec, kind):
    cnt['final'] += byte.size; cnt['steps'] += 1
    return op(self, st, byte, rec, kind)
rc.RaceDetector._pairs = pairs
orf = rc.RaceDetector._refine
def refine(self, *a):
    cnt['refine'] += 1
    return orf(self, *a)
rc.RaceDetector._refine = refine
for on in (False, True):
    for x in cnt: cnt[x] = 0
    r = new_run(prog, launch); r.state.detector.recoarsen = on
    rep = run_checked(r, prog, launch)
    print(on, cnt)
