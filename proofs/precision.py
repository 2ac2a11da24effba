"""The precision check: does the candidate round to a narrower format than the reference?

Real-arithmetic equivalence cannot see rounding: an fp16 accumulation and an fp32 one have the same
normal form. Beside it, for every output element proved equal (or not), this check takes the
narrowest rounding on the way to the element in each kernel: the significand bits (precision) of
the format of every operation that rounds (add, mul, fma, mma accumulation, div, ex2, ...) and of
every narrowing float conversion; the conversions at the very end of the expression (the output's
own format, the same for both) do not count. A candidate whose narrowest rounding is narrower than
the reference's (fp16 or bf16 accumulation where the reference accumulates in fp32, an fp32
intermediate dropped to bf16) is reported; its elements are suspects for the witness search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.formats import FORMATS, get_format
from semantics.terms import CONCRETE, ROUNDING, SORTS, Kind, Op, TermStore, mods

__all__ = ["PrecisionFinding", "precision_findings", "narrowest"]

_NONE = 1 << 30  # no rounding on the way


@dataclass
class PrecisionFinding:
    buffer: str
    elements: np.ndarray
    candidate_bits: int
    reference_bits: int
    candidate_format: str
    reference_format: str

    def describe(self) -> str:
        return (f"precision: {self.elements.size} element(s) of {self.buffer} are rounded to {self.candidate_format} "
                f"({self.candidate_bits}-bit significand) in the candidate where the reference's narrowest rounding is "
                f"{self.reference_format} ({self.reference_bits} bits); real-arithmetic equivalence cannot see this")


#: A rounding as one sortable number: significand bits << 8 | the format's index (the narrowest
#: rounding is the smallest key; formats of one precision, tf32 and f16, ordered by FORMATS).
_FMT_NAMES = list(FORMATS)
_NONE_KEY = _NONE << 8


def _key(fmt: str) -> int:
    return get_format(fmt).precision << 8 | _FMT_NAMES.index(get_format(fmt).name)


def _own_keys(T: TermStore, nodes: np.ndarray) -> np.ndarray:
    """Per node, the key of the rounding it performs itself, or _NONE_KEY: an operation that rounds
    (ROUNDING) to its float sort's format, or a float conversion to a narrower format."""
    sort_key = np.array([_key(s.fmt) if s.kind is Kind.FLOAT else _NONE_KEY for s in SORTS], np.int64)
    rounds = np.zeros(256, bool)
    rounds[[int(o) for o in ROUNDING]] = True
    ops, sorts = T.op[nodes], T.sort[nodes].astype(np.int64)
    keys = np.where(rounds[ops], sort_key[sorts], _NONE_KEY)
    # f32 bits read as .tf32 (a wgmma .tf32 operand drops their low 13 bits, PTX 9.7.15.5.2): a tf32 rounding
    tf32 = _FMT_NAMES.index("tf32")
    keys = np.where((ops == Op.FLOAT) & ((sort_key[sorts] & 0xFF) == tf32) & (sort_key[sorts] != _NONE_KEY),
                    sort_key[sorts], keys)
    cvt = np.nonzero((ops == Op.CVT) & (sort_key[sorts] != _NONE_KEY))[0]
    if cvt.size:
        auxes, inv = np.unique(T.aux[nodes[cvt]], return_inverse=True)
        narrowing = np.full(auxes.size, _NONE_KEY, np.int64)
        for j, a in enumerate(auxes.tolist()):
            dst, src = mods(a).elems
            if not (src[0] in "bus" and src[1:].isdigit()) and get_format(dst).precision < get_format(src).precision:
                narrowing[j] = _key(dst)
        keys[cvt] = narrowing[inv.reshape(-1)]
    return keys


def narrowest(T: TermStore, roots: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per root: the narrowest rounding (significand bits, format) below its final conversions."""
    from semantics.termeval import subgraph

    roots = np.asarray(roots, np.int64)
    if not roots.size:
        return np.zeros(0, np.int64), []
    # strip the conversions at the top: the output format's own rounding, common to both kernels
    start = roots.copy()
    for _ in range(4):
        is_cvt = (T.op[start] == Op.CVT) & (T.sort[start] != 0)
        if not is_cvt.any():
            break
        kids = T.kid(start[is_cvt], 0)
        float_kid = np.array([SORTS[int(s)].kind is Kind.FLOAT for s in T.sort[kids]], bool)
        idx = np.nonzero(is_cvt)[0][float_kid]
        if not idx.size:
            break
        start[idx] = kids[float_kid]
    # a node's narrowest is the least key of its own and its children's (ids ascend children first);
    # a node whose own key is the least of the whole subgraph, or that has no children, has its own
    nodes = subgraph(T, start)
    own = _own_keys(T, nodes)
    nk = T.nkids[nodes].astype(np.int64)
    ends = np.cumsum(nk)
    flat = T._kids.a[np.repeat(T._off.a[nodes] - ends + nk, nk) + np.arange(int(ends[-1]) if ends.size else 0)]
    kid_at = np.searchsorted(nodes, flat).tolist()  # children as positions in `nodes`
    val = own.tolist()
    ends_l, starts_l = ends.tolist(), (ends - nk).tolist()
    for j in np.nonzero((own > own.min()) & (nk > 0))[0].tolist():
        best = val[j]
        for q in range(starts_l[j], ends_l[j]):
            v = val[kid_at[q]]
            if v < best:
                best = v
        val[j] = best
    got = np.array(val, np.int64)[np.searchsorted(nodes, start)]
    bits = got >> 8
    fmts = ["" if g == _NONE_KEY else _FMT_NAMES[g & 0xFF] for g in got.tolist()]
    return bits, fmts


def precision_findings(report) -> list[PrecisionFinding]:
    """Elements where the candidate rounds more narrowly than the reference (proofs.prove's report).
    One pass of `narrowest` over the roots of every buffer of both kernels: their DAGs overlap (a
    normalised matrix's every element reads the same norms)."""
    T = report.store
    cand, ref = report.sides["candidate"], report.sides["reference"]
    todo = []  # (name, elements, sym, member, rep_at, own, candidate roots, reference roots)
    for name, c in cand.outputs.items():
        r = ref.outputs.get(name)
        if r is None:
            continue
        both, ci, ri = np.intersect1d(c.elements, r.elements, return_indices=True)
        ct, rt = c.terms[ci], r.terms[ri]
        sym = (ct != CONCRETE) & (rt != CONCRETE) & (ct != rt)
        if not sym.any():
            continue
        # an instance of another element (proofs/instances.py: the same terms over renamed inputs)
        # rounds exactly as that element does: take its answer
        member = np.zeros(both.size, bool)
        rep_at = np.zeros(0, np.int64)
        inst = report.result.instance_of.get(name) if report.result is not None else None
        if inst is not None and inst.size == both.size:
            member = sym & (inst >= 0)
            rep_at = np.searchsorted(both, inst[member])
            usable = (sym & ~member)[rep_at]
            member[np.nonzero(member)[0][~usable]] = False
            rep_at = rep_at[usable]
        own = sym & ~member
        todo.append((name, both, sym, member, rep_at, own, ct[own], rt[own]))
    if not todo:
        return []
    bits, fmts = narrowest(T, np.concatenate([x for t in todo for x in t[6:]]))
    out = []
    at = 0
    for name, both, sym, member, rep_at, own, c_roots, r_roots in todo:
        cb = np.full(both.size, _NONE, np.int64)
        rb = np.full(both.size, _NONE, np.int64)
        cf = np.full(both.size, "", object)
        rf = np.full(both.size, "", object)
        for b, f, n in ((cb, cf, c_roots.size), (rb, rf, r_roots.size)):
            b[own] = bits[at:at + n]
            f[own] = fmts[at:at + n]
            at += n
        for a in (cb, rb, cf, rf):
            a[member] = a[rep_at]
        worse = sym & (cb < rb)
        if worse.any():
            k = int(np.argmax(worse))
            out.append(PrecisionFinding(name, both[worse], int(cb[k]), int(rb[k]), cf[k] or "?",
                                        rf[k] or "exact (no rounding)"))
    return out
