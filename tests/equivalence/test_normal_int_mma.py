"""proofs.normal reads an integer (.s32) MMA node as its exact sum acc + sum_k a * b only where that sum provably
stays inside int32 (its accumulator a constant below 2^31 or an integer MMA of known bound, plus k times the
largest product of its element types); elsewhere the node's value is the exact sum wrapped, or with .satfinite
clamped, to 32 bits (PTX 9.7.14.5.14, 9.7.15.5.2): a function of the exact sum, wrap and clamp told apart. Before,
an MMA that wraps and its .satfinite twin had one normal form, so a candidate that wraps was `verified` against a
reference that saturates (found on integer wgmma, i11wg2; the node is mma.sync's too)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, bits_sort, mods_id

S32, S8 = bits_sort(32), bits_sort(8)


def _mma(T: TermStore, acc: np.ndarray, a: np.ndarray, b: np.ndarray, sat: bool, a_t: str = "s8",
         b_t: str = "s8") -> np.ndarray:
    aux = mods_id(Mods(elems=(a_t, b_t, "s32"), sat=sat))
    return T.make(Op.MMA, S32, aux, [acc, *a, *b])


def _leaves(T: TermStore, name: str, k: int) -> list[np.ndarray]:
    return [T.input(name, np.array([j]), S8) for j in range(k)]


def test_wrap_and_satfinite_differ_where_the_sum_may_overflow() -> None:
    T = TermStore()
    c = T.input("c", np.arange(1), S32)  # an accumulator read from memory: any int32
    a, b = _leaves(T, "a", 4), _leaves(T, "b", 4)
    wrap, sat = _mma(T, c, a, b, False), _mma(T, c, a, b, True)
    N = Normalizer(T)
    x, y = N.of(np.concatenate([wrap, sat]))
    assert not N.equal(x, y)
    again = N.of(_mma(T, c, a, b, False))[0]  # the same node: one normal form
    assert N.equal(x, again)


def test_chained_satfinite_is_not_one_long_sum() -> None:
    """sat(sat(c + s1) + s2) is not sat(c + s1 + s2): a split-K candidate that clamps each step differs."""
    T = TermStore()
    c = T.input("c", np.arange(1), S32)
    a, b = _leaves(T, "a", 4), _leaves(T, "b", 4)
    step = _mma(T, _mma(T, c, a[:2], b[:2], True), a[2:], b[2:], True)
    once = _mma(T, c, a, b, True)
    N = Normalizer(T)
    x, y = N.of(np.concatenate([step, once]))
    assert not N.equal(x, y)


def test_bounded_sums_are_exact_so_split_k_still_proves() -> None:
    """From a zero accumulator, two chained k = 2 steps of s8 products stay far inside int32: both readings are the
    exact sum, wrapped or clamped alike, and equal the k = 4 MMA."""
    T = TermStore()
    zero = T.const(S32, 0)
    a, b = _leaves(T, "a", 4), _leaves(T, "b", 4)
    step = _mma(T, _mma(T, zero, a[:2], b[:2], True), a[2:], b[2:], False)
    once = _mma(T, zero, a, b, True)
    N = Normalizer(T)
    x, y = N.of(np.concatenate([step, once]))
    assert N.equal(x, y)


@settings(max_examples=40, deadline=None)
@given(acc=st.one_of(st.integers(0, (1 << 32) - 1), st.integers((1 << 31) - 70_000, (1 << 31) + 10)),
       k=st.sampled_from([1, 2, 16, 32]),
       types=st.sampled_from([("s8", "s8"), ("u8", "s8"), ("u8", "u8"), ("s4", "u4")]))
def test_bound_is_exact_sum_only_inside_int32(acc: int, k: int, types: tuple[str, str]) -> None:
    """_int_mma_bound: an upper bound of |acc + sum| whenever it answers, and answers only below 2^31."""
    most = {"s8": 128, "u8": 255, "s4": 8, "u4": 15}
    T = TermStore()
    a, b = _leaves(T, "a", k), _leaves(T, "b", k)
    node = int(_mma(T, T.const(S32, np.uint64(acc)), a, b, False, *types)[0])
    bound = Normalizer(T)._int_mma_bound(node)
    worst = acc + k * most[types[0]] * most[types[1]]
    if acc < 1 << 31 and worst < 1 << 31:
        assert bound == worst
    else:
        assert bound is None


def test_a_long_k_loop_chain_is_bounded_without_recursion() -> None:
    """A K loop chains one MMA per step: 5000 steps of k = 1 s8 products from zero stay inside int32 (5000 x 16384),
    and the bound is made down the chain without Python recursion (deeper than its default limit of 1000)."""
    T = TermStore()
    acc = T.const(S32, 0)
    a, b = _leaves(T, "a", 1), _leaves(T, "b", 1)
    for _ in range(5000):
        acc = _mma(T, acc, a, b, False)
    assert Normalizer(T)._int_mma_bound(int(acc[0])) == 5000 * 128 * 128


def test_sat_on_an_integer_to_float_conversion_clamps_to_the_unit_interval() -> None:
    """cvt.rn.sat.f32.s32 limits its result to [0.0, 1.0] (PTX 9.7.9.21); up to stop 44 normal.py read it as the
    plain conversion, so a candidate that saturates where the reference does not had equal normal forms. Checked
    against the emulator's arithmetic (termeval): the two differ on inputs outside [0, 1] and agree on 0 and 1."""
    from semantics.termeval import evaluate
    from semantics.terms import float_sort

    T = TermStore()
    x = T.input("x", np.arange(1), S32)
    f32 = float_sort("f32")

    def cvt(sat: bool) -> np.ndarray:
        return T.make(Op.CVT, f32, mods_id(Mods(rnd="rn", sat=sat, elems=("f32", "s32"))), [x])

    plain, clamped, again = cvt(False), cvt(True), cvt(True)
    N = Normalizer(T)
    p, c, c2 = N.of(np.concatenate([plain, clamped, again]))
    assert not N.equal(p, c) and N.equal(c, c2)
    for v, same in ((0, True), (1, True), (2, False), ((1 << 32) - 5, False)):  # -5 as s32
        bits = evaluate(T, np.concatenate([plain, clamped]), lambda buf, elems, sort: np.full(len(elems), v, np.uint64))
        assert (int(bits[0]) == int(bits[1])) == same, (v, bits)
