"""twice.py [CASE...]: run each tests/regression case (all when none named) through check_file twice in one process
and list those whose JSON reports differ (stats.seconds dropped)."""
import sys, json
sys.path.insert(0, '.')
import tcgen05  # noqa: F401
from pathlib import Path
from volta.check_cli import check_file
from volta.results import BadInput


def rep(p: Path) -> str:
    try:
        r = check_file(p).to_json()
    except BadInput as e:  # a launch CUDA refuses: the message is the report
        return f'bad input: {e}'
    r.get('stats', {}).pop('seconds', None)
    return json.dumps(r, sort_keys=True, default=str)


names = sys.argv[1:] or sorted(q.stem for q in Path('tests/regression').glob('*.ptx'))
diff = []
for name in names:
    p = Path('tests/regression') / f'{name}.ptx'
    a, b = rep(p), rep(p)
    if a != b:
        diff.append(name)
        print('DIFF', name, flush=True)
print(f'{len(names)} cases, {len(diff)} differ:', ' '.join(diff), flush=True)
