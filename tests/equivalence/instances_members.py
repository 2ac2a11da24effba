"""An independent oracle for proofs/instances.py: the instance check written the straightforward way, one
member at a time, in plain Python over dicts (no plan, no pool, no steps, no classes). Not used by the prover;
tests/equivalence/test_instances_classes.py compares the vectorised check with it.

The rules (proofs/instances.py's docstring) for one member (its roots `m`, the representative's `rep`):

1. top down over the nodes reachable from the roots along *followed* edges (every edge but a tie's first
   two: a commutative node whose two first operands are distinct and of one shape), parents before
   children (term ids ascend children first, so in descending id order): a node's image (its root's
   member id, or the first proposal of a parent) must have the node's operation, sort and arity; an input
   leaf's image the same buffer, and every leaf of one input element images of one element; an opaque
   node's image is itself; any other node's image its aux. Its children's proposals are the image's
   children by slot, except that a commutative node whose two first operands are distinct and of two
   shapes pairs the image's first two operands with them by shape (both must then match). Every proposal
   for a child must equal its image.
2. bottom up over the nodes not reached (ascending ids): an opaque node or a leaf that is no input is its
   own image; an input leaf's image is the store's leaf of its element's image element (an element that
   step 1 never met: no member passes); any other node's image is the store's node of its operation over
   its children's images (TermStore.find), which must exist. Each tie's image's first two operands must
   be its operands' images, as an unordered pair (sorted).

`give_up_below`: when fewer than this fraction of the members pass step 1, every answer is False.
"""

from __future__ import annotations

import numpy as np

from semantics.termeval import subgraph
from semantics.terms import COMMUTATIVE, Op, TermStore

__all__ = ["instances"]


def instances(T: TermStore, rep: np.ndarray, members: np.ndarray, give_up_below: float = 0.0) -> np.ndarray:
    rep_l = [int(x) for x in np.asarray(rep).tolist()]
    rows = [[int(x) for x in r] for r in np.asarray(members).tolist()]
    if not rows:
        return np.ones(0, bool)
    first = [_step1(T, rep_l, r) for r in rows]
    passed = [s is not None for s in first]
    if sum(passed) < give_up_below * len(rows):
        return np.zeros(len(rows), bool)
    return np.array([s is not None and _step2(T, rep_l, *s) for s in first], bool)


def _shape_pair(T: TermStore, x: int) -> tuple[bool, bool]:
    """(tie, pair by shape) of node x."""
    ks = T.kids(x)
    if int(T.op[x]) not in {int(o) for o in COMMUTATIVE} or len(ks) < 2 or ks[0] == ks[1]:
        return False, False
    same = int(T.shape[ks[0]]) == int(T.shape[ks[1]])
    return same, not same


def _reached(T: TermStore, rep: list[int]) -> set[int]:
    seen = set(rep)
    todo = list(seen)
    while todo:
        x = todo.pop()
        ks = T.kids(x)
        if _shape_pair(T, x)[0]:
            ks = ks[2:]
        for c in ks:
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


def _key(T: TermStore, x: int) -> tuple[int, int, int]:
    return int(T.op[x]), int(T.sort[x]), int(T.nkids[x])


def _step1(T: TermStore, rep: list[int], m: list[int]) -> tuple[dict[int, int], dict[int, int], set[int]] | None:
    """Step 1 for member m: its images and substitution (rep element aux -> image aux), None if it fails."""
    img: dict[int, int] = {}
    for r, y in zip(rep, m):
        if img.setdefault(r, y) != y:
            return None
    sub: dict[int, int] = {}
    reached = _reached(T, rep)
    for x in sorted(reached, reverse=True):
        y = img[x]
        if _key(T, y) != _key(T, x):
            return None
        o, ax, ay = int(T.op[x]), int(T.aux[x]), int(T.aux[y])
        if o == Op.INPUT:
            if ay >> 40 != ax >> 40 or sub.setdefault(ax, ay) != ay:
                return None
        elif o == Op.OPAQUE:
            if y != x:
                return None
        elif ay != ax:
            return None
        ks, ys = list(T.kids(x)), list(T.kids(y))
        tie, pair = _shape_pair(T, x)
        if pair:
            a, b = ys[0], ys[1]
            if int(T.shape[a]) != int(T.shape[ks[0]]):
                a, b = b, a
            if int(T.shape[a]) != int(T.shape[ks[0]]) or int(T.shape[b]) != int(T.shape[ks[1]]):
                return None
            ys[0], ys[1] = a, b
        for j in range(2 if tie else 0, len(ks)):
            if img.setdefault(ks[j], ys[j]) != ys[j]:
                return None
    return img, sub, reached


def _step2(T: TermStore, rep: list[int], img: dict[int, int], sub: dict[int, int], reached: set[int]) -> bool:
    for x in sorted(set(subgraph(T, np.array(rep, np.int64)).tolist()) - reached):
        o, ks = int(T.op[x]), T.kids(x)
        if o == Op.OPAQUE or (o != Op.INPUT and not ks):
            img[x] = x
            continue
        if o == Op.INPUT:
            if int(T.aux[x]) not in sub:
                return False
            got = T.find(Op.INPUT, np.array([int(T.sort[x])]), np.array([sub[int(T.aux[x])]]), [])
        else:
            got = T.find(Op(o), np.array([int(T.sort[x])]), np.array([int(T.aux[x])]),
                         [np.array([img[c]]) for c in ks])
        if int(got[0]) < 0:
            return False
        img[x] = int(got[0])
    for x in reached:
        if _shape_pair(T, x)[0]:
            k0, k1 = T.kids(x)[:2]
            a, b = img[k0], img[k1]
            if list(T.kids(img[x])[:2]) != [min(a, b), max(a, b)]:
                return False
    return True
