import sys, collections, re
raw, target, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = collections.Counter(); total = 0
for line in open(raw):
    line = line.rstrip()
    if not line: continue
    stack, n = line.rsplit(' ', 1); n = int(n)
    frames = stack.split(';')
    if not any('run_checked' in f for f in frames): continue
    total += n
    for i, f in enumerate(frames):
        if f.startswith(target + ' '):
            c[' <- '.join(re.sub(r'\(.*/', '(', x) for x in reversed(frames[max(0,i-depth):i]))] += n
            break
for f, n in c.most_common(15): print(f"{100*n/total:5.1f}% {f}")
