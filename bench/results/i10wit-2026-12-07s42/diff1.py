"""diff1.py CASE: two check_file runs of one regression case in one process; the JSON lines that differ."""
import sys, json, difflib
sys.path.insert(0, '.')
import tcgen05  # noqa: F401
from pathlib import Path
from volta.check_cli import check_file


def rep(p: Path) -> list[str]:
    r = check_file(p).to_json()
    r.get('stats', {}).pop('seconds', None)
    return json.dumps(r, sort_keys=True, indent=1, default=str).splitlines()


p = Path('tests/regression') / f'{sys.argv[1]}.ptx'
a, b = rep(p), rep(p)
print('\n'.join(difflib.unified_diff(a, b, lineterm='', n=1)) or 'same')
