"""which.py CASE...: for each regression case, on this tree (branch): how many results took the direct product path
(Tracker._product_result not None), and whether two check_file runs in one process give the same report
(stats.seconds aside); then the verdicts of the two reports.sh dumps."""
import json, sys
from pathlib import Path
sys.path.insert(0, '.')
import tcgen05  # noqa
from volta.check_cli import check_file
import symexec.check.shadow as S
hits = [0]
f = S.Tracker._product_result
def counted(self, value):
    got = f(self, value)
    hits[0] += got is not None
    return got
S.Tracker._product_result = counted
def rep(p):
    j = check_file(p).to_json()
    j.get("stats", {}).pop("seconds", None)
    return json.dumps(j, sort_keys=True, default=str)
A = json.load(open('/tmp/i10ovh4/rep-base.json')); B = json.load(open('/tmp/i10ovh4/rep-branch.json'))
for name in sys.argv[1:]:
    p = Path('tests/regression') / f'{name}.ptx'
    hits[0] = 0
    r1 = rep(p); h = hits[0]
    r2 = rep(p)
    print(f"{name}: direct product results {h}; two runs in one process same={r1 == r2}; verdict base {A[name]['verdict']} branch {B[name]['verdict']}", flush=True)
