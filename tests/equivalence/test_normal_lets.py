"""Let-atoms of the normal form (proofs/normal.py): one sum reduced by two different trees gets one
let-atom, so forms that hold it compare without expanding it (LayerNorm's mean and variance: a
shuffle butterfly in the candidate, Triton's shared-memory tree in the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from proofs.normal import LET_LIMIT, AtomKind, Normalizer
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
N_ELEMS = 4 * (LET_LIMIT + 1)  # halves and quarters of the sum are above LET_LIMIT: let-atoms themselves


def _chain(T: TermStore, leaves: list[int]) -> int:
    acc = leaves[0]
    for x in leaves[1:]:
        acc = int(T.make(Op.FADD, F32, RN, [np.array([acc]), np.array([x])])[0])
    return acc


def _add(T: TermStore, a: int, b: int) -> int:
    return int(T.make(Op.FADD, F32, RN, [np.array([a]), np.array([b])])[0])


def _shared(T: TermStore, t: int, tag: int) -> None:
    """A second user of `t` (as a partner lane's shuffle reads a butterfly partial)."""
    T.make(Op.FMUL, F32, RN, [np.array([t]), np.array([tag])])


def _roots(T: TermStore, x: np.ndarray, drop_last: bool = False) -> tuple[int, int]:
    """sqrt(s) * s for s the sum of x by a tree of shared partial sums, and by one chain in reverse."""
    n = x.size - (1 if drop_last else 0)
    quarters = [_chain(T, x[q * n // 4:(q + 1) * n // 4].tolist()) for q in range(4)]
    halves = [_add(T, quarters[0], quarters[1]), _add(T, quarters[2], quarters[3])]
    tree = _add(T, halves[0], halves[1])
    for k, t in enumerate(quarters + halves):
        _shared(T, t, int(x[k]))
    flat = _chain(T, x[::-1].tolist())

    def root(s: int) -> int:
        r = T.make(Op.FSQRT, F32, mods_id(Mods()), [np.array([s])])
        return int(T.make(Op.FMUL, F32, RN, [r, np.array([s])])[0])

    return root(tree), root(flat)


def test_one_sum_by_two_trees_is_one_let_atom_and_one_sqrt_atom() -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32)
    tree, flat = _roots(T, x)
    N = Normalizer(T)
    a, b = N.of(np.array([tree, flat]))
    assert N._equal(a, b)  # as they stand: no let-atom expanded
    lets = [i for i, (kind, _) in enumerate(N.atoms) if kind is AtomKind.LET]
    sums = {N.atoms[i][1] for i in lets if len(N.key_nf[N.atoms[i][1][0]].num) == N_ELEMS}
    assert len(sums) == 1  # the whole sum, by either tree: one let-atom
    assert N.equal(a, b)


def test_a_tree_missing_one_element_is_not_the_sum() -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32)
    tree, _ = _roots(T, x, drop_last=True)
    _, flat = _roots(T, x)
    N = Normalizer(T)
    a, b = N.of(np.array([tree, flat]))
    assert not N._equal(a, b) and not N.equal(a, b)


def _square_two_ways(T: TermStore, n: int) -> tuple[int, int]:
    """s * s, and sum_i x[i] * s' by one fma chain (s, s' the sum of x by two trees): equal only once
    the let-atom s stands for is expanded (x[i] * s is no monomial of s^2)."""
    x = T.input("x", np.arange(n), F32)
    s = _chain(T, x.tolist())
    square = int(T.make(Op.FMUL, F32, RN, [np.array([s]), np.array([s])])[0])
    s2 = _chain(T, x[::-1].tolist())
    acc = int(T.make(Op.FMUL, F32, RN, [x[:1], np.array([s2])])[0])
    for xi in x[1:].tolist():
        acc = int(T.make(Op.FFMA, F32, RN, [np.array([xi]), np.array([s2]), np.array([acc])])[0])
    return square, acc


def test_let_expansion_stops_at_the_time_limit() -> None:
    from symexec import TimeLimit, run_limits

    T = TermStore()
    square, dot = _square_two_ways(T, 3 * LET_LIMIT)
    N = Normalizer(T)
    a, b = N.of(np.array([square, dot]))
    assert not N._equal(a, b) and N.equal(a, b)  # by expansion, with no time limit
    N = Normalizer(T)
    a, b = N.of(np.array([square, dot]))
    with run_limits(seconds=1e-9):
        with pytest.raises(TimeLimit, match="expanding let-atoms"):
            N.equal(a, b)
