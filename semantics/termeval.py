"""Evaluate terms (semantics.terms) on concrete inputs, bit for bit as the emulator computes them.

Each operation runs the same value-level function the instruction handlers use (semantics.floatops,
fspecial, intops, bitops, compare, convert; mma's accumulation model), so a term evaluated on the
inputs of a run gives the bits the machine produced: the differential test of the equivalence
shadow, and the way a counterexample's outputs are predicted from terms.

Evaluation is vectorised by level: node ids are a topological order (children are interned before
their parents), and every round evaluates all ready nodes of one (op, sort, aux) group at once.
"""

from __future__ import annotations

from typing import Callable, Collection

import numpy as np

from semantics import bitops as BO
from semantics import floatops as F
from semantics import fspecial as FS
from semantics import intops as I
from semantics.compare import compare
from semantics.convert import cvt as _cvt
from semantics.convert import cvt_x2_f32  # noqa: F401  (the packed form: CONCAT of CVT nodes here)
from semantics.errors import Unsupported
from semantics.formats import F16, F32, decode, get_format, round_f64
from semantics.mxformats import ScaleType, decode_scale_checked
from semantics.terms import SORTS, Kind, Op, TermStore, mods, sort_widths

__all__ = ["evaluate", "subgraph", "Leaf"]

#: Bits of INPUT leaves: (buffer name, element indices, sort id) -> uint64 bits.
Leaf = Callable[[str, np.ndarray, int], np.ndarray]


def _mask(w: int) -> np.uint64:
    return np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


def child_ids(T: TermStore, nodes: np.ndarray) -> np.ndarray:
    """The children of `nodes`, node by node and slot by slot, in one array (the term store's child column
    gathered: node j's slots start at its offset)."""
    nk = T.nkids[nodes].astype(np.int64)
    return T._kids.a[np.repeat(T._off.a[nodes] - np.cumsum(nk) + nk, nk) + np.arange(int(nk.sum()))]


def subgraph(T: TermStore, roots: np.ndarray, stop=None) -> np.ndarray:
    """Sorted ids of every node reachable from `roots`, not descending below (nor including) the
    ids in `stop` (a container of ids already dealt with)."""
    seen = np.zeros(len(T), bool)
    frontier = np.unique(np.asarray(roots, np.int64))
    frontier = frontier[frontier >= 0]
    stopped = None
    if stop:
        stopped = np.zeros(len(T), bool)
        known = np.fromiter(stop, np.int64, len(stop))
        stopped[known[known < len(T)]] = True
        frontier = frontier[~stopped[frontier]]
    while frontier.size:
        seen[frontier] = True
        nk = T.nkids[frontier].astype(np.int64)
        has = nk > 0
        if not has.any():
            break
        kids = np.unique(child_ids(T, frontier[has]))
        frontier = kids[~seen[kids]]
        if stopped is not None:
            frontier = frontier[~stopped[frontier]]
    return np.nonzero(seen)[0]


def evaluate(T: TermStore, roots: np.ndarray, leaf: Leaf) -> np.ndarray:
    """uint64 bits of each root (raises Unsupported for an OPAQUE leaf)."""
    roots = np.asarray(roots, np.int64)
    nodes = subgraph(T, roots)
    val = np.zeros(len(T), np.uint64)
    done = np.zeros(len(T), bool)
    nk = T.nkids[nodes].astype(np.int64)
    # reverse edges of the subgraph: how many children of each node are still pending
    parent = np.repeat(nodes, nk)
    child = child_ids(T, nodes)
    order = np.argsort(child, kind="stable")
    child_sorted, parent_sorted = child[order], parent[order]
    pending = np.zeros(len(T), np.int64)
    np.add.at(pending, parent, 1)
    ready = nodes[pending[nodes] == 0]
    while ready.size:
        _eval_group(T, ready, val, leaf)
        done[ready] = True
        lo = np.searchsorted(child_sorted, ready, side="left")
        hi = np.searchsorted(child_sorted, ready, side="right")
        cnt = hi - lo
        if cnt.sum() == 0:
            break
        ps = parent_sorted[np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))]
        np.subtract.at(pending, ps, 1)
        cand = np.unique(ps)
        ready = cand[(pending[cand] == 0) & ~done[cand]]
    return val[roots]


def _eval_group(T: TermStore, ids: np.ndarray, val: np.ndarray, leaf: Leaf) -> None:
    leafy = np.isin(T.op[ids], (Op.CONST, Op.INPUT, Op.OPAQUE))
    if leafy.any():
        _leaves(T, ids[leafy], val, leaf)
        ids = ids[~leafy]
    if not ids.size:
        return
    # one group per (op, sort, modifiers, arity, first child's sort): what _apply reads from ids[0]
    k0 = np.where(T.nkids[ids] > 0, T.sort[T._kids.a[T._off.a[ids]]], 0).astype(np.int64)
    rows = np.stack([T.op[ids].astype(np.int64), T.sort[ids].astype(np.int64), T.aux[ids],
                     T.nkids[ids].astype(np.int64), k0], axis=1)
    _, inv = np.unique(rows, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    for g in range(int(inv.max()) + 1):
        sel = ids[inv == g]
        val[sel] = _apply(T, sel, val)


def _leaves(T: TermStore, ids: np.ndarray, val: np.ndarray, leaf: Leaf) -> None:
    op = T.op[ids]
    widths = sort_widths()[T.sort[ids]]
    c = op == Op.CONST
    val[ids[c]] = T.aux[ids[c]].view(np.uint64) & np.array([_mask(int(w)) for w in widths[c]], np.uint64)
    if (op == Op.OPAQUE).any():
        raise Unsupported("an opaque value (no term meaning) cannot be evaluated")
    inp = ids[op == Op.INPUT]
    if inp.size:
        aux = T.aux[inp]
        bufs = aux >> 40
        for b in np.unique(bufs).tolist():
            sel = inp[bufs == b]
            for s in np.unique(T.sort[sel]).tolist():
                ss = sel[T.sort[sel] == s]
                val[ss] = np.asarray(leaf(T.inputs[b], T.aux[ss] & ((1 << 40) - 1), s), np.uint64)


def _kids(T: TermStore, ids: np.ndarray, val: np.ndarray, j: int) -> np.ndarray:
    return val[T.kid(ids, j)]


def _f(x: np.ndarray, fmt) -> np.ndarray:
    return x.astype(get_format(fmt).dtype)


def _apply(T: TermStore, ids: np.ndarray, val: np.ndarray) -> np.ndarray:
    op = Op(int(T.op[ids[0]]))
    sort = SORTS[int(T.sort[ids[0]])]
    m = mods(int(T.aux[ids[0]]))
    k = int(T.nkids[ids[0]])
    a = [val[T.kid(ids, j)] for j in range(k)] if op != Op.MMA else None
    w = sort.width
    fmt = sort.fmt
    rnd = m.rnd or "rn"
    if op in (Op.FADD, Op.FSUB, Op.FMUL):
        fn = {Op.FADD: F.add, Op.FSUB: F.sub, Op.FMUL: F.mul}[op]
        r = fn(_f(a[0], fmt), _f(a[1], fmt), fmt, rnd, ftz=m.ftz, sat=m.sat)
    elif op == Op.FFMA:
        r = F.fma(_f(a[0], fmt), _f(a[1], fmt), _f(a[2], fmt), fmt, rnd, ftz=m.ftz, sat=m.sat, relu_=m.relu)
    elif op in (Op.FMIN, Op.FMAX):
        fn = FS.fmin if op == Op.FMIN else FS.fmax
        r = fn(_f(a[0], fmt), _f(a[1], fmt), fmt, ftz=m.ftz)
    elif op in (Op.FNEG, Op.FABS):
        r = (FS.fneg if op == Op.FNEG else FS.fabs)(_f(a[0], fmt), fmt, ftz=m.ftz)
    elif op == Op.FDIV:
        x, y = _f(a[0], fmt), _f(a[1], fmt)
        r = FS.div_approx(x, y, ftz=m.ftz) if m.approx == "approx" else FS.div_full(x, y, ftz=m.ftz) \
            if m.approx == "full" else F.div(x, y, fmt, rnd, ftz=m.ftz)
    elif op in (Op.FRCP, Op.FSQRT, Op.FRSQRT, Op.FEX2, Op.FLG2, Op.FSIN, Op.FCOS, Op.FTANH):
        name = op.name[1:].lower()
        x = _f(a[0], fmt)
        if m.approx:
            r = FS.approx(name, x, fmt, ftz=m.ftz)
        elif op == Op.FRCP:
            r = F.rcp(x, fmt, rnd, ftz=m.ftz)
        elif op == Op.FSQRT:
            r = F.sqrt(x, fmt, rnd, ftz=m.ftz)
        else:
            raise Unsupported(f"{name} without .approx")
    elif op == Op.FCOPYSIGN:
        r = FS.copysign(_f(a[0], fmt), _f(a[1], fmt), fmt)
    elif op == Op.CVT:
        dst, src = m.elems
        r = _cvt(a[0].astype(_dtype(src)), dst, src, m.rnd, ftz=m.ftz, sat=m.sat, relu_=m.relu,
                 satfinite=m.mode == "satfinite")
    elif op == Op.FLOAT:
        r = a[0]
    elif op == Op.MMA:
        r = _mma(T, ids, val, m, sort)
    elif op == Op.SCALE:
        r = _scale(T, ids, a, m)
    elif op in (Op.AND, Op.OR, Op.XOR):
        r = {Op.AND: BO.and_, Op.OR: BO.or_, Op.XOR: BO.xor}[op](a[0], a[1], w)
    elif op == Op.NOT:
        r = BO.not_(a[0], w)
    elif op == Op.SHL:
        r = BO.shl(a[0], a[1].astype(np.uint32), w)
    elif op == Op.SHR:
        r = BO.shr(a[0], a[1].astype(np.uint32), w, signed=m.signed)
    elif op in (Op.IADD, Op.ISUB):
        r = (I.add if op == Op.IADD else I.sub)(a[0], a[1], w, m.signed)
    elif op == Op.IMUL:
        src_w = sort_widths()[T.sort[T.kid(ids[:1], 0)]][0]
        r = I.mul(a[0], a[1], int(src_w), m.signed, m.mode or "lo")
    elif op in (Op.IMIN, Op.IMAX):
        r = (I.min_ if op == Op.IMIN else I.max_)(a[0], a[1], w, m.signed)
    elif op == Op.INEG:
        r = I.neg(a[0], w)
    elif op == Op.IABS:
        r = I.abs_(a[0], w)
    elif op == Op.BFE:
        r = BO.bfe(a[0], a[1].astype(np.uint32), a[2].astype(np.uint32), w, m.signed)
    elif op == Op.POPC:
        src_w = sort_widths()[T.sort[T.kid(ids[:1], 0)]][0]
        r = BO.popc(a[0], int(src_w))
    elif op == Op.CONCAT:
        r = np.zeros(ids.size, np.uint64)
        for j in range(k):  # child widths may differ from row to row
            cw = sort_widths()[T.sort[T.kid(ids, j)]].astype(np.uint64)
            mask = np.where(cw >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << cw) - np.uint64(1))
            r = (r << cw) | (a[j] & mask)
    elif op == Op.EXTRACT:
        r = (a[0] >> np.uint64(m.lo)) & _mask(m.width)
    elif op == Op.CMP:
        cs = SORTS[int(T.sort[T.kid(ids[:1], 0)][0])]
        kind = cs.format if cs.kind is Kind.FLOAT else ("s" if m.signed else "u", cs.width)
        x, y = (a[0].astype(cs.format.dtype), a[1].astype(cs.format.dtype)) if cs.kind is Kind.FLOAT else \
            (a[0] & _mask(cs.width), a[1] & _mask(cs.width))
        r = compare(x, y, m.cmp, kind, ftz=m.ftz)
    elif op in (Op.PAND, Op.POR, Op.PXOR):
        fn = {Op.PAND: np.logical_and, Op.POR: np.logical_or, Op.PXOR: np.logical_xor}[op]
        r = fn(a[0] != 0, a[1] != 0)
    elif op == Op.PNOT:
        r = a[0] == 0
    elif op == Op.ITE:
        r = np.where(a[0] != 0, a[1], a[2])
    else:
        raise Unsupported(f"evaluation of {op.name}")
    return np.asarray(r).astype(np.uint64) & _mask(w)


def _dtype(type_name: str):
    t = type_name.lstrip(".")
    if t[0] in "bus" and t[1:].isdigit():
        return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[int(t[1:])]
    return get_format(t).dtype


def _mma(T: TermStore, ids: np.ndarray, val: np.ndarray, m, sort) -> np.ndarray:
    """c + sum a_i*b_i, as semantics/ptx/mma.py's model: exact products, float64 sum in order, one
    rounding to the accumulator (integers: exact, wrapped or saturated to s32)."""
    a_t, b_t, c_t = m.elems
    k = (int(T.nkids[ids[0]]) - 1) // 2
    K = np.stack([val[T.kid(ids, j)] for j in range(1 + 2 * k)], axis=1)
    c, A, B = K[:, 0], K[:, 1:1 + k], K[:, 1 + k:]
    if c_t == "s32":
        av, bv = _ints(A, a_t), _ints(B, b_t)
        cv = (c & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32).astype(np.int64)
        s = cv + (av * bv).sum(axis=1)
        s = np.clip(s, -(1 << 31), (1 << 31) - 1) if m.sat else ((s + (1 << 31)) % (1 << 32)) - (1 << 31)
        return s.astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    av = decode(A.astype(get_format(a_t).dtype), a_t)
    bv = decode(B.astype(get_format(b_t).dtype), b_t)
    S = decode(c.astype(get_format(c_t).dtype), c_t).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for q in range(k):
            S = S + av[:, q] * bv[:, q]
    out = F16 if sort.fmt == "f16" else F32
    return round_f64(S, out, "rn").astype(np.uint64)


def _scale(T: TermStore, ids: np.ndarray, a: list[np.ndarray], m) -> np.ndarray:
    """x * scale(s) as float64 bits, as semantics/ptx/mma.py's mma_block_scale scales an element before its
    products (exact: at most 4 x 4 significant bits, exponents far inside float64; NaN codes give NaN). A ue4m3
    byte with bit 7 set is refused, as the handler refuses it (semantics.mxformats.decode_scale_checked)."""
    xs = SORTS[int(T.sort[T.kid(ids[:1], 0)][0])]
    x = decode(a[0].astype(xs.format.dtype), xs.format)
    stype = ScaleType(m.elems[1])
    scale = decode_scale_checked(a[1] & np.uint64(0xFF), stype, "a block scale factor")
    with np.errstate(invalid="ignore", over="ignore"):
        r = x * scale
    return np.asarray(r, np.float64).view(np.uint64)


def _ints(X: np.ndarray, ty: str) -> np.ndarray:
    bits = int(ty[1:])
    v = (X & _mask(bits)).astype(np.int64)
    if ty[0] == "s":
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


class Incremental:
    """Values of every node of a store, kept up to date as nodes are added (for self-checks: the
    term of each register write evaluated and compared with the machine's bits). OPAQUE leaves
    and what depends on them are marked unknown."""

    def __init__(self, T: TermStore, leaf: Leaf) -> None:
        self.T = T
        self.leaf = leaf
        self.val = np.zeros(0, np.uint64)
        self.known = np.zeros(0, bool)

    def extend(self) -> None:
        T = self.T
        lo, hi = self.val.size, len(T)
        if hi == lo:
            return
        self.val = np.concatenate([self.val, np.zeros(hi - lo, np.uint64)])
        self.known = np.concatenate([self.known, np.zeros(hi - lo, bool)])
        ids = np.arange(lo, hi, dtype=np.int64)
        nk = T.nkids[ids].astype(np.int64)
        child = child_ids(T, ids)
        parent = np.repeat(ids, nk)
        unknown_kid = np.zeros(hi, bool)
        unknown_kid[:lo] = ~self.known[:lo]
        done = np.zeros(hi, bool)
        done[:lo] = True
        opaque = T.op[ids] == Op.OPAQUE
        done[ids[opaque]] = True
        while True:
            pending = np.zeros(hi, np.int64)
            np.add.at(pending, parent[~done[child]], 1)
            ready = ids[~done[ids] & (pending[ids] == 0)]
            if not ready.size:
                break
            bad = np.zeros(hi, bool)
            np.logical_or.at(bad, parent, ~(self.known[child] if child.size else bad[:0]) & done[child])
            good = ready[~bad[ready]]
            if good.size:
                _eval_group(T, good, self.val, self.leaf)
                self.known[good] = True
            done[ready] = True


class _Rows:
    """Per-node value arrays (one entry per assignment) indexed like `val` in _apply."""

    def __init__(self, d: dict) -> None:
        self.d = d

    def __getitem__(self, ids) -> np.ndarray:
        return np.stack([self.d[int(i)] for i in np.atleast_1d(ids)])


def small_subgraph(T: TermStore, root: int, limit: int = 4096, big: set[int] | None = None,
                   stop: Collection[int] = ()) -> list[int] | None:
    """Sorted ids of root's subgraph when it has at most `limit` nodes (None otherwise): a Python
    walk, cheaper than subgraph() for the small terms of bit tricks. `stop`: nodes other than the root
    that are listed but not looked inside (the cone between a term and the sources it is read from;
    not with `big`, whose sizes are of whole subgraphs).

    `big`, when given, is a set of ids whose subgraphs are known to have more than `limit` nodes; the walk
    uses and extends it (the store's nodes never change, so a node's subgraph is fixed once it exists).
    A walk that reaches a node of `big` stops: every node on its path from the root has that node's
    subgraph in its own, so it is big too. A walk that finds more than `limit` nodes goes on to
    2 * limit: a node on the path entered when n nodes were seen has every node found after it in
    its subgraph, so it is big when 2 * limit - n + 1 > limit (the int8 codes of a quantised block share
    its scale, a reduction of thousands of nodes: one walk marks the scale, the other codes stop there)."""
    root = int(root)
    if stop and big is not None:
        raise ValueError("small_subgraph: `stop` and `big` do not go together")
    if big is None:
        seen = {root}
        todo = [root]
        while todo:
            i = todo.pop()
            if i in stop and i != root:
                continue
            for k in T.kids(i):
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
                    if len(seen) > limit:
                        return None
        return sorted(seen)
    if root in big:
        return None
    seen = {root}
    path = [root]  # the depth-first path from the root, with each node's iterator over its kids
    its = [iter(T.kids(root))]
    entry = [1]  # len(seen) when each path node was found (itself included)
    cap = 2 * limit
    while path:
        for k in its[-1]:
            if k in seen:
                continue
            if k in big:  # every path node reaches k
                big.update(path)
                return None
            seen.add(k)
            if len(seen) > cap:
                big.update(p for p, e in zip(path, entry) if len(seen) - e + 1 > limit)
                return None
            path.append(k)
            its.append(iter(T.kids(k)))
            entry.append(len(seen))
            break
        else:
            path.pop()
            its.pop()
            entry.pop()
    if len(seen) > limit:  # more than limit nodes, fewer than cap: the root is big (nothing else known)
        big.add(root)
        return None
    return sorted(seen)


def _fast(T: TermStore, i: int, vals: dict) -> np.ndarray | None:
    """The common bit-vector operations on value arrays (no special cases to honour)."""
    op = int(T.op[i])
    w = int(sort_widths()[T.sort[i]])
    k = T.kids(i)
    m = _mask(w)
    if op == Op.AND:
        return vals[k[0]] & vals[k[1]] & m
    if op == Op.OR:
        return (vals[k[0]] | vals[k[1]]) & m
    if op == Op.XOR:
        return (vals[k[0]] ^ vals[k[1]]) & m
    if op == Op.NOT:
        return ~vals[k[0]] & m
    if op == Op.EXTRACT:
        md = mods(int(T.aux[i]))
        return (vals[k[0]] >> np.uint64(md.lo)) & m
    if op == Op.CONCAT:
        r = np.zeros_like(vals[k[0]])
        for c in k:
            cw = int(sort_widths()[T.sort[c]])
            r = (r << np.uint64(cw)) | (vals[c] & _mask(cw))
        return r & m
    if op == Op.ITE:
        return np.where(vals[k[0]] != 0, vals[k[1]], vals[k[2]])
    if op in (Op.PAND, Op.POR, Op.PXOR):
        a, b = vals[k[0]] != 0, vals[k[1]] != 0
        return {Op.PAND: a & b, Op.POR: a | b, Op.PXOR: a ^ b}[Op(op)].astype(np.uint64)
    if op == Op.PNOT:
        return (vals[k[0]] == 0).astype(np.uint64)
    if op == Op.CMP and SORTS[int(T.sort[k[0]])].kind is Kind.BITS:
        md = mods(int(T.aux[i]))
        if md.cmp in ("eq", "ne"):
            cw = _mask(int(sort_widths()[T.sort[k[0]]]))
            eq = (vals[k[0]] & cw) == (vals[k[1]] & cw)
            return (eq if md.cmp == "eq" else ~eq).astype(np.uint64)
    return None


def table_of(T: TermStore, root: int, nodes, leaves: np.ndarray) -> np.ndarray:
    """The values of `root` (uint64) for every assignment of `leaves`' bits, the first leaf in the
    low bits of the assignment index; `nodes` is root's subgraph (sorted)."""
    widths = [int(sort_widths()[s]) for s in T.sort[leaves]]
    count = 1 << sum(widths)
    idx = np.arange(count, dtype=np.uint64)
    vals: dict[int, np.ndarray] = {}
    shift = 0
    for leaf, w in zip(leaves.tolist(), widths):
        vals[leaf] = (idx >> np.uint64(shift)) & _mask(w)
        shift += w
    rows = _Rows(vals)
    for i in list(nodes):
        if i in vals:
            continue
        if int(T.op[i]) == Op.CONST:
            w = int(sort_widths()[T.sort[i]])
            vals[i] = np.full(count, np.uint64(int(T.aux[i]) & ((1 << w) - 1 if w < 64 else (1 << 64) - 1)))
            continue
        got = _fast(T, i, vals)
        vals[i] = got if got is not None else np.asarray(_apply(T, np.array([i]), rows)).reshape(-1)
    return vals[int(root)]
