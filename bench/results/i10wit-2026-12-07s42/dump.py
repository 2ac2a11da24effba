"""dump.py OUT CASE...: the JSON report of each regression case (stats.seconds dropped) into OUT, to compare two
processes' reports (cmp)."""
import sys, json
sys.path.insert(0, '.')
import tcgen05  # noqa: F401
from pathlib import Path
from volta.check_cli import check_file

out = {}
for name in sys.argv[2:]:
    r = check_file(Path('tests/regression') / f'{name}.ptx').to_json()
    r.get('stats', {}).pop('seconds', None)
    out[name] = r
Path(sys.argv[1]).write_text(json.dumps(out, sort_keys=True, indent=1, default=str))
