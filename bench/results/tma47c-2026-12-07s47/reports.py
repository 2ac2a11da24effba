"""Reports of suite contracts as JSON lines (verdict, findings, notes, assumptions, grid method, loops summarised) and
process CPU per check, for a before/after comparison: run once in each tree.
usage: PYTHONPATH=. python reports.py OUT.jsonl INSTANCE ARCH:CONTRACT ..."""
import json
import sys
import time

import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel

out, inst = sys.argv[1], sys.argv[2]
with open(out, "a") as fh:
    for item in sys.argv[3:]:
        arch, name = item.split(":")
        c = get(name)
        comp = compile_contract(c, arch, instance=inst)
        launch = launch_for(c, comp, c.make_inputs(inst, "normal", 0, lazy=True), inst)
        prog = load_program(ptx_parser.parse(comp.ptx, "k.ptx"), comp.entry)
        t = time.process_time()
        try:
            with time_limit(300):
                r = check_kernel(prog, launch)
            rec = {"verdict": r.verdict, "findings": [f.message for f in r.findings], "notes": r.notes,
                   "assumptions": r.assumptions, "grid_method": r.stats.get("grid_method"),
                   "loops": r.stats.get("loops_summarised")}
        except BaseException as e:  # noqa: BLE001
            rec = {"error": f"{type(e).__name__}: {e}"}
        cpu = time.process_time() - t
        fh.write(json.dumps({"arch": arch, "contract": name, "instance": inst, "cpu": round(cpu, 2), "report": rec},
                            default=str) + "\n")
        fh.flush()
        print(arch, name, inst, rec.get("verdict", rec.get("error"))[:80], f"{cpu:.1f}s", flush=True)
