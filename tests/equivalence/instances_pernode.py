"""proofs/instances.py as it was up to 2026-12-05 (main 945151d): one Python step per node of the representative's
DAG, vectorised over the members. Kept as the reference that tests/equivalence/test_instances_levels.py compares
the step-per-level implementation with (the same answer for every member); not used by the prover.

Obligations that are renamings of one another: prove one, and check that the others are instances.

Tiled and naive kernels compute every output element the same way from different input elements:
the pair (candidate term, reference term) of element e is the pair of a representative element r
with every input element x replaced by sigma(x). If the representative's two terms are equal for
every input (proved once, by the normal form), so are element e's: an identity over all inputs
stays one when inputs are substituted for inputs (sigma need not be one-to-one). A FlashAttention
pair at S = 512 has 16384 output elements of one shape; each normal form has 512 exponentials.

`instances(T, rep, members)` checks, vectorised over the members, that each member's roots are the
representative's under one substitution of input elements, in two passes over the representative's
DAG (term ids ascend children first):

1. top down, from the roots: a member's image of a node must have the node's operation, sort,
   modifiers/constant bits and arity, and its children are the images of the node's children (each
   node gets one image per member, whichever parent reaches it); an input leaf's image is a leaf of
   the same buffer and sort, and one input element has one image element. A commutative node whose
   two operands have different shapes (semantics.terms shape hashes) pairs them by shape; one whose
   operands have one shape (the two halves of a reduction tree) is not descended through here;
2. bottom up, the nodes pass 1 did not reach: the image is the store's node of the same operation
   over the children's images, found by lookup (semantics.terms.TermStore.find), commutative
   children sorted as interning sorts them; where no such node exists the member is not an
   instance. A commutative node reached in pass 1 checks its operands' images against its image's
   operands as an unordered pair.

Images are held per member, so members are checked in chunks; an image (and an input element's
substitution) is dropped after the last step of pass 1 that reads it, which the representative's DAG alone
decides (`_plan`), so a chunk is sized by the most held at once, not by the DAG's size.

By induction over the DAG every image is the substituted node, so a member that passes is an
instance: sound without any search. A member can fail although it is an instance (an input leaf
reached only below same-shape commutative pairs, whose pairing pass 1 cannot know); it is then
proved on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.termeval import subgraph
from semantics.terms import COMMUTATIVE, Op, TermStore
from symexec.machine import check_time_limit

__all__ = ["instances"]

_INPUT_BITS = np.int64(40)  # an INPUT leaf's aux: buffer number << 40 | element


#: Bytes of member images (one int64 per member and node of the representative's DAG whose image is
#: held) at once; members are checked in chunks that fit (the check of a member does not depend on the
#: others).
IMAGE_BUDGET = 256 << 20


@dataclass(frozen=True)
class _Plan:
    """What pass 1 does on the representative's DAG alone, and when each image can be dropped. Which
    nodes get an image does not depend on the members (every child of a reached node gets one, a failed
    member's being the representative's node itself), so neither does when an image is read last."""

    kids: dict[int, tuple[int, ...]]  # children of every node of the DAG
    reached: frozenset[int]  # nodes pass 1 reaches (the others are pass 2's)
    early: frozenset[int]  # leaves below a root: tested when first reached, not at their turn
    kept: frozenset[int]  # images read after pass 1 (pass 2's children, the ties' nodes and operands)
    drop: dict[int, tuple[int, ...]]  # after pass 1's step at node x: images no later step reads
    drop_sigma: dict[int, tuple[int, ...]]  # after x's step: input elements (aux) no later test reads
    peak: int  # most images and sigma entries held at once, per member


def _is_tie(op: int, kids: tuple[int, ...], shape: np.ndarray, commutative: set[int]) -> bool:
    """A commutative node whose two operands have one shape: pass 1 does not descend through it."""
    return op in commutative and len(kids) >= 2 and kids[0] != kids[1] and shape[kids[0]] == shape[kids[1]]


def _plan(T: TermStore, rep: np.ndarray, nodes: np.ndarray) -> _Plan:
    shape, op, aux = T.shape, T.op, T.aux
    commutative = {int(o) for o in COMMUTATIVE}
    kids = {x: T.kids(x) for x in nodes.tolist()}
    roots = set(rep.tolist())
    held = set(roots)
    reached: list[int] = []  # in pass 1's order
    ties: set[int] = set()
    for x in nodes[::-1].tolist():
        if x not in held:
            continue
        reached.append(x)
        ks = kids[x]
        if _is_tie(int(op[x]), ks, shape, commutative):
            ties.add(x)
            ks = ks[2:]
        held.update(ks)
    reached_set = frozenset(reached)
    early = frozenset(x for x in reached if not kids[x] and x not in roots)
    kept = set(ties)
    for x in ties:
        kept.update(kids[x][:2])
    pass2_inputs = set()  # input elements pass 2 looks up in sigma
    for x, ks in kids.items():
        if x not in reached_set:
            kept.update(ks)
            if int(op[x]) == Op.INPUT:
                pass2_inputs.add(int(aux[x]))
    # when each image and sigma entry is read last: the step (a node of pass 1) that reads it
    last_read: dict[int, int] = {}
    last_test: dict[int, int] = {}  # input aux -> the step whose test of one of its leaves is the last
    for x in reached:
        if x in early:
            continue
        last_read[x] = x
        if int(op[x]) == Op.INPUT:
            last_test[int(aux[x])] = x
        for kx in (kids[x][2:] if x in ties else kids[x]):
            if kx in early and kx not in last_read and int(op[kx]) == Op.INPUT:  # tested when first reached
                last_test[int(aux[kx])] = x
            last_read[kx] = x
    drop: dict[int, list[int]] = {}
    for y, x in last_read.items():
        if y not in kept:
            drop.setdefault(x, []).append(y)
    drop_sigma: dict[int, list[int]] = {}
    for a, x in last_test.items():
        if a not in pass2_inputs:
            drop_sigma.setdefault(x, []).append(a)
    # the peak, replaying pass 1 on the counts
    live, sig, peak = set(roots), set(), len(roots)
    for x in reached:
        if x in early:
            continue
        if int(op[x]) == Op.INPUT:
            sig.add(int(aux[x]))
        for kx in (kids[x][2:] if x in ties else kids[x]):
            live.add(kx)
            if kx in early and int(op[kx]) == Op.INPUT:
                sig.add(int(aux[kx]))
        peak = max(peak, len(live) + len(sig))
        live.difference_update(drop.get(x, ()))
        sig.difference_update(drop_sigma.get(x, ()))
    peak = max(peak, len(live) + len(sig) + len(kids) - len(reached_set))  # pass 2 keeps every image it makes
    return _Plan(kids, reached_set, early, frozenset(kept), {x: tuple(v) for x, v in drop.items()},
                 {x: tuple(v) for x, v in drop_sigma.items()}, max(1, peak))


def instances(T: TermStore, rep: np.ndarray, members: np.ndarray, give_up_below: float = 0.0) -> np.ndarray:
    """Whether each row of `members` (k, r) is the term ids of `rep` (r,) under one substitution of
    input elements (see the module docstring). `give_up_below`: when fewer than this fraction of a
    chunk's members pass pass 1, answer False for the whole chunk without pass 2 (a sample's early
    answer; False only ever means "not shown to be an instance": the member is proved on its own)."""
    rep = np.asarray(rep, np.int64)
    members = np.asarray(members, np.int64)
    k = members.shape[0]
    if k == 0:
        return np.ones(0, bool)
    nodes = subgraph(T, rep)
    plan = _plan(T, rep, nodes)
    chunk = max(1, IMAGE_BUDGET // (8 * plan.peak))
    if k <= chunk:
        return _instances(T, rep, members, nodes, plan, give_up_below=give_up_below)
    keys = T.node_keys()  # once for every chunk
    return np.concatenate([_instances(T, rep, members[s:s + chunk], nodes, plan, keys, give_up_below)
                           for s in range(0, k, chunk)])


def _instances(T: TermStore, rep: np.ndarray, members: np.ndarray, nodes: np.ndarray, plan: _Plan,
               keys: np.ndarray | None = None, give_up_below: float = 0.0) -> np.ndarray:
    check_time_limit("checking which output elements are renamings of a proved one")
    k = members.shape[0]
    ok = np.ones(k, bool)
    op, sort, aux, nk = T.op, T.sort, T.aux, T.nkids
    key = T.node_keys() if keys is None else keys  # op, sort and arity: one gather per image
    shape = T.shape
    image: dict[int, np.ndarray] = {}
    for j, r in enumerate(rep.tolist()):
        got = image.get(r)
        if got is not None:
            ok &= got == members[:, j]
        else:
            image[r] = members[:, j].copy()
    sigma: dict[int, np.ndarray] = {}  # rep input aux (buffer, element) -> image aux per member
    ties: list[int] = []  # commutative nodes reached in pass 1 whose operand pairing is checked in pass 2
    commutative = {int(o) for o in COMMUTATIVE}

    def own(x: int, y: np.ndarray) -> np.ndarray:
        """Test node x's image y itself (operation, sort, arity, aux; an input leaf's substitution):
        failures clear `ok`; failed members follow the representative itself from here."""
        o = int(op[x])
        good = key[y] == key[x]
        if o == Op.INPUT:
            ay = aux[y]
            good &= (ay >> _INPUT_BITS) == (int(aux[x]) >> _INPUT_BITS)
            a = int(aux[x])
            prev = sigma.get(a)
            if prev is None:
                sigma[a] = np.where(good, ay, a)
            else:
                good &= prev == ay
        elif o == Op.OPAQUE:
            good &= y == x
        else:
            good &= aux[y] == aux[x]
        np.logical_and(ok, good, out=ok)
        return np.where(ok, y, x)

    # ---- pass 1: top down
    for x in nodes[::-1].tolist():
        if x in plan.early:  # tested when first reached (below)
            continue
        y = image.get(x)
        if y is None:
            continue
        o = int(op[x])
        y = image[x] = own(x, y)
        kids = plan.kids[x]
        if kids:
            ky = T.kid_columns(y, len(kids))
            if o in commutative and len(kids) >= 2 and kids[0] != kids[1]:
                s0, s1 = shape[kids[0]], shape[kids[1]]
                if s0 == s1:
                    ties.append(x)
                    kids, ky = kids[2:], ky[2:]
                else:  # pair by shape: the member's operands are sorted by its own ids
                    swap = shape[ky[0]] != s0
                    a, b = np.where(swap, ky[1], ky[0]), np.where(swap, ky[0], ky[1])
                    ok &= (shape[a] == s0) & (shape[b] == s1)
                    ky = [a, b] + ky[2:]
            for kx, kv in zip(kids, ky):
                prev = image.get(kx)
                if prev is None:
                    v = np.where(ok, kv, kx)
                    image[kx] = own(kx, v) if kx in plan.early else v
                else:
                    ok &= prev == kv
        for d in plan.drop.get(x, ()):  # read by no later step: peak memory stays plan.peak per member
            del image[d]
        for a in plan.drop_sigma.get(x, ()):
            del sigma[a]
        if not ok.any():
            return ok
    # ---- pass 2 runs on the members pass 1 left standing only: its cost is per node of the DAG it did
    # not reach (a store lookup each), so members that failed in pass 1 (most rows of a column-normalised
    # matrix are no renaming of the representative's) cost nothing there
    live = np.nonzero(ok)[0]
    if live.size < give_up_below * k:  # the caller's early answer: these are not shown to be instances
        return np.zeros(k, bool)
    if live.size < k:
        image = {x: v[live] for x, v in image.items()}
        sigma = {a: v[live] for a, v in sigma.items()}
        ok[live] = _bottom_up(T, nodes, plan, image, sigma, ties, live.size)
        return ok
    return _bottom_up(T, nodes, plan, image, sigma, ties, k)


def _bottom_up(T: TermStore, nodes: np.ndarray, plan: _Plan, image: dict[int, np.ndarray],
               sigma: dict[int, np.ndarray], ties: list[int], k: int) -> np.ndarray:
    """Pass 2 over `k` members that passed pass 1 (`image`, `sigma`: what pass 1 kept, per member):
    the images of the nodes pass 1 did not reach, found in the store, and the ties' operand pairing."""
    op, sort, aux, nk = T.op, T.sort, T.aux, T.nkids
    ok = np.ones(k, bool)
    for x in nodes.tolist():
        if x in plan.reached:
            continue
        o = int(op[x])
        if o == Op.INPUT:
            a = int(aux[x])
            img = sigma.get(a)
            if img is None:  # an input element pass 1 never met: no image known
                return np.zeros(k, bool)
            got = T.find(Op.INPUT, int(sort[x]), img, [])
        elif o == Op.OPAQUE or not nk[x]:
            got = np.full(k, x, np.int64)
        else:
            got = T.find(Op(o), int(sort[x]), int(aux[x]), [image[kx] for kx in plan.kids[x]])
        ok &= got >= 0
        image[x] = np.where(ok, got, x)
        if not ok.any():
            return ok
    for x in ties:
        kids = plan.kids[x]
        y = image[x]
        a, b = image[kids[0]], image[kids[1]]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        y0, y1 = T.kid_columns(y, 2)
        ok &= (y0 == lo) & (y1 == hi)
    return ok
