"""The term shadow follows tensor copies (cp.async.bulk.tensor, PTX ISA 9.7.9.25.5.2, tiled mode
5.5.3): each byte of the box moves between its global address and its (swizzled, 5.5.7) shared
address as the emulator moves it (symexec.tma's byte order, told to observers as a CopyLayout);
out-of-bounds elements are zero-filled on load (the constant 0) and not written on store.

Differential against the emulator: the kernels of tests/emulator/test_tma.py run once with the term
shadow; every output element's term, evaluated on a second, independent input, must be the bits the
emulator computes from that input."""

from __future__ import annotations

import numpy as np
import pytest

from ptx_parser import parse
from semantics.termeval import evaluate
from semantics.terms import CONCRETE, TermStore, sort_of_type
from symexec import load_program, run_kernel
from symexec.check.run import run_checked
from symexec.check.termshadow import GlobalInfo, equivalence_run
from tests.emulator.test_tma import DUMP, FILL, LOAD, SMEM, STORE, kernel, launch, map_spec

RNG = np.random.default_rng(11)


def _infos() -> dict[str, GlobalInfo]:
    return {"inp": GlobalInfo("inp", sort_of_type(".f32"), 4, True),
            "out": GlobalInfo("out", sort_of_type(".f32"), 4, False),
            "scratch": GlobalInfo("scratch", sort_of_type(".b8"), 1, False)}


def _terms_vs_emulator(body: str, tm: dict, inp: np.ndarray, out: np.ndarray, coords, nbytes: int):
    """The output terms of one run, and (evaluated, emulated) on a second input of inp's shape."""
    prog = load_program(parse(kernel(body)))
    T = TermStore()
    run, shadow = equivalence_run(prog, launch(tm, inp, out.copy(), coords, nbytes), T, _infos())
    report = run_checked(run, prog, launch(tm, inp, out.copy(), coords, nbytes))
    assert report.verdict == "race_free", report.verdict
    assert not shadow.gaps, [g.describe() for g in shadow.gaps]
    o = shadow.outputs()["out"]
    other = RNG.standard_normal(inp.shape).astype(inp.dtype)
    glob, _, _ = run_kernel(prog, launch(tm, other, out.copy(), coords, nbytes))
    want = glob.by_name("out").data.view(np.uint32)[o.elements]
    flat = other.reshape(-1).view(np.uint32)
    sym = o.terms != CONCRETE
    got = np.zeros(o.terms.size, np.uint64)
    if sym.any():
        got[sym] = evaluate(T, o.terms[sym], lambda buf, elems, sort: flat[np.asarray(elems)].astype(np.uint64))
    return o, got, want


def _dump(words: int) -> str:
    return DUMP.replace("2048", str(words))


@pytest.mark.parametrize("swizzle, box", [("none", (16, 8)), ("32B", (8, 16)), ("64B", (16, 8)), ("128B", (32, 16))])
@pytest.mark.parametrize("coords", [(0, 0), (80, 36), (-8, -5)])
def test_load_terms_follow_the_box(swizzle, box, coords) -> None:
    """Inside elements are the input's leaves at their swizzled shared places; outside ones the
    constant 0 (zero fill)."""
    inp = RNG.standard_normal((40, 96)).astype(np.float32)
    words = (box[0] * 4 if swizzle == "none" else max(box[0] * 4, {"32B": 32, "64B": 64, "128B": 128}[swizzle])) \
        * box[1] // 4
    o, got, want = _terms_vs_emulator(LOAD + _dump(words), map_spec("inp", 40, 96, box, swizzle), inp,
                                      np.zeros(SMEM // 4, np.uint32), coords, box[0] * box[1] * 4)
    sym = o.terms != CONCRETE
    cols = coords[0] + np.arange(box[0])
    rows = coords[1] + np.arange(box[1])
    inside = int(((cols >= 0) & (cols < 96)).sum() * ((rows >= 0) & (rows < 40)).sum())
    assert int(sym.sum()) == inside
    assert np.array_equal(got[sym], want[sym].astype(np.uint64))
    assert not o.bits[~sym].any() and not want[~sym].any()  # zero fill, whatever the input


@pytest.mark.parametrize("coords", [(0, 0), (80, 30)])
def test_store_terms_skip_out_of_bounds(coords) -> None:
    """A shared -> global tensor copy writes the input's leaves inside the tensor, nothing outside."""
    src = RNG.standard_normal(SMEM // 4).astype(np.float32)
    o, got, want = _terms_vs_emulator(FILL.replace("2048", "512") + STORE, map_spec("out", 40, 96, (32, 16)), src,
                                      np.full((40, 96), -1, np.float32), coords, 0)
    assert o.elements.size == min(32, 96 - coords[0]) * min(16, 40 - coords[1])
    assert (o.terms != CONCRETE).all()
    assert np.array_equal(got, want.astype(np.uint64))
