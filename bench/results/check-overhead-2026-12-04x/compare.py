import json, sys, re
# usage: compare.py A.json B.json [TREE_ROOT ...]: tree roots (beyond this session's) that report paths
# may contain are normalised to <root>/ before comparing
ROOTS = ['/work/main', '/tmp/i10ov_main', r'/tmp/i10ov/b\d+', '/work/wt/i10ov'] + [re.escape(r) for r in sys.argv[3:]]
def load(p):
    t = open(p).read()
    t = re.sub('(' + '|'.join(sorted(ROOTS, key=len, reverse=True)) + r')/(?!\.venv)', '<root>/', t)
    return json.loads(t)
a = load(sys.argv[1]); b = load(sys.argv[2])
print("keys only in one:", set(a) ^ set(b))
same = ndiff = 0
for k in sorted(set(a) & set(b)):
    x, y = a[k], b[k]
    if isinstance(x, dict) and isinstance(y, dict):
        xs, ys = dict(x), dict(y)
        sx, sy = dict(xs.pop('stats', {})), dict(ys.pop('stats', {}))
        for s_ in (sx, sy): s_.pop('seconds', None)
        if xs == ys and sx == sy:
            same += 1; continue
        ndiff += 1
        for f in xs:
            if xs.get(f) != ys.get(f):
                print('DIFF', k, f, '\n   A:', str(xs.get(f))[:400], '\n   B:', str(ys.get(f))[:400])
        if sx != sy: print('DIFF', k, 'stats', sx, sy)
    elif x == y:
        same += 1
    else:
        ndiff += 1
        print('DIFF', k, str(x)[:300], str(y)[:300])
print(f'{len(set(a) & set(b))} reports compared: {same} identical (stats.seconds aside), {ndiff} differ')
