"""redux.sync.{min,max}{.abs}{.NaN}.f32 (PTX 9.7.13.x, redux.sync) folds every warp at once: the same
values as the per-warp left fold over the active lanes in lane order that it replaced (reference below),
for partial masks, NaNs, signed zeros, subnormals and a warp with one active lane (kept as it is)."""

from __future__ import annotations

import numpy as np
import ptx_parser
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics import fspecial as FS
from semantics.ptx import warp

SPECIALS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0x80000000, 0x00000000, 0x7F800000, 0xFF800000, 0x00000001,
            0x80000001, 0x3F800000, 0xBF800000]


class _X:
    """The few members of Exec that redux uses: the active mask, operand reads and the written result."""

    def __init__(self, mask: np.ndarray, values: np.ndarray) -> None:
        self.mask, self.n, self.values, self.out = mask, mask.size, values, None

    def read(self, op, ty: str) -> np.ndarray:
        if getattr(op, "name", None) == "%r1":
            return self.values
        warps = self.mask.reshape(-1, 32)  # membermask: each warp's executing lanes
        bits = (warps * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1, dtype=np.uint64)
        return np.repeat(bits.astype(np.uint32), 32)

    def write(self, op, value: np.ndarray, ty: str) -> None:
        self.out = np.asarray(value).copy()


def _ins(text: str):
    mod = ptx_parser.parse(f""".version 8.7
.target sm_100a
.address_size 64
.visible .entry k()
{{
.reg .b32 %r<4>;
{text}
ret;
}}""", "redux.ptx")
    return next(i for i in mod.functions[0].body.statements if getattr(i, "opcode", None) == "redux")


def _reference(v: np.ndarray, act: np.ndarray, op: str, nan: bool, abs_: bool) -> np.ndarray:
    out = np.zeros(v.shape[0], np.uint32)
    fn = FS.fmin if op == "min" else FS.fmax
    for w in np.nonzero(act.any(axis=1))[0]:
        vals = v[w][act[w]]
        acc = vals[:1]
        for e in vals[1:]:
            acc = fn(acc, np.asarray([e]), "f32", nan=nan, abs_=abs_)
        out[w] = acc[0]
    return np.repeat(out, 32)


@settings(max_examples=150, deadline=None)
@given(warps=st.integers(1, 4), data=st.data())
def test_float_redux_is_the_per_warp_fold(warps: int, data) -> None:
    n = 32 * warps
    words = data.draw(st.lists(st.one_of(st.sampled_from(SPECIALS), st.integers(0, 2**32 - 1)), min_size=n,
                               max_size=n))
    v = np.array(words, np.uint32)
    density = data.draw(st.sampled_from([0.05, 0.5, 1.0]))
    seed = data.draw(st.integers(0, 2**31))
    act = np.random.default_rng(seed).random(n) < density
    op = data.draw(st.sampled_from(["min", "max"]))
    nan, abs_ = data.draw(st.booleans()), data.draw(st.booleans())
    mods = "".join(m for m, on in ((".abs", abs_), (".NaN", nan)) if on)
    ins = _ins(f"redux.sync.{op}{mods}.f32 %r2, %r1, %r3;")
    x = _X(act, v)
    warp.redux(ins, x)
    assert np.array_equal(x.out, _reference(v.reshape(-1, 32), act.reshape(-1, 32), op, nan, abs_))
