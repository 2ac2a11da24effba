"""Cross-CTA overlaps decided on numbers (numpy) before Z3, for a grid small enough to list.

For every CTA of the launch and every recorded row of an access class (grid_shadow.py: the lanes'
constants, thread index, offset), the class's address expression is evaluated exactly (grid_expr's
`evaluate`, modulo 2^64 as grid.py's Z3 terms) to the byte range the access touches. A pair of
classes (W, A) none of whose ranges in one CTA meets a range of the other in a different CTA is
apart: the symbolic query for that pair (grid.py, step 3) asks for exactly such two CTAs and rows,
with guards besides, so it is unsat and is not asked. Guards are dropped here (every listed lane
taken as executing), a superset of what runs: "apart" is exact, "meet" only sends the pair on to
Z3. A class whose expression has a leaf without a number here (a summarised loop's iteration, a
size) or whose bytes wrap past 2^64 is left to Z3, as is everything when the grid times the rows
exceeds MAX_ELEMENTS (object arithmetic: about a microsecond per element and operation).
"""

from __future__ import annotations

import numpy as np

from .grid_expr import evaluate

#: Most (CTA, row) byte ranges evaluated, over all classes of one proof.
MAX_ELEMENTS = 1 << 21
#: Most pairs of ranges compared after sorting (ranges that start inside another one).
MAX_CANDIDATES = 1 << 23

_WRAP = 1 << 64


def _ranges(cl, ctas: list[np.ndarray], base: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(start byte offset in the buffer, CTA index) of each (CTA, row) of class `cl`, both flat; None
    when the class has a leaf without a value here or its bytes wrap past 2^64."""
    rows = cl.all_rows()
    nq = rows.shape[1] - 2
    env = {("c", i): ctas[i][:, None] for i in range(3)}
    env.update({("q", k): rows[None, :, k] for k in range(nq)})
    try:
        addr = evaluate(cl.a.addr, env)
    except KeyError:
        return None
    off = (np.broadcast_to(addr, (len(ctas[0]), rows.shape[0])) + rows[None, :, -1].astype(object) - base) % _WRAP
    off = off.ravel()
    if len(off) and max(off) + cl.a.size >= _WRAP:
        return None
    cta = np.repeat(np.arange(len(ctas[0])), rows.shape[0])
    return off.astype(np.uint64), cta


def apart(pairs: list, grid: tuple, stats: dict) -> set:
    """The pairs (id(W), id(A)) of `pairs` ((buffer base, W, A), grid.py) whose byte ranges meet in
    no two different CTAs of `grid` (see the module's doc); the others are left to Z3."""
    classes: dict = {}
    for base, w, a in pairs:
        for cl in (w, a):
            if not cl.loops:
                classes.setdefault(id(cl), (base, cl))
    ctas = [x.ravel() for x in np.indices(grid)]
    if not classes or len(ctas[0]) * sum(cl.all_rows().shape[0] for _, cl in classes.values()) > MAX_ELEMENTS:
        return set()
    by_base: dict = {}
    for key, (base, cl) in classes.items():
        got = _ranges(cl, ctas, base)
        if got is not None:
            by_base.setdefault(base, []).append((key, cl.a.size, *got))
    meet: set = set()
    known: set = set()
    for base, parts in by_base.items():
        start = np.concatenate([p[2] for p in parts])
        end = np.concatenate([p[2] + np.uint64(p[1]) for p in parts])
        cta = np.concatenate([p[3] for p in parts])
        cls = np.concatenate([np.full(len(p[2]), i) for i, p in enumerate(parts)])
        order = np.argsort(start, kind="stable")
        start, end, cta, cls = start[order], end[order], cta[order], cls[order]
        # range i meets every later range j (start_j >= start_i) that starts before range i ends
        last = np.searchsorted(start, end, side="left")
        counts = np.maximum(last - np.arange(len(start)) - 1, 0)
        total = int(counts.sum())
        if total > MAX_CANDIDATES:
            continue
        i = np.repeat(np.arange(len(start)), counts)
        j = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + i + 1
        other = cta[i] != cta[j]
        ids = [p[0] for p in parts]
        for x, y in set(zip(cls[i][other].tolist(), cls[j][other].tolist())):
            meet.update({(ids[x], ids[y]), (ids[y], ids[x])})
        known.update(ids)
    out = {(id(w), id(a)) for _, w, a in pairs if id(w) in known and id(a) in known and (id(w), id(a)) not in meet}
    if out:
        stats["cross_cta_by_numbers"] = len(out)
    return out
