"""mma.sync / ldmatrix / stmatrix / movmatrix on the emulator against independent numpy oracles.

The oracle's fragment layouts are transcribed element by element from the manual's per-shape
formulas (PTX 9.7.14.5.1-13: `row = groupID for ai where ...`), deliberately without the general
rule the implementation uses, and its arithmetic is plain Python/numpy scalar code:
  floats: c + a0*b0 + a1*b1 + ... in float64 in k order, rounded once by a numpy cast
          (the emulator's documented model);
  f64:    fma chain c, k = 0, 1, ... with exact rationals rounded by Fraction -> float;
  ints:   Python integers, wrapped or saturated to s32.
"""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptx_parser import parse
from symexec import ExecError, Launch, load_program, run_kernel

# --------------------------------------------------------------------------- oracle layouts


def _a_pos(shape: str, fam: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if fam in ("f16", "bf16"):
        if shape == "m16n8k16":
            return (g if i < 2 or 4 <= i < 6 else g + 8), t * 2 + (i & 1) + (8 if i >= 4 else 0)
        if shape == "m16n8k8":
            return (g if i < 2 else g + 8), t * 2 + (i & 1)
    if fam in ("tf32", "f64"):
        if shape == "m16n8k8":
            return (g if i in (0, 2) else g + 8), (t if i < 2 else t + 4)
        if shape == "m16n8k4":
            return (g if i == 0 else g + 8), t
        if shape == "m8n8k4":
            return lane >> 2, lane % 4
        if shape == "m16n8k16":  # f64 (9.7.14.5.8)
            return (g if i % 2 == 0 else g + 8), (i * 2 + t if i % 2 == 0 else i * 2 - 2 + t)
    if fam == "8bit":
        if shape == "m16n8k16":
            return (g if i < 4 else g + 8), t * 4 + (i & 3)
        if shape == "m16n8k32":
            return (g if i < 4 or 8 <= i < 12 else g + 8), t * 4 + (i & 3) + (16 if i >= 8 else 0)
        if shape == "m8n8k16":
            return g, t * 4 + i
    if fam == "4bit":
        if shape == "m16n8k32":
            return (g if i < 8 else g + 8), t * 8 + (i & 7)
        if shape == "m16n8k64":
            return (g if i < 8 or 16 <= i < 24 else g + 8), t * 8 + (i & 7) + (32 if i >= 16 else 0)
        if shape == "m8n8k32":
            return g, t * 8 + i
    raise AssertionError((shape, fam))


def _b_pos(shape: str, fam: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if fam in ("f16", "bf16"):
        if shape == "m16n8k16":
            return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
        if shape == "m16n8k8":
            return t * 2 + i, g
    if fam in ("tf32", "f64"):
        if shape == "m16n8k8":
            return (t if i == 0 else t + 4), g
        if shape == "m16n8k4":
            return t, g
        if shape == "m8n8k4":
            return lane % 4, lane >> 2
        if shape == "m16n8k16":
            return t + i * 4, g
    if fam == "8bit":
        if shape == "m16n8k16":
            return t * 4 + i, g
        if shape == "m16n8k32":
            return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
        if shape == "m8n8k16":
            return t * 4 + i, g
    if fam == "4bit":
        if shape == "m16n8k32":
            return t * 8 + (i & 7), g
        if shape == "m16n8k64":
            return t * 8 + (i & 7) + (32 if i >= 8 else 0), g
        if shape == "m8n8k32":
            return t * 8 + i, g
    raise AssertionError((shape, fam))


def _c_pos(shape: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if shape.startswith("m8"):
        return g, t * 2 + i
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


# --------------------------------------------------------------------------- oracle numbers

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
         "s4": 4, "u4": 4, "f32": 32, "s32": 32}
_FAM = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f64": "f64", "e4m3": "8bit", "e5m2": "8bit",
        "s8": "8bit", "u8": "8bit", "s4": "4bit", "u4": "4bit"}


def _minifloat(bits: int, ebits: int, mbits: int, bias: int, nan_all_ones: bool) -> float:
    s = -1.0 if bits >> (ebits + mbits) & 1 else 1.0
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    if nan_all_ones:
        if e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
            return float("nan")
    elif e == (1 << ebits) - 1:
        return s * float("inf") if m == 0 else float("nan")
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mbits)
    return s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _value(bits: int, ty: str):
    if ty == "f16":
        return float(np.array(bits, dtype=np.uint16).view(np.float16))
    if ty == "bf16":
        return float(np.array(bits << 16, dtype=np.uint32).view(np.float32))
    if ty == "tf32":
        return float(np.array(bits & 0xFFFFE000, dtype=np.uint32).view(np.float32))
    if ty == "f32":
        return float(np.array(bits, dtype=np.uint32).view(np.float32))
    if ty == "f64":
        return float(np.array(bits, dtype=np.uint64).view(np.float64))
    if ty == "e4m3":
        return _minifloat(bits, 4, 3, 7, True)
    if ty == "e5m2":
        return _minifloat(bits, 5, 2, 15, False)
    w = _BITS[ty]
    if ty[0] == "s" and bits >= 1 << (w - 1):
        return bits - (1 << w)
    return bits


def _encode(v, ty: str) -> int:
    if ty == "f32":
        return int(np.array(v, dtype=np.float32).view(np.uint32))
    if ty == "f16":
        return int(np.array(v, dtype=np.float16).view(np.uint16))
    if ty == "f64":
        return int(np.array(v, dtype=np.float64).view(np.uint64))
    return int(v) & 0xFFFFFFFF


def _oracle(A, B, C, ty_a: str, ty_b: str, ty_c: str, satfinite: bool):
    M, K = len(A), len(A[0])
    N = len(B[0])
    D = [[0] * N for _ in range(M)]
    for i in range(M):
        for j in range(N):
            a = [_value(A[i][q], ty_a) for q in range(K)]
            b = [_value(B[q][j], ty_b) for q in range(K)]
            c = _value(C[i][j], ty_c)
            if ty_c == "s32":
                s = c + sum(x * y for x, y in zip(a, b))
                D[i][j] = max(-(1 << 31), min((1 << 31) - 1, s)) if satfinite else ((s + (1 << 31)) % (1 << 32)) - (1 << 31)
            elif ty_c == "f64":  # a chain of correctly rounded fmas from c, in k order
                s = c
                for x, y in zip(a, b):
                    s = float(Fraction(x) * Fraction(y) + Fraction(s))
                D[i][j] = s
            else:
                s = c
                for x, y in zip(a, b):
                    s += x * y
                D[i][j] = s
    return D


# --------------------------------------------------------------------------- kernels


def _mma_kernel(form: str, na: int, nb: int, nc: int, reg_a: str, reg_c: str) -> str:
    wa = 8 if reg_a == ".f64" else 4
    wc = 8 if reg_c == ".f64" else 4
    lines = [".version 8.7", ".target sm_90a", ".address_size 64",
             ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd) {",
             f" .reg {reg_a} %a<{na}>; .reg {reg_a} %b<{nb}>; .reg {reg_c} %c<{nc}>; .reg {reg_c} %d<{nc}>;",
             " .reg .b64 %rd<12>; .reg .b32 %t;",
             " ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pc]; ld.param.u64 %rd4, [pd];",
             " mov.u32 %t, %tid.x;",
             f" mul.wide.u32 %rd5, %t, {wa * na}; add.s64 %rd5, %rd1, %rd5;",
             f" mul.wide.u32 %rd6, %t, {wa * nb}; add.s64 %rd6, %rd2, %rd6;",
             f" mul.wide.u32 %rd7, %t, {wc * nc}; add.s64 %rd8, %rd4, %rd7; add.s64 %rd7, %rd3, %rd7;"]
    ld = f"ld.global.b{8 * wa}"
    lines += [f" {ld} %a{r}, [%rd5+{wa * r}];" for r in range(na)]
    lines += [f" {ld} %b{r}, [%rd6+{wa * r}];" for r in range(nb)]
    lines += [f" ld.global.b{8 * wc} %c{r}, [%rd7+{wc * r}];" for r in range(nc)]
    vec = lambda name, n: "{" + ", ".join(f"%{name}{r}" for r in range(n)) + "}"  # noqa: E731
    lines.append(f" {form} {vec('d', nc)}, {vec('a', na)}, {vec('b', nb)}, {vec('c', nc)};")
    lines += [f" st.global.b{8 * wc} [%rd8+{wc * r}], %d{r};" for r in range(nc)]
    lines += [" ret;", "}"]
    return "\n".join(lines)


_PROGS: dict = {}


class Form:
    def __init__(self, form: str) -> None:
        self.form = form
        parts = form.split(".")
        self.shape = next(p for p in parts if p.startswith("m") and "n" in p and "k" in p)
        self.satfinite = "satfinite" in parts
        self.d, self.a, self.b, self.c = parts[-4:]
        m, rest = self.shape[1:].split("n")
        n, k = rest.split("k")
        self.M, self.N, self.K = int(m), int(n), int(k)
        self.pa = max(1, 32 // _BITS[self.a])
        self.pc = 2 if self.c == "f16" else 1
        self.na = self.M * self.K // 32 // self.pa
        self.nb = self.K * self.N // 32 // self.pa
        self.ne = self.M * self.N // 32
        self.nc = self.ne // self.pc
        reg_a = ".f64" if self.a == "f64" else ".b32"
        reg_c = {"f32": ".f32", "f64": ".f64"}.get(self.c, ".b32")
        if form not in _PROGS:
            _PROGS[form] = load_program(parse(_mma_kernel(form, self.na, self.nb, self.nc, reg_a, reg_c)))
        self.prog = _PROGS[form]

    def fragments(self, A, B, C):
        """Per-lane registers (32, n) from matrices of raw element bits, via the oracle layout."""
        fa, fb = _FAM[self.a], _FAM[self.b]
        ra = np.zeros((32, self.na), dtype=np.uint64)
        rb = np.zeros((32, self.nb), dtype=np.uint64)
        rc = np.zeros((32, self.nc), dtype=np.uint64)
        wa, wb, wc = _BITS[self.a], _BITS[self.b], 16 if self.c == "f16" else _BITS[self.c]
        pb = max(1, 32 // wb)
        for lane in range(32):
            for i in range(self.na * self.pa):
                r, c = _a_pos(self.shape, fa, lane, i)
                ra[lane, i // self.pa] |= np.uint64(int(A[r][c]) << (wa * (i % self.pa)) if wa < 64 else int(A[r][c]))
            for i in range(self.nb * pb):
                r, c = _b_pos(self.shape, fb, lane, i)
                rb[lane, i // pb] |= np.uint64(int(B[r][c]) << (wb * (i % pb)) if wb < 64 else int(B[r][c]))
            for i in range(self.ne):
                r, c = _c_pos(self.shape, lane, i)
                rc[lane, i // self.pc] |= np.uint64(int(C[r][c]) << (wc * (i % self.pc)) if wc < 64 else int(C[r][c]))
        return ra, rb, rc

    def run(self, frags: list[tuple]) -> np.ndarray:
        """One warp per fragment triple; returns D registers (warps, 32, nc) as uint64."""
        W = len(frags)
        dt_a = np.uint64 if self.a == "f64" else np.uint32
        dt_c = np.uint64 if self.c == "f64" else np.uint32
        buf = {"a": np.concatenate([f[0] for f in frags]).astype(dt_a),
               "b": np.concatenate([f[1] for f in frags]).astype(dt_a),
               "c": np.concatenate([f[2] for f in frags]).astype(dt_c),
               "d": np.zeros((32 * W, self.nc), dtype=dt_c)}
        glob, _, _ = run_kernel(self.prog, Launch((1,), (32 * W,), buf, ["a", "b", "c", "d"]))
        return glob.by_name("d").data.view(dt_c).reshape(W, 32, self.nc).astype(np.uint64)

    def matrix_d(self, regs: np.ndarray) -> list[list[int]]:
        """D as raw element bits, read back through the oracle layout."""
        wc = 16 if self.c == "f16" else _BITS[self.c]
        D = [[0] * self.N for _ in range(self.M)]
        for lane in range(32):
            for i in range(self.ne):
                r, c = _c_pos(self.shape, lane, i)
                v = int(regs[lane, i // self.pc])
                D[r][c] = (v >> (wc * (i % self.pc))) & ((1 << wc) - 1) if wc < 64 else v
        return D

    def check(self, A, B, C, got) -> None:
        want = _oracle(A, B, C, self.a, self.b, self.c, self.satfinite)
        for i in range(self.M):
            for j in range(self.N):
                g = got[i][j]
                w = want[i][j]
                if self.c in ("f32", "f16"):
                    gv = _value(g, self.c)
                    wv = float(np.float32(w)) if self.c == "f32" else float(np.float16(w))
                    if np.isnan(wv):
                        assert g == (0x7FFFFFFF if self.c == "f32" else 0x7FFF), (i, j, hex(g))
                        continue
                    assert g == _encode(wv, self.c), (self.form, i, j, hex(g), gv, wv)
                elif self.c == "f64":
                    assert g == _encode(w, "f64"), (self.form, i, j, _value(g, "f64"), w)
                else:
                    assert g == _encode(w, "s32"), (self.form, i, j, g, w)


def _random_bits(rng, ty: str, shape) -> np.ndarray:
    if ty == "f16":  # moderate magnitudes, both signs
        return np.asarray(rng.uniform(-4, 4, shape).astype(np.float16).view(np.uint16), dtype=np.uint64)
    if ty == "bf16":
        return np.asarray(rng.uniform(-4, 4, shape).astype(np.float32).view(np.uint32) >> 16, dtype=np.uint64)
    if ty == "tf32":  # random low bits: the mma must ignore them
        return np.asarray(rng.uniform(-4, 4, shape).astype(np.float32).view(np.uint32), dtype=np.uint64)
    if ty in ("e4m3", "e5m2"):
        b = rng.integers(0, 256, shape)
        bad = (b & 0x7F) == 0x7F if ty == "e4m3" else (b & 0x7C) == 0x7C
        return np.asarray(np.where(bad, b & 0x3F, b), dtype=np.uint64)
    if ty in ("f32", "f64"):
        v = rng.uniform(-8, 8, shape)
        return np.asarray(v.astype(np.float32).view(np.uint32) if ty == "f32" else v.view(np.uint64), dtype=np.uint64)
    return np.asarray(rng.integers(0, 1 << _BITS[ty], shape), dtype=np.uint64)


FORMS = [
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
    "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32",
    "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32",
    "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32",
    "mma.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32",
    "mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32",
    "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
    "mma.sync.aligned.m16n8k16.row.col.f32.e5m2.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
    "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64",
    "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
]


@pytest.mark.parametrize("form", FORMS)
def test_mma_random_two_warps(form: str) -> None:
    f = Form(form)
    rng = np.random.default_rng(zlib.crc32(form.encode()))
    mats = [(_random_bits(rng, f.a, (f.M, f.K)), _random_bits(rng, f.b, (f.K, f.N)),
             _random_bits(rng, f.c, (f.M, f.N))) for _ in range(2)]
    if f.satfinite:  # push accumulators towards the s32 limits so saturation happens
        mats[0] = (mats[0][0], mats[0][1], np.full((f.M, f.N), 0x7FFFFFF0, dtype=np.uint64))
        mats[1] = (mats[1][0], mats[1][1], np.full((f.M, f.N), 0x80000010, dtype=np.uint64))
    regs = f.run([f.fragments(*m) for m in mats])
    for w, (A, B, C) in enumerate(mats):
        f.check(A.tolist(), B.tolist(), C.tolist(), f.matrix_d(regs[w]))


def _float_bits(ty: str):
    """Raw bit patterns weighted towards zeros, subnormals, infinities and NaNs."""
    w = _BITS[ty]
    special = {"f16": [0, 0x8000, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x7E00, 0x7BFF],
               "bf16": [0, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FC0, 0x7F7F],
               "e4m3": [0, 0x80, 0x01, 0x7E, 0xFE, 0x7F],
               "e5m2": [0, 0x80, 0x01, 0x7C, 0xFC, 0x7E, 0x7B],
               "tf32": [0, 0x80000000, 0x00002000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F7FE000],
               "f32": [0, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F7FFFFF]}[ty]
    return st.one_of(st.sampled_from(special), st.integers(0, (1 << w) - 1))


_HYP = ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"]


@pytest.mark.parametrize("form", _HYP)
def test_mma_special_values(form: str) -> None:
    f = Form(form)

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def inner(data) -> None:
        def mat(ty, r, c):
            return [[data.draw(_float_bits(ty)) for _ in range(c)] for _ in range(r)]

        A, B, C = mat(f.a, f.M, f.K), mat(f.b, f.K, f.N), mat(f.c, f.M, f.N)
        regs = f.run([f.fragments(A, B, C)])
        f.check(A, B, C, f.matrix_d(regs[0]))

    inner()


def test_mma_s32_wraps_without_satfinite() -> None:
    f = Form("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32")
    A = [[0x7F] * 32 for _ in range(16)]  # 127 * 127 * 32 = 516128
    B = [[0x7F] * 8 for _ in range(32)]
    C = [[0x7FFFFFFF] * 8 for _ in range(16)]
    regs = f.run([f.fragments(A, B, C)])
    want = (0x7FFFFFFF + 516128) & 0xFFFFFFFF
    assert all(v == want for row in f.matrix_d(regs[0]) for v in row)


# --------------------------------------------------------------------------- .aligned and refusals


def _single(body: str, decls: str = "") -> str:
    return "\n".join([".version 8.7", ".target sm_90a", ".address_size 64",
                      ".visible .entry k(.param .u64 pd) {",
                      " .reg .b32 %r<16>; .reg .f32 %f<16>; .reg .pred %p; .reg .b64 %rd<4>;", decls,
                      " mov.u32 %r0, %tid.x; setp.lt.u32 %p, %r0, 16;", body, " ret;", "}"])


def _run_single(text: str, threads: int = 32) -> None:
    prog = load_program(parse(text))
    run_kernel(prog, Launch((1,), (threads,), {"d": np.zeros(4, dtype=np.uint32)}, ["d"]))


def test_partial_warp_is_undefined() -> None:
    body = (" @%p mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, "
            "{%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f4,%f5,%f6,%f7};")
    with pytest.raises(ExecError, match="aligned"):
        _run_single(_single(body))


def test_partial_warp_ldmatrix_is_undefined() -> None:
    body = " @%p ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [smem];"
    with pytest.raises(ExecError, match="aligned"):
        _run_single(_single(body, ".shared .align 16 .b8 smem[256];"))


@pytest.mark.parametrize("body", [
    " mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, {%r1,%r2}, "
    "{%r3,%r4}, {%f8,%f9,%f10,%f11,%f12,%f13,%f14,%f15};",
    " mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.xor.popc {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6}, "
    "{%r7,%r8,%r9,%r10};",
    " mma.sync.aligned.m16n8k16.row.col.kind::f8f6f4.f32.e2m1.e2m1.f32 {%f0,%f1,%f2,%f3}, "
    "{%r1,%r2}, {%r5}, {%f4,%f5,%f6,%f7};",
    " ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1,%r2}, [smem];",
    " stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [smem], {%r1};",
])
def test_unmodelled_forms_are_refused(body: str) -> None:
    with pytest.raises(ExecError, match="unsupported"):
        _run_single(_single(body, ".shared .align 16 .b8 smem[1024];"))


def test_float_sum_order_is_the_documented_model() -> None:
    """c + a0*b0 + a1*b1 + a2*b2 in float64: 2**30 + 2**-48 rounds to 2**30 before -2**30 cancels it,
    so the model gives +0 where an exact accumulation would give 2**-48 (to compare with an H200)."""
    f = Form("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    A = [[0] * 16 for _ in range(16)]
    B = [[0] * 8 for _ in range(16)]
    C = [[0] * 8 for _ in range(16)]
    A[0][0], A[0][1], A[0][2] = 0x7800, 0x0001, 0xF800  # 2**15, 2**-24, -2**15
    B[0][0], B[1][0], B[2][0] = 0x7800, 0x0001, 0x7800
    d = f.matrix_d(f.run([f.fragments(A, B, C)])[0])
    assert d[0][0] == 0


# --------------------------------------------------------------------------- ldmatrix / stmatrix / movmatrix


def _matrix_kernel(op: str, count: int, trans: bool, generic: bool) -> str:
    regs = "{" + ", ".join(f"%d{r}" for r in range(count)) + "}"
    space = "" if generic else ".shared"
    form = f"{op}.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}{space}.b16"
    addr = "[%rd9]" if generic else "[%ra]"
    lines = [".version 8.7", ".target sm_90a", ".address_size 64",
             ".visible .entry k(.param .u64 pin, .param .u64 poff, .param .u64 pregs, .param .u64 pout) {",
             " .shared .align 16 .b8 smem[1024];",
             " .reg .b32 %d<4>; .reg .b32 %x<8>; .reg .b32 %t, %s0, %s1, %o, %ra; .reg .b64 %rd<12>;",
             " ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [poff]; ld.param.u64 %rd3, [pregs]; ld.param.u64 %rd4, [pout];",
             " mov.u32 %t, %tid.x; mov.u32 %s0, smem;",
             " mul.wide.u32 %rd5, %t, 32; add.s64 %rd6, %rd1, %rd5; add.s64 %rd10, %rd4, %rd5;",
             " mul.lo.u32 %s1, %t, 32; add.u32 %s1, %s0, %s1;",
             " ld.global.v4.b32 {%x0, %x1, %x2, %x3}, [%rd6]; ld.global.v4.b32 {%x4, %x5, %x6, %x7}, [%rd6+16];",
             " st.shared.v4.b32 [%s1], {%x0, %x1, %x2, %x3}; st.shared.v4.b32 [%s1+16], {%x4, %x5, %x6, %x7};",
             " bar.sync 0;",
             " mul.wide.u32 %rd7, %t, 4; add.s64 %rd8, %rd2, %rd7; ld.global.u32 %o, [%rd8]; add.u32 %ra, %s0, %o;",
             " cvt.u64.u32 %rd9, %ra; cvta.shared.u64 %rd9, %rd9;",
             " mul.wide.u32 %rd7, %t, 16; add.s64 %rd11, %rd3, %rd7;"]
    if op == "ldmatrix":
        lines.append(f" {form} {regs}, {addr};")
        lines += [f" st.global.b32 [%rd11+{4 * r}], %d{r};" for r in range(count)]
    else:
        lines += [f" ld.global.b32 %d{r}, [%rd11+{4 * r}];" for r in range(count)]
        lines.append(f" {form} {addr}, {regs};")
        lines += [" bar.sync 0;", " ld.shared.v4.b32 {%x0, %x1, %x2, %x3}, [%s1];",
                  " ld.shared.v4.b32 {%x4, %x5, %x6, %x7}, [%s1+16];",
                  " st.global.v4.b32 [%rd10], {%x0, %x1, %x2, %x3}; st.global.v4.b32 [%rd10+16], {%x4, %x5, %x6, %x7};"]
    lines += [" ret;", "}"]
    return "\n".join(lines)


def _matrix_case(rng, count: int):
    smem = rng.integers(0, 1 << 16, 512, dtype=np.uint64).astype(np.uint16)  # 1 KiB = 64 rows of 8
    slots = rng.permutation(64)[: 8 * count]
    off = np.full(32, 3, dtype=np.uint32)  # lanes that give no row address: misaligned, ignored
    off[: 8 * count] = slots * 16
    regs = rng.integers(0, 1 << 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    return smem, off, regs


def _run_matrix(op, count, trans, generic, smem, off, regs):
    prog = load_program(parse(_matrix_kernel(op, count, trans, generic)))
    buf = {"in": smem.copy(), "off": off, "regs": regs.copy(), "out": np.zeros(512, dtype=np.uint16)}
    glob, _, _ = run_kernel(prog, Launch((1,), (32,), buf, ["in", "off", "regs", "out"]))
    return (glob.by_name("regs").data.view(np.uint32).reshape(32, 4),
            glob.by_name("out").data.view(np.uint16).reshape(512))


def _element_of_lane(lane: int, j: int, trans: bool) -> tuple[int, int]:
    """Figure 104: thread i holds row i/4, elements 2*(i%4) and 2*(i%4)+1; .trans: column-major."""
    row, col = lane // 4, 2 * (lane % 4) + j
    return (col, row) if trans else (row, col)


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("generic", [False, True])
def test_ldmatrix_against_numpy(count: int, trans: bool, generic: bool) -> None:
    rng = np.random.default_rng(count * 10 + trans * 2 + generic)
    smem, off, regs = _matrix_case(rng, count)
    got, _ = _run_matrix("ldmatrix", count, trans, generic, smem, off, regs)
    for q in range(count):
        rows = [smem[off[8 * q + r] // 2: off[8 * q + r] // 2 + 8] for r in range(8)]
        for lane in range(32):
            lo = rows[_element_of_lane(lane, 0, trans)[0]][_element_of_lane(lane, 0, trans)[1]]
            hi = rows[_element_of_lane(lane, 1, trans)[0]][_element_of_lane(lane, 1, trans)[1]]
            assert got[lane, q] == int(lo) | int(hi) << 16, (q, lane)
    assert (got[:, count:] == regs[:, count:]).all()  # registers not named are untouched


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_against_numpy_and_round_trip(count: int, trans: bool) -> None:
    rng = np.random.default_rng(100 + count * 10 + trans)
    smem, off, regs = _matrix_case(rng, count)
    _, out = _run_matrix("stmatrix", count, trans, False, smem, off, regs)
    want = smem.copy()
    for q in range(count):
        for lane in range(32):
            for j in range(2):
                r, c = _element_of_lane(lane, j, trans)
                want[off[8 * q + r] // 2 + c] = (int(regs[lane, q]) >> (16 * j)) & 0xFFFF
    assert (out == want).all()
    back, _ = _run_matrix("ldmatrix", count, trans, False, out, off, np.zeros((32, 4), dtype=np.uint32))
    assert (back[:, :count] == regs[:, :count]).all()


def test_movmatrix_transposes() -> None:
    text = "\n".join([".version 8.7", ".target sm_90a", ".address_size 64",
                      ".visible .entry k(.param .u64 p) {", " .reg .b32 %a, %d, %t; .reg .b64 %rd<4>;",
                      " ld.param.u64 %rd1, [p]; mov.u32 %t, %tid.x; mul.wide.u32 %rd2, %t, 4;",
                      " add.s64 %rd2, %rd1, %rd2; ld.global.b32 %a, [%rd2];",
                      " movmatrix.sync.aligned.m8n8.trans.b16 %d, %a; st.global.b32 [%rd2], %d;", " ret;", "}"])
    rng = np.random.default_rng(7)
    src = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)  # two warps
    glob, _, _ = run_kernel(load_program(parse(text)), Launch((1,), (64,), {"x": src.copy()}, ["x"]))
    got = glob.by_name("x").data.view(np.uint32)
    for w in range(2):
        M = np.zeros((8, 8), dtype=np.uint32)
        for lane in range(32):
            for j in range(2):
                M[lane // 4, 2 * (lane % 4) + j] = (int(src[32 * w + lane]) >> (16 * j)) & 0xFFFF
        for lane in range(32):
            want = int(M[2 * (lane % 4), lane // 4]) | int(M[2 * (lane % 4) + 1, lane // 4]) << 16
            assert got[32 * w + lane] == want


# --------------------------------------------------------------------------- measured H200 model

_SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "mma_h200_sample.npz"


def _sample_cases() -> list[tuple[str, str]]:
    keys = np.load(_SAMPLE).files
    return sorted({tuple(k.split("|")[:2]) for k in keys})  # type: ignore[misc]


@pytest.mark.parametrize("form,dist", _sample_cases())
def test_sm90_model_reproduces_recorded_h200_results(form: str, dist: str, monkeypatch) -> None:
    """One warp per float form and operand distribution (32 for one held-out case), recorded on
    an H200 with tests/emulator/mma_conformance.py: the "sm90" accumulation model must give the same bits
    (f64: NaN payloads aside, they follow fma's NaN rule, which is not fitted to the GPU)."""
    import semantics.ptx.mma as M

    monkeypatch.setattr(M, "ACCUMULATION", "sm90")
    data = np.load(_SAMPLE)
    f = Form(form)
    key = f"{form}|{dist}|"
    warps = data[key + "a"].shape[0] // 32
    frags = [tuple(data[key + x][32 * w: 32 * w + 32] for x in "abc") for w in range(warps)]
    got = f.run(frags)
    want = data[key + "d"].astype(np.uint64).reshape(got.shape)
    if f.c == "f64":
        nan = np.isnan(got.view(np.float64)) & np.isnan(want.view(np.float64))
        assert ((got == want) | nan).all()
    else:
        assert (got == want).all(), np.argwhere(got != want)[:4]
