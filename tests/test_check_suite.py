"""`volta check` on the whole suite, every target, verification-sized instances: no false positives.

Every suite kernel is a Triton kernel that computes the right numbers, so the expected verdict is
race_free; an `unsupported` verdict would name a feature to model, an `inconclusive` one a data
dependence. The exceptions are findings in Triton's own output by the PTX rules (TRITON_FINDINGS):
for those the test asserts exactly that finding, so a change either way is noticed.
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

#: Triton 3.9's sm_100a kernels that feed tcgen05 from TMA keep the tensor-memory address that
#: tcgen05.alloc writes at shared offset 0, read it with ld.shared (generic proxy), and later let a
#: TMA load (async proxy) overwrite those bytes as a pipeline stage with no fence.proxy.async in
#: between: a write-after-read (and write-after-write) across proxies, which needs a proxy fence
#: (PTX 8.6; 9.7.9.25.2 "accessing the same memory location across multiple proxies needs a
#: cross-proxy fence"). Triton's own pass for this hazard (triton-lang/triton#7262, "insert
#: fence.proxy.async for write after read hazard") misses this slot.
ALLOC_SLOT_WAR = "tcgen05.alloc's shared slot reused by a TMA load without fence.proxy.async"
TRITON_FINDINGS: dict[tuple[str, str], str] = {
    ("attention_tma", "sm_100a"): ALLOC_SLOT_WAR,
    ("gemm_tcgen05_ws", "sm_100a"): ALLOC_SLOT_WAR,
    ("gemm_tma_persistent", "sm_100a"): ALLOC_SLOT_WAR,
    ("gemm_block_scaled", "sm_100a"): ALLOC_SLOT_WAR,
}


def _is_alloc_slot_war(f) -> bool:
    """A race on the first bytes of shared memory between the slot's generic writer/reader
    (tcgen05.alloc, ld.shared) and a TMA load, explained by the missing proxy fence."""
    kinds = sorted(s.instruction.split(".")[0] for s in f.sites)
    return (f.kind.value == "race" and "fence.proxy.async" in f.message and "(0x0)" in f.message
            and kinds in (["cp", "tcgen05"], ["cp", "ld"])
            and any(s.instruction.startswith("cp.async.bulk.tensor") for s in f.sites))


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
    if TRITON_FINDINGS.get((name, arch)) == ALLOC_SLOT_WAR:
        assert report.verdict == "race", f"{name} on {arch}: {report.verdict} {detail} {report.notes}"
        assert report.findings and all(_is_alloc_slot_war(f) for f in report.findings), detail
        return
    assert report.verdict == "race_free", f"{name} on {arch}: {report.verdict} {detail} {report.notes}"
    assert any("every input" in a for a in report.assumptions)
