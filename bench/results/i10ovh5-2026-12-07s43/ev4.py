"""ev4.py K: how many of the race detector's entries an exact interval scheme could merge: per window, the new
entries (granule keys of accesses) vs the distinct (access record, its byte's latest earlier write record, reads
kept since) they carry; entries of one access whose bytes keep the same state are what interval keys would merge."""
import sys
sys.path.insert(0,'.')
k=sys.argv[1]; on = len(sys.argv) > 2; sys.argv=['x']
from bench.check_overhead import *
import numpy as np
import symexec.check.races as rc
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, "b.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
tot = {'entries': 0, 'distinct': 0}
op = rc.RaceDetector._pairs
def pairs(self, st, byte, rec, kind):
    # each new entry's byte state before the window: latest write, newest read node
    w = st.lastw[byte].astype(np.int64); h = st.rhead[byte].astype(np.int64)
    hr = np.where(h >= 0, self._node_rec[np.maximum(h, 0)], -1) if self._nodes else h
    key = np.stack([rec.astype(np.int64), w, hr], 1)
    tot['entries'] += byte.size
    tot['distinct'] += np.unique(key, axis=0).shape[0]
    return op(self, st, byte, rec, kind)
rc.RaceDetector._pairs = pairs
r = new_run(prog, launch); r.state.detector.recoarsen = on

rep = run_checked(r, prog, launch)
print(k, 'recoarsen' if on else 'main', tot, round(tot['distinct'] / tot['entries'], 3))
