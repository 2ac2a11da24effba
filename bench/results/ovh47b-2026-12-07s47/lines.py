"""lines.py K FUNC...: process time per statement (nested statements counted in their own line and in their
block's) of races methods FUNC (RaceDetector.m or _BufferState.m; ast-instrumented copies), over the second check
run of kernel K."""
import sys, time, ast, inspect, textwrap
sys.path.insert(0, '.')
k = sys.argv[1]; funcs = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import races
T = {}


def instrument(body, tag):
    out = []
    for st in body:
        for f in ('body', 'orelse', 'finalbody'):
            sub = getattr(st, f, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt) and not isinstance(st, (ast.FunctionDef, ast.ClassDef)):
                setattr(st, f, instrument(sub, tag))
        out.append(st)
        if isinstance(st, (ast.Return, ast.Continue, ast.Break, ast.Raise)):
            continue
        key = f"({tag!r}, {st.lineno})"
        out.extend(ast.parse(f"_t = _pt(); _T[{key}] = _T.get({key}, 0) + _t - _tp[0]; _tp[0] = _t").body)
    return out


srcs = {}
for fn in funcs:
    cls, m = fn.split('.')
    C = getattr(races, cls)
    src = textwrap.dedent(inspect.getsource(getattr(C, m)))
    srcs[fn] = src.split('\n')
    tree = ast.parse(src)
    f = tree.body[0]
    f.body = [ast.parse("_tp = [_pt()]").body[0]] + instrument(f.body, fn)
    ast.fix_missing_locations(tree)
    ns = dict(vars(races)); ns['_T'] = T; ns['_pt'] = time.process_time
    exec(compile(tree, fn, 'exec'), ns)
    setattr(C, m, ns[m])
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
run_checked(new_run(prog, launch), prog, launch)
T.clear()
t0 = time.process_time(); run_checked(new_run(prog, launch), prog, launch); print("check", time.process_time() - t0)
for fn in funcs:
    print("==", fn, f"{sum(v for (g, _), v in T.items() if g == fn)*1e3:.1f} ms (nested counted twice)")
    for (g, ln), v in sorted(T.items()):
        if g == fn and v > 2e-4:
            print(f"{v*1e3:7.2f} ms  {srcs[fn][ln - 1][:110]}")
