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

Bounds (`in_bounds`): an access class's addresses lie in an interval computed over the whole grid
(each CTA index in [0, grid), each lane column between its least and greatest recorded value, each
summarised loop's iteration in [0, n)), guards dropped: a superset of the accessed bytes. When that
interval lies inside the buffer, grid.py's bounds query (a CTA and a row whose bytes leave the buffer)
is unsat and is not asked. Every interval rule (`_span_of`) holds only where its operation cannot wrap
in its width: grid_expr's operations are PTX's, modulo 2^w (PTX ISA 9.7.1.1-9.7.1.3: add, sub and
mul.lo keep the low n bits of the result, mul.wide the whole product; 9.7.8.8 shl; 9.7.9.21 cvt's sign
extension), so an interval of the exact integers is one of the w-bit values only where no result
leaves [0, 2^w). Where one could, or for an operation or leaf without a rule, the class is left to Z3.
"""

from __future__ import annotations

import numpy as np

from .grid_expr import evaluate

Span = tuple[int, int]  # [lo, hi] of a w-bit value read unsigned, 0 <= lo <= hi < 2^w

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


def _span_of(e: tuple, env: dict, memo: dict) -> Span | None:
    """[lo, hi] containing every value of bit-vector expression `e` (unsigned, at its width) as `env`'s
    leaves ((tag, ident) -> Span) range over their spans; None when an operation could wrap in its
    width, a leaf has no span, or the operation has no rule here (grid.py's Z3 query decides)."""
    key = id(e)
    if key in memo:
        return memo[key]
    out = _span_rule(e, env, memo)
    memo[key] = out
    return out


def _span_rule(e: tuple, env: dict, memo: dict) -> Span | None:
    tag, w = e[0], e[1]
    top = 1 << w if w else 0
    args = [x for x in e[2:] if isinstance(x, tuple)]  # the operands (as grid_expr.evaluate reads them)
    if tag == "k":
        return (e[2], e[2])
    if tag in ("c", "q", "t"):
        got = env.get((tag, e[2]))
        return got if got is not None and got[1] < top else None  # the leaf's values fit its width
    if tag in ("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "udiv", "urem", "sdiv", "srem",
               "umin", "umax", "smin", "smax"):
        if len(args) != 2:
            return None
        x, y = (_span_of(a, env, memo) for a in args)
        if x is None or y is None:
            return None
        if tag in ("ashr", "sdiv", "srem", "smin", "smax"):
            # both operands non-negative as two's complement: the unsigned operation's values
            if max(x[1], y[1]) >> (w - 1):
                return None
            tag = {"ashr": "lshr", "sdiv": "udiv", "srem": "urem", "smin": "umin", "smax": "umax"}[tag]
        (a, b), (c, d) = x, y
        if tag == "add":
            return (a + c, b + d) if b + d < top else None
        if tag == "sub":
            return (a - d, b - c) if a >= d else None
        if tag == "mul":
            return (a * c, b * d) if b * d < top else None
        if tag == "shl":
            return (a << c, b << d) if d < w and b << d < top else None
        if tag == "lshr":
            return (a >> d, b >> c) if d < w else None
        if tag == "and":
            return (0, min(b, d))
        if tag in ("or", "xor"):
            return (max(a, c) if tag == "or" else 0, (1 << max(b, d).bit_length()) - 1)
        if tag == "udiv":
            return (a // d, b // c) if c > 0 else None  # x / 0 is all ones (SMT-LIB, grid_expr.evaluate)
        if tag == "urem":
            return (0, min(b, d - 1)) if c > 0 else None
        if tag == "umin":
            return (min(a, c), min(b, d))
        return (max(a, c), max(b, d))  # umax
    if tag in ("zext", "sext", "trunc", "high"):
        if len(args) != 1:
            return None
        x = _span_of(args[0], env, memo)
        if x is None:
            return None
        if tag == "zext":
            return x
        if tag == "sext":  # the same value where the sign bit is clear throughout, else left to Z3
            return x if args[0][1] and x[1] < 1 << (args[0][1] - 1) else None
        if tag == "trunc":
            return x if x[1] < top else None
        return (x[0] >> w, x[1] >> w) if x[1] >> w < top else None  # high: the upper w bits of a 2w-bit value
    if tag == "ite":  # either branch (the condition is not followed)
        if len(args) != 3:
            return None
        x, y = _span_of(args[1], env, memo), _span_of(args[2], env, memo)
        return (min(x[0], y[0]), max(x[1], y[1])) if x is not None and y is not None else None
    return None


def in_bounds(cl, grid: tuple, base: int, nbytes: int) -> bool:
    """Is every byte class `cl` (grid.py `_Class`) can touch, in any CTA of `grid`, inside the buffer
    [base, base + nbytes)? Shown on intervals (see the module's doc); False: not shown (Z3 decides).
    Only for 64-bit addresses and classes whose loops iterate over [0, n) (no bounds of symbolic
    sizes or %ctaid-dependent trip counts: `cl.bounds`)."""
    a = cl.a
    rows = cl.all_rows()
    if a.addr[1] != 64 or cl.bounds or rows.shape[0] == 0 or any(n < 1 for n in cl.loops.values()):
        return False
    env: dict = {("c", i): (0, int(g) - 1) for i, g in enumerate(grid)}
    env.update({("q", k): (int(rows[:, k].min()), int(rows[:, k].max())) for k in range(rows.shape[1] - 2)})
    env.update({("t", i): (0, int(n) - 1) for i, n in cl.loops.items()})
    span = _span_of(a.addr, env, {})
    if span is None:
        return False
    lo = span[0] + int(rows[:, -1].min())  # plus the lane's offset (64-bit, unsigned)
    hi = span[1] + int(rows[:, -1].max())
    return hi < _WRAP and lo >= base and hi + a.size <= base + nbytes
