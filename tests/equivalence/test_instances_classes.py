"""The instance check per class of members (proofs/instances.py: at each node of the representative's DAG the
members whose images coincide are checked once) answers exactly as the straightforward check, one member at a
time in plain Python (tests/equivalence/instances_members.py), on random member sets built like tiled kernels'
outputs: element (i, d) reads some input variables by its row i, some by its column d, some by both and some
not at all, so that members share subterms (the classes) while some differ everywhere; with near misses (one
leaf occurrence of one member reads another element: not a renaming, rejected), arbitrary nodes, other buffers,
duplicated roots, the sample's early answer, chunks of any size and coarsenings looked for among the first
classes only (a repeat further on is missed: the finer partition is checked)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proofs.instances
from semantics.terms import Op, TermStore, bits_sort

from . import instances_members
from .test_instances_levels import F32, NVARS, OPS, RN, templates

B32 = bits_sort(32)


class _Builder:
    """test_instances_levels' builder, with one operand occurrence optionally reading another element."""

    def __init__(self, T: TermStore) -> None:
        self.T = T
        self.shared_opaque = int(T.opaque(F32, 1)[0])

    def build(self, template, leaves: list[int], buffer: str = "x", twist: tuple[int, int] | None = None) -> int:
        T = self.T
        vals: list[int] = []

        def operand(a: int, twisted: bool) -> int:
            if a >= 0:
                return vals[a]
            if a >= -2 * NVARS:
                v = (-1 - a) % NVARS
                e = leaves[v] + (1000 if twisted else 0)
                if a >= -NVARS:
                    return int(T.input(buffer, np.array([e]), F32)[0])
                xb = T.input(buffer, np.array([e]), B32)
                return int(T.make(Op.FLOAT, F32, 0, [xb])[0])
            if a == -2 * NVARS - 1:
                return int(T.const(F32, np.array([0x3F800000], np.uint32))[0])
            if a == -2 * NVARS - 2:
                return self.shared_opaque
            return int(T.opaque(F32, 1)[0])

        for n, (op_i, args) in enumerate(template):
            op, _ = OPS[op_i]
            mods = 0 if op is Op.FNEG else RN
            vals.append(int(T.make(op, F32, mods, [np.array([operand(a, twist == (n, j))])
                                                   for j, a in enumerate(args)])[0]))
        return vals[-1]


def _leaves(dep: list[int], base: list[int], i: int, d: int) -> list[int]:
    """Element of each variable for member (i, d): dep 0 constant, 1 by row, 2 by column, 3 by both."""
    return [b + (i if t & 1 else 0) + (10 * d if t & 2 else 0) for t, b in zip(dep, base)]


def _check(T: TermStore, rep: np.ndarray, members: np.ndarray, give_up: float) -> np.ndarray:
    want = instances_members.instances(T, rep, members, give_up_below=give_up)
    got = proofs.instances.instances(T, rep, members, give_up_below=give_up)
    assert got.tolist() == want.tolist()
    return want


@settings(max_examples=250, deadline=None)
@given(templates(), templates(), st.lists(st.integers(0, 3), min_size=NVARS, max_size=NVARS),
       st.lists(st.integers(0, 7), min_size=NVARS, max_size=NVARS), st.integers(1, 4), st.integers(1, 4),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 15), st.integers(0, 8), st.integers(0, 2)), max_size=6),
       st.sampled_from([0.0, 0.25, 0.9]), st.booleans(), st.integers(0, 3), st.sampled_from([1, 2, 3, 256]),
       st.randoms(use_true_random=False))
def test_classes_answer_as_member_by_member(tc, tr, dep, base, rows, cols, odd, give_up, dup_root, budget,
                                            prefix, rnd) -> None:
    T = TermStore()
    B = _Builder(T)

    def element(i: int, d: int, twist_c=None, twist_r=None, buffer: str = "x") -> list[int]:
        lv = _leaves(dep, base, i, d)
        row = [B.build(tc, lv, buffer, twist_c), B.build(tr, lv, buffer, twist_r)]
        if dup_root:
            row.append(row[0])
        return row

    rep = element(0, 0)
    members = [element(i, d) for i in range(rows) for d in range(cols)][1:]
    for how, at, node, slot in odd:  # near misses and other non-instances among the classes
        i, d = at % rows, (at // rows) % cols
        if how <= 2:  # one operand occurrence of one side reads another element
            t = (node % len(tc if how < 2 else tr), slot)
            members.append(element(i, d, twist_c=t) if how < 2 else element(i, d, twist_r=t))
        elif how == 3:  # another buffer
            members.append(element(i, d, buffer="y"))
        elif how == 4:  # arbitrary nodes
            members.append([rnd.randrange(len(T)) for _ in rep])
        else:  # the two sides of two different members
            a, b = element(i, d), element((i + 1) % rows, (d + 1) % cols)
            members.append([a[0], b[1]] + a[2:])
    if not members:
        return
    rep_a, mem_a = np.array(rep), np.array(members)
    old_prefix = proofs.instances._PREFIX  # coarsening tested on fewer classes first: misses only cost time
    proofs.instances._PREFIX = prefix
    try:
        want = _check(T, rep_a, mem_a, give_up)
    finally:
        proofs.instances._PREFIX = old_prefix
    if budget and give_up == 0.0:  # chunks of a member or a few: the same answers (the early answer is per chunk)
        old = proofs.instances.IMAGE_BUDGET
        proofs.instances.IMAGE_BUDGET = proofs.instances.prepare(T, rep_a).cost * budget
        try:
            assert proofs.instances.instances(T, rep_a, mem_a).tolist() == want.tolist()
        finally:
            proofs.instances.IMAGE_BUDGET = old


def _attention_like(T: TermStore, rows: int, cols: int, n: int, twist: tuple[int, int, int] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Element (i, d) = sum_j exp(q_i . k_j) v[j, d] / sum_j exp(q_i . k_j), a dot product of 2 per score,
    the sums as chains (roots: the division twice, a candidate and a reference side). `twist` (i, d, j):
    that member's numerator reads v[j, d + 1] in term j (one leaf occurrence: not a renaming)."""
    q, k, v = (T.input(b, np.arange(4096), F32) for b in ("q", "k", "v"))

    def score(i: int, j: int) -> np.ndarray:
        return T.make(Op.FEX2, F32, 0, [T.make(Op.FFMA, F32, RN, [
            q[2 * i:2 * i + 1], k[2 * j:2 * j + 1],
            T.make(Op.FMUL, F32, RN, [q[2 * i + 1:2 * i + 2], k[2 * j + 1:2 * j + 2]])])])

    def one(i: int, d: int) -> int:
        num = den = T.const(F32, np.array([0], np.uint32))
        for j in range(n):
            p = score(i, j)
            pn = score(i, j + n) if twist == (i, d, j) else p
            num = T.make(Op.FFMA, F32, RN, [pn, v[cols * j + d:cols * j + d + 1], num])
            den = T.make(Op.FADD, F32, RN, [p, den])
        return int(T.make(Op.FDIV, F32, RN, [num, den])[0])

    ids = np.array([[one(i, d)] * 2 for i in range(rows) for d in range(cols)])
    return ids[0], ids[1:]


@pytest.mark.parametrize("rows,cols,n", [(3, 4, 5), (8, 8, 16)])
def test_attention_like_classes_and_a_near_miss(rows: int, cols: int, n: int) -> None:
    """Every member of a FlashAttention-like output is an instance; one whose numerator reads other keys in
    one term's score is not (its row shares every other score with its class), and neither is one whose two
    roots are two members'."""
    T = TermStore()
    rep, members = _attention_like(T, rows, cols, n)
    assert _check(T, rep, members, 0.0).all()
    twisted = _attention_like(T, rows, cols, n, twist=(1, 2, n - 1))[1][1 * cols + 2 - 1]
    mixed = np.array([members[0, 0], members[1, 1]])
    got = _check(T, rep, np.concatenate([members, twisted[None], mixed[None]]), 0.0)
    assert got.tolist() == [True] * members.shape[0] + [False, False]
