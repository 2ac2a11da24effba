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
sized by the most rows live at once, not by the DAG's size; pass 2's lookups run in blocks of nodes (STEP_BUDGET).

Per class (2026-12-06): a row holds a node's images once per *class* of members, the members of a class having
one image there, under a partition of the chunk's members (`_Parts`; canonical, so one partition has one id).
The roots' partition has a class per member; a child's images, proposed per class of its parent's partition,
are grouped by the coarsest known partition they are constant on (a new one where an image repeats), so that
FlashAttention's score subterms hold one image per query row and its key leaves one for all, and every test
above runs on (rows x classes) arrays, a step's rows grouped by partition. Comparing two rows of different
partitions (a second parent's proposal, a substitution, a lookup's children, a tie) takes their meet. A test
on a class is the test on each of its members (they have that image), and a class that fails fails its members,
so every member gets the answer of the per-member check (tests/equivalence/instances_members.py, one member at
a time in plain Python, and test_instances_classes.py's random member sets). FlashAttention vs naive at S = 512:
35 M class cells instead of 630 M member cells, the check 18.6 -> 2.5 s CPU (bench/results/i11cls-2026-12-06s36).
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

#: Bytes per chunk of members of the images held (per class, int64) and a step's temporaries; members are checked
#: in chunks that fit (the check of a member does not depend on the others): the first as if no two members
#: shared an image, the next ones by what the one before held per member (at most 8 times larger each).
#: Before classes (one image per member and row, int32):
#: Small enough for the pool to stay near the cache: FlashAttention vs naive at S = 512 (41269 nodes, 554 steps,
#: 4856 rows, 16383 members) took 17.7 s CPU in its checks with 256 MiB (chunks of 13819), 15.6 s with 32 MiB
#: (1727), 16.4 s with 8 MiB (431: more steps' overhead); one run each on the shared machine.
IMAGE_BUDGET = 32 << 20
#: Bytes of pass 2's lookup temporaries at once (a block of nodes x classes). Before classes, pass 1's wide steps
#: ran in slices of members too (FlashAttention vs naive at S = 512: steps of thousands of edges; with arrays of
#: hundreds of MiB per step its grouping took 17.9 s CPU instead of the per-node check's 13.7 s); with classes a
#: step's temporaries count in the chunk's bytes (IMAGE_BUDGET).
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
    # the first chunk as if no two members shared an image (the old per-member pool's bound); the next ones by
    # the bytes the last one held per member (members of one group share alike; a larger chunk shares more)
    chunk = max(1, IMAGE_BUDGET // (8 * (p.rows + p.subs) + 2 * p.step_cost))
    out, s = [], 0
    while s < k:
        got, peak = _check(T, p, members[s:s + chunk], key, give_up_below)
        out.append(got)
        s += got.size
        if give_up_below == 0.0:  # the sample's early answer is per chunk: its chunks stay the first one's size
            chunk = max(chunk, min(8 * chunk, IMAGE_BUDGET * got.size // max(peak, 1)))
    return np.concatenate(out)


#: Classes a row of images is first tested on (_Parts.coarsen): members are in order, and a class of the partitions
#: that arise (one query row's members, one column's) has members among the first few, so a row that fits one
#: shows it there; a row whose only repeated images lie beyond keeps its finer partition (checked as finely,
#: never less).
_PREFIX = 256


class _Parts:
    """Partitions of a chunk's members into classes, a class being members whose images at a node coincide: a
    node's images are held and tested once per class of its partition, not once per member (FlashAttention at
    S = 512: the 512 x 32 members of a score subterm's nodes form 512 classes, one per query row; a key leaf's
    one class). Partitions are canonical (classes numbered in the order of their first member), so one
    partition has one id whatever node found it. Partition 0 has one class; `ident` one per member."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.cls: list[np.ndarray] = []  # per partition: each member's class
        self.n: list[int] = []  # per partition: its number of classes
        self.coarser: list[dict[int, np.ndarray]] = []  # per partition P: Q -> P's classes' classes in Q
        self._ids: dict[bytes, int] = {}
        self._cands: list[list[tuple[int, np.ndarray, np.ndarray]] | None] = []
        self._meets: dict[tuple[int, int], tuple[int, np.ndarray, np.ndarray]] = {}
        self.add(np.zeros(k, np.intp), 1)
        self.ident = self.add(np.arange(k, dtype=np.intp), k)[0]

    def add(self, lab: np.ndarray, n: int) -> tuple[int, np.ndarray]:
        """The partition of members by `lab` (each label in [0, n) used): its id, and each label's class."""
        if n == 1:
            relabel, canon = np.zeros(1, np.intp), np.zeros(self.k, np.intp)
        else:
            _, first = np.unique(lab, return_index=True)
            relabel = np.empty(n, np.intp)
            relabel[np.argsort(first)] = np.arange(n)
            canon = relabel[lab]
        P = self._ids.setdefault(canon.tobytes(), len(self.cls))
        if P == len(self.cls):
            self.cls.append(canon)
            self.n.append(n)
            self.coarser.append({})
            self._cands.append(None)
        return P, relabel

    def relate(self, P: int, Q: int, f: np.ndarray) -> None:
        """Q is coarser than P: class c of P lies in class f[c] of Q."""
        if P != Q and Q not in self.coarser[P]:
            self.coarser[P][Q] = f
            self._cands[P] = None

    def meet(self, P: int, Q: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The coarsest partition R finer than P and Q, and the classes of P and of Q that R's classes lie in."""
        if P == Q:
            a = np.arange(self.n[P])
            return P, a, a
        if self.n[Q] == 1:
            return P, np.arange(self.n[P]), np.zeros(self.n[P], np.intp)
        if self.n[P] == 1:
            return Q, np.zeros(self.n[Q], np.intp), np.arange(self.n[Q])
        got = self._meets.get((P, Q))
        if got is None:
            if Q in self.coarser[P]:
                got = (P, np.arange(self.n[P]), self.coarser[P][Q])
            elif P in self.coarser[Q]:
                got = (Q, self.coarser[Q][P], np.arange(self.n[Q]))
            else:
                u, inv = np.unique(self.cls[P] * self.n[Q] + self.cls[Q], return_inverse=True)
                R, relabel = self.add(inv.reshape(-1), u.size)
                ra, rb = np.empty(u.size, np.intp), np.empty(u.size, np.intp)
                ra[relabel], rb[relabel] = u // self.n[Q], u % self.n[Q]
                self.relate(R, P, ra)
                self.relate(R, Q, rb)
                got = (R, ra, rb)
            self._meets[(P, Q)] = got
        return got

    def _candidates(self, P: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """P's known coarser partitions Q (but the one-class one), fewest classes first, with the gather g that
        makes a row of images over P's classes constant per class of Q (v[g] == v iff v is constant on Q's
        classes) and rq, a class of P in each class of Q (v[rq]: the row over Q's classes)."""
        c = self._cands[P]
        if c is None:
            c = []
            for Q, f in sorted(self.coarser[P].items(), key=lambda t: self.n[t[0]]):
                if self.n[Q] > 1:
                    rq = np.empty(self.n[Q], np.intp)
                    rq[f] = np.arange(self.n[P])
                    c.append((Q, rq[f], rq))
            self._cands[P] = c
        return c

    def coarsen(self, P: int, V: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Rows V of images over P's classes, as (partition Q, which rows, their images over Q's classes), Q
        the coarsest known partition a row is constant on (a new one where a row repeats an image and none
        fits): any Q is exact, a coarser one only checks fewer classes."""
        nP = self.n[P]
        left = np.arange(V.shape[0])
        if nP == 1:
            return [(P, left, V)]
        out = []
        pre = min(nP, _PREFIX)  # tests on the first classes first: most rows that fail, fail there
        const = (V[:, :pre] == V[:, :1]).all(axis=1)
        const[const] = (V[const] == V[const, :1]).all(axis=1)
        if const.any():
            out.append((0, left[const], V[const][:, :1]))
            left = left[~const]
        for Q, g, rq in self._candidates(P):
            if not left.size:
                break
            W = V[left]
            fit = (W[:, g[:pre]] == W[:, :pre]).all(axis=1)
            fit[fit] = (W[fit][:, g] == W[fit]).all(axis=1)
            if fit.any():
                out.append((Q, left[fit], W[fit][:, rq]))
                left = left[~fit]
        if left.size:  # a repeated image among the first classes: a coarser partition, found below
            W = V[left]
            s = np.sort(W[:, :pre], axis=1)
            dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
            if not dup.all():
                out.append((P, left[~dup], W[~dup]))
                left = left[dup]
            while left.size:  # a row with a repeated image and no known partition: its own, tried on the rest
                u, f = np.unique(V[left[0]], return_inverse=True)
                f = f.reshape(-1)
                Q, relabel = self.add(f[self.cls[P]], u.size)
                f = relabel[f]
                self.relate(P, Q, f)
                rq = np.empty(u.size, np.intp)
                rq[f] = np.arange(nP)
                W = V[left]
                fit = (W[:, rq[f]] == W).all(axis=1)
                out.append((Q, left[fit], W[fit][:, rq]))
                left = left[~fit]
        return out

    def fail(self, ok: np.ndarray, P: int, bad: np.ndarray) -> None:
        """Clear `ok` for the members of P's classes where `bad`."""
        if bad.any():
            ok &= ~bad[self.cls[P]]


def _check(T: TermStore, p: Plan, members: np.ndarray, key: np.ndarray, give_up_below: float
           ) -> tuple[np.ndarray, int]:
    """Both passes for a chunk of members: their answers, and the most bytes of images and step temporaries held."""
    check_time_limit("checking which output elements are renamings of a proved one")
    k = members.shape[0]
    ok = np.ones(k, bool)
    C = _Parts(k)
    part = np.zeros(p.rows, np.intp)  # per pool row: the partition of its node's images
    img: list[np.ndarray | None] = [None] * p.rows  # and the image per class
    held = np.zeros(p.rows + p.subs, np.int64)  # classes held per pool row, then per substitution row
    spart = np.zeros(p.subs, np.intp)  # per substitution row: its partition, and the image element per class
    saux: list[np.ndarray | None] = [None] * p.subs
    for j, r in enumerate(p.root_rows.tolist()):
        part[r], img[r] = C.ident, members[:, j]
    held[p.root_rows] = k
    peak = 0
    dup = np.nonzero(p.root_first != np.arange(p.root_first.size))[0]
    if dup.size:
        ok &= (members[:, dup] == members[:, p.root_first[dup]]).all(axis=1)
    for d in p.down:
        temp = _down(T, d, C, part, img, spart, saux, ok, key, held)
        peak = max(peak, 8 * int(held.sum()) + 48 * temp)
        if not ok.any():
            return ok, peak
    # pass 2's lookups are per class: members that failed pass 1 share their classes with others or cost a
    # lookup each, and their answers are False whatever pass 2 finds
    if int(ok.sum()) < give_up_below * k:  # the caller's early answer: these are not shown to be instances
        return np.zeros(k, bool), peak
    ok &= _bottom_up(T, p, C, part, img, spart, saux, held)
    return ok, max(peak, 8 * int(held.sum()))


def _stack(rows: list[np.ndarray | None]) -> np.ndarray:
    """np.stack(rows) for rows of one shape: one concatenation, reshaped (np.stack's per-row checks and
    expand_dims were 15 of FlashAttention cross-target's 43 s of instance checks under the profiler)."""
    first = rows[0]
    shape = first.shape  # type: ignore[union-attr]
    if any(r.shape != shape for r in rows):  # type: ignore[union-attr]
        raise ValueError("rows of different shapes")  # as np.stack: never reshaped into a wrong table
    return np.concatenate(rows).reshape((len(rows),) + shape)  # type: ignore[arg-type]


def _down(T: TermStore, d: _Down, C: _Parts, part: np.ndarray, img: list, spart: np.ndarray, saux: list,
          ok: np.ndarray, key: np.ndarray, held: np.ndarray) -> int:
    """Step d of pass 1, per class: the step's rows grouped by partition, each group's images (rows x classes)
    tested at once; `ok` (per member) cleared where a class fails. A failed class's image becomes the
    representative's node (its proposals stay node ids, like a failed member's per member). Returns the
    step's (rows + edges) x classes, its temporaries' size; `held` gets the classes of the rows it sets."""
    aux, shape = T.aux, T.shape
    n = d.rows.size
    rp = part[d.rows]
    Ps = np.unique(rp).tolist()
    gi = np.zeros(n, np.intp)  # per step row: its group, and its row in it
    loc = np.arange(n)
    groups: list[tuple[int, np.ndarray, np.ndarray]] = []
    for P in Ps:  # every image first: a child's row may be one this step frees (the plan reuses it at once)
        sel = np.nonzero(rp == P)[0] if len(Ps) > 1 else loc
        gi[sel] = len(groups)
        loc[sel] = np.arange(sel.size)
        groups.append((P, sel, _stack([img[r] for r in d.rows[sel].tolist()])))
    auxes = []
    temp = sum(sel.size * Y.shape[1] for _, sel, Y in groups)
    for g, (P, sel, Y) in enumerate(groups):
        good = key.take(Y) == d.key[sel, None]
        A = aux.take(Y)
        good &= (A >> d.aux_shift[sel, None]) == d.aux_want[sel, None]
        if d.opq_i.size:
            o = d.opq_i[gi[d.opq_i] == g]
            good[loc[o]] &= Y[loc[o]] == d.ids[o, None]
        if not good.all():
            C.fail(ok, P, ~good.all(axis=0))
            Y[...] = np.where(good, Y, d.ids[sel, None])
        auxes.append(A)
        if d.sset_i.size:
            m = gi[d.sset_i] == g
            spart[d.sset_g[m]] = P
            held[part.size + d.sset_g[m]] = Y.shape[1]
            for s, a in zip(d.sset_g[m].tolist(), A[loc[d.sset_i[m]]]):
                saux[s] = a
    if d.schk_i.size:  # after every substitution this step sets
        for g, (P, sel, Y) in enumerate(groups):
            m = gi[d.schk_i] == g
            at, gs = loc[d.schk_i[m]], d.schk_g[m]
            sp = spart[gs]
            for Q in np.unique(sp).tolist():
                q = sp == Q
                R, ra, rb = C.meet(P, Q)
                C.fail(ok, R, (auxes[g][at[q]][:, ra] != _stack([saux[s] for s in gs[q].tolist()])[:, rb]).any(axis=0))
    if not d.ep.size:
        return temp
    eg = gi[d.ep]
    eloc = np.zeros(d.ep.size, np.intp)
    pend = []  # second parents' proposals (partition, proposals, child rows): checked once every child has its image
    for g, (P, sel, Y) in enumerate(groups):
        ei = np.nonzero(eg == g)[0] if len(groups) > 1 else np.arange(d.ep.size)
        if not ei.size:
            continue
        eloc[ei] = np.arange(ei.size)
        temp += ei.size * Y.shape[1]
        O = T._off.a.take(Y)[loc[d.ep[ei]]]
        O += d.es[ei, None]
        prop = T._kids.a.take(O).astype(np.int64)
        if d.pe0.size:  # pair by shape: the image's operands are sorted by its own ids
            pm = eg[d.pe0] == g
            if pm.any():
                i0, i1 = eloc[d.pe0[pm]], eloc[d.pe1[pm]]
                s0, s1 = d.ps0[pm, None], d.ps1[pm, None]
                a, b = prop[i0], prop[i1]
                swap = shape[a] != s0
                a, b = np.where(swap, b, a), np.where(swap, a, b)
                C.fail(ok, P, ~((shape[a] == s0) & (shape[b] == s1)).all(axis=0))
                prop[i0], prop[i1] = a, b
        fm = eg[d.first] == g
        if fm.any():
            crow = d.first_rows[fm]
            for Q, which, W in C.coarsen(P, prop[eloc[d.first[fm]]]):
                part[crow[which]] = Q
                held[crow[which]] = W.shape[1]
                for r, w in zip(crow[which].tolist(), W):
                    img[r] = w
        cm = eg[d.chk] == g
        if cm.any():
            pend.append((P, prop[eloc[d.chk[cm]]], d.chk_rows[cm]))
    for P, X, crow in pend:
        cp = part[crow]
        for Q in np.unique(cp).tolist():
            q = cp == Q
            R, ra, rb = C.meet(P, Q)
            C.fail(ok, R, (X[q][:, ra] != _stack([img[r] for r in crow[q].tolist()])[:, rb]).any(axis=0))
    return temp


def _bottom_up(T: TermStore, p: Plan, C: _Parts, part: np.ndarray, img: list, spart: np.ndarray,
               saux: list, held: np.ndarray) -> np.ndarray:
    """Pass 2, per class: the images of the nodes pass 1 did not reach, found in the store once per class of
    the meet of their children's partitions, and the ties' operand pairing."""
    ok = np.ones(C.k, bool)
    if p.up_missing:  # an input element pass 1 never met: no image known
        return np.zeros(C.k, bool)
    for g in p.up:
        a = g.kid_rows.shape[1]
        if g.op == Op.OPAQUE or (g.op != Op.INPUT and not a):
            part[g.rows] = 0
            held[g.rows] = 1
            for r, i in zip(g.rows.tolist(), g.ids.tolist()):
                img[r] = np.array([i], np.int64)
            continue
        kp = spart[g.sig][:, None] if g.op == Op.INPUT else part[g.kid_rows]
        combos, inv = np.unique(kp, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for c, combo in enumerate(combos.tolist()):
            sel = np.nonzero(inv == c)[0] if combos.shape[0] > 1 else np.arange(inv.size)
            R, maps = combo[0], [np.arange(C.n[combo[0]])]
            for Q in combo[1:]:
                R, ra, rb = C.meet(R, Q)
                maps = [m[ra] for m in maps] + [rb]
            nR = C.n[R]
            block = max(1, STEP_BUDGET // (24 * (3 + a) * nR))
            for s in range(0, sel.size, block):
                e = sel[s:s + block]
                if g.op == Op.INPUT:
                    got = T.find(Op.INPUT, np.repeat(g.sort[e], nR),
                                 _stack([saux[x] for x in g.sig[e].tolist()])[:, maps[0]].reshape(-1), [])
                else:
                    got = T.find(Op(g.op), np.repeat(g.sort[e], nR), np.repeat(g.aux[e], nR),
                                 [_stack([img[r] for r in g.kid_rows[e, j].tolist()])[:, maps[j]].reshape(-1)
                                  for j in range(a)])
                got = got.reshape(e.size, nR)
                miss = got < 0
                if miss.any():
                    C.fail(ok, R, miss.any(axis=0))
                    got = np.where(miss, g.ids[e, None], got)
                part[g.rows[e]] = R
                held[g.rows[e]] = nR
                for r, w in zip(g.rows[e].tolist(), got):
                    img[r] = w
        if not ok.any():
            return ok
    tie_rows, r0, r1 = p.ties
    if tie_rows.size:
        trip = np.stack([part[tie_rows], part[r0], part[r1]], axis=1)
        combos, inv = np.unique(trip, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for c, (P0, P1, P2) in enumerate(combos.tolist()):
            sel = inv == c
            R, ma, mb = C.meet(P0, P1)
            R, m01, mc = C.meet(R, P2)
            y = _stack([img[r] for r in tie_rows[sel].tolist()])[:, ma[m01]]
            u = _stack([img[r] for r in r0[sel].tolist()])[:, mb[m01]]
            v = _stack([img[r] for r in r1[sel].tolist()])[:, mc]
            o = T._off.a[y]
            C.fail(ok, R, ~((T._kids.a[o] == np.minimum(u, v)) & (T._kids.a[o + 1] == np.maximum(u, v))).all(axis=0))
    return ok
