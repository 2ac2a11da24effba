"""bv2int: `or`/`xor` of disjoint bits as a sum (a tile base | a lane offset below its alignment)."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.bv2int import Untranslatable, _low_zeros, _truncating_division, to_int


def _tile_or_lane(k: int, base: int, step: int, t_hi: int, q_hi: int, op):
    """(base + t * step) op q over 32 bits, base and step multiples of 2^k, t <= t_hi, q <= q_hi."""
    t, q = z3.BitVec("t", 32), z3.BitVec("q", 32)
    e = op(z3.BitVecVal(base << k, 32) + t * z3.BitVecVal(step << k, 32), q)
    return e, [z3.ULE(t, t_hi), z3.ULE(q, q_hi)]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 12), base=st.integers(0, 64), step=st.integers(0, 64), t_hi=st.integers(0, 40),
       target=st.integers(0, 2**20), xor=st.booleans(), data=st.data())
def test_disjoint_or_is_a_sum_and_keeps_satisfiability(k, base, step, t_hi, target, xor, data) -> None:
    """Oracle: the bit-vector query itself (Z3). Equal answers for `e == target` and `e < target`."""
    q_hi = data.draw(st.integers(0, 2**k - 1))
    e, facts = _tile_or_lane(k, base, step, t_hi, q_hi, (lambda x, y: x ^ y) if xor else (lambda x, y: x | y))
    for goal in (e == target, z3.ULT(e, target)):
        bv, ints = z3.Solver(), z3.Solver()
        bv.add(facts + [goal])
        ints.add(to_int(facts + [goal]))
        assert ints.check() == bv.check()


def test_or_whose_bits_may_meet_is_not_translated() -> None:
    # q may reach 2^k: bit k of the base and of q can both be set, `|` is not `+`
    e, facts = _tile_or_lane(4, 1, 1, 8, 16, lambda x, y: x | y)
    with pytest.raises(Untranslatable):
        to_int(facts + [e == 17])


def test_low_zero_bits_of_address_shapes() -> None:
    t = z3.BitVec("t", 32)
    assert _low_zeros(z3.BitVecVal(0x4000, 32) + t * 0x1000) == 12
    assert _low_zeros(z3.ZeroExt(32, t << 3)) == 3
    assert _low_zeros(z3.Concat(t, z3.BitVecVal(0, 2))) == 2
    assert _low_zeros(t + 1) == 0
    assert _low_zeros(z3.BitVecVal(0, 8)) == 8


# ---- wrap-arounds: a `mod 2^w` only where the operands' ranges let the value leave one window

def _ints_text(assertions) -> str:
    s = z3.Solver()
    s.add(to_int(assertions))
    return s.sexpr()


def _same_answer(assertions, rlimit: int | None = None) -> z3.CheckSatResult:
    """The oracle: Z3 over the bit-vectors; the integer form must agree (it is exact, no table here).
    rlimit: the integer side may answer unknown within it (nonlinear `mod`s), which agrees with anything."""
    bv, ints = z3.Solver(), z3.Solver()
    bv.add(assertions)
    ints.add(to_int(assertions))
    if rlimit is not None:
        ints.set("rlimit", rlimit)
    got = bv.check()
    answer = ints.check()
    assert answer == got or (rlimit is not None and answer == z3.unknown), assertions
    return got


def test_a_sum_that_stays_in_one_window_has_no_mod() -> None:
    # a loop's (t - 1)[31:0] + 5 <s K with t in [0, 2^24): t - 1 leaves [0, 2^64) at t = 0, but the
    # 32-bit sum is in [4, 2^24 + 4], one window, and K <= 2^31 - 1: no mod, no sign test
    t, k = z3.BitVec("t", 64), z3.BitVec("k", 64)
    facts = [z3.ULT(t, 2**24), k >= 1, k <= 2**31 - 1]
    e = z3.Extract(31, 0, t - 1) + 5
    query = facts + [e < z3.Extract(31, 0, k), z3.ULE(k, 5)]
    assert "mod" not in _ints_text(query)
    assert _same_answer(query) == z3.sat  # t = 0, e = 4 < k = 5: the t - 1 = -1 wrap is followed
    assert _same_answer(facts + [e < z3.Extract(31, 0, k), z3.ULE(k, 5), z3.UGT(t, 0)]) == z3.unsat


def test_a_negative_window_is_shifted_not_reduced() -> None:
    # 0 - x for x in [1, 100] is in [-100, -1]: the window [-2^32, 0), value 2^32 - x
    x = z3.BitVec("x", 32)
    query = [z3.UGE(x, 1), z3.ULE(x, 100), z3.ULT(-x, 2**32 - 100)]
    assert "mod" not in _ints_text(query)
    assert _same_answer(query) == z3.unsat
    assert _same_answer([z3.UGE(x, 1), z3.ULE(x, 100), -x == 2**32 - 7]) == z3.sat


def test_a_wrap_around_that_can_happen_keeps_its_mod() -> None:
    # x + 1 for any 32-bit x reaches 2^32: x = 2^32 - 1 gives 0, which the integers must keep
    x = z3.BitVec("x", 32)
    query = [x + 1 == 0]
    assert "mod" in _ints_text(query)
    assert _same_answer(query) == z3.sat
    # a product of two sizes past 2^32 wraps too: 65536 * 65536 = 0 in 32 bits
    m, n = z3.BitVec("m", 32), z3.BitVec("n", 32)
    query = [z3.ULE(m, 65536), z3.ULE(n, 65536), z3.UGE(m, 1), z3.UGE(n, 1), z3.ULT(m * n, m)]
    assert "mod" in _ints_text(query)
    assert _same_answer(query) == z3.sat


def test_a_bound_by_a_term_narrows_the_variable() -> None:
    # c < cdiv(N, 128) with N <= 2^31 - 128: c < 2^24, so c * 128 + q (q < 128) never wraps 32 bits
    # and its sign extension is the value itself
    c, q, n = z3.BitVec("c", 32), z3.BitVec("q", 32), z3.BitVec("n", 64)
    grid = z3.UDiv(n + 127, 128)
    facts = [z3.UGE(n, 128), z3.ULE(n, 2**31 - 128), z3.ULT(z3.ZeroExt(32, c), grid), z3.ULE(q, 127)]
    off = z3.SignExt(32, c * 128 + q)
    query = facts + [z3.UGE(off, n + 127)]
    text = _ints_text(query)
    assert "mod" not in text and "ite" not in text
    assert _same_answer(query) == z3.unsat
    assert _same_answer(facts + [z3.UGE(off, n + 126)]) == z3.sat


@pytest.mark.parametrize("lo,hi", [(-7, -1), (-7, 7), (0, 9), (-9, 0), (-1, -1), (3, 3)])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_truncating_division_range_is_exact(lo: int, hi: int, d: int) -> None:
    """Every quotient of [lo, hi] rounded toward zero is in the range, and its ends are reached."""
    s = z3.Int("s")
    q, (qlo, qhi) = _truncating_division(s, (lo, hi), d)
    got = []
    for v in range(lo, hi + 1):
        want = abs(v) // d * (1 if v >= 0 else -1)
        assert z3.simplify(z3.substitute(q, (s, z3.IntVal(v)))).as_long() == want
        got.append(want)
    assert (qlo, qhi) == (min(got), max(got))


def test_signed_division_truncates_toward_zero() -> None:
    # bvsdiv(-7, 4) = -1 (toward zero), not -2 (floor): x >=s -7 makes -2 impossible
    x = z3.BitVec("x", 32)
    base = [x >= -7, x <= 7]
    assert _same_answer(base + [x / 4 == -2]) == z3.unsat
    assert _same_answer(base + [x / 4 == -1]) == z3.sat
    assert _same_answer(base + [z3.SRem(x, 4) == -3]) == z3.sat  # srem has the dividend's sign
    assert _same_answer(base + [z3.SRem(x, 4) == 3, x < 0]) == z3.unsat


# ---- `or` of disjoint bits: known bits, not only a term's low zeros

def test_or_of_a_shifted_term_and_a_low_mask_is_a_sum() -> None:
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    e = (x << 4) | (y & 15)
    text = _ints_text([e == 0x1234])
    assert "+" in text
    assert _same_answer([e == 0x1234, x == 0x123]) == z3.sat
    assert _same_answer([e == 0x1234, x == 0x124]) == z3.unsat
    # two masks whose bits are apart, neither a multiple of the other's range: 0xF0 and 0x0F
    f = (x & 0xF0) | (y & 0x0F)
    assert _same_answer([f == 0x5A, z3.Extract(7, 4, x) == 5]) == z3.sat
    assert _same_answer([f == 0x5A, z3.Extract(7, 4, x) == 6]) == z3.unsat


def test_or_of_masks_whose_bits_overlap_is_not_a_sum() -> None:
    # 0x18 and 0x0F share bit 3: x | y is not x + y (8 | 8 = 8, not 16)
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    with pytest.raises(Untranslatable):
        to_int([((x & 0x18) | (y & 0x0F)) == 16])
    with pytest.raises(Untranslatable):
        to_int([((x << 3) | (y & 15)) == 16])


_OPS = ["add", "sub", "neg", "mulc", "mul", "shl", "lshr", "ashr", "low", "high", "zext", "sext", "udiv", "urem",
        "sdiv", "srem", "ite", "or"]


def _term(draw, depth: int, x, y):
    if depth == 0:
        return draw(st.sampled_from([x, y, z3.BitVecVal(draw(st.integers(0, 255)), 8)]))
    op = draw(st.sampled_from(_OPS))
    a = _term(draw, depth - 1, x, y)
    b = _term(draw, depth - 1, x, y)
    c = draw(st.integers(1, 7))
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "neg":
        return -a
    if op == "mulc":
        return a * c
    if op == "mul":
        return a * b
    if op == "shl":
        return a << c
    if op == "lshr":
        return z3.LShR(a, c)
    if op == "ashr":
        return a >> c
    if op == "low":
        return z3.ZeroExt(4, z3.Extract(3, 0, a))
    if op == "high":
        return z3.ZeroExt(3, z3.Extract(7, 3, a))
    if op == "zext":
        return z3.Extract(7, 0, z3.ZeroExt(8, a) + z3.ZeroExt(8, b))
    if op == "sext":
        return z3.Extract(8, 1, z3.SignExt(8, a) - z3.SignExt(8, b))
    if op == "udiv":
        return z3.UDiv(a, c)
    if op == "urem":
        return z3.URem(a, c)
    if op == "sdiv":
        return a / c
    if op == "srem":
        return z3.SRem(a, c)
    if op == "ite":
        return z3.If(z3.ULT(a, b), a, b)
    return (a << 4) | (b & 15)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), x_hi=st.integers(0, 255), y_lo=st.integers(0, 255), target=st.integers(0, 255),
       rel=st.sampled_from(["eq", "ult", "slt"]))
def test_translation_agrees_with_the_bit_vectors(data, x_hi: int, y_lo: int, target: int, rel: str) -> None:
    """Random 8-bit terms over two bounded variables: the integer form is satisfiable exactly when the
    bit-vector query is (wrap-arounds kept where they happen, dropped where they cannot)."""
    x, y = z3.BitVec("x", 8), z3.BitVec("y", 8)
    e = _term(data.draw, data.draw(st.integers(1, 3)), x, y)
    goal = {"eq": e == target, "ult": z3.ULT(e, target), "slt": e < z3.BitVecVal(target, 8)}[rel]
    try:
        _same_answer([z3.ULE(x, x_hi), z3.UGE(y, y_lo), goal], rlimit=2_000_000)
    except Untranslatable:
        pass  # an `or` of bits that may meet: left to the bit-vectors (tested above)
