"""Obligations that are renamings of one another: prove one, and check that the others are instances.

Tiled and naive kernels compute every output element the same way from different input elements:
the pair (candidate term, reference term) of element e is the pair of a representative element r
with every input element x replaced by sigma(x). If the representative's two terms are equal for
every input (proved once, by the normal form), so are element e's: an identity over all inputs
stays one when inputs are substituted for inputs (sigma need not be one-to-one). A FlashAttention
pair at S = 512 has 16384 output elements of one shape; each normal form has 512 exponentials.

`instances(T, rep, members)` checks, vectorised over the members, that each member's roots are the
representative's under one substitution of input elements, in two passes over the representative's
DAG:

1. top down, from the roots: a member's image of a node must have the node's operation, sort,
   modifiers/constant bits and arity, and its children are the images of the node's children (every
   parent's proposal for a child must be the same node); an input leaf's image is a leaf of the same
   buffer and sort, and one input element has one image element. A commutative node whose two
   operands have different shapes (semantics.terms shape hashes) pairs them by shape; one whose
   operands have one shape (the two halves of a reduction tree) is not descended through here;
2. bottom up, the nodes pass 1 did not reach: the image is the store's node of the same operation
   over the children's images, found by lookup (semantics.terms.TermStore.find), commutative
   children sorted as interning sorts them; where no such node exists the member is not an
   instance. A commutative node reached in pass 1 checks its operands' images against its image's
   operands as an unordered pair.

By induction over the DAG every image is the substituted node, so a member that passes is an
instance: sound without any search. A member can fail although it is an instance (an input leaf
reached only below same-shape commutative pairs, whose pairing pass 1 cannot know); it is then
proved on its own.

How (`prepare`, from the representative's DAG alone): pass 1 runs in *steps*, a step being the nodes all
of whose parents (along the edges pass 1 follows) had their steps (Kahn's order, top down); pass 2 in steps
bottom up, each step's nodes grouped by operation and arity, one `find` per group. Each step is a few numpy
operations over (its nodes or edges) x members, so the Python work is per step, not per node: a DAG of 20000
nodes in 300 steps costs 300 rounds of numpy calls instead of 20000 (forgetting_attention's grouping,
bench/results/equiv-suite-2026-12-05b). Every member gets the same checks as when nodes are visited one by
one (the implementation up to 2026-12-05, kept in tests/equivalence/instances_pernode.py and compared on random
DAGs by tests/equivalence/test_instances_levels.py): a member passes iff all its checks pass, and for a member
that passes every parent proposes the same image, so the order in which proposals arrive does not change any
answer. Images live in a pool of rows, one row per node from the step that first proposes its image to its own
step (pass 2's nodes, the ties and what pass 2 reads: to the end); rows are reused, so a chunk of members is
sized by the most rows live at once, not by the DAG's size; a wide step and pass 2's lookups
run in slices of members or blocks of nodes (STEP_BUDGET).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.termeval import subgraph
from semantics.terms import COMMUTATIVE, Op, TermStore
from symexec.machine import check_time_limit

__all__ = ["Plan", "prepare", "instances"]

_INPUT_BITS = np.int64(40)  # an INPUT leaf's aux: buffer number << 40 | element
_COMMUTATIVE = np.array(sorted(int(o) for o in COMMUTATIVE), np.int64)

#: Bytes per chunk of members of the image rows live at once (int32 node ids) and the substitutions that are
#: read again; members are checked in chunks that fit (the check of a member does not depend on the others).
#: Small enough for the pool to stay near the cache: FlashAttention vs naive at S = 512 (41269 nodes, 554 steps,
#: 4856 rows, 16383 members) took 17.7 s CPU in its checks with 256 MiB (chunks of 13819), 15.6 s with 32 MiB
#: (1727), 16.4 s with 8 MiB (431: more steps' overhead); one run each on the shared machine.
IMAGE_BUDGET = 32 << 20
#: Bytes of a step's temporaries (a few int64 per edge and member) at once: a wider step runs in slices of
#: members, so its arrays stay small (FlashAttention vs naive at S = 512: one group of 16383 members, steps
#: of thousands of edges; with arrays of hundreds of MiB per step its grouping took 17.9 s CPU instead of the
#: per-node check's 13.7 s).
STEP_BUDGET = 16 << 20


@dataclass(frozen=True)
class _Down:
    """One step of pass 1: its nodes' own tests, then their children's images."""

    rows: np.ndarray  # pool rows of the step's nodes
    ids: np.ndarray  # their node ids (int64)
    key: np.ndarray  # their op | sort << 8 | arity << 16 (TermStore.node_keys)
    aux_shift: np.ndarray  # per step row: the image's aux >> aux_shift must be aux_want (INPUT rows: 40, the
    aux_want: np.ndarray  # buffer; OPAQUE rows: their own aux, implied by the identity they are checked for)
    opq_i: np.ndarray  # OPAQUE rows: the image is the node itself
    sset_i: np.ndarray  # INPUT rows that set a substitution row (the first leaf of their element)
    sset_g: np.ndarray
    schk_i: np.ndarray  # INPUT rows checked against their element's substitution row
    schk_g: np.ndarray
    ep: np.ndarray  # followed edges out of the step: step row of the parent,
    es: np.ndarray  # the child's slot among the parent's children
    pe0: np.ndarray  # edges (indices into ep) of operands 0 and 1 of commutative nodes paired by shape,
    pe1: np.ndarray
    ps0: np.ndarray  # and the shapes of the representative's operands 0 and 1
    ps1: np.ndarray
    first: np.ndarray  # edges whose child gets its image here (one per child), and its pool row
    first_rows: np.ndarray
    chk: np.ndarray  # the other edges: their proposal must be the child's image, at pool row chk_rows
    chk_rows: np.ndarray


@dataclass(frozen=True)
class _Up:
    """One group of a step of pass 2: nodes of one operation and arity, found in the store."""

    op: int
    rows: np.ndarray  # pool rows of the group's nodes
    ids: np.ndarray
    sort: np.ndarray
    aux: np.ndarray
    kid_rows: np.ndarray  # (nodes, arity) pool rows of their children
    sig: np.ndarray  # INPUT nodes: their elements' substitution rows


@dataclass(frozen=True)
class Plan:
    """What both passes do on the representative's DAG alone (`prepare`)."""

    nodes: np.ndarray  # the DAG's node ids, ascending
    reached: np.ndarray  # per node: reached by pass 1
    kept: np.ndarray  # per node: its image is read after pass 1 (pass 2, ties)
    root_rows: np.ndarray  # per root of rep: its pool row
    root_first: np.ndarray  # per root: the first root of the same node (duplicates are compared)
    down: list[_Down]
    up: list[_Up]
    up_missing: bool  # pass 2 reads an input element pass 1 never met: no image known, no member passes
    ties: tuple[np.ndarray, np.ndarray, np.ndarray]  # pool rows of the ties and of their operands 0 and 1
    rows: int  # pool rows (the most images held at once, per member)
    subs: int  # substitution rows
    cost: int  # bytes per member of images and substitutions held (IMAGE_BUDGET)
    step_cost: int  # bytes per member of the widest step's temporaries (the most a slice of STEP_BUDGET holds)

    @property
    def peak(self) -> int:
        """Images and substitutions held at once, per member."""
        return self.rows + self.subs


def _edges_of(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices starts[i] + j for j < counts[i], concatenated."""
    total = int(counts.sum())
    if not total:
        return np.zeros(0, np.int64)
    return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)


class _Pool:
    """Rows of the image pool: a stack of free rows, new rows past the top."""

    def __init__(self) -> None:
        self.free = np.zeros(0, np.int64)
        self.top = 0

    def take(self, m: int) -> np.ndarray:
        if m <= self.free.size:
            got, self.free = self.free[self.free.size - m:], self.free[:self.free.size - m]
            return got
        got = np.concatenate([self.free, np.arange(self.top, self.top + m - self.free.size)])
        self.top += m - self.free.size
        self.free = np.zeros(0, np.int64)
        return got

    def give(self, rows: np.ndarray) -> None:
        if rows.size:
            self.free = np.concatenate([self.free, rows])


def prepare(T: TermStore, rep: np.ndarray) -> Plan:
    """The plan of both passes for representative `rep` (its roots' ids), from its DAG alone."""
    rep = np.asarray(rep, np.int64)
    nodes = subgraph(T, rep)
    n = nodes.size
    nk = T.nkids[nodes].astype(np.int64)
    estart = np.cumsum(nk) - nk
    E = int(nk.sum())
    ep = np.repeat(np.arange(n), nk)  # every edge: parent position, slot, child position
    es = np.arange(E) - np.repeat(estart, nk)
    ec = np.searchsorted(nodes, T._kids.a[np.repeat(T._off.a[nodes], nk) + es].astype(np.int64))
    op = T.op[nodes].astype(np.int64)
    sort = T.sort[nodes].astype(np.int64)
    aux = T.aux[nodes]
    shape = T.shape[nodes]
    key = ((nk.astype(np.int32) << 8 | sort.astype(np.int32)) << 8 | op.astype(np.int32))
    comm = np.nonzero(np.isin(op, _COMMUTATIVE) & (nk >= 2))[0]
    k0, k1 = ec[estart[comm]], ec[estart[comm] + 1]
    distinct = k0 != k1
    one_shape = shape[k0] == shape[k1]
    tie = np.zeros(n, bool)
    tie[comm[distinct & one_shape]] = True
    pair = np.zeros(n, bool)
    pair[comm[distinct & ~one_shape]] = True
    follow = ~(tie[ep] & (es < 2))  # pass 1 does not descend into a tie's two operands

    # ---- reached: from the roots along followed edges
    rpos = np.searchsorted(nodes, rep)
    reached = np.zeros(n, bool)
    frontier = np.unique(rpos)
    reached[frontier] = True
    if not tie.any():  # every edge followed: the whole DAG
        reached[:] = True
        frontier = frontier[:0]
    while frontier.size:
        e = _edges_of(estart[frontier], nk[frontier])
        e = e[follow[e]]
        kids = np.unique(ec[e])
        frontier = kids[~reached[kids]]
        reached[frontier] = True
    kept = tie.copy()
    te = np.nonzero(tie[ep] & (es < 2))[0]
    kept[ec[te]] = True
    kept[ec[~reached[ep]]] = True  # pass 2 reads its children's images

    # ---- substitution rows: an input element read by several reached leaves, or read again by pass 2
    is_in = op == Op.INPUT
    inp = np.nonzero(reached & is_in)[0]
    up_in = np.nonzero(~reached & is_in)[0]
    ua, ga, gcount = np.unique(aux[inp], return_inverse=True, return_counts=True)
    ga = ga.reshape(-1)
    up_missing = bool(up_in.size) and not np.isin(aux[up_in], ua).all()
    need = (gcount > 1) | np.isin(ua, aux[up_in])
    sub_of = np.full(ua.size, -1, np.int64)
    sub_of[need] = np.arange(int(need.sum()))
    subs = int(need.sum())

    # ---- pass 1 steps (Kahn's order over followed edges from reached parents)
    fe = follow & reached[ep]
    indeg = np.bincount(ec[fe], minlength=n)
    step_of = np.full(n, -1, np.int64)
    steps: list[np.ndarray] = []
    frontier = np.nonzero(reached & (indeg == 0))[0]
    while frontier.size:
        step_of[frontier] = len(steps)
        steps.append(frontier)
        e = _edges_of(estart[frontier], nk[frontier])
        e = e[follow[e]]
        u, cnt = np.unique(ec[e], return_counts=True)
        indeg[u] -= cnt
        frontier = u[indeg[u] == 0]
    if len(steps) and int(sum(s.size for s in steps)) != int(reached.sum()):  # a DAG has no cycle
        raise AssertionError("instances: the representative's DAG is not acyclic")
    # which reached leaves of one element set its substitution row: the first in (step, position) order
    sset = np.zeros(inp.size, bool)
    if inp.size:
        order = np.lexsort((inp, step_of[inp]))
        _, firsts = np.unique(ga[order], return_index=True)
        sset[order[firsts]] = True
    in_sub = np.full(n, -1, np.int64)
    in_sub[inp] = sub_of[ga]
    in_set = np.zeros(n, bool)
    in_set[inp] = sset

    pool = _Pool()
    row = np.full(n, -1, np.int64)
    ur = np.unique(rpos)
    row[ur] = pool.take(ur.size)
    assigned = np.zeros(n, bool)
    assigned[ur] = True
    first_j: dict[int, int] = {}
    root_first = np.array([first_j.setdefault(int(p), j) for j, p in enumerate(rpos.tolist())], np.int64)
    down: list[_Down] = []
    peak = pool.top
    for P in steps:
        rows = row[P]
        o = op[P]
        ins = np.nonzero(o == Op.INPUT)[0]
        shift = np.where(o == Op.INPUT, _INPUT_BITS, np.int64(0)).astype(np.int64)
        opq = np.nonzero(o == Op.OPAQUE)[0]
        with_sub = ins[in_sub[P[ins]] >= 0]
        sset_i = with_sub[in_set[P[with_sub]]]
        schk_i = with_sub[~in_set[P[with_sub]]]
        # children
        e = _edges_of(estart[P], nk[P])
        e = e[follow[e]]
        cpos = ec[e]
        loc = np.searchsorted(P, ep[e])  # step row of each edge's parent (P is ascending)
        pe0 = np.nonzero(pair[ep[e]] & (es[e] == 0))[0]
        pe1 = pe0 + 1  # a parent's edges are consecutive, slot 1 right after slot 0
        new = ~assigned[cpos]
        fresh, first_idx = np.unique(cpos[new], return_index=True)
        first = np.nonzero(new)[0][first_idx]
        assigned[fresh] = True
        pool.give(rows[~kept[P]])  # read by this step only: free for the children's images
        row[fresh] = pool.take(fresh.size)
        peak = max(peak, pool.top)
        chk = np.ones(e.size, bool)
        chk[first] = False
        chk = np.nonzero(chk)[0]
        down.append(_Down(
            rows, nodes[P], key[P], shift, aux[P] >> shift, opq,
            sset_i, in_sub[P[sset_i]], schk_i, in_sub[P[schk_i]],
            loc, es[e], pe0, pe1, shape[ec[e[pe0]]], shape[ec[e[pe1]]],
            first, row[cpos[first]], chk, row[cpos[chk]]))

    # ---- pass 2 steps (Kahn's order bottom up over the nodes pass 1 did not reach)
    U = np.nonzero(~reached)[0]
    up: list[_Up] = []
    if U.size:
        row[U] = pool.take(U.size)  # held to the end, like the kept images of pass 1
        ue = np.nonzero(~reached[ep] & ~reached[ec])[0]
        pending = np.bincount(ep[ue], minlength=n)
        by_child = ue[np.argsort(ec[ue], kind="stable")]
        rc = ec[by_child]
        frontier = U[pending[U] == 0]
        while frontier.size:
            for o_ in np.unique(op[frontier]).tolist():
                sel = frontier[op[frontier] == o_]
                for a in np.unique(nk[sel]).tolist():
                    G = sel[nk[sel] == a]
                    kid_rows = row[ec[estart[G][:, None] + np.arange(a)]] if a else np.zeros((G.size, 0), np.int64)
                    sig = sub_of[np.searchsorted(ua, aux[G])] if o_ == Op.INPUT and not up_missing else \
                        np.zeros(0, np.int64)
                    up.append(_Up(int(o_), row[G], nodes[G], sort[G], aux[G], kid_rows, sig))
            lo, hi = np.searchsorted(rc, frontier, "left"), np.searchsorted(rc, frontier, "right")
            parents = ep[by_child[_edges_of(lo, hi - lo)]]
            u, cnt = np.unique(parents, return_counts=True)
            pending[u] -= cnt
            frontier = u[pending[u] == 0]
        peak = max(peak, pool.top)
    tp = np.nonzero(tie & reached)[0]
    ties = (row[tp], row[ec[estart[tp]]], row[ec[estart[tp] + 1]])

    widest = max([d.ep.size + d.rows.size for d in down] + [g.rows.size * (3 + g.kid_rows.shape[1]) for g in up] + [1])
    return Plan(nodes, reached, kept, row[rpos], root_first, down, up, up_missing, ties, peak, subs,
                4 * peak + 8 * subs, 24 * widest)


def instances(T: TermStore, rep: np.ndarray, members: np.ndarray, give_up_below: float = 0.0,
              plan: Plan | None = None, keys: np.ndarray | None = None) -> np.ndarray:
    """Whether each row of `members` (k, r) is the term ids of `rep` (r,) under one substitution of
    input elements (see the module docstring). `give_up_below`: when fewer than this fraction of a
    chunk's members pass pass 1, answer False for the whole chunk without pass 2 (a sample's early
    answer; False only ever means "not shown to be an instance": the member is proved on its own).
    `plan`: prepare(T, rep) where the caller has it; `keys`: T.node_keys() where the caller has it."""
    rep = np.asarray(rep, np.int64)
    members = np.asarray(members, np.int64)
    k = members.shape[0]
    if k == 0:
        return np.ones(0, bool)
    p = plan if plan is not None else prepare(T, rep)
    key = T.node_keys() if keys is None else keys
    chunk = max(1, IMAGE_BUDGET // p.cost)
    return np.concatenate([_check(T, p, members[s:s + chunk], key, give_up_below) for s in range(0, k, chunk)])


def _check(T: TermStore, p: Plan, members: np.ndarray, key: np.ndarray, give_up_below: float) -> np.ndarray:
    check_time_limit("checking which output elements are renamings of a proved one")
    k = members.shape[0]
    ok = np.ones(k, bool)
    M = np.empty((p.rows, k), np.int32)  # the image pool
    S = np.empty((p.subs, k), np.int64)  # image element (aux) per substitution row
    M[p.root_rows] = members.T
    dup = np.nonzero(p.root_first != np.arange(p.root_first.size))[0]
    if dup.size:
        ok &= (members[:, dup] == members[:, p.root_first[dup]]).all(axis=1)
    # ---- pass 1: top down, a step at a time; a wide step in slices of members (each member's tests are its own)
    for d in p.down:
        width = max(1, STEP_BUDGET // (24 * (d.ep.size + d.rows.size)))
        for c in range(0, k, width):
            _down(T, d, M, S, ok[c:c + width], key, slice(c, c + width))
        if not ok.any():
            return ok
    # ---- pass 2 runs on the members pass 1 left standing only: its cost is per node of the DAG it did
    # not reach (a store lookup each), so members that failed in pass 1 (most rows of a column-normalised
    # matrix are no renaming of the representative's) cost nothing there
    live = np.nonzero(ok)[0]
    if live.size < give_up_below * k:  # the caller's early answer: these are not shown to be instances
        return np.zeros(k, bool)
    if live.size < k:
        ok[live] = _bottom_up(T, p, M[:, live], S[:, live])
        return ok
    return _bottom_up(T, p, M, S)


def _down(T: TermStore, d: _Down, M: np.ndarray, S: np.ndarray, ok: np.ndarray, key: np.ndarray, cols: slice) -> None:
    """Step d of pass 1 for the members `cols` (ok: their entries, a view, cleared in place where a test fails)."""
    aux, shape = T.aux, T.shape
    # the images as intp once: numpy converts an int32 index array to intp on every gather (key, aux, offsets)
    Y = M[d.rows, cols].astype(np.intp)
    good = key.take(Y) == d.key[:, None]
    A = aux.take(Y)
    good &= (A >> d.aux_shift[:, None]) == d.aux_want[:, None]
    if d.sset_i.size:  # INPUT rows' elements: substitution set and check
        S[d.sset_g, cols] = A[d.sset_i]
    if d.schk_i.size:
        good[d.schk_i] &= A[d.schk_i] == S[d.schk_g, cols]
    if d.opq_i.size:
        good[d.opq_i] &= Y[d.opq_i] == d.ids[d.opq_i, None]
    ok &= good.all(axis=0)
    if d.ep.size:
        if not ok.all():  # failed members follow the representative itself from here
            Y = np.where(ok, Y, d.ids[:, None])
        O = T._off.a.take(Y)  # one gather of offsets per node, not per edge (an MMA node has 2k + 1 children)
        O = O[d.ep]
        O += d.es[:, None]
        prop = T._kids.a.take(O)
        if d.pe0.size:  # pair by shape: the member's operands are sorted by its own ids
            a, b = prop[d.pe0], prop[d.pe1]
            swap = shape[a] != d.ps0[:, None]
            a, b = np.where(swap, b, a), np.where(swap, a, b)
            ok &= ((shape[a] == d.ps0[:, None]) & (shape[b] == d.ps1[:, None])).all(axis=0)
            prop[d.pe0], prop[d.pe1] = a, b
        M[d.first_rows, cols] = prop[d.first]
        if d.chk.size:
            ok &= (prop[d.chk] == M[d.chk_rows, cols]).all(axis=0)


def _bottom_up(T: TermStore, p: Plan, M: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Pass 2 over the members (columns of M, S) that passed pass 1: the images of the nodes pass 1 did
    not reach, found in the store, and the ties' operand pairing."""
    k = M.shape[1]
    ok = np.ones(k, bool)
    if p.up_missing:  # an input element pass 1 never met: no image known
        return np.zeros(k, bool)
    for g in p.up:
        if g.op == Op.OPAQUE or (g.op != Op.INPUT and not g.kid_rows.shape[1]):
            M[g.rows] = g.ids[:, None]
            continue
        # a lookup's rows (sort, aux, children) and hashes for a block of the group's nodes x members at once
        block = max(1, STEP_BUDGET // (24 * (3 + g.kid_rows.shape[1]) * k))
        for s in range(0, g.rows.size, block):
            e = slice(s, s + block)
            m = g.rows[e].size
            if g.op == Op.INPUT:
                got = T.find(Op.INPUT, np.repeat(g.sort[e], k), S[g.sig[e]].reshape(-1), [])
            else:
                got = T.find(Op(g.op), np.repeat(g.sort[e], k), np.repeat(g.aux[e], k),
                             [M[g.kid_rows[e, j]].reshape(-1) for j in range(g.kid_rows.shape[1])])
            got = got.reshape(m, k)
            ok &= (got >= 0).all(axis=0)
            M[g.rows[e]] = np.where(ok, got, g.ids[e, None])
            if not ok.any():
                return ok
    tie_rows, r0, r1 = p.ties
    if tie_rows.size:
        y = M[tie_rows]
        a, b = M[r0], M[r1]
        o = T._off.a[y]
        ok &= ((T._kids.a[o] == np.minimum(a, b)) & (T._kids.a[o + 1] == np.maximum(a, b))).all(axis=0)
    return ok
