"""The symbolic grid's slice argument (grid.py `_refute_by_slices`): a buffer of B bytes split into one
slice of S = B // n bytes per CTA (by linear CTA index); when every class of the buffer keeps to its
CTA's slice in every CTA, no two CTAs meet and its pairs are refuted. Checked against listing every
byte: a refuted pair never meets in two different CTAs; a class that leaves its slice refutes
nothing, and the race in the regression twin is still found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from symexec import load_program
from symexec.check import check_kernel
from symexec.check.grid import _Class, _refute_by_slices
from symexec.check.grid_shadow import Access
from symexec.launch import Launch

REGRESSION = Path(__file__).resolve().parents[1] / "regression"


@dataclass
class _Alloc:
    base: int
    size: int


def _class(pitch: int, stride: int, shift: int, size: int, lanes: int, kind: int = 1) -> _Class:
    """Bytes c * pitch + q * stride + shift (64-bit) for q = 0 .. lanes - 1: a strided tile per CTA."""
    c = ("zext", 64, ("c", 32, 0))
    q = ("zext", 64, ("q", 32, 0))
    addr = ("add", 64, ("add", 64, ("mul", 64, c, ("k", 64, pitch)), ("mul", 64, q, ("k", 64, stride))),
            ("k", 64, shift))
    rows = np.array([[i, i, 0] for i in range(lanes)], dtype=np.uint64)
    return _Class(Access(pc=0, kind=kind, strong=0, buffer=0, size=size, addr=addr, guard=None, rows=rows))


def _bytes(pitch: int, stride: int, shift: int, size: int, lanes: int, cta: int) -> set:
    return {cta * pitch + i * stride + shift + b for i in range(lanes) for b in range(size)}


def _launch(ctas: int) -> Launch:
    return Launch((ctas,), (32,), {}, [])


layout = st.tuples(st.sampled_from([24, 32, 40, 48]), st.integers(0, 12), st.integers(0, 24),
                   st.sampled_from([1, 2, 4, 8]), st.integers(1, 4))


@settings(max_examples=60, deadline=None)
@given(layout, layout, st.integers(2, 5), st.sampled_from([24, 32, 40, 48]))
def test_refuted_only_when_no_two_ctas_meet(wl, al, ctas: int, piece: int) -> None:
    w, a = _class(*wl), _class(*al, kind=0)
    got = _refute_by_slices([(0, w, a)], _launch(ctas), None, {}, [_Alloc(0, piece * ctas)], {"z3_queries": 0})
    meets = any(_bytes(*wl, c1) & _bytes(*al, c2) for c1 in range(ctas) for c2 in range(ctas) if c1 != c2)
    if (id(w), id(a)) in got:
        assert not meets
        # and the reason holds: every byte of both classes in its CTA's slice
        for c in range(ctas):
            for lay in (wl, al):
                assert all(c * piece <= b < (c + 1) * piece for b in _bytes(*lay, c))


def test_slices_refute_and_leaving_one_refutes_nothing() -> None:
    stats = {"z3_queries": 0}
    w, a = _class(64, 4, 0, 4, 16), _class(64, 4, 0, 4, 16, kind=0)  # bytes [64c, 64c + 64)
    assert _refute_by_slices([(0, w, a)], _launch(8), None, {}, [_Alloc(0, 512)], stats) == {(id(w), id(a))}
    assert stats["cross_cta_by_slices"] == 1
    w.loops = {3: 4}  # a summarised loop that is not in the address: its t changes nothing
    assert _refute_by_slices([(0, w, a)], _launch(8), None, {}, [_Alloc(0, 512)], {"z3_queries": 0})
    far = _class(64, 4, 4, 4, 16, kind=0)  # one lane's 4 bytes in the next CTA's slice
    assert _refute_by_slices([(0, w, far)], _launch(8), None, {}, [_Alloc(0, 512)], {"z3_queries": 0}) == set()
    # a buffer with fewer bytes than one access per CTA: no slices
    assert _refute_by_slices([(0, w, a)], _launch(8), None, {}, [_Alloc(0, 24)], {"z3_queries": 0}) == set()


def test_summarised_iterations_leaving_the_slice_refute_nothing() -> None:
    """t, a summarised loop's iteration in [0, n): its last iterations leave the slice (the numbers at
    t = n - 1 say so before Z3 is asked) or, with the probe at both ends in the slice, Z3 finds one."""
    c = ("zext", 64, ("c", 32, 0))
    t = ("t", 64, 7)
    rows = np.array([[0, 0]], dtype=np.uint64)
    mk = lambda k, n: _Class(Access(pc=0, kind=1, strong=0, buffer=0, size=4, rows=rows, guard=None,  # noqa: E731
                                    addr=("add", 64, ("mul", 64, c, ("k", 64, 64)), ("mul", 64, t, ("k", 64, k)))),
                             {7: n})
    ok, wide = mk(4, 16), mk(8, 16)  # t * 4 < 64 for t < 16; t * 8 reaches 120
    assert _refute_by_slices([(0, ok, ok)], _launch(4), None, {}, [_Alloc(0, 256)], {"z3_queries": 0})
    assert _refute_by_slices([(0, wide, wide)], _launch(4), None, {}, [_Alloc(0, 256)], {"z3_queries": 0}) == set()


def _check(name: str, grid: int, n: int):
    path = REGRESSION / f"{name}.ptx"
    prog = load_program(ptx_parser.parse(path.read_text(), str(path)))
    out = np.zeros(grid * 6 * n * 64, np.float32)
    launch = Launch((grid,), (64,), {"out": out}, ["out", n])
    return check_kernel(prog, launch, grid="symbolic")


def test_nested_loop_slices_proved() -> None:
    r = _check("grid_slices_nested_loop_ok", 16, 32)
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert r.stats["cross_cta_by_slices"] == 1, r.stats


def test_nested_loop_short_pitch_race_still_found() -> None:
    r = _check("grid_slices_nested_loop_pitch_short_race", 16, 32)
    assert r.verdict == "race", r.findings
    assert "cross_cta_by_slices" not in r.stats, r.stats
