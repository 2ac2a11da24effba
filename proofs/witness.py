"""Counterexamples: an input on which the two kernels' outputs differ beyond the tolerance.

The proof leaves *suspects* (elements not shown equal). For each input draw (the contract's
distributions and seeds, a few patterns that expose rounding), the suspects' output terms of both
kernels are evaluated bit for bit (semantics.termeval: the emulator's arithmetic) - far cheaper
than running the kernels. The first element outside the tolerance is then *replayed*: both kernels
run on the emulator with that draw, and the witness stands only if the emulated outputs differ
there as predicted. A suspect that no draw separates stays a suspect (the verdict is then
`inconclusive`, never `not_equivalent` without a replayed input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from semantics.errors import OutsideFormat
from semantics.formats import decode
from semantics.termeval import evaluate
from semantics.terms import CONCRETE, SORTS, Kind, TermStore, sort_widths
from symexec import Launch, check_time_limit, run_kernel
from symexec.paged import PagedArray, byte_fill

from .equivalence import Side, Suspect
from .prove import KernelUnderTest

__all__ = ["Draw", "Tolerance", "Witness", "search", "replay"]


@dataclass
class Draw:
    """One assignment of the input buffers (device bytes: numpy arrays or paged sources)."""

    label: str  # how to reproduce it, e.g. "contract inputs: distribution normal, seed 2"
    buffers: dict[str, object]
    #: per output buffer, flat by element: the magnitude the contract judges errors against on this
    #: draw (its reference applied to |inputs|: a sum's error is bounded by the sum of |terms|, not by
    #: |sum|, which cancellation makes small); a buffer without one is judged against |reference|
    scale: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float

    def allowed(self, ref: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        """atol + rtol * magnitude: the draw's error scale where the contract gives one, else |ref|."""
        mag = np.abs(np.asarray(ref if scale is None else scale, np.float64))
        return self.atol + self.rtol * mag

    def bad(self, cand: np.ndarray, ref: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        """Elements outside |c - r| <= allowed(r, scale) (NaN and infinities must match)."""
        c, r = np.asarray(cand, np.float64), np.asarray(ref, np.float64)
        nan_c, nan_r = np.isnan(c), np.isnan(r)
        out = nan_c != nan_r
        inf = (np.isinf(c) | np.isinf(r)) & ~(nan_c | nan_r)
        out |= inf & ~(np.isinf(c) & np.isinf(r) & (np.sign(c) == np.sign(r)))
        fin = ~(nan_c | nan_r | np.isinf(c) | np.isinf(r))
        with np.errstate(invalid="ignore", over="ignore"):
            out |= fin & (np.abs(c - r) > self.allowed(r, scale))
        return out


@dataclass
class Witness:
    draw: str
    buffer: str
    element: int
    candidate: float
    reference: float
    allowed: float
    replayed: bool
    why: str = ""
    depends_on: list[tuple[str, int, float]] = field(default_factory=list)  # a few inputs and their values
    draws_tried: int = 0

    def describe(self) -> str:
        ins = ", ".join(f"{b}[{e}] = {v:.6g}" for b, e, v in self.depends_on[:6])
        return (f"{self.buffer}[{self.element}]: candidate {self.candidate:.9g}, reference {self.reference:.9g} "
                f"(allowed difference {self.allowed:.3g}) on {self.draw}"
                + ("; replayed in the emulator" if self.replayed else "; NOT confirmed by replay")
                + (f"; it depends on {ins}" if ins else ""))


def _leaf(draw: Draw, fallback: dict[str, object]) -> Callable:
    pages: dict[str, PagedArray] = {}

    def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
        pa = pages.get(buf)
        if pa is None:
            src = draw.buffers.get(buf, fallback.get(buf))
            pa = pages[buf] = PagedArray(src.nbytes, np.uint8, byte_fill(src))
        eb = int(sort_widths()[sort]) // 8
        raw = pa[np.asarray(elems, np.int64)[:, None] * eb + np.arange(eb)]
        return np.ascontiguousarray(raw).view(f"<u{eb}").reshape(-1).astype(np.uint64)

    return leaf


def values(sort: int, bits: np.ndarray) -> np.ndarray:
    """Bits of one buffer element sort as float64 values (integers by their value)."""
    s = SORTS[sort]
    b = np.asarray(bits, np.uint64)
    if s.kind is Kind.FLOAT:
        return decode(b.astype(s.format.dtype), s.format).astype(np.float64)
    w = s.width
    return (b & np.uint64((1 << w) - 1 if w < 64 else 0xFFFFFFFFFFFFFFFF)).astype(np.float64)


def _initial(k: KernelUnderTest, draw: Draw, buffer: str, elems: np.ndarray, eb: int) -> np.ndarray:
    src = draw.buffers.get(buffer, k.launch.buffers.get(buffer))
    pa = PagedArray(src.nbytes, np.uint8, byte_fill(src))
    raw = pa[elems[:, None] * eb + np.arange(eb)]
    return np.ascontiguousarray(raw).view(f"<u{eb}").reshape(-1).astype(np.uint64)


def _final_bits(T: TermStore, side: Side, k: KernelUnderTest, draw: Draw, buffer: str, elems: np.ndarray,
                leaf) -> np.ndarray:
    """Bits of `elems` of `buffer` after the kernel, on `draw`, from the terms (its initial bytes
    where the kernel did not write them)."""
    info = k.buffers[buffer]
    out = _initial(k, draw, buffer, elems, info.elem_bytes)
    o = side.outputs.get(buffer)
    if o is None:
        return out
    pos = np.searchsorted(o.elements, elems)
    pos = np.minimum(pos, max(o.elements.size - 1, 0))
    written = (o.elements.size > 0) & (o.elements[pos] == elems) if o.elements.size else np.zeros(elems.size, bool)
    terms = o.terms[pos]
    conc = written & (terms == CONCRETE)
    out[conc] = o.bits[pos][conc].astype(np.uint64)
    sym = written & (terms != CONCRETE)
    if sym.any():
        out[sym] = evaluate(T, terms[sym], leaf)
    return out


def search(T: TermStore, cand: tuple[KernelUnderTest, Side], ref: tuple[KernelUnderTest, Side],
           suspects: dict[str, np.ndarray], draws: Iterable[Draw], tolerance: Callable[[str], Tolerance],
           max_draws: int = 24) -> Witness | None:
    """The first draw (in order) on which a suspect element differs beyond the tolerance, replayed."""
    (ck, cs), (rk, rs) = cand, ref
    tried = 0
    for draw in draws:
        tried += 1
        if tried > max_draws:
            break
        leaf = _leaf(draw, ck.launch.buffers)
        for buffer, elems in suspects.items():
            check_time_limit("searching for a counterexample among the unproved elements")
            elems = np.unique(np.asarray(elems, np.int64))
            info = ck.buffers.get(buffer) or rk.buffers[buffer]
            try:
                cb = _final_bits(T, cs, ck, draw, buffer, elems, leaf)
                rb = _final_bits(T, rs, rk, draw, buffer, elems, leaf)
            except Exception:  # an opaque term: no prediction; the replay decides
                cb = rb = None
            if cb is None:
                bad_idx = elems[:1]
            else:
                cv, rv = values(info.sort, cb), values(info.sort, rb)
                scale = draw.scale.get(buffer)
                bad = tolerance(buffer).bad(cv, rv, None if scale is None else scale[elems])
                if not bad.any():
                    continue
                bad_idx = elems[np.nonzero(bad)[0][:1]]
            e = int(bad_idx[0])
            try:
                w = replay(ck, rk, draw, buffer, e, tolerance(buffer))
            except OutsideFormat:  # the draw holds an operand the format (and the proof) excludes
                break
            if w is not None:
                w.draws_tried = tried
                w.depends_on = _dependencies(T, cs, rs, buffer, e, leaf)
                return w
    return None


def replay(cand: KernelUnderTest, ref: KernelUnderTest, draw: Draw, buffer: str, element: int,
           tol: Tolerance) -> Witness | None:
    """Run both kernels on the emulator with `draw`; a witness if `buffer[element]` differs."""
    vals = []
    for k in (cand, ref):
        launch = Launch(k.launch.grid, k.launch.block,
                        {n: draw.buffers.get(n, b) for n, b in k.launch.buffers.items()}, list(k.launch.params),
                        k.launch.dynamic_shared_bytes, k.launch.kernel, k.launch.cluster)
        glob, _, _ = run_kernel(k.prog, launch)
        info = k.buffers[buffer]
        eb = info.elem_bytes
        raw = glob.by_name(buffer).store[np.arange(element * eb, element * eb + eb)]
        vals.append(values(info.sort, np.ascontiguousarray(raw).view(f"<u{eb}").astype(np.uint64))[0])
    c, r = vals
    scale = draw.scale.get(buffer)
    s = None if scale is None else scale[[element]]
    if not tol.bad(np.array([c]), np.array([r]), s)[0]:
        return None
    return Witness(draw.label, buffer, element, float(c), float(r), float(tol.allowed(np.array([r]), s)[0]), True)


def _dependencies(T: TermStore, cs: Side, rs: Side, buffer: str, e: int, leaf) -> list[tuple[str, int, float]]:
    """A few input elements the element's terms read, with their values in the draw."""
    from semantics.termeval import subgraph
    from semantics.terms import Op

    roots = []
    for side in (cs, rs):
        o = side.outputs.get(buffer)
        if o is not None:
            i = np.searchsorted(o.elements, e)
            if i < o.elements.size and o.elements[i] == e and o.terms[i] != CONCRETE:
                roots.append(int(o.terms[i]))
    if not roots:
        return []
    nodes = subgraph(T, np.array(roots))
    leaves = nodes[T.op[nodes] == Op.INPUT][:6]
    out = []
    for i in leaves.tolist():
        name, elem = T.input_name(int(T.aux[i]))
        bits = leaf(name, np.array([elem]), int(T.sort[i]))
        out.append((name, elem, float(values(int(T.sort[i]), bits)[0])))
    return out


def suspects_by_buffer(suspects: list[Suspect], obligations) -> dict[str, np.ndarray]:
    """Every suspect element (not only the few described), from the obligations' codes and the
    elements written by one side only."""
    out: dict[str, list] = {}
    for s in suspects:
        out.setdefault(s.buffer, []).append(s.element)
    for name, elems, _, _, codes in obligations:
        bad = elems[codes < 0]
        if bad.size:
            out.setdefault(name, []).extend(bad.tolist())
    return {k: np.unique(np.array(v, np.int64)) for k, v in out.items()}
