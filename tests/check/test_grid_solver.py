"""grid.py's query strategy: products tried over the integers first, quick pre-filters.

The cross-CTA overlap queries of a row-per-CTA kernel multiply a CTA id by a row pitch: bit-blasting
the 64-bit product cost cross_entropy_zloss 5-9 s of CPU per query (76.5 s in all at the bench
instance); over the integers the query is linear. Answers must be the bit-vector query's: an
overlap that exists is never refuted, whatever the route."""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import grid


def _overlap_query(ctas: int, pitch: int, q_hi: int, size: int) -> tuple[z3.Solver, list]:
    """Two different CTAs c1, c2 < ctas writing `size` bytes at c * pitch + 2 * q (q in [0, q_hi], a
    sign-extended 32-bit lane value, as Triton's row kernels address): do the byte ranges meet?"""
    c1, c2 = z3.BitVec("c1", 32), z3.BitVec("c2", 32)
    q1, q2 = z3.BitVec("q1", 32), z3.BitVec("q2", 32)

    def addr(c, q):
        return z3.ZeroExt(32, c) * pitch + z3.SignExt(32, q) * 2 + 0x7F0000000000

    a1, a2 = addr(c1, q1), addr(c2, q2)
    s = z3.Solver()
    s.add(z3.ULT(c1, ctas), z3.ULT(c2, ctas), c1 != c2, z3.ULE(q1, q_hi), z3.ULE(q2, q_hi),
          z3.ULT(a1, a2 + size), z3.ULT(a2, a1 + size))
    return s, [c1, c2, q1, q2]


def test_row_pitch_overlap_is_refuted_over_the_integers() -> None:
    # cross_entropy_zloss at the bench instance: 8192 rows of 128256 fp16 logits, 16-byte stores
    s, _ = _overlap_query(8192, 2 * 128256, 127992, 16)
    assert grid._has_mul(s.assertions())
    assert grid._int_check(grid._ints(s.assertions()), grid.INT_FIRST_RLIMIT, grid.Z3_QUICK_MS) == z3.unsat
    assert grid._check(s) == z3.unsat
    grid._UNSAT.clear()  # the quick route itself, not the answer kept from the check above
    assert grid._check(s, quick=True) == z3.unsat


def test_row_pitch_overlap_that_exists_is_found_with_a_model() -> None:
    # lanes reach past the row's end: row c's last bytes are row c + 1's first
    s, (c1, c2, q1, q2) = _overlap_query(8192, 2 * 128256, 128256, 16)
    assert grid._check(s, quick=True) != z3.unsat
    assert grid._check(s) == z3.sat
    m = s.model()
    v = {str(x): m.eval(x, model_completion=True).as_long() for x in (c1, c2, q1, q2)}
    a1, a2 = v["c1"] * 2 * 128256 + 2 * v["q1"], v["c2"] * 2 * 128256 + 2 * v["q2"]
    assert v["c1"] != v["c2"] and abs(a1 - a2) < 16


@settings(max_examples=40, deadline=None)
@given(ctas=st.integers(2, 12), pitch=st.integers(1, 64), q_hi=st.integers(0, 40), size=st.sampled_from([1, 2, 4, 16]))
def test_the_answer_is_the_brute_force_one(ctas: int, pitch: int, q_hi: int, size: int) -> None:
    """Oracle: every pair of CTAs and lanes enumerated."""
    meets = any(c1 != c2 and abs((c1 * pitch + 2 * q1) - (c2 * pitch + 2 * q2)) < size
                for c1 in range(ctas) for c2 in range(ctas) for q1 in range(q_hi + 1) for q2 in range(q_hi + 1))
    s, _ = _overlap_query(ctas, pitch, q_hi, size)
    assert grid._check(s) == (z3.sat if meets else z3.unsat)
    if meets:
        assert grid._check(s, quick=True) != z3.unsat
    again, _ = _overlap_query(ctas, pitch, q_hi, size)  # the same query again: an unsat one from `_UNSAT`
    assert grid._check(again) == (z3.sat if meets else z3.unsat)


def test_an_unsat_query_asked_again_is_answered_without_a_search(monkeypatch) -> None:
    # the same assertions (hash-consed: the same AST ids) on a new solver: unsat from `_UNSAT`; a sat query is
    # searched each time (its caller reads the model), and one more assertion makes a query of its own
    s, _ = _overlap_query(8192, 2 * 128256, 127992, 16)
    assert grid._check(s) == z3.unsat
    calls = []
    real = grid._check_once
    monkeypatch.setattr(grid, "_check_once", lambda q, quick=False: calls.append(q) or real(q, quick))
    again, _ = _overlap_query(8192, 2 * 128256, 127992, 16)
    assert grid._check(again) == z3.unsat and grid._check(again, quick=True) == z3.unsat and not calls
    sat, (c1, c2, _, _) = _overlap_query(8192, 2 * 128256, 128256, 16)
    for _ in range(2):
        assert grid._check(sat) == z3.sat
        assert sat.model().eval(c1 != c2, model_completion=True)
    assert len(calls) == 2
    sat.add(c1 == c2)  # no longer the query that was sat: searched, unsat (c1 != c2 is asserted)
    assert grid._check(sat) == z3.unsat and len(calls) == 3
