"""proofs.normal's MMA node adds each product of two plain atoms into its accumulator in place
(Normalizer._plain_product_into: sage_attention's int8 products, their operands' values kept per term: _operands, where mul/mul_poly/_mono_mul were 86 % of its
cross-target proof; bench/results/i11cost-2026-12-07s46). Speed only: the normal forms, and the atoms interned on the
way, are those of add(acc, mul(x, y)) (the normalizer with the shortcut off), on random MMA chains of s8/u8 operands
(repeated leaves: squares; constants and packed bit functions: the general path) and of f16 operands over
accumulators with a denominator (PTX 9.7.14.5.14)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id

S32, S8, B8 = bits_sort(32), bits_sort(8), bits_sort(8)
F16, F32 = float_sort("f16"), float_sort("f32")


class _Off(Normalizer):
    """Both shortcuts off: products through add(acc, mul(x, y)), integer operands made anew at each use."""

    def _plain_product_into(self, acc, x, y) -> bool:
        return False

    def _operand(self, k, ty, local, remaining):  # as before the operand cache (_operands)
        if ty[0] in "su" and ty[1:].isdigit():
            self._get(k, local, remaining)
            return self._int_atom(k, ty[0] == "s")
        return self._get(k, local, remaining)[0]


def _same(T: TermStore, roots: list[int]) -> None:
    new, old = Normalizer(T), _Off(T)
    got, want = new.of(np.array(roots, np.int64)), old.of(np.array(roots, np.int64))
    assert got == want
    assert new.atoms == old.atoms
    for x, y in zip(got, want):
        assert new.equal(x, y)


@settings(max_examples=60, deadline=None)
@given(k=st.sampled_from([1, 2, 4]),
       steps=st.lists(st.tuples(st.lists(st.integers(0, 11), min_size=8, max_size=8), st.booleans(),
                                st.sampled_from(["s8", "u8"])), min_size=1, max_size=5),
       start=st.sampled_from(["zero", "input", "const"]))
def test_int_mma_chains_as_before(k: int, steps: list[tuple], start: str) -> None:
    T = TermStore()
    leaves = [int(T.input("a", np.array([j]), S8)[0]) for j in range(6)]
    ops = leaves + [int(T.const(S8, 3)[0]), int(T.const(S8, 0)[0]), int(T.const(S8, 0xFF)[0]),
                    T.make1(Op.AND, B8, 0, [leaves[0], int(T.const(B8, 1)[0])]),  # one bit: a table, an indicator
                    T.make1(Op.SHR, B8, 0, [leaves[1], int(T.const(B8, 6)[0])]),  # two bits: a table of 4 values
                    leaves[2]]
    acc = {"zero": T.const(S32, 0), "input": T.input("c", np.arange(1), S32), "const": T.const(S32, 7)}[start]
    roots = []
    for picks, sat, ty in steps:
        a = [np.array([ops[picks[j]]]) for j in range(k)]
        b = [np.array([ops[picks[4 + j]]]) for j in range(k)]
        acc = T.make(Op.MMA, S32, mods_id(Mods(elems=(ty, ty, "s32"), sat=sat)), [acc, *a, *b])
        roots.append(int(acc[0]))
    _same(T, roots)


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, 5), min_size=8, max_size=8), divided=st.booleans())
def test_float_mma_as_before(picks: list[int], divided: bool) -> None:
    """f16 operands (leaves, a leaf twice, a sum: not one atom) over an accumulator that may be a quotient."""
    T = TermStore()
    rn = mods_id(Mods(rnd="rn"))
    h = [int(T.input("h", np.array([j]), F16)[0]) for j in range(3)]
    ops = h + [T.make1(Op.FADD, F16, rn, [h[0], h[1]]), int(T.const(F16, 0x3C00)[0]), h[2]]
    c = T.input("c", np.arange(2), F32)
    acc = T.make(Op.FDIV, F32, rn, [c[:1], c[1:]]) if divided else c[:1]
    a = [np.array([ops[picks[j]]]) for j in range(4)]
    b = [np.array([ops[picks[4 + j]]]) for j in range(4)]
    mma = T.make(Op.MMA, F32, mods_id(Mods(elems=("f16", "f16", "f32"))), [acc, *a, *b])
    _same(T, [int(mma[0])])


def test_wrong_product_is_told_apart() -> None:
    """Negative twin: a K step whose operands are swapped across rows (a0 b1 + a1 b0 against a0 b0 + a1 b1) has
    another normal form on the fast path too."""
    T = TermStore()
    a, b = [T.input("a", np.array([j]), S8) for j in range(2)], [T.input("b", np.array([j]), S8) for j in range(2)]
    zero, aux = T.const(S32, 0), mods_id(Mods(elems=("s8", "s8", "s32")))
    good = T.make(Op.MMA, S32, aux, [zero, a[0], a[1], b[0], b[1]])
    bad = T.make(Op.MMA, S32, aux, [zero, a[0], a[1], b[1], b[0]])
    N = Normalizer(T)
    x, y = N.of(np.concatenate([good, bad]))
    assert not N.equal(x, y)
