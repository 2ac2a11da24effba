"""proofs.normal / proofs.lemmas: a float's bits xor-ed with exactly its sign bit, read back as a float, is its
negation (IEEE 754 negation flips only the sign bit, NaN included; PTX ISA 9.7.3.10 and 9.7.4.5, `neg`), proved by Z3 on bit-vectors.

sinkhorn_attention's sm_100a build negates m + log l with `xor.b32 x, 0x80000000`; m is a max over a whole row of
scores, so the xor's subgraph has tens of thousands of nodes. The lemma's sample evaluation walked that whole
subgraph (small_subgraph, limit 4096) and gave up: the read stayed `float.f32(int(#..))`. It now reads only the
nodes between the xor and its float sources. Any other constant keeps no meaning."""

from __future__ import annotations

import numpy as np
import z3

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id

F32, F16, B32, B16 = float_sort("f32"), float_sort("f16"), bits_sort(32), bits_sort(16)
RN = mods_id(Mods(rnd="rn"))
NONE = mods_id(Mods())


def _chain(T: TermStore, x: np.ndarray, sort: int) -> np.ndarray:
    """x[0] + x[1] + ... one add at a time: a float whose subgraph has more than 4096 nodes."""
    acc = x[0:1]
    for j in range(1, x.size):
        acc = T.make(Op.FADD, sort, RN, [acc, x[j:j + 1]])
    return acc


def _flip(T: TermStore, x: np.ndarray, const: int, bits: int, fsort: int) -> np.ndarray:
    """FLOAT(x's bits xor const)."""
    xr = T.make(Op.XOR, bits, NONE, [x, T.const(bits, const)])
    return T.make(Op.FLOAT, fsort, NONE, [xr])


def _half(T: TermStore, word: np.ndarray, lo: int) -> np.ndarray:
    return T.make(Op.FLOAT, F16, NONE, [T.make(Op.EXTRACT, B16, mods_id(Mods(lo=lo, width=16)), [word])])


def test_sign_xor_of_a_big_f32_is_its_negation() -> None:
    T = TermStore()
    x = _chain(T, T.input("a", np.arange(5000), F32), F32)
    neg, wrong = _flip(T, x, 0x80000000, B32, F32), _flip(T, x, 0x40000000, B32, F32)
    N = Normalizer(T)
    fn, fx, fw = N.of(np.concatenate([neg, x, wrong]))
    assert N.equal(fn, N.neg(fx)) and not N.equal(fn, fx)
    (lem,) = N.lemmas
    assert (lem.template, lem.source, lem.result) == ("neg", int(x[0]), "unsat")
    s = z3.Solver()
    s.from_string(lem.smt2)  # the negated claim: unsat
    assert s.check() == z3.unsat
    # an exponent bit flipped: no meaning (an uninterpreted read), neither x nor -x
    assert not N.equal(fw, fx) and not N.equal(fw, N.neg(fx))
    assert len(N.lemmas) == 1


def test_sign_xor_of_an_f16() -> None:
    T = TermStore()
    x = _chain(T, T.input("h", np.arange(5000), F16), F16)
    N = Normalizer(T)
    fn, fx, fw = N.of(np.concatenate([_flip(T, x, 0x8000, B16, F16), x, _flip(T, x, 0x4000, B16, F16)]))
    assert N.equal(fn, N.neg(fx))
    assert not N.equal(fw, fx) and not N.equal(fw, N.neg(fx))


def test_packed_f16x2_sign_xor_negates_each_half() -> None:
    """{h1, h0} xor 0x80008000 negates both halves; 0x80000000 only the high one (the low half is read as h0,
    not -h0: the other half's bits are free in the claim, so the lemma names one source)."""
    T = TermStore()
    h = T.input("h", np.arange(2), F16)
    word = T.make(Op.CONCAT, B32, NONE, [h[1:2], h[0:1]])  # high, low
    both = T.make(Op.XOR, B32, NONE, [word, T.const(B32, 0x80008000)])
    high = T.make(Op.XOR, B32, NONE, [word, T.const(B32, 0x80000000)])
    N = Normalizer(T)
    lo, hi, lo1, hi1, f0, f1 = N.of(np.concatenate([_half(T, both, 0), _half(T, both, 16), _half(T, high, 0),
                                                    _half(T, high, 16), h[0:1], h[1:2]]))
    assert N.equal(lo, N.neg(f0)) and N.equal(hi, N.neg(f1))
    assert N.equal(lo1, f0) and not N.equal(lo1, N.neg(f0))  # the wrong half: not negated
    assert N.equal(hi1, N.neg(f1))
    assert all(m.result == "unsat" for m in N.lemmas)


def test_sign_taken_from_another_float_is_no_negation() -> None:
    """x xor (y and 0x80000000) flips x's sign only where y is negative: no template holds for every y."""
    T = TermStore()
    a = T.input("a", np.arange(2), F32)
    ysign = T.make(Op.AND, B32, NONE, [a[1:2], T.const(B32, 0x80000000)])
    k = T.make(Op.FLOAT, F32, NONE, [T.make(Op.XOR, B32, NONE, [a[0:1], ysign])])
    N = Normalizer(T)
    fk, f0 = N.of(np.concatenate([k, a[0:1]]))
    assert not N.equal(fk, N.neg(f0)) and not N.equal(fk, f0)
    assert not N.lemmas


def test_recheck_reads_a_sign_xor_of_an_unrepresentable_sum_as_its_negation() -> None:
    """proofs/recheck/reals.py evaluates terms in exact reals: a + b may have no f32 encoding, so the bits of
    (a + b) xor 0x80000000 were unevaluable and a certificate of negsum_xor failed its recheck. A sign-only edit
    (xor/or 0x80000000, and 0x7fffffff) is read on the value; any other constant still needs an exact encoding."""
    import random

    import mpmath

    from proofs.recheck.reals import TermValues, Unevaluable

    def nodes(const: int, op: str = "XOR") -> list:
        return [[0, "INPUT", "f32", {}, []], [1, "INPUT", "f32", {}, []], [2, "FADD", "f32", {}, [0, 1]],
                [3, "CONST", "b32", const, []], [4, op, "b32", {}, [2, 3]], [5, "FLOAT", "f32", {}, [4]]]

    unrepresentable = 0
    for seed in range(20):
        tv = TermValues(nodes(0x80000000), random.Random(seed))
        s = tv.get(2)
        assert tv.get(5) == -s
        assert TermValues(nodes(0x7FFFFFFF, "AND"), random.Random(seed)).get(5) == abs(s)
        assert TermValues(nodes(0x80000000, "OR"), random.Random(seed)).get(5) == -abs(s)
        wrong = TermValues(nodes(0x40000000), random.Random(seed))
        try:
            got = wrong.get(5)
        except Unevaluable:
            unrepresentable += 1
            continue
        assert got != -s and mpmath.isfinite(got)  # an exact encoding: its bits, an exponent bit flipped
    assert unrepresentable > 0  # the sums drawn are mostly not f32 numbers: the case the rule is for
