"""mma.sync with block scaling (PTX 9.7.14.3, 9.7.14.5.14) on sm_120a, against a numpy oracle.

The oracle places elements with the per-element row/column formulas of the fragment sections
(9.7.14.5.x m16n8k32 / m16n8k64, written out here, not the emulator's vectorised rule), the 4/6-bit
containers of 9.7.14.5.14, and the scale selection of 9.7.14.3 (thread-id pairs and byte-ids; which
thread of the pair holds row g vs g + 8 is the MODEL of `semantics.ptx.mma.scale_lanes`, CUTLASS's
SM120 traits). Scales differ per row, per column, per lane that could supply them and per byte, so a
wrong selector, lane or byte fails. Inputs keep every float64 sum exact. Every kernel is assembled with
`ptxas -arch=sm_120a` when ptxas is on PATH (except `.scale_vec::4X` with `.ue8m0`, PTX ISA 9.1,
which ptxas 13.0 (PTX <= 9.0) rejects).
"""

from __future__ import annotations

import numpy as np
import pytest

from ptx_parser import parse
from symexec import Launch, load_program, run_kernel
from symexec.machine import ExecError
from ptx_kit import assert_assembles
from tests.emulator.block_scale_kernel import kernel as _kernel

_FMT = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15), "e2m3": (2, 3, 1), "e3m2": (3, 2, 3), "e2m1": (2, 1, 1)}


def _ref_value(code: int, fmt: str) -> float:
    ebits, mbits, bias = _FMT[fmt]
    sign = -1.0 if code >> (ebits + mbits) & 1 else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return sign * m / (1 << mbits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _codes(rng, fmt: str, shape) -> np.ndarray:
    ebits, mbits, bias = _FMT[fmt]
    if fmt in ("e4m3", "e5m2"):
        e = rng.integers(bias - 3, bias + 5, shape)
        return rng.integers(0, 2, shape) << (ebits + mbits) | e << mbits | rng.integers(0, 1 << mbits, shape)
    return rng.integers(0, 1 << (1 + ebits + mbits), shape)


def _container(code: int, fmt: str, junk: int) -> int:
    """8-bit container of 9.7.14.5.14: e2m1 in the central 4 bits, fp6 in the low 6 bits; padding bits
    filled with `junk` (they are ignored: MODEL of semantics.mxformats)."""
    if fmt == "e2m1":
        return (code << 2) | (junk & 0b11000011)
    if fmt in ("e2m3", "e3m2"):
        return code | (junk & 0b11000000)
    return code


def _a_pos(k: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if k == 32:  # m16n8k32, 8-bit elements (9.7.14.5.x m16n8k32, matrix A)
        row = g if (i < 4 or 8 <= i < 12) else g + 8
        return row, t * 4 + (i & 3) + (16 if i >= 8 else 0)
    row = g if (i < 8 or 16 <= i < 24) else g + 8  # m16n8k64, 4-bit elements
    return row, t * 8 + (i & 7) + (32 if i >= 16 else 0)


def _b_pos(k: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if k == 32:
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    return t * 8 + (i & 7) + (32 if i >= 8 else 0), g


class Case:
    def __init__(self, kind: str, atype: str, btype: str, vec: int, stype: str = "ue8m0", sel=(0, 0, 0, 0),
                 seed: int = 0, scaled: bool = True) -> None:
        rng = np.random.default_rng(seed)
        self.k = k = 32 if kind in ("mxf8f6f4", "f8f6f4") else 64
        bits = 8 if k == 32 else 4
        per = 32 // bits
        self.A = _codes(rng, atype, (16, k))
        self.B = _codes(rng, btype, (k, 8))
        self.C = rng.integers(-64, 64, (16, 8)) / 8.0
        if stype == "ue8m0":
            self.sa = rng.integers(124, 131, (32, 4))
            self.sb = rng.integers(124, 131, (32, 4))
            scale = lambda c: 2.0 ** (int(c) - 127)
        else:
            self.sa = rng.integers(5, 10, (32, 4)) << 3 | rng.integers(0, 8, (32, 4))
            self.sb = rng.integers(5, 10, (32, 4)) << 3 | rng.integers(0, 8, (32, 4))
            scale = lambda c: _ref_value(int(c), "e4m3")
        junk = rng.integers(0, 256, (32, 24))
        regs = np.zeros((32, 14), np.uint32)
        for lane in range(32):
            for i in range(4 * per):
                r, c = _a_pos(k, lane, i)
                v = _container(int(self.A[r, c]), atype, int(junk[lane, i % 16])) if bits == 8 else int(self.A[r, c])
                regs[lane, i // per] |= np.uint32(v << (bits * (i % per)))
            for i in range(2 * per):
                r, c = _b_pos(k, lane, i)
                v = _container(int(self.B[r, c]), btype, int(junk[lane, 16 + i % 8])) if bits == 8 else int(self.B[r, c])
                regs[lane, 4 + i // per] |= np.uint32(v << (bits * (i % per)))
            g, t = lane >> 2, lane % 4
            for i in range(4):
                regs[lane, 6 + i] = np.float32(self.C[g + 8 * (i >= 2), 2 * t + (i & 1)]).view(np.uint32)
            regs[lane, 10] = sum(int(self.sa[lane, b]) << (8 * b) for b in range(4))
            regs[lane, 11] = sum(int(self.sb[lane, b]) << (8 * b) for b in range(4))
        byte_a, tid_a, byte_b, tid_b = sel
        regs[:, 12] = byte_a | tid_a << 16
        regs[:, 13] = byte_b | tid_b << 16
        self.regs = regs
        av = np.vectorize(lambda c: _ref_value(int(c), atype))(self.A)
        bv = np.vectorize(lambda c: _ref_value(int(c), btype))(self.B)
        chunk = k // vec
        D = np.zeros((16, 8))
        for r in range(16):
            for n in range(8):
                la = 4 * (r % 8) + 2 * tid_a + r // 8  # the pair of quad r % 8: first row g, second row g + 8
                lb = 4 * n + tid_b
                s = self.C[r, n]
                for q in range(k):
                    f = 1.0
                    if scaled:
                        f = scale(self.sa[la, byte_a + q // chunk]) * scale(self.sb[lb, byte_b + q // chunk])
                    s += av[r, q] * bv[q, n] * f
                D[r, n] = s
        self.want = D.astype(np.float32)

    def run(self, src: str) -> np.ndarray:
        buf = {"in": self.regs.copy(), "out": np.zeros((32, 4), np.uint32)}
        glob, _, _ = run_kernel(load_program(parse(src)), Launch((1,), (32,), buf, ["in", "out"]))
        d = glob.by_name("out").data.view(np.float32).reshape(32, 4)
        got = np.zeros((16, 8), np.float32)
        for lane in range(32):
            g, t = lane >> 2, lane % 4
            for i in range(4):
                got[g + 8 * (i >= 2), 2 * t + (i & 1)] = d[lane, i]
        return got


def _form(kind: str, a: str, b: str, vec: str, stype: str) -> str:
    shape = "m16n8k32" if kind == "mxf8f6f4" else "m16n8k64"
    return f"mma.sync.aligned.{shape}.row.col.kind::{kind}.block_scale{vec}.f32.{a}.{b}.f32.{stype}"


@pytest.mark.parametrize("a,b,sel", [
    ("e4m3", "e4m3", (0, 0, 0, 0)),  # what Triton 3.9 emits for tl.dot_scaled
    ("e4m3", "e5m2", (2, 1, 3, 2)),
    ("e2m1", "e3m2", (1, 0, 2, 3)),
    ("e2m3", "e2m1", (3, 1, 0, 1)),
    ("e3m2", "e4m3", (1, 1, 1, 0)),
])
def test_mxf8f6f4(a, b, sel):
    c = Case("mxf8f6f4", a, b, 1, sel=sel, seed=sum(sel) + len(a + b))
    src = _kernel(_form("mxf8f6f4", a, b, ".scale_vec::1X", "ue8m0"), f"{{{sel[0]}, {sel[1]}}}", f"{{{sel[2]}, {sel[3]}}}")
    assert_assembles(src, "sm_120a")
    assert (c.run(src) == c.want).all()


@pytest.mark.parametrize("kind,vec,stype,sel,ptxas", [
    ("mxf4", "", "ue8m0", (2, 1, 0, 3), True),
    ("mxf4", ".scale_vec::2X", "ue8m0", (0, 0, 2, 1), True),
    ("mxf4nvf4", ".scale_vec::2X", "ue8m0", (2, 0, 2, 2), True),
    ("mxf4nvf4", ".scale_vec::4X", "ue4m3", (0, 1, 0, 3), True),
    ("mxf4nvf4", ".scale_vec::4X", "ue8m0", (0, 0, 0, 1), False),  # PTX ISA 9.1: ptxas 13.0 refuses it
])
def test_mxf4_kinds(kind, vec, stype, sel, ptxas):
    n = {"": 2, ".scale_vec::2X": 2, ".scale_vec::4X": 4}[vec]
    c = Case(kind, "e2m1", "e2m1", n, stype, sel=sel, seed=7 + sum(sel))
    src = _kernel(_form(kind, "e2m1", "e2m1", vec, stype), f"{{{sel[0]}, {sel[1]}}}", f"{{{sel[2]}, {sel[3]}}}")
    if ptxas:
        assert_assembles(src, "sm_120a")
    assert (c.run(src) == c.want).all()


def test_mxf8f6f4_default_vector_size_and_register_selectors():
    sel = (3, 1, 2, 2)
    c = Case("mxf8f6f4", "e4m3", "e4m3", 1, sel=sel, seed=9)
    src = _kernel(_form("mxf8f6f4", "e4m3", "e4m3", "", "ue8m0"), "{%h0, %h1}", "{%h2, %h3}")
    assert_assembles(src, "sm_120a")
    assert (c.run(src) == c.want).all()


def test_unscaled_f8f6f4_with_sub_byte_operands():
    c = Case("f8f6f4", "e2m1", "e3m2", 1, seed=12, scaled=False)
    src = _kernel("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32", "", "", scaled=False)
    assert_assembles(src, "sm_120a")
    assert (c.run(src) == c.want).all()


def test_each_row_takes_its_scale_from_its_lane():
    """Doubling the SF_A byte of lane 4*5 + 1 (thread-id-a 0: row 5 + 8 = 13) doubles row 13 of A*B only."""
    c = Case("mxf8f6f4", "e4m3", "e4m3", 1, seed=3)
    c.C[:] = 0
    c.regs[:, 6:10] = 0
    src = _kernel(_form("mxf8f6f4", "e4m3", "e4m3", "", "ue8m0"), "{0, 0}", "{0, 0}")
    base = c.run(src)
    c.regs[21, 10] += 1  # byte 0 of lane 21's scale-a-data: +1 in the exponent
    got = c.run(src)
    assert (got[13] == 2 * base[13]).all() and (np.delete(got, 13, 0) == np.delete(base, 13, 0)).all()


@pytest.mark.parametrize("sel_a,sel_b,vec,match", [
    ("{0, 2}", "{0, 0}", "", "thread-id-a = 2"),
    ("{0, 0}", "{4, 0}", "", "byte-id-b = 4"),
    ("{1, 0}", "{0, 0}", ".scale_vec::2X", "byte-id-a = 1"),
])
def test_invalid_selectors_are_undefined(sel_a, sel_b, vec, match):
    kind, ty = ("mxf4", "e2m1") if vec else ("mxf8f6f4", "e4m3")
    c = Case(kind, ty, ty, 2 if vec else 1, seed=1)
    src = _kernel(_form(kind, ty, ty, vec, "ue8m0"), sel_a, sel_b)
    with pytest.raises(ExecError, match=match):
        c.run(src)


def test_selector_differing_between_lanes_is_unsupported():
    c = Case("mxf8f6f4", "e4m3", "e4m3", 1, sel=(1, 0, 0, 0), seed=1)
    c.regs[7, 12] = 2  # lane 7's byte-id-a
    src = _kernel(_form("mxf8f6f4", "e4m3", "e4m3", "", "ue8m0"), "{%h0, %h1}", "{%h2, %h3}")
    with pytest.raises(ExecError, match="differs between the lanes"):
        c.run(src)


def test_ue4m3_scale_with_bit_7_is_unsupported():
    c = Case("mxf4nvf4", "e2m1", "e2m1", 4, "ue4m3", sel=(0, 0, 0, 1), seed=2)
    c.regs[4, 11] |= 0x80 << 16  # lane 4 does not supply SF_B with thread-id-b 1: ignored
    src = _kernel(_form("mxf4nvf4", "e2m1", "e2m1", ".scale_vec::4X", "ue4m3"), "{0, 0}", "{0, 1}")
    assert (c.run(src) == c.want).all()
    c.regs[5, 11] |= 0x80 << 16  # lane 5 does
    with pytest.raises(ExecError, match="bit 7"):
        c.run(src)


@pytest.mark.parametrize("form", [
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue8m0",  # size required
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue4m3",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::2X.f32.e4m3.e4m3.f32.ue8m0",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.f32.e4m3.e4m3.f32",  # mx kind without .block_scale
])
def test_forms_outside_table_36_are_refused(form):
    c = Case("mxf8f6f4", "e4m3", "e4m3", 1, seed=1)
    scaled = ".block_scale" in form
    with pytest.raises(ExecError, match="unsupported"):
        c.run(_kernel(form, "{0, 0}", "{0, 0}", scaled=scaled))
