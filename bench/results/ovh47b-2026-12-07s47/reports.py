"""reports.py [suite|regression] [NAME...]: every sm_80 suite kernel's check report (run_checked on an enumerating
run, verify instance) or every tests/regression case's (volta.check_cli.check_file), once with main's race detector
(races.py of $BASE, default /tmp/ovh47b-base) and once with the branch's, in one process; repr (suite) or the JSON
(regression) compared. A case that differs is run twice more with the branch's detector (is it deterministic?)."""
import importlib.util, json, os, sys, time
from pathlib import Path
sys.path.insert(0, '.')
what, names = sys.argv[1], set(sys.argv[2:])
sys.argv = ['x']
from bench.check_overhead import *
from harness.contract import ContractError
from symexec.check import state, races as B
base = os.environ.get("BASE", "/tmp/ovh47b-base")
spec = importlib.util.spec_from_file_location("symexec.check._races_base", f"{base}/symexec/check/races.py")
A = importlib.util.module_from_spec(spec); A.__package__ = "symexec.check"; sys.modules[spec.name] = A
spec.loader.exec_module(A)


def untimed(x):
    """A report's JSON without its "seconds" fields (wall time of its parts)."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [untimed(v) for v in x]
    return x


def both(fn):
    out = []
    for mod in (A, B):
        state.RaceDetector = mod.RaceDetector
        out.append(fn())
    state.RaceDetector = B.RaceDetector
    return out


same = diff = 0
t0 = time.process_time()
if what == "suite":
    for c in all_contracts():
        if names and c.name not in names:
            continue
        try:
            compiled = compile_contract(c, 'sm_80')
        except ContractError:  # (an sm_90a-only kernel)
            continue
        prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
        launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
        a, b = both(lambda: repr(run_checked(new_run(prog, launch), prog, launch)))
        ok = a == b
        same += ok; diff += not ok
        print(f"{c.name}: {'identical' if ok else 'DIFFERENT'} ({len(a)} chars)", flush=True)
else:
    from volta.check_cli import check_file
    from volta.inputs import header
    from volta.results import BadInput
    for p in sorted(Path("tests/regression").glob("*.ptx")):
        if "expect" not in header(p) or (names and p.stem not in names):
            continue

        def one():
            try:
                r = check_file(p)
            except BadInput as e:
                return f"bad input: {e}"
            return json.dumps(untimed(r.to_json()), sort_keys=True, default=str)
        a, b = both(one)
        ok = a == b
        if not ok:
            again = {one() for _ in range(2)}
            print(f"{p.stem}: DIFFERENT (branch again: {'same as before' if again == {b} else 'varies'})", flush=True)
        same += ok; diff += not ok
print(f"{what}: {same} identical, {diff} different, {time.process_time() - t0:.1f} CPU s, load {open('/proc/loadavg').read().split()[0]}")
