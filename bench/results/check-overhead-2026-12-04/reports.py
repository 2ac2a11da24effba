"""Dump every regression case's and suite kernel's full check report (JSON) for comparison between trees."""
import sys, json, time
from pathlib import Path
sys.path.insert(0, '.')
import tcgen05  # noqa
import ptx_parser
from volta.check_cli import check_file
from volta.inputs import header
from volta.results import BadInput
out = {}
which = sys.argv[2] if len(sys.argv) > 2 else "both"
if which in ("both", "reg"):
    for p in sorted(Path('tests/regression').glob('*.ptx')):
        if 'expect' not in header(p):
            continue
        try:
            r = check_file(p)
            out[p.stem] = r.to_json()
        except BadInput as e:
            out[p.stem] = f"bad input {e}"
        except Exception as e:
            out[p.stem] = f"error {type(e).__name__}: {e}"
if which in ("both", "suite"):
    from harness.suite import all_contracts
    from harness.compile import compile_contract
    from harness.emulate import launch_for
    from symexec import load_program
    from symexec.check.run import new_run, run_checked
    for c in [c for c in all_contracts() if c.min_arch <= 80]:
        compiled = compile_contract(c, 'sm_80')
        prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
        launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
        out['suite:' + c.name] = run_checked(new_run(prog, launch), prog, launch).to_json()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1, sort_keys=True, default=str))
