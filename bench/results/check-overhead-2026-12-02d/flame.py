"""Summarise py-spy raw (collapsed) stacks: top frames by self and by inclusive share."""
import sys, collections
self_c, incl = collections.Counter(), collections.Counter()
total = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(' ')
    n = int(n); total += n
    frames = [f.split(' (')[0] + ' (' + f.split(' (')[1].split(':')[0].replace('/work/wt/i10c/','').replace('/work/wt/i10c-base/','') + ')' if ' (' in f else f for f in stack.split(';')]
    self_c[frames[-1]] += n
    for f in set(frames):
        incl[f] += n
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
print(f'samples {total}')
print('## self'); [print(f'{100*v/total:5.1f}%  {k}') for k, v in self_c.most_common(top)]
print('## inclusive (check-mode frames and emulator)')
[print(f'{100*v/total:5.1f}%  {k}') for k, v in incl.most_common(200) if any(s in k for s in ('check/', 'semantics/', 'machine', 'execctx', 'paged'))][:0]
n = 0
for k, v in incl.most_common(400):
    if any(s in k for s in ('check/', 'semantics/', 'machine', 'execctx', 'paged')):
        print(f'{100*v/total:5.1f}%  {k}'); n += 1
        if n >= top: break
