"""The symbolic grid's bounds on intervals (symexec/check/grid_numbers.py `in_bounds`, `_span_of`): the
interval of an expression holds its value (grid_expr.evaluate, the semantics of grid.py's Z3 terms) at
every point of its leaves' ranges, wrapping operations included (they get no interval), and a class is
called in bounds only when every byte of every CTA, row and iteration, listed, is inside the buffer."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.grid import _Class
from symexec.check.grid_expr import evaluate
from symexec.check.grid_numbers import _span_of, in_bounds
from symexec.check.grid_shadow import Access
from volta.check_cli import check_file

_BIN = ("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "udiv", "urem", "sdiv", "srem",
        "umin", "umax", "smin", "smax")


def _const(draw, w: int) -> tuple:
    v = draw(st.one_of(st.integers(0, 64), st.integers(0, (1 << w) - 1), st.integers((1 << w) - 8, (1 << w) - 1)))
    return ("k", w, v)


@st.composite
def exprs(draw, w: int, depth: int = 4) -> tuple:
    """A bit-vector expression of width w (32 or 64) over the leaves c0..c2 (32-bit), q0..q2 and t0."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(["c", "q", "t", "k"]))
        if kind == "c":
            c = ("c", 32, draw(st.integers(0, 2)))
            return c if w == 32 else ("zext", 64, c)
        if kind in ("q", "t"):
            return (kind, w, draw(st.integers(0, 2)) if kind == "q" else 0)
        return _const(draw, w)
    op = draw(st.sampled_from(_BIN + ("ext", "trunc", "high", "ite")))
    if op == "ext":
        x = draw(exprs(32, depth - 1))
        return (draw(st.sampled_from(["zext", "sext"])), 64, x) if w == 64 else x
    if op == "trunc":
        return ("trunc", 32, draw(exprs(64, depth - 1))) if w == 32 else draw(exprs(64, depth - 1))
    if op == "high":
        return ("high", 32, draw(exprs(64, depth - 1))) if w == 32 else draw(exprs(64, depth - 1))
    if op == "ite":
        cond = ("cmp", 0, draw(st.sampled_from(["ult", "slt", "eq"])), draw(exprs(w, 1)), draw(exprs(w, 1)))
        return ("ite", w, cond, draw(exprs(w, depth - 1)), draw(exprs(w, depth - 1)))
    return (op, w, draw(exprs(w, depth - 1)), draw(exprs(w, depth - 1)))


@st.composite
def ranges(draw) -> dict:
    """Leaf ranges: the grid, three lane columns (32 or 64 bits wide leaves read them below 2^32) and a loop."""
    out = {("c", i): (0, draw(st.integers(0, 300))) for i in range(3)}
    for k in range(3):
        lo = draw(st.one_of(st.integers(0, 1 << 12), st.integers(0, (1 << 32) - 1)))
        out[("q", k)] = (lo, min(lo + draw(st.integers(0, 1 << 12)), (1 << 32) - 1))
    out[("t", 0)] = (0, draw(st.integers(0, 100)))
    return out


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([32, 64]).flatmap(lambda w: exprs(w)), ranges(), st.randoms(use_true_random=False))
def test_interval_holds_the_value_at_every_point(e: tuple, env: dict, rnd) -> None:
    span = _span_of(e, env, {})
    if span is None:
        return  # no interval: grid.py asks Z3, as before
    lo, hi = span
    assert 0 <= lo <= hi < 1 << e[1]
    for _ in range(24):  # the corners and random points inside every leaf's range
        point = {k: rnd.choice([a, b, rnd.randint(a, b)]) for k, (a, b) in env.items()}
        v = int(evaluate(e, {k: np.uint64(x) for k, x in point.items()}))
        assert lo <= v <= hi, (e, point, v, span)


def test_wrapping_operations_get_no_interval() -> None:
    c, q = ("c", 32, 0), ("q", 32, 0)
    env = {("c", 0): (0, 1 << 20), ("q", 0): (0, 31)}
    assert _span_of(("mul", 32, c, ("k", 32, 1 << 12)), env, {}) is None  # 2^32 and past: wraps
    assert _span_of(("mul", 32, c, ("k", 32, 1 << 11)), env, {}) == (0, 1 << 31)
    assert _span_of(("sub", 32, q, ("k", 32, 1)), env, {}) is None  # q = 0 wraps below zero
    assert _span_of(("sext", 64, ("mul", 32, c, ("k", 32, 1 << 11))), env, {}) is None  # the sign bit may be set
    assert _span_of(("shl", 32, q, ("k", 32, 32)), env, {}) is None
    assert _span_of(("trunc", 32, ("zext", 64, q)), env, {}) == (0, 31)
    assert _span_of(("udiv", 32, q, q), env, {}) is None  # q = 0: all ones, not an interval of the quotient


def _class(addr: tuple, lanes: int, size: int, loops: dict | None = None) -> _Class:
    rows = np.array([[i, i, 0] for i in range(lanes)], dtype=np.uint64)
    return _Class(Access(pc=0, kind=1, strong=0, buffer=0, size=size, addr=addr, guard=None, rows=rows),
                  loops or {})


def _strided(base: int, pitch: int, stride: int, step: int, shift: int) -> tuple:
    """base + c * pitch + q * stride + t * step + shift (64-bit)."""
    c = ("zext", 64, ("c", 32, 0))
    q = ("zext", 64, ("q", 32, 0))
    t = ("t", 64, 0)
    return ("add", 64, ("add", 64, ("add", 64, ("add", 64, ("k", 64, base), ("mul", 64, c, ("k", 64, pitch))),
                                    ("mul", 64, q, ("k", 64, stride))), ("mul", 64, t, ("k", 64, step))),
            ("k", 64, shift))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 64), st.integers(0, 16), st.integers(0, 64), st.integers(-8, 24), st.sampled_from([1, 2, 4, 8]),
       st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2048))
def test_in_bounds_only_when_every_byte_is_inside(pitch, stride, step, shift, size, lanes, ctas, trips, nbytes) -> None:
    base = 1 << 20
    cl = _class(_strided(base, pitch, stride, step, shift % (1 << 64)), lanes, size, {0: trips})
    got = in_bounds(cl, (ctas, 1, 1), base, nbytes)
    every = all(0 <= c * pitch + q * stride + t * step + shift and c * pitch + q * stride + t * step + shift + size
                <= nbytes for c, q, t in itertools.product(range(ctas), range(lanes), range(trips)))
    if got:
        assert every
    if shift >= 0:  # no wrap anywhere: the interval is exact at its ends, so it shows every in-bounds class
        assert got == every


def test_in_bounds_refuses_what_it_cannot_follow() -> None:
    base = 1 << 20
    assert not in_bounds(_class(_strided(base, 64, 4, 0, 0), 16, 4), (4, 1, 1), base, 256)  # t without a range
    cl = _class(_strided(base, 64, 4, 0, 0), 16, 4, {0: 3})
    assert in_bounds(cl, (4, 1, 1), base, 256)
    assert not in_bounds(cl, (5, 1, 1), base, 256)  # CTA 4's bytes are past the end
    cl.bounds = {0: object()}  # a loop bounded by the sizes or by %ctaid (grid.py _Trips): left to Z3
    assert not in_bounds(cl, (4, 1, 1), base, 256)
    low = _class(("add", 32, ("k", 32, 64), ("c", 32, 0)), 1, 4)  # a 32-bit address
    assert not in_bounds(low, (4, 1, 1), 0, 1 << 20)
    size = _class(("add", 64, ("k", 64, base), ("s", 64, "N")), 1, 4)  # a size: no range here
    assert not in_bounds(size, (1, 1, 1), base, 1 << 20)


REGRESSION = Path(__file__).resolve().parents[1] / "regression"


def test_loop_bounds_shown_on_numbers_and_a_middle_cta_still_found(monkeypatch) -> None:
    """The regression pair: every class of the grid-strided loop (a summarised iteration among its leaves
    for some) is shown in bounds on intervals; in the twin, CTA 37's store leaves its interval's buffer,
    goes to Z3 and is shown by CTA 37's concrete run."""
    from symexec.check import grid
    shown: list = []

    def spy(cl, *args):
        ok = in_bounds(cl, *args)
        if ok:
            shown.append(dict(cl.loops))
        return ok
    monkeypatch.setattr(grid, "in_bounds", spy)
    r = check_file(REGRESSION / "bounds_by_numbers_loop_ok.ptx")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert r.stats["bounds_by_numbers"] == r.stats["access_classes"] == len(shown), r.stats
    assert any(shown), shown  # a class with a summarised loop's iteration
    r = check_file(REGRESSION / "bounds_by_numbers_loop_middle_cta_oob.ptx")
    assert r.verdict == "out_of_bounds", r.verdict
    assert r.stats["grid_method"] == "symbolic (bounds witness validated concretely)", r.stats
    assert {s.cta for f in r.findings for s in f.sites} == {(37, 0, 0)}
