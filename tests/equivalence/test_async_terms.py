"""An asynchronous unit reads memory the registers do not show (wgmma.mma_async's A and B through
shared-memory descriptors, PTX ISA 9.7.15.5.2; tcgen05.ld's tensor-memory cells, 9.7.16.8): the
registers it writes must never be taken as concrete when those bytes hold tensor data. Before this
rule, Triton's wgmma (sm_90a) and tcgen05 (sm_100a) builds of gemm_fp16 had every output element
concrete, so comparing two such kernels compared the bits of one input and called it a proof."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("triton")

from harness.equivalence import triton_kernel  # noqa: E402
from harness.suite import all_contracts  # noqa: E402
from proofs.equivalence import Outcome  # noqa: E402
from proofs.prove import prove, run_side  # noqa: E402
from semantics.terms import CONCRETE, TermStore  # noqa: E402

GEMM = {c.name: c for c in all_contracts()}["gemm_fp16"]


@pytest.mark.parametrize("arch,unit", [("sm_90a", "wgmma"), ("sm_100a", "tcgen05")])
def test_async_unit_results_are_opaque_not_concrete(arch: str, unit: str) -> None:
    report, side = run_side(triton_kernel(GEMM, arch), TermStore())
    assert report.verdict == "race_free"
    (out,) = side.outputs.values()
    assert out.terms.size > 0 and not (np.asarray(out.terms) == CONCRETE).any()
    assert any(g.ins is not None and g.ins.opcode.startswith(unit) for g in side.gaps)


def test_two_wgmma_builds_are_not_verified_by_their_bits() -> None:
    rep = prove(triton_kernel(GEMM, "sm_90a", label="candidate"), triton_kernel(GEMM, "sm_90a"))
    assert rep.result.outcome is Outcome.UNSUPPORTED
    assert "wgmma.mma_async" in rep.result.verdict
