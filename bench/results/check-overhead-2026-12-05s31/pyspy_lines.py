import sys, collections, re
raw, func = sys.argv[1], sys.argv[2]
c = collections.Counter(); total = 0; ftot = 0
for line in open(raw):
    line = line.rstrip()
    if not line: continue
    stack, n = line.rsplit(' ', 1); n = int(n)
    frames = stack.split(';')
    if not any('run_checked' in f for f in frames): continue
    total += n
    for i, f in enumerate(frames):
        m = re.match(r'(.*) \((.*):(\d+)\)', f)
        if m and m.group(1) == func:
            c[int(m.group(3))] += n; ftot += n
            break
print('total', total, func, ftot, f"{100*ftot/total:.1f}%")
for ln, n in sorted(c.items()): print(f"{ln:5d} {100*n/total:5.1f}%")
