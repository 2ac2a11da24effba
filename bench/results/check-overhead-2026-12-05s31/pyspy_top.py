import sys, collections, re
raw = sys.argv[1]; top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
self_c = collections.Counter(); incl = collections.Counter(); total = 0
for line in open(raw):
    line = line.rstrip()
    if not line: continue
    stack, n = line.rsplit(' ', 1); n = int(n)
    frames = stack.split(';')
    if not any('run_checked' in f for f in frames): continue
    total += n
    def short(f):
        m = re.match(r'(.*) \((.*):(\d+)\)', f)
        if not m: return f
        fn, path, _ = m.groups()
        return fn + " (" + "/".join(path.split("/")[-2:]) + ")"
    fs = [short(f) for f in frames]
    self_c[fs[-1]] += n
    for f in set(fs): incl[f] += n
print('total', total)
print('--- self')
for f, n in self_c.most_common(top): print(f"{100*n/total:5.1f}% {f}")
print('--- inclusive')
for f, n in incl.most_common(top*2): print(f"{100*n/total:5.1f}% {f}")
