"""one.py CASE: one check_file run: drop_ordered calls, the first finding's region and count, the CTAs executed."""
import sys, json
sys.path.insert(0, '.')
import tcgen05  # noqa
from pathlib import Path
from volta.check_cli import check_file
import symexec.check.races as RC
calls = [0]
if hasattr(RC.RaceDetector, "drop_ordered"):
    real = RC.RaceDetector.drop_ordered
    def spy(self, *a):
        calls[0] += 1; return real(self, *a)
    RC.RaceDetector.drop_ordered = spy
r = check_file(Path('tests/regression') / f'{sys.argv[1]}.ptx').to_json()
f = r['findings'][0]['details']
print(sys.argv[1], 'drop calls', calls[0], f.get('region'), f.get('conflicts'), r['assumptions'][0][-40:])
