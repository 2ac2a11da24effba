"""One suite contract at one instance and target, checked as bench/verify.py's child does it (compile,
lazy inputs, launch_for, parse + load + check_kernel), printing one JSON line: the check's CPU and wall
seconds and everything the verdict says (verdict, every finding with its sites, notes, assumptions,
stats without times), so that two trees' records can be compared field by field.

    PYTHONPATH=TREE python bench/results/i10bs-2026-12-06s38/record.py gemm_fp16 sm_100a bench
"""

from __future__ import annotations

import json
import sys
import time

import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel

name, arch, instance = sys.argv[1:4]
c = get(name)
compiled = compile_contract(c, arch, instance=instance)
launch = launch_for(c, compiled, c.make_inputs(instance, "normal", 0, lazy=True), instance)
t0, c0 = time.perf_counter(), time.process_time()
prog = load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
with time_limit(800):
    r = check_kernel(prog, launch)
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
timing = {"seconds"}
print(json.dumps({
    "contract": name, "arch": arch, "instance": instance, "check_cpu_s": round(cpu, 2), "check_wall_s": round(wall, 2),
    "verdict": r.verdict,
    "findings": [{"kind": f.kind.value, "message": f.message, "sites": [str(s) for s in f.sites],
                  "details": {k: str(v) for k, v in f.details.items()}} for f in r.findings],
    "notes": r.notes, "assumptions": r.assumptions,
    "stats": {k: v for k, v in r.stats.items() if k not in timing},
}, default=str))
