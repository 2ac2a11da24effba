"""which.py CASE...: per regression case, whether the shortcut applies (barrier_forgets), bytes forgotten, and whether
two check_file runs in one process give the same JSON report (stats.seconds aside)."""
import sys, json
sys.path.insert(0, '.')
import tcgen05  # noqa
from pathlib import Path
import ptx_parser
from symexec import load_program
from symexec.check.state import barrier_forgets
from volta.inputs import spec_launch
import symexec.check.races as RC
from volta.check_cli import check_file
n = [0]
real = RC.RaceDetector.drop_ordered
def spy(self, *a):
    x = real(self, *a); n[0] += x; return x
RC.RaceDetector.drop_ordered = spy
for name in sys.argv[1:]:
    p = Path('tests/regression') / f'{name}.ptx'
    m = ptx_parser.parse_file(p); launch, fn = spec_launch(p, m, None, None)
    prog = load_program(m, fn.name)
    n[0] = 0
    r1 = check_file(p).to_json(); d1 = n[0]
    r2 = check_file(p).to_json()
    for r in (r1, r2): r.get('stats', {}).pop('seconds', None)
    print(name, 'generic_only', barrier_forgets(prog), 'bytes forgotten', d1, 'two runs same:', json.dumps(r1, sort_keys=True, default=str) == json.dumps(r2, sort_keys=True, default=str), flush=True)
