# usage (from the branch root): BASE=BASE_TREE PYTHONPATH=. python abm.py KERNEL module:Class:method N
# in-process A/B of one method: branch's vs base's source (from /tmp/i10ov6_base), alternating runs
import sys, time, re, textwrap, ast
sys.path.insert(0,'.')
import os; exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'kernel.py')).read())
import importlib
modname, cls, meth = sys.argv[2].split(':'); n = int(sys.argv[3])
mod = importlib.import_module(modname)
C = getattr(mod, cls)
src = open('' + os.environ.get('BASE', '/tmp/i10ov6_base') + '/' + modname.replace('.', '/') + '.py').read()
tree = ast.parse(src)
node = [f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls for f in c.body if isinstance(f, ast.FunctionDef) and f.name == meth][0]
fsrc = ast.get_source_segment(src, node)
ns = dict(vars(mod)); exec(textwrap.dedent(fsrc), ns)
impl = {'new': C.__dict__[meth], 'old': ns[meth]}
spent = [0.0]
def wrap(f):
    def w(*a, **k):
        t0 = time.process_time(); r = f(*a, **k); spent[0] += time.process_time() - t0; return r
    return w
best = {'new': [1e9, 1e9], 'old': [1e9, 1e9]}
for i in range(n):
    for which in ('new', 'old') if i % 2 == 0 else ('old', 'new'):
        setattr(C, meth, wrap(impl[which])); spent[0] = 0
        t0 = time.process_time(); run_checked(new_run(prog, launch), prog, launch); d = time.process_time() - t0
        best[which] = [min(best[which][0], d), min(best[which][1], spent[0])]
print(sys.argv[1], meth, {k: (round(v[0]*1e3, 1), round(v[1]*1e3, 2)) for k, v in best.items()}, '(check ms, method ms; least of', n, ')')
