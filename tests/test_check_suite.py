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
#: Several warps store the same value to one shared address in one instruction: a layout whose
#: values are replicated across warps (a reduction's result held by every warp: bitdelta's
#: st.shared.v4 [global_smem] after a warp butterfly, forgetting_attention's row statistics and the
#: replicated operand staged at global_smem+16384, by stmatrix on sm_100a), and gemm_tcgen05_ws's
#: warp-specialisation state word (st.shared.b32 [global_smem+98520], a constant, from every thread
#: of the default partition, PTX lines 169 and 626 on sm_100a). The stores are unordered writes of different threads to the
#: same bytes: a data race by PTX 8.7.1, which looks at no values (uniform-size, so a later read
#: returns one of the equal values, 8.9.6-8.9.7). The same-value rule accepts equal values only from
#: the lanes of one warp (symexec/check/same_value.py).
REPLICATED_STORE = "the same value stored to one shared address by several warps in one instruction"
TRITON_FINDINGS: dict[tuple[str, str], str] = {
    ("attention_tma", "sm_100a"): ALLOC_SLOT_WAR,
    ("gemm_tcgen05_ws", "sm_100a"): f"{ALLOC_SLOT_WAR}; {REPLICATED_STORE}",
    ("gemm_tcgen05_ws", "sm_120"): REPLICATED_STORE,
    ("gemm_tma_persistent", "sm_100a"): ALLOC_SLOT_WAR,
    ("gemm_block_scaled", "sm_100a"): ALLOC_SLOT_WAR,
    **{(name, arch): REPLICATED_STORE for name in ("bitdelta", "forgetting_attention") for arch in ARCHES},
}


def _is_alloc_slot_war(f) -> bool:
    """A race on the first bytes of shared memory between the slot's generic writer/reader
    (tcgen05.alloc, ld.shared) and a TMA load, explained by the missing proxy fence."""
    kinds = sorted(s.instruction.split(".")[0] for s in f.sites)
    return (f.kind.value == "race" and "fence.proxy.async" in f.message
            and f.region is not None and f.region.label == ".shared global_smem" and f.region.lo == 0
            and kinds in (["cp", "tcgen05"], ["cp", "ld"])
            and any(s.instruction.startswith("cp.async.bulk.tensor") for s in f.sites))


def _is_replicated_store(f) -> bool:
    """st.shared (stmatrix on sm_100a) of one instruction by two warps of one CTA to the same bytes,
    equal values."""
    a, b = f.sites
    return (f.kind.value == "race" and "two warps write the same value" in f.message and a.ptx == b.ptx
            and a.instruction.startswith(("st.shared", "stmatrix")) and a.cta == b.cta
            and a.thread[0] // 32 != b.thread[0] // 32)


FINDING_CLASSES = {ALLOC_SLOT_WAR: _is_alloc_slot_war, REPLICATED_STORE: _is_replicated_store}


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
    listed = TRITON_FINDINGS.get((name, arch))
    if listed:
        classes = [FINDING_CLASSES[c] for c in listed.split("; ")]
        assert report.verdict == "race", f"{name} on {arch}: {report.verdict} {detail} {report.notes}"
        assert report.findings and all(any(c(f) for c in classes) for f in report.findings), detail
        assert all(any(c(f) for f in report.findings) for c in classes), detail
        return
    assert report.verdict == "race_free", f"{name} on {arch}: {report.verdict} {detail} {report.notes}"
    assert any("every input" in a for a in report.assumptions)
