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

from semantics.formats import get_format
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


def _own(T: TermStore, i: int) -> tuple[int, str]:
    """(significand bits, format) of the rounding node i performs, or (_NONE, "")."""
    op = int(T.op[i])
    s = SORTS[int(T.sort[i])]
    if s.kind is not Kind.FLOAT:
        return _NONE, ""
    if op in ROUNDING:
        return get_format(s.fmt).precision, s.fmt
    if op == Op.CVT:
        dst, src = mods(int(T.aux[i])).elems
        if src[0] in "bus" and src[1:].isdigit():
            return _NONE, ""
        if get_format(dst).precision < get_format(src).precision:
            return get_format(dst).precision, dst
    return _NONE, ""


def narrowest(T: TermStore, roots: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per root: the narrowest rounding (significand bits, format) below its final conversions."""
    from semantics.termeval import subgraph

    roots = np.asarray(roots, np.int64)
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
    nodes = subgraph(T, start)
    prec: dict[int, tuple[int, str]] = {}
    ops = T.op[nodes].tolist()
    nk = T.nkids[nodes].astype(np.int64)
    flat = T._kids.a[np.repeat(T._off.a[nodes] - np.cumsum(nk) + nk, nk) + np.arange(int(nk.sum()))].tolist()
    ends = np.cumsum(nk).tolist()
    s = 0
    for j, i in enumerate(nodes.tolist()):
        best = _own(T, i) if ops[j] in ROUNDING or ops[j] == Op.CVT else (_NONE, "")
        for k in flat[s:ends[j]]:
            p = prec[k]
            if p[0] < best[0]:
                best = p
        s = ends[j]
        prec[i] = best
    bits = np.array([prec[int(r)][0] for r in start], np.int64)
    fmts = [prec[int(r)][1] for r in start]
    return bits, fmts


def precision_findings(report) -> list[PrecisionFinding]:
    """Elements where the candidate rounds more narrowly than the reference (proofs.prove's report)."""
    T = report.store
    out = []
    cand, ref = report.sides["candidate"], report.sides["reference"]
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
        cb = np.full(both.size, _NONE, np.int64)
        rb = np.full(both.size, _NONE, np.int64)
        cf = np.full(both.size, "", object)
        rf = np.full(both.size, "", object)
        cb[own], cf[own] = narrowest(T, ct[own])
        rb[own], rf[own] = narrowest(T, rt[own])
        for a in (cb, rb, cf, rf):
            a[member] = a[rep_at]
        worse = sym & (cb < rb)
        if worse.any():
            k = int(np.argmax(worse))
            out.append(PrecisionFinding(name, both[worse], int(cb[k]), int(rb[k]), cf[k] or "?",
                                        rf[k] or "exact (no rounding)"))
    return out
