"""Obligations proved once for a whole shape (proofs/instances.py) and the term store's numpy hash
index (semantics.terms): a member is accepted only when its terms are the representative's with
input elements substituted, never otherwise; the index finds every node it holds, through probing
collisions and table growth."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import proofs.instances
from proofs.instances import instances
from semantics.terms import Mods, Op, TermStore, _HashIndex, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))

# a template: a list of nodes (op, operand indices); operands < 0 are variables -1, -2, ...
OPS = [Op.FSUB, Op.FFMA, Op.FDIV]  # not commutative: the pairing of operands is never ambiguous


def _build(T: TermStore, template: list[tuple[int, tuple[int, ...]]], leaves: list[int]) -> int:
    """The template's last node with variable v read from input element leaves[v] of buffer x (two
    variables of one template share a leaf when they are given the same element)."""
    x = T.input("x", np.array(leaves), F32)
    vals: list[int] = []
    for op_i, args in template:
        kids = [np.array([x[-1 - a] if a < 0 else vals[a]]) for a in args]
        vals.append(int(T.make(OPS[op_i], F32, RN, kids)[0]))
    return vals[-1]


@st.composite
def templates(draw, nvars: int = 4):
    nodes: list[tuple[int, tuple[int, ...]]] = []
    for n in range(draw(st.integers(1, 7))):
        op_i = draw(st.integers(0, len(OPS) - 1))
        arity = 3 if OPS[op_i] is Op.FFMA else 2
        args = tuple(draw(st.integers(-nvars, n - 1)) if n else draw(st.integers(-nvars, -1)) for _ in range(arity))
        nodes.append((op_i, args))
    return nodes


def _variables(template: list[tuple[int, tuple[int, ...]]]) -> set[int]:
    """The variables the template's last node depends on."""
    out: set[int] = set()
    todo, seen = [len(template) - 1], set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for a in template[n][1]:
            if a < 0:
                out.add(-1 - a)
            else:
                todo.append(a)
    return out


def _functional(a: list[int], b: list[int]) -> bool:
    """Whether b is a function of a (equal elements of a, equal elements of b): a substitution."""
    m: dict[int, int] = {}
    return all(m.setdefault(x, y) == y for x, y in zip(a, b))


@settings(max_examples=150, deadline=None)
@given(templates(), templates(), st.lists(st.integers(0, 5), min_size=4, max_size=4),
       st.lists(st.lists(st.integers(0, 9), min_size=4, max_size=4), min_size=1, max_size=6))
def test_instances_are_substitutions(tc, tr, rep_leaves, member_leaves) -> None:
    """Two templates (a candidate's and a reference's expression) over the representative's leaves and
    over each member's: a member is accepted exactly when its leaves are a function of the
    representative's, i.e. its terms are the representative's with inputs substituted."""
    T = TermStore()
    rep = np.array([_build(T, tc, rep_leaves), _build(T, tr, rep_leaves)])
    members = np.array([[_build(T, tc, m), _build(T, tr, m)] for m in member_leaves])
    got = instances(T, rep, members)
    used = sorted(_variables(tc) | _variables(tr))
    for m, ok in zip(member_leaves, got.tolist()):
        assert ok == _functional([rep_leaves[v] for v in used], [m[v] for v in used]), (tc, tr, rep_leaves, m)


def test_instances_reject_a_wrong_index_and_accept_renamed_rows() -> None:
    """rep: (x0*y0, fma(x0, y0, c)); a member reading y2 on one side and y1 on the other is not an
    instance; one reading (x1, y1) on both is."""
    T = TermStore()
    x, y = T.input("x", np.arange(4), F32), T.input("y", np.arange(4), F32)
    c = T.input("c", np.array([0]), F32)[0]

    def pair(i: int, j: int) -> list[int]:
        return [int(T.make(Op.FMUL, F32, RN, [x[i:i + 1], y[i:i + 1]])[0]),
                int(T.make(Op.FFMA, F32, RN, [x[i:i + 1], y[j:j + 1], np.array([c])])[0])]

    rep = np.array(pair(0, 0))
    got = instances(T, rep, np.array([pair(1, 1), pair(1, 2), pair(3, 3)]))
    assert got.tolist() == [True, False, True]


def test_instances_in_chunks_agree(monkeypatch) -> None:
    """Members are checked in chunks whose images fit IMAGE_BUDGET: with a budget of a few bytes
    (one member a chunk) the answers are those of one pass over all members."""
    T = TermStore()
    x, y = T.input("x", np.arange(8), F32), T.input("y", np.arange(8), F32)

    def pair(i: int, j: int) -> list[int]:
        return [int(T.make(Op.FSUB, F32, RN, [x[i:i + 1], y[i:i + 1]])[0]),
                int(T.make(Op.FDIV, F32, RN, [x[i:i + 1], y[j:j + 1]])[0])]

    rep = np.array(pair(0, 0))
    members = np.array([pair(i, j) for i in range(8) for j in range(8)])
    whole = instances(T, rep, members)
    assert whole.sum() == 8 and whole.tolist() == [i == j for i in range(8) for j in range(8)]
    monkeypatch.setattr(proofs.instances, "IMAGE_BUDGET", 1)
    assert instances(T, rep, members).tolist() == whole.tolist()


def test_instances_through_a_reduction_tree() -> None:
    """A butterfly of sums (operands of one shape at every level) whose leaves are also read by a
    non-commutative chain: the pairing is found bottom-up; a member whose tree sums other leaves
    than its chain reads is rejected."""
    T = TermStore()
    x = T.input("x", np.arange(64), F32)

    def row(base: int, tree_base: int) -> list[int]:
        leaves = x[tree_base:tree_base + 4]
        s = T.make(Op.FADD, F32, RN, [leaves[[0, 2]], leaves[[1, 3]]])
        tot = T.make(Op.FADD, F32, RN, [s[:1], s[1:]])
        chain = x[base]
        for k in range(4):
            chain = T.make(Op.FFMA, F32, RN, [np.array([x[base + k]]), np.array([tot[0]]), np.array([chain]).reshape(-1)])[0]
        return [int(chain), int(tot[0])]

    rep = np.array(row(0, 0))
    got = instances(T, rep, np.array([row(8, 8), row(16, 16), row(24, 28)]))
    assert got.tolist() == [True, True, False]


def test_images_are_freed_once_read(monkeypatch) -> None:
    """A dot product as a chain of 64 FFMAs (what one attention score is): pass 1 holds the images of
    a few nodes at a time, not of the whole DAG, so a chunk under IMAGE_BUDGET takes that many more
    members; with a budget of one chain node per member, chunked answers are the unchunked ones."""
    T = TermStore()
    x, y = T.input("x", np.arange(256), F32), T.input("y", np.arange(256), F32)

    def dot(base: int) -> list[int]:
        acc = T.const(F32, 0)
        for k in range(64):
            acc = T.make(Op.FFMA, F32, RN, [x[base + k:base + k + 1], y[base + k:base + k + 1], acc])
        return [int(acc[0]), int(acc[0])]

    rep = np.array(dot(0))
    members = np.array([dot(b) for b in (1, 5, 100, 192)] + [[dot(3)[0], dot(4)[0]]])
    plan = proofs.instances.prepare(T, rep)
    assert plan.nodes.size == 64 + 128 + 1 and plan.reached.all()
    # at most: a node's image and its x, y and accumulator images, and the two leaves' substitutions
    assert plan.peak <= 6 and not plan.kept.any()
    whole = instances(T, rep, members)
    assert whole.tolist() == [True, True, True, True, False]
    monkeypatch.setattr(proofs.instances, "IMAGE_BUDGET", plan.cost)  # one member a chunk
    assert instances(T, rep, members).tolist() == whole.tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=300, unique=True), st.integers(0, 3))
def test_hash_index_finds_everything_through_collisions(hashes: list[int], low_bits: int) -> None:
    """Hashes forced to share their low bits (one probe chain), inserted in batches across growth:
    every one found with its id, absent ones not found."""
    idx = _HashIndex(capacity=8)
    h = np.array(hashes, np.uint64)
    h = (h & ~np.uint64(0xFF)) | np.uint64(low_bits)
    h = np.unique(h)
    for start in range(0, h.size, 37):
        part = h[start:start + 37]
        ids = np.arange(start, start + part.size)
        assert (idx.lookup(part) == -1).all()
        idx.record(part)
        idx.insert(ids, part)
    assert (idx.lookup(h) == np.arange(h.size)).all()
    assert len(idx) == h.size and _HashIndex._FILL * len(idx) <= idx.table.size


def test_find_returns_existing_nodes_only() -> None:
    T = TermStore()
    x = T.input("x", np.arange(3), F32)
    a = T.make(Op.FADD, F32, RN, [x[:2], x[1:]])
    assert (T.find(Op.FADD, F32, RN, [x[1:], x[:2]]) == a).all()  # commutative operands sorted
    assert (T.find(Op.FSUB, F32, RN, [x[:2], x[1:]]) == -1).all()
    n = len(T)
    T.find(Op.FMUL, F32, RN, [x, x])
    assert len(T) == n


def _normalised(T: TermStore, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Obligations of one shape, element i: (x_i / (x_0 + ... + x_{n-1}) summed from x_i round, x_i / the
    sum in order): every sum reads every x, so no renaming of inputs takes element 0's terms to
    element i's (the candidate's sum starts elsewhere)."""
    x = T.input("x", np.arange(n), F32)

    def chain(order: list[int]) -> np.ndarray:
        acc = x[order[0]:order[0] + 1]
        for j in order[1:]:
            acc = T.make(Op.FADD, F32, RN, [acc, x[j:j + 1]])
        return acc

    total = chain(list(range(n)))
    c = [int(T.make(Op.FDIV, F32, RN, [x[i:i + 1], chain([(i + j) % n for j in range(n)])])[0]) for i in range(n)]
    r = [int(T.make(Op.FDIV, F32, RN, [x[i:i + 1], total])[0]) for i in range(n)]
    return np.array(c), np.array(r)


def test_a_group_of_few_instances_is_left_after_its_sample(monkeypatch) -> None:
    """A group whose members are no renaming of the representative (a normalised row: every element's
    denominator reads every input) is given up after the instance check of a sample of
    GROUP_SAMPLE members, not checked whole nor with GROUP_ROUNDS representatives."""
    import proofs.equivalence as eq

    T = TermStore()
    c, r = _normalised(T, 48)
    checked: list[int] = []
    real = proofs.instances.instances

    def counting(T_, rep, members, **kw):
        checked.append(len(members))
        return real(T_, rep, members, **kw)

    monkeypatch.setattr(proofs.instances, "instances", counting)
    rep_of = eq._group_instances(T, c, r)
    assert (rep_of == -1).all()
    assert checked == [eq.GROUP_SAMPLE]


def test_a_group_of_instances_is_checked_whole_after_its_sample() -> None:
    """Elements whose terms are one another's with inputs renamed (x_i - y_i against x_i / y_i): the
    sample passes, so every member is found an instance of the first element."""
    import proofs.equivalence as eq

    T = TermStore()
    n = 3 * eq.GROUP_SAMPLE
    x, y = T.input("x", np.arange(n), F32), T.input("y", np.arange(n), F32)
    c = T.make(Op.FSUB, F32, RN, [x, y])
    r = T.make(Op.FDIV, F32, RN, [x, y])
    rep_of = eq._group_instances(T, c, r)
    assert rep_of[0] == -1 and (rep_of[1:] == 0).all()
