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


# ---------------------------------------------------------------------- .s32 reads of bounded MMAs (issue 11, sage)

def _to_f32(T: TermStore, x: np.ndarray, src: str = "s32") -> np.ndarray:
    from semantics.terms import float_sort

    return T.make(Op.CVT, float_sort("f32"), mods_id(Mods(rnd="rn", elems=("f32", src))), [x])


def _two_chains(T: TermStore, sat_split: bool = True, sat_once: bool = False, acc: np.ndarray | None = None):
    """sm_80's shape (split K, two chained .satfinite mma.sync steps) and sm_90a's (one wrapping k = 4 wgmma) of
    one sum of s8 products."""
    zero = T.const(S32, 0) if acc is None else acc
    a, b = _leaves(T, "a", 4), _leaves(T, "b", 4)
    split = _mma(T, _mma(T, zero, a[:2], b[:2], sat_split), a[2:], b[2:], sat_split)
    once = _mma(T, zero, a, b, sat_once)
    return split, once, a, b


def test_bounded_signed_reads_of_two_mma_chains_with_one_sum_meet_as_one_atom() -> None:
    """cvt.rn.f32.s32 of two different integer MMA nodes (one .satfinite split-K chain, one wrapping MMA) with the
    same exact sum, bounded inside int32: one atom keyed by the sum (up to stop 45: one atom per node, never equal),
    and the forms above them (a scaled exp2, as sage's softmax of dequantised scores) meet too."""
    from semantics.terms import float_sort

    T = TermStore()
    split, once, _, _ = _two_chains(T)
    f32 = float_sort("f32")
    scale = T.input("scale", np.arange(1), f32)
    outs = []
    for mma in (split, once):
        s = T.make(Op.FMUL, f32, mods_id(Mods()), [_to_f32(T, mma), scale])
        outs.append(T.make(Op.FEX2, f32, mods_id(Mods()), [s]))
    N = Normalizer(T)
    cs, co, es, eo = N.of(np.concatenate([_to_f32(T, split), _to_f32(T, once), *outs]))
    assert N.equal(cs, co) and N.equal(es, eo)
    assert len(cs.num) == 1 and cs.den is None  # one atom, not the 4-product sum
    (mono,) = cs.num
    kind, payload = N.atoms[mono[0]]
    assert payload[0] == "mma.s32.exact"
    assert N.key_nf[payload[1]] == N.of(once)[0]  # keyed by the exact sum itself


def test_a_shared_mma_node_read_through_its_let_atom_meets() -> None:
    """An MMA node with several users is kept as a let-atom (memo); its .s32 read expands it to the sum's own form,
    so it still meets the other chain's read (a k = 16 sum: more monomials than LET_LIMIT)."""
    T = TermStore()
    zero = T.const(S32, 0)
    a, b = _leaves(T, "a", 16), _leaves(T, "b", 16)
    split = _mma(T, _mma(T, zero, a[:8], b[:8], True), a[8:], b[8:], True)
    once = _mma(T, zero, a, b, False)
    other_user = T.make(Op.MMA, S32, mods_id(Mods(elems=("s8", "s8", "s32"))), [split, *a[:1], *b[:1]])
    N = Normalizer(T)
    N.of(other_user)  # split is used twice in the store: a memo let-atom
    x, y = N.of(np.concatenate([_to_f32(T, split), _to_f32(T, once)]))
    assert N.equal(x, y) and len(x.num) == 1


def test_unsigned_unbounded_and_different_sums_stay_apart() -> None:
    """The twins: a .u32 read (a negative sum reads as S + 2^32), an unbounded chain (an accumulator read from
    memory: wrap and clamp differ) and a sum with two A elements exchanged keep distinct forms."""
    T = TermStore()
    split, once, a, b = _two_chains(T)
    N = Normalizer(T)
    s_read, u_read = N.of(np.concatenate([_to_f32(T, split), _to_f32(T, once, "u32")]))
    assert not N.equal(s_read, u_read)
    u_split, u_once = N.of(np.concatenate([_to_f32(T, split, "u32"), _to_f32(T, once, "u32")]))
    assert not N.equal(u_split, u_once)  # .u32 reads keep their atoms by term id
    c = T.input("c", np.arange(1), S32)
    w_split, w_once, _, _ = _two_chains(T, acc=c)
    x, y = N.of(np.concatenate([_to_f32(T, w_split), _to_f32(T, w_once)]))
    assert not N.equal(x, y)
    zero = T.const(S32, 0)
    swapped = _mma(T, zero, [a[0], a[2], a[1], a[3]], b, False)
    x, y = N.of(np.concatenate([_to_f32(T, split), _to_f32(T, swapped)]))
    assert not N.equal(x, y)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), flips=st.lists(st.booleans(), min_size=3, max_size=3),
       acc=st.sampled_from([0, 5, (1 << 31) - 10, (1 << 32) - 7]), signed=st.booleans())
def test_equal_read_forms_have_equal_values(seed: int, flips: list[bool], acc: int, signed: bool) -> None:
    """Soundness over values: wherever the .s32 / .u32 reads of a split-K chain and a one-shot MMA (each step's
    .satfinite drawn) have equal normal forms, the emulator's arithmetic (termeval) gives both the same bits on
    random and extreme s8 inputs; and bounded signed reads from a small constant are equal."""
    from semantics.termeval import evaluate

    T = TermStore()
    c = T.const(S32, np.uint64(acc))
    a, b = _leaves(T, "a", 4), _leaves(T, "b", 4)
    split = _mma(T, _mma(T, c, a[:2], b[:2], flips[0]), a[2:], b[2:], flips[1])
    once = _mma(T, c, a, b, flips[2])
    src = "s32" if signed else "u32"
    roots = np.concatenate([_to_f32(T, split, src), _to_f32(T, once, src)])
    N = Normalizer(T)
    x, y = N.of(roots)
    same = N.equal(x, y)
    if signed and acc < 1 << 20:
        assert same
    if not same:
        return
    rng = np.random.default_rng(seed)
    for pick in ("random", "min", "max"):
        def leaf(buf, elems, sort, pick=pick):
            if pick == "min":
                return np.full(len(elems), 0x80, np.uint64)
            if pick == "max":
                return np.full(len(elems), 0x7F if buf == "a" else 0x80, np.uint64)
            return rng.integers(0, 256, len(elems)).astype(np.uint64)
        bits = evaluate(T, roots, leaf)
        assert int(bits[0]) == int(bits[1]), (pick, bits)
