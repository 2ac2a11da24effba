"""Per-statement process time of methods of a module's classes (ast-instrumented copies; used by replay.py lines)."""
import ast, inspect, textwrap, time

_SRC = {}


def _instrument(body, tag):
    out = []
    for st in body:
        for f in ('body', 'orelse', 'finalbody'):
            sub = getattr(st, f, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt) and not isinstance(st, (ast.FunctionDef, ast.ClassDef)):
                setattr(st, f, _instrument(sub, tag))
        out.append(st)
        if isinstance(st, (ast.Return, ast.Continue, ast.Break, ast.Raise)):
            continue
        key = f"({tag!r}, {st.lineno})"
        out.extend(ast.parse(f"_t = _pt(); _T[{key}] = _T.get({key}, 0) + _t - _tp[0]; _tp[0] = _t").body)
    return out


def instrument_all(mod, names):
    T = {}
    for fn in names:
        cls, m = fn.split('.')
        C = mod if cls == "module" else getattr(mod, cls)
        src = textwrap.dedent(inspect.getsource(getattr(C, m)))
        _SRC[fn] = src.split('\n')
        tree = ast.parse(src)
        f = tree.body[0]
        f.body = [ast.parse("_tp = [_pt()]").body[0]] + _instrument(f.body, fn)
        ast.fix_missing_locations(tree)
        ns = dict(vars(mod)); ns['_T'] = T; ns['_pt'] = time.process_time
        exec(compile(tree, fn, 'exec'), ns)
        setattr(C, m, ns[m])
    return T


def show(T):
    for fn, lines in _SRC.items():
        print("==", fn)
        for (g, ln), v in sorted(T.items()):
            if g == fn and v > 2e-4:
                print(f"{v*1e3:7.2f} ms  {lines[ln - 1][:110]}")
