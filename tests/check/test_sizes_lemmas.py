"""Symbolic sizes: row-wise bounds (`row * N + col < M * N`) are refuted by linear arithmetic with
monotonicity lemmas (symexec/check/monotone.py). `refute` is sound only if it never calls a
satisfiable formula unsatisfiable: the property test pins a satisfying point and asserts it says no.
"""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.bv2int import to_int
from symexec.check.monotone import refute

RLIMIT, MS = 50_000_000, 20_000


def _rowwise(extra_bytes: int = 0):
    """Bytes (row * N + col) * 2 .. + 16 of a fp16 row-wise load (Triton's rmsnorm: the row offset
    multiplied in 32 bits and sign-extended, `ld.global.v4.b32`) against a buffer of M * N halves."""
    m, n = z3.BitVecs("M N", 64)
    row, col = z3.BitVec("row", 32), z3.BitVec("col", 32)
    off = z3.SignExt(32, z3.Extract(31, 0, n) * row) * 2 + z3.ZeroExt(32, col) * 2
    facts = [m >= 1, m <= 2**31 - 1, n >= 16, n <= 2**31 - 16, z3.SRem(n, 16) == 0, m * n <= 2**31 - 1,
             z3.ULT(z3.ZeroExt(32, row), m), z3.ULT(z3.ZeroExt(32, col), n), z3.URem(col, 8) == 0]
    beyond = z3.UGT(z3.ZeroExt(1, off) + 16 + extra_bytes, z3.ZeroExt(1, m * n * 2))
    return facts, beyond, (m, n, row, col)


def test_rowwise_bounds_are_refuted_by_monotonicity() -> None:
    facts, beyond, _ = _rowwise()
    assert refute(to_int(facts + [beyond]), RLIMIT, MS)


def test_one_byte_past_the_row_is_not_refuted() -> None:
    facts, beyond, _ = _rowwise(extra_bytes=2)  # the last row's last vector ends 2 bytes past the buffer
    assert not refute(to_int(facts + [beyond]), RLIMIT, MS)
    s = z3.Solver()
    s.add(facts + [beyond])
    assert s.check() == z3.sat


def test_without_products_nothing_is_claimed() -> None:
    x = z3.Int("x")
    assert not refute([x > 1, x < 0], RLIMIT, MS)  # linear: not this module's to decide


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(0, 299), st.integers(0, 299), st.integers(-3, 3))
def test_a_satisfiable_formula_is_never_refuted(m: int, n: int, row: int, col: int, slack: int) -> None:
    """Soundness: at a point that satisfies the formula (row * N + col >= M * N + slack with the
    variables pinned), the abstraction stays satisfiable."""
    M, N, R, C = z3.Ints("M N R C")
    f = [M == m, N == n, R == row, C == col, R >= 0, C >= 0, R * N + C >= M * N + slack, R * C * N >= 0]
    if m * n + slack <= row * n + col:
        assert not refute(f, RLIMIT, MS)


def _tile(K, N, R, T, C):
    """The element offset of a pipelined tile's row (gemm_fp16's B tile in its K loop): N * row plus
    448 N plus t periods of 128 rows, the last as Triton writes it (N * 64 + N * 64)."""
    return N * R + 448 * N + T * (N * 64 + N * 64) + C


def test_a_sum_of_products_with_a_common_factor_is_grouped_and_refuted() -> None:
    K, N, R, T, C = z3.Ints("K N R T C")
    f = [N >= 0, R >= 0, T >= 0, C >= 0, R + 448 + 128 * T + 1 <= K, C + 8 <= N, _tile(K, N, R, T, C) + 8 > K * N]
    assert refute(f, RLIMIT, MS)
    assert not refute(f[:-3] + [R + 448 + 128 * T <= K] + f[-2:], RLIMIT, MS)  # row K allowed: one row past


@settings(max_examples=60, deadline=None)
@given(st.integers(-3, 3), st.integers(1, 300), st.integers(0, 2999), st.integers(0, 20), st.integers(0, 299),
       st.integers(-3, 3))
def test_a_satisfiable_grouped_formula_is_never_refuted(delta: int, n: int, row: int, t: int, col: int,
                                                         slack: int) -> None:
    """Soundness of the grouping: at a point that satisfies the formula (K near the tile's row, so
    that some points do) the abstraction stays satisfiable."""
    k = row + 448 + 128 * t + delta
    K, N, R, T, C = z3.Ints("K N R T C")
    f = [K == k, N == n, R == row, T == t, C == col, N >= 0, R + 448 + 128 * T <= K + slack,
         _tile(K, N, R, T, C) + 8 > K * N + slack]
    s = z3.Solver()
    s.add(f)
    if s.check() == z3.sat:
        assert not refute(f, RLIMIT, MS)
