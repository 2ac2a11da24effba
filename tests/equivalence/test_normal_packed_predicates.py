"""proofs.normal: predicates packed into a bit mask and read back (`_packed_cmp`), and infinities under a
condition (`ite` as an uninterpreted application of the indicator and both branches).

Triton's sm_89 build of cross_entropy_zloss packs its `cols == y` predicates into a b16 mask (selp 1/0 or
-1/0, shl, and, or), widens it (cvt.u32.u16) and reads bit q back (shr, and 1, setp.ne 0); sm_80's build
selects on the comparisons directly. The bit-level reading of the mask must give the predicate itself;
a wrong bit, a bit masked off, or two predicates in one bit must not. Soundness: whenever the normal
forms are equal, the two terms agree at every sampled input (the labels drawn from the compared values,
so every predicate is true somewhere, and at random).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import Normalizer
from semantics.termeval import evaluate
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

W32, W16, F = bits_sort(32), bits_sort(16), float_sort("f32")
NONE = mods_id(Mods())


def _k(T: TermStore, sort: int, v: int) -> np.ndarray:
    return T.const(sort, np.uint64(v))


def _cmp(T: TermStore, a: np.ndarray, b: np.ndarray, cmp: str) -> np.ndarray:
    return T.make(Op.CMP, PRED, mods_id(Mods(cmp=cmp)), [a, b])


def _op(T: TermStore, op: Op, sort: int, *kids: np.ndarray, m: int = NONE) -> np.ndarray:
    return T.make(op, sort, m, list(kids))


def _ite(T: TermStore, p: np.ndarray, a: np.ndarray, b: np.ndarray, sort: int = F) -> np.ndarray:
    return T.make(Op.ITE, sort, NONE, [p, a, b])


def _agree(T: TermStore, a: np.ndarray, b: np.ndarray, ys: list[int], z: float = 1.5) -> bool:
    """The two terms' bits at every label value in ys (z[0] = z)."""
    for y in ys:
        def leaf(buf: str, idx: np.ndarray, sort: int, y=y) -> np.ndarray:
            if buf == "labels":
                return np.full(idx.size, y % (1 << 32), np.uint64)
            return np.full(idx.size, int(np.float32(z).view(np.uint32)), np.uint64)
        va, vb = evaluate(T, np.concatenate([a, b]), leaf)
        if va != vb:
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_packed_bit_is_its_predicate(data) -> None:
    n = data.draw(st.integers(1, 4))
    cols = data.draw(st.lists(st.integers(0, 9000), min_size=n, max_size=n, unique=True))
    pos = data.draw(st.lists(st.integers(0, 15), min_size=n, max_size=n, unique=True))
    wide = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))  # selp -1/0 (then masked) or 1/0
    cover = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))  # the mask keeps the bit (or not)
    T = TermStore()
    y = T.input("labels", np.arange(1), W32)
    z = T.input("z", np.arange(1), F)
    preds = [_cmp(T, y, _k(T, W32, c), "eq") for c in cols]
    mask = _k(T, W16, 0)
    for p, q, w, keep in zip(preds, pos, wide, cover):
        v = _ite(T, p, _k(T, W16, 0xFFFF if w else 1), _k(T, W16, 0), W16)
        v = _op(T, Op.SHL, W16, v, _k(T, W32, q))
        if w:  # the bits above q hold p too: masked to bit q (or, not covering, to the bits above it)
            v = _op(T, Op.AND, W16, v, _k(T, W16, (1 << q) if keep else (0xFFFF ^ (1 << q))))
        mask = _op(T, Op.OR, W16, mask, v)
    wide32 = _op(T, Op.CVT, W32, mask, m=mods_id(Mods(elems=("u32", "u16"))))
    j = data.draw(st.integers(0, n - 1))
    q = pos[j] if data.draw(st.booleans()) else data.draw(st.integers(0, 17))
    bit = _op(T, Op.AND, W32, _k(T, W32, 1), _op(T, Op.SHR, W32, wide32, _k(T, W32, q)))
    read = _cmp(T, bit, _k(T, W32, 0), data.draw(st.sampled_from(["ne", "eq"])))
    packed = _ite(T, read, z, _k(T, F, 0))
    direct = _ite(T, preds[j], z, _k(T, F, 0))
    negated = _ite(T, preds[j], _k(T, F, 0), z)
    N = Normalizer(T)
    a, b, c = N.of(np.concatenate([packed, direct, negated]))
    ys = cols + [-1, 9001, data.draw(st.integers(-2**31, 2**31 - 1))]
    for other, form in ((direct, b), (negated, c)):
        if N.equal(a, form):  # sound: equal forms, equal values everywhere sampled
            assert _agree(T, packed, other, ys)
    # complete where the read bit is predicate j's alone (no other predicate's unmasked -1 spills into it):
    # the packed read is the predicate (or its negation)
    spill = any(wide[i] and not cover[i] and pos[i] < q for i in range(n) if i != j)
    if q == pos[j] and (cover[j] or not wide[j]) and not spill:
        assert N.equal(a, b) or N.equal(a, c)


def test_two_predicates_in_one_bit_are_not_followed() -> None:
    """(p | r) in bit 0 is neither p nor r: the comparison stays a bit-level atom."""
    T = TermStore()
    y = T.input("labels", np.arange(2), W32)
    z = T.input("z", np.arange(1), F)
    p, r = _cmp(T, y[0:1], _k(T, W32, 3), "eq"), _cmp(T, y[1:2], _k(T, W32, 4), "eq")
    one = lambda pr: _ite(T, pr, _k(T, W16, 1), _k(T, W16, 0), W16)  # noqa: E731
    both = _op(T, Op.OR, W16, one(p), one(r))
    read = _cmp(T, both, _k(T, W16, 0), "ne")
    N = Normalizer(T)
    a, b = N.of(np.concatenate([_ite(T, read, z, _k(T, F, 0)), _ite(T, p, z, _k(T, F, 0))]))
    assert not N.equal(a, b)


def test_an_infinity_under_a_condition_is_one_value_of_equal_conditions() -> None:
    """where(col == y, -inf, 0) spelled `y - 16 == col - 16` and `y == col`: one value (ite of equal
    indicators); with another column, or +inf, another value."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W32)
    ninf, pinf, zero = _k(T, F, 0xFF800000), _k(T, F, 0x7F800000), _k(T, F, 0)
    shifted = _op(T, Op.ISUB, W32, y, _k(T, W32, 16))
    a = _ite(T, _cmp(T, shifted, _k(T, W32, 6000 - 16), "eq"), ninf, zero)
    b = _ite(T, _cmp(T, y, _k(T, W32, 6000), "eq"), ninf, zero)
    c = _ite(T, _cmp(T, y, _k(T, W32, 6001), "eq"), ninf, zero)
    d = _ite(T, _cmp(T, y, _k(T, W32, 6000), "eq"), pinf, zero)
    N = Normalizer(T)
    fa, fb, fc, fd = N.of(np.concatenate([a, b, c, d]))
    assert N.equal(fa, fb)
    assert not N.equal(fa, fc) and not N.equal(fa, fd)
