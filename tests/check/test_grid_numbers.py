"""The symbolic grid's numeric cross-CTA pre-filter (symexec/check/grid_numbers.py): a pair is called
apart exactly when no byte of one class in one CTA meets a byte of the other in another CTA (checked
against listing every byte), and a pair that meets is left to Z3, which still finds the race."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from symexec import load_program
from symexec.check import check_kernel
from symexec.check.grid import _Class
from symexec.check.grid_numbers import apart
from symexec.check.grid_shadow import Access
from symexec.launch import Launch

REGRESSION = Path(__file__).resolve().parents[1] / "regression"


def _class(pitch: int, stride: int, shift: int, size: int, lanes: int) -> _Class:
    """Bytes c * pitch + q * stride + shift (64-bit) for q = 0 .. lanes - 1: a strided tile per CTA."""
    c = ("zext", 64, ("c", 32, 0))
    q = ("zext", 64, ("q", 32, 0))
    addr = ("add", 64, ("add", 64, ("mul", 64, c, ("k", 64, pitch)), ("mul", 64, q, ("k", 64, stride))),
            ("k", 64, shift))
    rows = np.array([[i, i, 0] for i in range(lanes)], dtype=np.uint64)
    return _Class(Access(pc=0, kind=1, strong=0, buffer=0, size=size, addr=addr, guard=None, rows=rows))


def _bytes(pitch: int, stride: int, shift: int, size: int, lanes: int, cta: int) -> set:
    return {cta * pitch + i * stride + shift + b for i in range(lanes) for b in range(size)}


layout = st.tuples(st.integers(0, 64), st.integers(0, 16), st.integers(0, 24), st.sampled_from([1, 2, 4, 8]),
                   st.integers(1, 6))


@settings(max_examples=150, deadline=None)
@given(layout, layout, st.integers(2, 5))
def test_apart_exactly_when_no_two_ctas_meet(wl, al, ctas: int) -> None:
    w, a = _class(*wl), _class(*al)
    got = apart([(0, w, a)], (ctas, 1, 1), {})
    meets = any(_bytes(*wl, c1) & _bytes(*al, c2) for c1 in range(ctas) for c2 in range(ctas) if c1 != c2)
    assert ((id(w), id(a)) in got) == (not meets)


def test_loop_classes_and_large_grids_left_to_z3() -> None:
    w, a = _class(64, 4, 0, 4, 4), _class(64, 4, 0, 4, 4)
    assert apart([(0, w, a)], (8, 1, 1), {}) == {(id(w), id(a))}
    assert apart([(0, w, a)], (1 << 20, 1, 1), {}) == set()  # too many ranges to list: Z3 decides
    w.loops = {3: 16}  # a summarised loop's iteration t has no value here
    assert apart([(0, w, a)], (8, 1, 1), {}) == set()


def _check(name: str):
    path = REGRESSION / f"{name}.ptx"
    prog = load_program(ptx_parser.parse(path.read_text(), str(path)))
    launch = Launch((8,), (32,), {"out": np.zeros(264, np.int32)}, ["out"])
    return check_kernel(prog, launch, grid="symbolic")


def test_interleaved_ctas_proved_on_numbers() -> None:
    r = _check("grid_numbers_interleaved_ok")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert r.stats["cross_cta_by_numbers"] >= 1, r.stats


def test_interleaved_neighbour_race_still_found() -> None:
    r = _check("grid_numbers_interleaved_neighbour_race")
    assert r.verdict == "race", r.findings
    assert r.stats["grid_method"] == "symbolic (Z3 overlap validated on two concrete CTAs)", r.stats
