"""proofs.normal.Normalizer._equal_atoms_expanded: before expanding two normal forms whole, Normalizer.equal
compares them with every atom not in both replaced by the key of its own expansion. Forms of the shape of
cross_entropy_zloss's gradient element, ex2(z - lg2(S)) * c + lg2(S) * d with S a row's sum reduced by two
different trees (let-atoms for the shared partial sums), are equal that way without multiplying them out.

Soundness: whenever the shortcut says equal, the full expansion says equal too; when the sums differ (an
element dropped or counted twice) neither does. Completeness for the case it is made for: equal sums by
different trees are proved by it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import EXPAND_BUDGET, EXPAND_WORK_BUDGET, LET_LIMIT, Normalizer
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
NONE = mods_id(Mods())
N_ELEMS = 4 * (LET_LIMIT + 1)


def _bin(T: TermStore, op: Op, a: int, b: int) -> int:
    return int(T.make(op, F32, RN, [np.array([a]), np.array([b])])[0])


def _un(T: TermStore, op: Op, a: int) -> int:
    return int(T.make(op, F32, NONE, [np.array([a])])[0])


def _tree(T: TermStore, leaves: list[int], cuts: list[int], tag: int) -> int:
    """The sum of `leaves` by a binary tree split at positions drawn from `cuts`; every partial sum of
    more than LET_LIMIT elements gets a second user (so it is shared: a let-atom)."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1 + cuts[len(leaves) % len(cuts)] % (len(leaves) - 1)
    s = _bin(T, Op.FADD, _tree(T, leaves[:k], cuts, tag), _tree(T, leaves[k:], cuts, tag))
    if len(leaves) > LET_LIMIT:
        _bin(T, Op.FMUL, s, tag)
    return s


def _element(T: TermStore, s: int, z: int, c: int, d: int) -> int:
    lg = _un(T, Op.FLG2, s)
    e = _un(T, Op.FEX2, _bin(T, Op.FSUB, z, lg))
    return _bin(T, Op.FADD, _bin(T, Op.FMUL, e, c), _bin(T, Op.FMUL, lg, d))


def _full(N: Normalizer, a, b) -> bool:
    N._budget, N._work = EXPAND_BUDGET, EXPAND_WORK_BUDGET
    try:
        return N._equal(N.expand(a), N.expand(b))
    finally:
        N._work = None


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_shortcut_implies_the_full_expansion(data) -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d = T.input("w", np.arange(3), F32).tolist()
    order = data.draw(st.permutations(range(N_ELEMS)))
    other = [x[i] for i in order]
    change = data.draw(st.sampled_from(["same", "drop", "twice", "scaled"]))
    if change == "drop":
        other = other[1:]
    elif change == "twice":
        other = other + other[:1]
    elif change == "scaled":
        other = other[:-1] + [_bin(T, Op.FMUL, other[-1], c)]
    cuts = data.draw(st.lists(st.integers(0, 1000), min_size=3, max_size=8))
    s1 = _tree(T, x, [5, 11, 3], z)
    s2 = _tree(T, other, cuts, d)
    two = [_element(T, s1, z, c, d), _element(T, s2, z, c, d)]
    if data.draw(st.booleans()):  # z and c swapped in one of them: never equal
        two[1] = _element(T, s2, c, z, d)
        change = "swapped"
    N = Normalizer(T)
    a, b = N.of(np.array(two))
    short = N._equal_atoms_expanded(a, b)
    if short:
        assert _full(N, a, b)
    if change != "same":
        assert not short and not N.equal(a, b)
    else:
        assert N.equal(a, b)


def test_equal_sums_by_two_trees_need_no_full_expansion(monkeypatch) -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d = T.input("w", np.arange(3), F32).tolist()
    s1 = _tree(T, x, [5, 11, 3], z)
    s2 = _tree(T, x[::-1], [2, 7], d)
    N = Normalizer(T)
    a, b = N.of(np.array([_element(T, s1, z, c, d), _element(T, s2, z, c, d)]))
    assert not N._equal(a, b)  # different let-atoms as they stand
    calls = []
    real = N.expand
    monkeypatch.setattr(N, "expand", lambda f: calls.append(f is a or f is b) or real(f))
    assert N.equal(a, b)
    assert calls and not any(calls)  # atoms expanded, never the two forms whole


def test_an_infinity_against_a_form_with_let_atoms_is_compared_as_before() -> None:
    """equal(+inf, x) with x holding let-atoms: the shortcut declines (no numerator to rename), the full
    expansion answers (not equal)."""
    from proofs.normal import POS_INF

    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d = T.input("w", np.arange(3), F32).tolist()
    N = Normalizer(T)
    (a,) = N.of(np.array([_element(T, _tree(T, x, [5, 11, 3], z), z, c, d)]))
    assert N._has_let(a)
    assert not N.equal(POS_INF, a) and not N.equal(a, POS_INF)
