"""`volta check` on the whole suite, every target, verification-sized instances: no false positives.

Every suite kernel is a correct Triton kernel, so the only acceptable verdict is race_free; an
`unsupported` verdict would name a feature to model, an `inconclusive` one a data dependence.
"""

from __future__ import annotations

import pytest

import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import all_contracts
from symexec import load_program
from symexec.check import check_kernel

ARCHES = ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"]
CONTRACTS = {c.name: c for c in all_contracts()}


def _cap(arch: str) -> int:
    return int("".join(ch for ch in arch[3:] if ch.isdigit()))


#: Kernels whose instructions the machine does not emulate yet: `unsupported` until it does.
KNOWN_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("name,arch", [pytest.param(n, a, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[n])]
                                                    if n in KNOWN_GAPS else [])
                                       for n, c in CONTRACTS.items() for a in ARCHES if _cap(a) >= c.min_arch],
                         ids=lambda v: v)
def test_suite_kernel_is_race_free(name: str, arch: str) -> None:
    c = CONTRACTS[name]
    compiled = compile_contract(c, arch)
    module = ptx_parser.parse(compiled.ptx, f"{name}.{compiled.target}.ptx")
    prog = load_program(module, compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0), "verify")
    report = check_kernel(prog, launch)
    detail = "; ".join(f.message + " | " + " / ".join(s.describe() for s in f.sites) for f in report.findings)
    assert report.verdict == "race_free", f"{name} on {arch}: {report.verdict} {detail} {report.notes}"
    assert any("every input" in a for a in report.assumptions)
