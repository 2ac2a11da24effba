"""proofs.equivalence._group_instances checks a group whose DAG is big for its few members (NODES_PER_MEMBER) when
the members' DAGs are their own (OWN_DAG_NODES): cross_entropy_zloss' `loss`, 8 rows of one shape, each a 174 k node
reduction over its row, was normalised row by row (about 20 s CPU) where the instance check takes 0.4 s
(bench/results/i11cost-2026-12-07s46). Here: rows of a sum, the candidate summing left to right, the reference right
to left. The positive case is proved for one row and renamed for the others; the negative twin, a reference row
that reads one element of another row, is no instance and is not proved."""

from __future__ import annotations

import numpy as np

import proofs.equivalence as eq
from proofs.equivalence import Method, Outcome, compare_outputs
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id

from .test_normal_budget import _side

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
ROWS, COLS = 4, 1200  # 4 members' worth (GROUP_MIN) of a DAG of about 3 * 1200 + 2 nodes: past NODES_PER_MEMBER


def _chain(T: TermStore, leaves: list[int]) -> int:
    acc = leaves[0]
    for leaf in leaves[1:]:
        acc = int(T.make(Op.FADD, F32, RN, [np.array([acc]), np.array([leaf])])[0])
    return acc


def _rows(T: TermStore, stray: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row i, the sum of x[i, :] in two orders; `stray`: that row's reference reads x[stray - 1, 5] for x[stray, 5]."""
    x = T.input("x", np.arange(ROWS * COLS), F32).reshape(ROWS, COLS).tolist()
    cand, ref = [], []
    for i in range(ROWS):
        row = list(x[i])
        cand.append(_chain(T, row))
        if i == stray:
            row[5] = x[i - 1][5]
        ref.append(_chain(T, row[::-1]))
    return np.array(cand), np.array(ref)


def test_rows_with_their_own_dags_are_checked_as_instances(monkeypatch) -> None:
    T = TermStore()
    c, r = _rows(T)
    monkeypatch.setattr(eq, "OWN_DAG_NODES", 0)  # before: the group is too small for its DAG, not checked
    assert (eq._group_instances(T, c, r) == -1).all()
    monkeypatch.undo()
    rep_of = eq._group_instances(T, c, r)
    assert rep_of[0] == -1 and (rep_of[1:] == 0).all()
    res = compare_outputs(T, _side("candidate", c), _side("reference", r))
    assert res.outcome is Outcome.VERIFIED
    assert res.proofs[0].methods == {Method.NORMAL_FORM.value: 1, Method.INSTANCE.value: ROWS - 1}


def test_a_row_reading_another_rows_element_is_no_instance_and_not_proved() -> None:
    T = TermStore()
    c, r = _rows(T, stray=2)
    rep_of = eq._group_instances(T, c, r)
    assert rep_of[2] == -1 and rep_of[1] == 0 and rep_of[3] == 0
    res = compare_outputs(T, _side("candidate", c), _side("reference", r))
    assert res.outcome is not Outcome.VERIFIED
    assert [s.element for s in res.suspects] == [2]


def test_rows_sharing_their_dag_are_left_to_their_normal_forms() -> None:
    """Elements that share most of one big DAG (x[i] / s, s the sum of a whole row: softmax-like) are not checked:
    their own normal forms reuse s's, so the gate of NODES_PER_MEMBER stands."""
    T = TermStore()
    x = T.input("x", np.arange(COLS), F32)
    s = _chain(T, x.tolist())
    s2 = _chain(T, x.tolist()[::-1])
    c = T.make(Op.FDIV, F32, RN, [x[:ROWS], np.full(ROWS, s)])
    r = T.make(Op.FDIV, F32, RN, [x[:ROWS], np.full(ROWS, s2)])
    assert (eq._group_instances(T, c, r) == -1).all()
