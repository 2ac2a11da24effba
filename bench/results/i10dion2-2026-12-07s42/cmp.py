import json, sys
def rows(f):
    d = json.load(open(f)); out = {}
    for r in d['records']:
        out[(r['contract'], r['arch'])] = r['volta']
    return out
b, n = rows(sys.argv[1]), rows(sys.argv[2])
for k in b:
    x, y = b[k], n.get(k, {})
    ls = lambda v: [(s['from_iteration'], s['iterations_skipped']) for s in (v.get('loops_summarised') or [])]
    cx, cy = x.get('cpu_seconds'), y.get('cpu_seconds')
    print(f"{k[0]:22s} {k[1]:7s} {cx and round(cx,2)!s:>7} {cy and round(cy,2)!s:>7} {round(cx/cy,2) if cx and cy else '-':>5} "
          f"{str(x.get('verdict'))[:20]:20s} {str(y.get('verdict'))[:20]:20s} {x.get('grid_method')}/{y.get('grid_method')} "
          f"{ls(x)} -> {ls(y)} notes {len(x.get('notes') or [])}/{len(y.get('notes') or [])}")
