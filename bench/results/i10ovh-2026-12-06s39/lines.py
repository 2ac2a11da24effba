"""lines.py KERNEL module:Class:method ...: per-statement process-time of those methods (top-level statements of their bodies; a nested block counts as one; instrumentation inflates totals ~1.5x) in the last of 3 check runs."""
import sys, time, ast, inspect, textwrap, functools
sys.path.insert(0,'.')
import bench.check_overhead as co
from harness.suite import all_contracts
import importlib
name=sys.argv[1]; targets=sys.argv[2:]
T={}
def instrument(modname, clsname, meth):
    mod=importlib.import_module(modname); cls=getattr(mod,clsname)
    f=cls.__dict__[meth]
    src=textwrap.dedent(inspect.getsource(f)); lines0=inspect.getsourcelines(f)[1]
    tree=ast.parse(src); fn=tree.body[0]
    new=[]
    for st in fn.body:
        key=f"{meth}:{st.lineno+lines0-1}"
        pre=ast.parse(f"__t0 = __pt()").body[0]
        post=ast.parse(f"__T[{key!r}] = __T.get({key!r}, 0.0) + __pt() - __t0").body[0]
        if isinstance(st,(ast.Return,)) :
            new += [pre, ast.parse(f"__r = 0").body[0]]
            new[-1].value=st.value if st.value is not None else ast.Constant(None)
            new += [post, ast.Return(value=ast.Name('__r',ast.Load()))]
        else:
            new += [pre, st, post]
    fn.body=new; fn.decorator_list=[]
    ast.fix_missing_locations(tree)
    g=dict(mod.__dict__); g['__pt']=time.process_time; g['__T']=T
    exec(compile(tree, f"<{meth}>", "exec"), g)
    setattr(cls, meth, g[fn.name])
for t in targets:
    instrument(*t.split(":"))
c={c.name:c for c in all_contracts()}[name]
compiled=co.compile_contract(c,'sm_80')
prog=co.load_program(co.ptx_parser.parse(compiled.ptx,'x.ptx'),compiled.entry)
launch=co.launch_for(c,compiled,c.make_inputs("verify","normal",0,lazy=True),"verify")
for r in range(3):
    T.clear(); t=time.process_time(); co.run_checked(co.new_run(prog,launch),prog,launch); tot=time.process_time()-t
print(f"total {tot*1000:.1f}")
for k,v in sorted(T.items(), key=lambda x:-x[1])[:40]: print(f"{k:28s} {v*1000:7.2f}")
