"""hashseed_note.py CASE.ptx: the loop summariser's "not summarised" notes of one regression case (run under several PYTHONHASHSEED values)."""
import sys, json
sys.path.insert(0, '.')
import tcgen05  # noqa
from volta.check_cli import check_file
r = check_file(sys.argv[1]).to_json()
print([n for n in r.get('notes', []) if 'not summarised' in str(n)])
