"""The instance check a step at a time (proofs/instances.py, 2026-12-05) answers exactly as the one that
visited the representative's DAG node by node (tests/equivalence/instances_pernode.py, main 945151d): on
random DAGs with commutative pairs of one shape (pass 2's lookups) and of two shapes (pairing by shape),
an element read by leaves of two sorts (one substitution for both), constants, opaque leaves, shared
subterms, duplicated roots, members that are renamings, near misses and arbitrary nodes; in chunks of
any size and with the sample's early answer. The grouping of proofs.equivalence._group_instances over
them is the same with either."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proofs.equivalence as eq
import proofs.instances
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id

from . import instances_pernode

F32 = float_sort("f32")
B32 = bits_sort(32)
RN = mods_id(Mods(rnd="rn"))
# (op, arity): commutative ones make ties (operands of one shape) and pairs by shape
OPS = [(Op.FADD, 2), (Op.FMUL, 2), (Op.FMAX, 2), (Op.FSUB, 2), (Op.FDIV, 2), (Op.FFMA, 3), (Op.FNEG, 1)]
NVARS = 6


@st.composite
def templates(draw):
    """A list of nodes (op index, operands); an operand < 0 is a leaf: -1..-NVARS variables (x read as
    f32), -NVARS-1..-2*NVARS the same variables read as bits then as f32 (one element, two leaves),
    -2*NVARS-1 a constant, -2*NVARS-2 an opaque value shared by every build, -2*NVARS-3 one made per build."""
    nodes: list[tuple[int, tuple[int, ...]]] = []
    for n in range(draw(st.integers(1, 9))):
        op_i = draw(st.integers(0, len(OPS) - 1))
        leaf = st.integers(-2 * NVARS - 3, -1) if draw(st.integers(0, 9)) == 0 else st.integers(-NVARS, -1)
        arg = st.one_of(leaf, st.integers(0, n - 1)) if n else leaf
        nodes.append((op_i, tuple(draw(arg) for _ in range(OPS[op_i][1]))))
    return nodes


class _Builder:
    def __init__(self, T: TermStore) -> None:
        self.T = T
        self.shared_opaque = int(T.opaque(F32, 1)[0])

    def build(self, template: list[tuple[int, tuple[int, ...]]], leaves: list[int], buffer: str = "x") -> int:
        T = self.T
        x = T.input(buffer, np.array(leaves), F32)
        xb = T.input(buffer, np.array(leaves), B32)
        vals: list[int] = []

        def operand(a: int) -> int:
            if a >= 0:
                return vals[a]
            if a >= -NVARS:
                return int(x[-1 - a])
            if a >= -2 * NVARS:
                return int(T.make(Op.FLOAT, F32, 0, [np.array([xb[-1 - NVARS - a]])])[0])
            if a == -2 * NVARS - 1:
                return int(T.const(F32, np.array([0x3F800000], np.uint32))[0])
            if a == -2 * NVARS - 2:
                return self.shared_opaque
            return int(T.opaque(F32, 1)[0])

        for op_i, args in template:
            op, _ = OPS[op_i]
            mods = 0 if op is Op.FNEG else RN
            vals.append(int(T.make(op, F32, mods, [np.array([operand(a)]) for a in args])[0]))
        return vals[-1]


leaf_maps = st.lists(st.integers(0, 7), min_size=NVARS, max_size=NVARS)


@settings(max_examples=200, deadline=None)
@given(templates(), templates(), leaf_maps, st.lists(st.tuples(leaf_maps, st.integers(0, 5)), min_size=1, max_size=8),
       st.integers(0, 3), st.sampled_from([0.0, 0.25, 0.9]), st.booleans(), st.randoms(use_true_random=False))
def test_the_same_answer_as_node_by_node(tc, tr, rep_leaves, member_specs, budget, give_up, dup_root, rnd) -> None:
    T = TermStore()
    B = _Builder(T)
    rep = [B.build(tc, rep_leaves), B.build(tr, rep_leaves)]
    if dup_root:
        rep.append(rep[0])
    members = []
    for leaves, how in member_specs:
        if how == 0:  # an arbitrary node per root
            row = [rnd.randrange(len(T)) for _ in range(2)]
        elif how == 1:  # another buffer: never an instance
            row = [B.build(tc, leaves, "y"), B.build(tr, leaves, "y")]
        elif how == 2:  # a near miss: the roots of two different renamings
            row = [B.build(tc, leaves), B.build(tr, rep_leaves[::-1])]
        else:  # a renaming (an instance exactly when the leaves are a function of the representative's)
            row = [B.build(tc, leaves), B.build(tr, leaves)]
        if dup_root:
            row.append(row[0] if how else rnd.randrange(len(T)))
        members.append(row)
    rep_a, mem_a = np.array(rep), np.array(members)
    old = instances_pernode.instances(T, rep_a, mem_a, give_up_below=give_up)
    new = proofs.instances.instances(T, rep_a, mem_a, give_up_below=give_up)
    assert new.tolist() == old.tolist(), (tc, tr, rep_leaves, member_specs)
    if budget:  # chunks of a member or a few, each step in slices of one member
        small = proofs.instances.prepare(T, rep_a).cost * budget
        old_budget, old_step = proofs.instances.IMAGE_BUDGET, proofs.instances.STEP_BUDGET
        proofs.instances.IMAGE_BUDGET, proofs.instances.STEP_BUDGET = small, 1
        try:
            chunked = proofs.instances.instances(T, rep_a, mem_a, give_up_below=give_up)
        finally:
            proofs.instances.IMAGE_BUDGET, proofs.instances.STEP_BUDGET = old_budget, old_step
        if give_up == 0.0:  # the early answer is per chunk
            assert chunked.tolist() == old.tolist()


@settings(max_examples=60, deadline=None)
@given(templates(), templates(), st.lists(leaf_maps, min_size=eq.GROUP_MIN, max_size=40),
       st.lists(st.integers(0, 2), min_size=40, max_size=40))
def test_the_same_groups_as_node_by_node(tc, tr, leaf_specs, kinds) -> None:
    """_group_instances over elements built from two templates (the candidate's and the reference's), some
    with their reference side built from other leaves: the same representative for every element."""
    T = TermStore()
    B = _Builder(T)
    c, r = [], []
    for leaves, kind in zip(leaf_specs, kinds):
        c.append(B.build(tc, leaves))
        r.append(B.build(tr, leaves if kind else leaves[::-1]))
    c_a, r_a = np.array(c), np.array(r)
    new = eq._group_instances(T, c_a, r_a)
    real_instances, real_prepare = proofs.instances.instances, proofs.instances.prepare
    proofs.instances.instances = lambda T_, rep, members, give_up_below=0.0, **kw: \
        instances_pernode.instances(T_, rep, members, give_up_below=give_up_below)
    proofs.instances.prepare = lambda T_, rep: None
    try:
        old = eq._group_instances(T, c_a, r_a)
    finally:
        proofs.instances.instances, proofs.instances.prepare = real_instances, real_prepare
    assert new.tolist() == old.tolist()


@pytest.mark.parametrize("n", [1, 7, 64])
def test_a_long_chain_in_as_many_steps(n: int) -> None:
    """A dot product as a chain of FFMAs: one step per chain node (and its two leaves in the next), the
    pool holding a few rows, whatever the chain's length."""
    T = TermStore()
    x, y = T.input("x", np.arange(256), F32), T.input("y", np.arange(256), F32)

    def dot(base: int) -> int:
        acc = T.const(F32, 0)
        for k in range(n):
            acc = T.make(Op.FFMA, F32, RN, [x[base + k:base + k + 1], y[base + k:base + k + 1], acc])
        return int(acc[0])

    rep = np.array([dot(0), dot(0)])
    plan = proofs.instances.prepare(T, rep)
    assert len(plan.down) == n + 1 and plan.rows <= 4 and not plan.up
    members = np.array([[dot(b), dot(b)] for b in (1, 100)] + [[dot(3), dot(4)]])
    got = proofs.instances.instances(T, rep, members, plan=plan)
    assert got.tolist() == [True, True, False]
    assert got.tolist() == instances_pernode.instances(T, rep, members).tolist()
