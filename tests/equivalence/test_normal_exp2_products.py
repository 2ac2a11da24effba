"""proofs.normal.Normalizer._merge_exp2 keeps exp2(e1 p1 + ... + ek pk) per product of exp2 atoms
((atom, exponent), ...): the normal forms of random products and sums of ex2 terms are the same as a
Normalizer's that computes every product afresh (same atoms, same polynomials), and products of exp2
atoms are still equal exactly when their exponent sums are (FlashAttention-style rescaling)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
NONE = mods_id(Mods())


class _NoMemo(dict):
    """A dict that keeps nothing: every product computed again."""

    def __setitem__(self, key, value) -> None:
        pass


def _bin(T: TermStore, op: Op, a: int, b: int) -> int:
    return int(T.make(op, F32, RN, [np.array([a]), np.array([b])])[0])


def _terms(data, T: TermStore) -> list[int]:
    x = [int(v) for v in T.input("x", np.arange(4), F32)]
    ex = [int(T.make(Op.FEX2, F32, NONE, [np.array([_bin(T, Op.FADD, x[0], x[1])])])[0])]
    for _ in range(data.draw(st.integers(0, 4))):  # exp2 of sums and differences of leaves
        a, b = data.draw(st.sampled_from(x)), data.draw(st.sampled_from(x))
        s = _bin(T, data.draw(st.sampled_from([Op.FADD, Op.FSUB])), a, b)
        ex.append(int(T.make(Op.FEX2, F32, NONE, [np.array([s])])[0]))
    out = [_bin(T, Op.FMUL, ex[0], ex[0])]  # at least one product of exp2 atoms
    for _ in range(data.draw(st.integers(1, 12))):  # products (repeats: exponents) and sums of them
        t = data.draw(st.sampled_from(ex))
        for _ in range(data.draw(st.integers(1, 4))):
            t = _bin(T, Op.FMUL, t, data.draw(st.sampled_from(ex + x)))
        if out and data.draw(st.booleans()):
            t = _bin(T, Op.FADD, t, data.draw(st.sampled_from(out)))
        out.append(t)
    return out


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_kept_products_give_the_same_forms(data) -> None:
    T = TermStore()
    roots = np.array(_terms(data, T), np.int64)
    kept, fresh = Normalizer(T), Normalizer(T)
    fresh._exp2_products = _NoMemo()
    a, b = kept.of(roots), fresh.of(roots)
    assert kept.atoms == fresh.atoms and kept.polys == fresh.polys
    assert [(x.num, x.den) for x in a] == [(y.num, y.den) for y in b]
    assert kept._exp2_products  # products of several exp2 atoms were kept
    for i in range(len(a)):  # and comparisons agree
        for j in range(len(a)):
            assert kept.equal(a[i], a[j]) == fresh.equal(b[i], b[j])


def test_rescaled_products() -> None:
    """ex2(a - b) * ex2(b - c) == ex2(a - c), computed again for a second pair and from the kept sum;
    not equal to ex2(a - b) * ex2(c - b)."""
    T = TermStore()
    a, b, c = (int(v) for v in T.input("x", np.arange(3), F32))

    def ex(p: int, q: int) -> int:
        return int(T.make(Op.FEX2, F32, NONE, [np.array([_bin(T, Op.FSUB, p, q)])])[0])

    N = Normalizer(T)
    one, two, want, other = N.of(np.array([_bin(T, Op.FMUL, ex(a, b), ex(b, c)), _bin(T, Op.FMUL, ex(b, c), ex(a, b)),
                                           ex(a, c), _bin(T, Op.FMUL, ex(a, b), ex(c, b))], np.int64))
    assert N.equal(one, want) and N.equal(two, want) and not N.equal(other, want)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_single_atom_products_as_merge_gives_them(data) -> None:
    """_mono_mul of two one-atom monomials (plain atoms, exp2 atoms, indicators with and without an
    equality value, any small exponents) answers what _merge_exp2 answers for their product."""
    from proofs.normal import AtomKind, _mono_mul

    T = TermStore()
    x = [int(v) for v in T.input("x", np.arange(3), F32)]
    N = Normalizer(T)
    e1, e2 = N.of(np.array([int(T.make(Op.FEX2, F32, NONE, [np.array([x[i]])])[0]) for i in (0, 1)], np.int64))
    plain = sorted(a for f in N.of(np.array(x, np.int64)) for m in f.num for a in m[::2])
    exp2 = [next(iter(f.num))[0] for f in (e1, e2)]
    # indicators: [t7 == 3], [t7 == 4] (equality values of one term: their product is 0) and [x0 > 0]
    ind = [N.atom(AtomKind.IND, (("term", ("cmp", "eq", True, 7, ("value", v))),)) for v in (3, 4)]
    ind.append(N.atom(AtomKind.IND, (("gt", N.poly_id(e1.num)),)))
    assert len(N._eq_value) == 2 and set(ind) <= N._special
    atoms = plain + exp2 + ind
    a = (data.draw(st.sampled_from(atoms)), data.draw(st.sampled_from([-2, -1, 1, 2])))
    b = (data.draw(st.sampled_from(atoms)), data.draw(st.sampled_from([-2, -1, 1, 2])))
    d: dict[int, int] = {a[0]: a[1]}
    d[b[0]] = d.get(b[0], 0) + b[1]
    want = N._merge_exp2(d) if any(k in N._special for k in d) else \
        (tuple(v for k in sorted(d) if d[k] for v in (k, d[k])), 1)
    assert _mono_mul(a, b, N._merge_exp2, N._special) == want


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_products_with_one_special_atom_as_merge_gives_them(data) -> None:
    """_mono_mul of monomials of several atoms (plain atoms, exp2 atoms, indicators with and without an
    equality value, exponents -2..2; the same atom on both sides too) answers what _merge_exp2 answers for
    their product whenever any special atom is in it, and the sorted atoms otherwise."""
    from proofs.normal import AtomKind, _mono_mul

    T = TermStore()
    x = [int(v) for v in T.input("x", np.arange(4), F32)]
    N = Normalizer(T)
    e1, e2 = N.of(np.array([int(T.make(Op.FEX2, F32, NONE, [np.array([x[i]])])[0]) for i in (0, 1)], np.int64))
    plain = sorted({a for f in N.of(np.array(x, np.int64)) for m in f.num for a in m[::2]})
    exp2 = [next(iter(f.num))[0] for f in (e1, e2)]
    ind = [N.atom(AtomKind.IND, (("term", ("cmp", "eq", True, 7, ("value", v))),)) for v in (3, 4)]
    ind.append(N.atom(AtomKind.IND, (("gt", N.poly_id(e1.num)),)))
    atoms = plain + exp2 + ind

    def mono():
        chosen = sorted(set(data.draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=4))))
        return tuple(v for a in chosen for v in (a, data.draw(st.sampled_from([-2, -1, 1, 1, 1, 2]))))

    a, b = mono(), mono()
    d: dict[int, int] = {}
    for m in (a, b):
        for i in range(0, len(m), 2):
            d[m[i]] = d.get(m[i], 0) + m[i + 1]
    want = N._merge_exp2(dict(d)) if any(k in N._special for k in d) else \
        (tuple(v for k in sorted(d) if d[k] for v in (k, d[k])), 1)
    assert _mono_mul(a, b, N._merge_exp2, N._special) == want
