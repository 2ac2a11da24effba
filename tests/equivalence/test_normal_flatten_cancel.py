"""proofs.normal._flatten_lets: x = L1 + L2 where L1 stands for A - L2 (a nested let-atom, as forgetting_attention's
sums make): flattening L1 cancels the monomial L2 before L2 itself is flattened. It raised KeyError (the suite's
forgetting_attention proof, 2026-12-05); the flat form must be the identity x = A."""

from __future__ import annotations

import numpy as np

from proofs.normal import AtomKind, Normalizer, Rat
from semantics.terms import TermStore, float_sort

F = float_sort("f32")


def test_a_let_cancelled_by_another_lets_polynomial() -> None:
    T = TermStore()
    a = T.input("a", np.arange(20), F)
    b = T.input("b", np.arange(21), F)
    N = Normalizer(T)
    A = {(N.atom(AtomKind.LEAF, (int(t),)), 1): 1 for t in a}
    B = {(N.atom(AtomKind.LEAF, (int(t),)), 1): 1 for t in b}
    L2 = N.atom(AtomKind.LET, (N.key(Rat(B)),))
    L1 = N.atom(AtomKind.LET, (N.key(Rat({**A, (L2, 1): -1})),))
    flat = N._flatten_lets(Rat({(L1, 1): 1, (L2, 1): 1}))
    assert N.equal(flat, Rat(dict(A)))
    assert not N.equal(flat, Rat(dict(B)))
