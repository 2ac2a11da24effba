"""Blackwell tcgen05 in the equivalence shadow (symexec/check/termshadow.py, since branch i11tc05):

- a tcgen05.mma (PTX 9.7.16.10.9) of .kind::f16 (f16/bf16), .kind::tf32 or .kind::f8f6f4 with e4m3/e5m2 elements
  (f32 accumulators), when the
  tcgen05 unit performs it (tcgen05/unit.py `_tell_mma`, events.TensorMmaPerformed), gives each D cell one
  MMA node (enable-input-d ? old D : 0) + sum_k A[m, k] * B[n, k], wgmma's node, over the terms of the
  shared-memory bytes at the element addresses the emulator itself reads (tcgen05.ops.operand_addresses_checked);
  the verdict prints the assumption that its accumulation order and precision are not modelled (and for fp8 one
  more, as wgmma's fp8 one);
- tcgen05.ld (9.7.16.8.3) moves cell terms into the registers it writes, tcgen05.st (9.7.16.8.4) moves its source
  registers' terms into the cells (before: the cells stayed CONCRETE and a load of them gave the explored
  input's bits, main ca391ae: tcgen05_st_ld `inconclusive`, its output a constant);
- anything else a tcgen05 unit computes stays opaque with a gap naming the instruction.

The seeded bugs here are decided by the terms alone (`prove`, no concrete differential run): the elements
have different real-arithmetic normal forms. tests/equivalence/test_cases.py runs the same cases through the
CLI path (where the concrete differential test finds the bugs first)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from proofs.equivalence import Outcome
from proofs.prove import prove
from semantics.terms import CONCRETE, Op, TermStore
from volta.equiv_cli import spec_kernel

CASES = Path(__file__).parent / "cases"
ASSUMPTION = "a tcgen05.mma with .f32 accumulators is read as the exact sum"


def _prove(cand: str, ref: str):
    c, _, _ = spec_kernel(CASES / f"{cand}.ptx", "candidate")
    r, _, _ = spec_kernel(CASES / f"{ref}.ptx", "reference")
    return prove(c, r, TermStore())


def _ops_below(T: TermStore, root: int) -> list[int]:
    """Ops on the path of first children from `root` (MMA -> its C -> ...)."""
    out = []
    i = int(root)
    while True:
        out.append(int(T.op[i]))
        kids = T.kids(i)
        if not len(kids):
            return out
        i = int(kids[0])


@pytest.mark.parametrize("case,ref", [("tcgen05_mma", "tcgen05_mma_ref"), ("tcgen05_mma_a_tmem", "tcgen05_mma_ref"),
                                      ("tcgen05_mma_tf32", "tcgen05_mma_tf32_ref"),
                                      ("tcgen05_mma_e4m3", "tcgen05_mma_e4m3_ref")])
def test_two_accumulating_tcgen05_mma_are_proved_equal_to_the_naive_dot(case: str, ref: str) -> None:
    """A through a 32B-swizzled descriptor, or written to tensor memory by tcgen05.st and read from [a-tmem];
    .kind::tf32 (K = 8) against a dot of the words rounded toward zero to tf32; .kind::f8f6f4 e4m3 (K = 32), its
    fp8 assumption printed."""
    rep = _prove(case, ref)
    r = rep.result
    assert r.outcome is Outcome.VERIFIED, r.verdict
    assert sum(p.elements for p in r.proofs) == 1024
    cand = rep.sides["candidate"]
    assert not cand.gaps, [g.describe() for g in cand.gaps]
    assert sum(ASSUMPTION in a for a in r.assumptions) == 2, r.assumptions  # one per tcgen05.mma
    assert sum("an fp8 (.e4m3/.e5m2) tcgen05.mma" in a for a in r.assumptions) == (2 if "e4m3" in case else 0)
    (out,) = cand.outputs.values()
    assert (np.asarray(out.terms) != CONCRETE).all()
    # each element: the second MMA node whose old D is the first's, whose old D is the constant 0
    chain = _ops_below(rep.store, out.terms[0])
    assert chain[:3] == [Op.MMA, Op.MMA, Op.CONST], chain


@pytest.mark.parametrize("bug,ref", [("tcgen05_mma_no_accumulate", "tcgen05_mma_ref"),
                                     ("tcgen05_mma_a_rows_off", "tcgen05_mma_ref"),
                                     ("tcgen05_mma_a_tmem_swapped", "tcgen05_mma_ref"),
                                     ("tcgen05_mma_e4m3_b_as_e5m2", "tcgen05_mma_e4m3_ref")])
def test_seeded_tcgen05_mma_bug_is_found_by_the_terms(bug: str, ref: str) -> None:
    """Accumulate flag flipped / A descriptor 8 rows off / A's words swapped in tensor memory: the elements differ
    in their normal forms; B read as e5m2 where it holds e4m3."""
    rep = _prove(bug, ref)
    r = rep.result
    assert r.outcome is not Outcome.VERIFIED and r.suspect_count > 0, r.verdict
    assert not rep.sides["candidate"].gaps, [g.describe() for g in rep.sides["candidate"].gaps]
    assert r.suspects[0].why == "different real-arithmetic normal forms", r.suspects[0]


def test_tf32_tcgen05_mma_rounding_is_seen_by_the_precision_check() -> None:
    """As wgmma's (test_async_terms.test_tf32_wgmma_rounding_is_seen_by_the_precision_check): the reals agree with
    both the tf32-rounded and the plain f32 dot; the precision check reports the candidate's tf32 rounding against
    the plain one only (the CLI's verdict there is not_equivalent, tests/equivalence/test_cases.py)."""
    from proofs.precision import precision_findings

    for ref, narrower in (("tcgen05_mma_tf32_ref", False), ("tcgen05_mma_f32_ref", True)):
        rep = _prove("tcgen05_mma_tf32", ref)
        assert rep.result.outcome is Outcome.VERIFIED, (ref, rep.result.verdict)
        found = precision_findings(rep)
        if narrower:
            (f,) = found
            assert (f.candidate_format, f.reference_format) == ("tf32", "f32") and f.elements.size == 1024, \
                f.describe()
        else:
            assert not found, [f.describe() for f in found]


def test_tcgen05_st_then_ld_moves_the_register_terms() -> None:
    rep = _prove("tcgen05_st_ld", "tcgen05_st_ld_ref")
    assert rep.result.outcome is Outcome.VERIFIED, rep.result.verdict
    (out,) = rep.sides["candidate"].outputs.values()
    T = rep.store
    assert all(int(T.op[t]) == Op.INPUT for t in out.terms[:4])


def test_tcgen05_ld_of_the_wrong_column_is_found_by_the_terms() -> None:
    rep = _prove("tcgen05_st_ld_wrong_column", "tcgen05_st_ld_ref")
    r = rep.result
    assert r.outcome is not Outcome.VERIFIED and r.suspect_count == 128, r.verdict
    assert not rep.sides["candidate"].gaps, [g.describe() for g in rep.sides["candidate"].gaps]
