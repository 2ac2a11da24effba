"""Which suite contracts have a loop inside another (where a nested summary can apply), per target (verify instance):
a loop header inside the natural loop of a back edge to another header (Program.back_branches, loop_body)."""
import sys

import ptx_parser
from harness.compile import compile_contract
from harness.suite import all_contracts
from symexec import load_program

for arch in sys.argv[1:]:
    for c in all_contracts():
        try:
            comp = compile_contract(c, arch, instance="verify")
        except Exception:  # noqa: BLE001  (a contract not built for this target)
            continue
        prog = load_program(ptx_parser.parse(comp.ptx, "k.ptx"), comp.entry)
        bodies: dict[int, set[int]] = {}
        for latch, head in prog.back_branches.items():
            bodies.setdefault(head, set()).update(prog.loop_body(head, latch))
        inner = sorted({h2 for h1, body in bodies.items() for h2 in prog.loop_headers if h2 != h1 and h2 in body})
        if inner:
            print(arch, c.name, len(inner), flush=True)
