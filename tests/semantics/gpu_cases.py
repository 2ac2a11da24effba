"""The instruction cases run by ``gpu_conformance.py``: PTX text and the model's answer."""

from __future__ import annotations

import numpy as np
from gpu_conformance import Case

from semantics import bitops as bo
from semantics import compare as cp
from semantics import convert as cv
from semantics import floatops as fo
from semantics import fspecial as fs
from semantics import intops as io
from semantics.formats import BF16, F16, F32, F64

CASES: list[Case] = []
MODES = ("rn", "rz", "rm", "rp")


def add(*cases: Case) -> None:
    CASES.extend(cases)


def u32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.uint32)


def pred(asm_cmp: str) -> str:
    """Wrap a predicate-producing instruction (writing p) so that %0 gets 1 or 0."""
    return "{ .reg .pred p; " + asm_cmp + " selp.u32 %0, 1, 0, p; }"


# --------------------------------------------------------------------------------------------- f32
for op in ("add", "sub", "mul"):
    for r in MODES:
        add(Case(f"{op}.{r}.f32", f"{op}.{r}.f32 %0, %1, %2;", ("f32", "f32"), "f32",
                 lambda a, b, op=op, r=r: getattr(fo, op)(a, b, F32, r), nan_fmt=F32))
add(Case("add.rn.ftz.f32", "add.rn.ftz.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.add(a, b, F32, "rn", ftz=True), nan_fmt=F32))
add(Case("mul.rz.ftz.f32", "mul.rz.ftz.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.mul(a, b, F32, "rz", ftz=True), nan_fmt=F32))
add(Case("mul.rp.ftz.f32", "mul.rp.ftz.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.mul(a, b, F32, "rp", ftz=True), nan_fmt=F32))
add(Case("add.rn.sat.f32", "add.rn.sat.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.add(a, b, F32, "rn", sat=True), nan_fmt=F32))
add(Case("mul.rn.ftz.sat.f32", "mul.rn.ftz.sat.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.mul(a, b, F32, "rn", ftz=True, sat=True), nan_fmt=F32))
for r in MODES:
    add(Case(f"fma.{r}.f32", f"fma.{r}.f32 %0, %1, %2, %3;", ("f32", "f32", "f32"), "f32",
             lambda a, b, c, r=r: fo.fma(a, b, c, F32, r), nan_fmt=F32))
    add(Case(f"div.{r}.f32", f"div.{r}.f32 %0, %1, %2;", ("f32", "f32"), "f32",
             lambda a, b, r=r: fo.div(a, b, F32, r), nan_fmt=F32))
add(Case("fma.rn.ftz.f32", "fma.rn.ftz.f32 %0, %1, %2, %3;", ("f32", "f32", "f32"), "f32",
         lambda a, b, c: fo.fma(a, b, c, F32, "rn", ftz=True), nan_fmt=F32))
add(Case("fma.rm.ftz.f32", "fma.rm.ftz.f32 %0, %1, %2, %3;", ("f32", "f32", "f32"), "f32",
         lambda a, b, c: fo.fma(a, b, c, F32, "rm", ftz=True), nan_fmt=F32))
add(Case("fma.rn.sat.f32", "fma.rn.sat.f32 %0, %1, %2, %3;", ("f32", "f32", "f32"), "f32",
         lambda a, b, c: fo.fma(a, b, c, F32, "rn", sat=True), nan_fmt=F32))
add(Case("div.rn.ftz.f32", "div.rn.ftz.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fo.div(a, b, F32, "rn", ftz=True), nan_fmt=F32))
for r in ("rn", "rz"):
    add(Case(f"rcp.{r}.f32", f"rcp.{r}.f32 %0, %1;", ("f32",), "f32", lambda a, r=r: fo.rcp(a, F32, r), nan_fmt=F32))
for r in ("rn", "rm", "rp"):
    add(Case(f"sqrt.{r}.f32", f"sqrt.{r}.f32 %0, %1;", ("f32",), "f32", lambda a, r=r: fo.sqrt(a, F32, r),
             nan_fmt=F32))
add(Case("sqrt.rn.ftz.f32", "sqrt.rn.ftz.f32 %0, %1;", ("f32",), "f32", lambda a: fo.sqrt(a, F32, "rn", ftz=True),
         nan_fmt=F32))
add(Case("div.full.f32", "div.full.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.div_full(a, b),
         nan_fmt=F32, approx_ulps=2))
add(Case("div.approx.f32", "div.approx.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.div_approx(a, b),
         nan_fmt=F32, approx_ulps=2))
for fn, ulps in (("rcp", 1), ("sqrt", 1), ("rsqrt", 1), ("ex2", 2), ("lg2", 4), ("sin", 8), ("cos", 8),
                 ("tanh", 2048)):
    add(Case(f"{fn}.approx.f32", f"{fn}.approx.f32 %0, %1;", ("f32",), "f32", lambda a, fn=fn: fs.approx(fn, a),
             nan_fmt=F32, approx_ulps=ulps))
    if fn != "tanh":
        add(Case(f"{fn}.approx.ftz.f32", f"{fn}.approx.ftz.f32 %0, %1;", ("f32",), "f32",
                 lambda a, fn=fn: fs.approx(fn, a, ftz=True), nan_fmt=F32, approx_ulps=ulps))
add(Case("min.f32", "min.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.fmin(a, b), nan_fmt=F32))
add(Case("max.f32", "max.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.fmax(a, b), nan_fmt=F32))
add(Case("min.ftz.f32", "min.ftz.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.fmin(a, b, ftz=True),
         nan_fmt=F32))
add(Case("max.NaN.f32", "max.NaN.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.fmax(a, b, nan=True),
         nan_fmt=F32))
add(Case("min.xorsign.abs.f32", "min.xorsign.abs.f32 %0, %1, %2;", ("f32", "f32"), "f32",
         lambda a, b: fs.fmin(a, b, abs_=True, xorsign=True), nan_fmt=F32))
# abs/neg: NaN payload behaviour is the question, so compare bits exactly
add(Case("abs.f32", "abs.f32 %0, %1;", ("f32",), "f32", lambda a: fs.fabs(a)))
add(Case("neg.f32", "neg.f32 %0, %1;", ("f32",), "f32", lambda a: fs.fneg(a)))
add(Case("abs.ftz.f32", "abs.ftz.f32 %0, %1;", ("f32",), "f32", lambda a: fs.fabs(a, ftz=True)))
add(Case("copysign.f32", "copysign.f32 %0, %1, %2;", ("f32", "f32"), "f32", lambda a, b: fs.copysign(a, b)))
for t in fs.TESTP_OPS:
    add(Case(f"testp.{t}.f32", pred(f"testp.{t}.f32 p, %1;"), ("f32",), "b32", lambda a, t=t: u32(fs.testp(a, t))))
for c in ("lt", "equ", "nan", "ge"):
    add(Case(f"setp.{c}.f32", pred(f"setp.{c}.f32 p, %1, %2;"), ("f32", "f32"), "b32",
             lambda a, b, c=c: u32(cp.compare(a, b, c, F32))))
add(Case("setp.eq.ftz.f32", pred("setp.eq.ftz.f32 p, %1, %2;"), ("f32", "f32"), "b32",
         lambda a, b: u32(cp.compare(a, b, "eq", F32, ftz=True))))
add(Case("set.gt.u32.f32", "set.gt.u32.f32 %0, %1, %2;", ("f32", "f32"), "b32",
         lambda a, b: cp.set_(a, b, "gt", F32, "u32")))
add(Case("slct.b32.f32", "slct.b32.f32 %0, %1, %2, %3;", ("b32", "b32", "f32"), "b32",
         lambda a, b, c: cp.slct(a, b, c, "f32")))

# --------------------------------------------------------------------------------------------- f64
for op in ("add", "mul"):
    for r in MODES:
        add(Case(f"{op}.{r}.f64", f"{op}.{r}.f64 %0, %1, %2;", ("f64", "f64"), "f64",
                 lambda a, b, op=op, r=r: getattr(fo, op)(a, b, F64, r), nan_fmt=F64))
for r in ("rn", "rz", "rp"):
    add(Case(f"fma.{r}.f64", f"fma.{r}.f64 %0, %1, %2, %3;", ("f64", "f64", "f64"), "f64",
             lambda a, b, c, r=r: fo.fma(a, b, c, F64, r), nan_fmt=F64))
    add(Case(f"div.{r}.f64", f"div.{r}.f64 %0, %1, %2;", ("f64", "f64"), "f64",
             lambda a, b, r=r: fo.div(a, b, F64, r), nan_fmt=F64))
    add(Case(f"sqrt.{r}.f64", f"sqrt.{r}.f64 %0, %1;", ("f64",), "f64", lambda a, r=r: fo.sqrt(a, F64, r),
             nan_fmt=F64))
# f64 NaN propagation: exact bits (payloads are documented to propagate)
add(Case("add.rn.f64.nanbits", "add.rn.f64 %0, %1, %2;", ("f64", "f64"), "f64", lambda a, b: fo.add(a, b, F64)))
add(Case("rcp.approx.ftz.f64", "rcp.approx.ftz.f64 %0, %1;", ("f64",), "f64", lambda a: fs.rcp_approx_ftz_f64(a),
         nan_fmt=F64, approx_ulps=2.0**33))
add(Case("min.f64", "min.f64 %0, %1, %2;", ("f64", "f64"), "f64", lambda a, b: fs.fmin(a, b, F64), nan_fmt=F64))
add(Case("abs.f64", "abs.f64 %0, %1;", ("f64",), "f64", lambda a: fs.fabs(a, F64)))
add(Case("neg.f64", "neg.f64 %0, %1;", ("f64",), "f64", lambda a: fs.fneg(a, F64)))

# --------------------------------------------------------------------------------------------- f16 / bf16
for name, fmt in (("f16", F16), ("bf16", BF16)):
    add(Case(f"add.rn.{name}", f"add.rn.{name} %0, %1, %2;", ("b16", "b16"), "b16",
             lambda a, b, fmt=fmt: fo.add(a, b, fmt), nan_fmt=fmt))
    add(Case(f"mul.rn.{name}", f"mul.rn.{name} %0, %1, %2;", ("b16", "b16"), "b16",
             lambda a, b, fmt=fmt: fo.mul(a, b, fmt), nan_fmt=fmt))
    add(Case(f"fma.rn.{name}", f"fma.rn.{name} %0, %1, %2, %3;", ("b16", "b16", "b16"), "b16",
             lambda a, b, c, fmt=fmt: fo.fma(a, b, c, fmt), nan_fmt=fmt))
    add(Case(f"fma.rn.relu.{name}", f"fma.rn.relu.{name} %0, %1, %2, %3;", ("b16", "b16", "b16"), "b16",
             lambda a, b, c, fmt=fmt: fo.fma(a, b, c, fmt, relu_=True)))
    add(Case(f"min.{name}", f"min.{name} %0, %1, %2;", ("b16", "b16"), "b16",
             lambda a, b, fmt=fmt: fs.fmin(a, b, fmt), nan_fmt=fmt))
    add(Case(f"max.NaN.{name}", f"max.NaN.{name} %0, %1, %2;", ("b16", "b16"), "b16",
             lambda a, b, fmt=fmt: fs.fmax(a, b, fmt, nan=True), nan_fmt=fmt))
    add(Case(f"neg.{name}", f"neg.{name} %0, %1;", ("b16",), "b16", lambda a, fmt=fmt: fs.fneg(a, fmt)))
    add(Case(f"abs.{name}", f"abs.{name} %0, %1;", ("b16",), "b16", lambda a, fmt=fmt: fs.fabs(a, fmt)))
add(Case("add.rn.ftz.f16", "add.rn.ftz.f16 %0, %1, %2;", ("b16", "b16"), "b16",
         lambda a, b: fo.add(a, b, F16, ftz=True), nan_fmt=F16))
add(Case("mul.rn.sat.f16", "mul.rn.sat.f16 %0, %1, %2;", ("b16", "b16"), "b16",
         lambda a, b: fo.mul(a, b, F16, sat=True), nan_fmt=F16))
add(Case("add.rn.f16x2", "add.rn.f16x2 %0, %1, %2;", ("b32", "b32"), "b32",
         lambda a, b: fo.packed(fo.add, a, b, fmt=F16), pools=("f16x2", "f16x2")))
add(Case("fma.rn.bf16x2", "fma.rn.bf16x2 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
         lambda a, b, c: fo.packed(fo.fma, a, b, c, fmt=BF16), pools=("f16x2", "f16x2", "f16x2")))
add(Case("ex2.approx.f16", "ex2.approx.f16 %0, %1;", ("b16",), "b16", lambda a: fs.approx("ex2", a, F16),
         pools=("f16all",), nan_fmt=F16, approx_ulps=1))
add(Case("tanh.approx.f16", "tanh.approx.f16 %0, %1;", ("b16",), "b16", lambda a: fs.approx("tanh", a, F16),
         pools=("f16all",), nan_fmt=F16, approx_ulps=2))
add(Case("ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16 %0, %1;", ("b16",), "b16",
         lambda a: fs.approx("ex2", a, BF16, ftz=True), pools=("f16all",), nan_fmt=BF16, approx_ulps=1))
add(Case("setp.ltu.f16", pred("setp.ltu.f16 p, %1, %2;"), ("b16", "b16"), "b32",
         lambda a, b: u32(cp.compare(a, b, "ltu", F16))))

# --------------------------------------------------------------------------------------------- cvt
for r in MODES:
    add(Case(f"cvt.{r}.f16.f32", f"cvt.{r}.f16.f32 %0, %1;", ("f32",), "b16", lambda a, r=r: cv.cvt(a, "f16", "f32", r)))
add(Case("cvt.rn.satfinite.f16.f32", "cvt.rn.satfinite.f16.f32 %0, %1;", ("f32",), "b16",
         lambda a: cv.cvt(a, "f16", "f32", "rn", satfinite=True)))
add(Case("cvt.rn.relu.f16.f32", "cvt.rn.relu.f16.f32 %0, %1;", ("f32",), "b16",
         lambda a: cv.cvt(a, "f16", "f32", "rn", relu_=True)))
add(Case("cvt.rp.ftz.f16.f32", "cvt.rp.ftz.f16.f32 %0, %1;", ("f32",), "b16",
         lambda a: cv.cvt(a, "f16", "f32", "rp", ftz=True)))
for r in ("rn", "rz"):
    add(Case(f"cvt.{r}.bf16.f32", f"cvt.{r}.bf16.f32 %0, %1;", ("f32",), "b16", lambda a, r=r: cv.cvt(a, "bf16", "f32", r)))
add(Case("cvt.rn.relu.satfinite.bf16.f32", "cvt.rn.relu.satfinite.bf16.f32 %0, %1;", ("f32",), "b16",
         lambda a: cv.cvt(a, "bf16", "f32", "rn", relu_=True, satfinite=True)))
add(Case("cvt.rna.tf32.f32", "cvt.rna.tf32.f32 %0, %1;", ("f32",), "b32", lambda a: cv.cvt(a, "tf32", "f32", "rna")))
add(Case("cvt.rna.satfinite.tf32.f32", "cvt.rna.satfinite.tf32.f32 %0, %1;", ("f32",), "b32",
         lambda a: cv.cvt(a, "tf32", "f32", "rna", satfinite=True)))
add(Case("cvt.f32.f16", "cvt.f32.f16 %0, %1;", ("b16",), "f32", lambda a: cv.cvt(a, "f32", "f16"), pools=("f16all",)))
add(Case("cvt.f32.bf16", "cvt.f32.bf16 %0, %1;", ("b16",), "f32", lambda a: cv.cvt(a, "f32", "bf16"), pools=("f16all",)))
add(Case("cvt.ftz.f32.f16", "cvt.ftz.f32.f16 %0, %1;", ("b16",), "f32", lambda a: cv.cvt(a, "f32", "f16", ftz=True),
         pools=("f16all",)))
add(Case("cvt.f64.f32", "cvt.f64.f32 %0, %1;", ("f32",), "f64", lambda a: cv.cvt(a, "f64", "f32")))
add(Case("cvt.f64.f16", "cvt.f64.f16 %0, %1;", ("b16",), "f64", lambda a: cv.cvt(a, "f64", "f16"), pools=("f16all",)))
for r in MODES:
    add(Case(f"cvt.{r}.f32.f64", f"cvt.{r}.f32.f64 %0, %1;", ("f64",), "f32", lambda a, r=r: cv.cvt(a, "f32", "f64", r)))
add(Case("cvt.rn.ftz.f32.f64", "cvt.rn.ftz.f32.f64 %0, %1;", ("f64",), "f32",
         lambda a: cv.cvt(a, "f32", "f64", "rn", ftz=True)))
add(Case("cvt.rn.f16.f64", "cvt.rn.f16.f64 %0, %1;", ("f64",), "b16", lambda a: cv.cvt(a, "f16", "f64", "rn")))
add(Case("cvt.rz.bf16.f64", "cvt.rz.bf16.f64 %0, %1;", ("f64",), "b16", lambda a: cv.cvt(a, "bf16", "f64", "rz")))
add(Case("cvt.rn.bf16.f16", "cvt.rn.bf16.f16 %0, %1;", ("b16",), "b16", lambda a: cv.cvt(a, "bf16", "f16", "rn"),
         pools=("f16all",)))
add(Case("cvt.rz.f16.bf16", "cvt.rz.f16.bf16 %0, %1;", ("b16",), "b16", lambda a: cv.cvt(a, "f16", "bf16", "rz"),
         pools=("f16all",)))
# float -> int
for dst, src, r, out in (("s32", "f32", "rni", "b32"), ("s32", "f32", "rzi", "b32"), ("u32", "f32", "rmi", "b32"),
                         ("s32", "f32", "rpi", "b32"), ("s64", "f32", "rni", "b64"), ("u64", "f32", "rzi", "b64"),
                         ("s32", "f64", "rzi", "b32"), ("u32", "f64", "rni", "b32"), ("s64", "f64", "rzi", "b64"),
                         ("u64", "f64", "rpi", "b64"), ("u16", "f32", "rzi", "b16"), ("s16", "f64", "rni", "b16"),
                         ("s32", "f16", "rni", "b32"), ("u8", "bf16", "rzi", "b16"), ("s8", "f32", "rni", "b16")):
    text = f"cvt.{r}.{dst}.{src} %0, %1;"
    if src == "bf16" and dst == "u8":  # ptxas wants a .u8 destination register for .u8.bf16
        text = "{ .reg .u8 q; " + text.replace("%0", "q") + " cvt.u16.u8 %0, q; }"
    add(Case(f"cvt.{r}.{dst}.{src}", text, ({"f16": "b16", "bf16": "b16"}.get(src, src),),
             out, lambda a, dst=dst, src=src, r=r, out=out: cv.to_register(cv.cvt(a, dst, src, r), dst, int(out[1:])),
             pools=("f16all",) if src in ("f16", "bf16") else ()))
add(Case("cvt.rpi.ftz.s32.f32", "cvt.rpi.ftz.s32.f32 %0, %1;", ("f32",), "b32",
         lambda a: cv.cvt(a, "s32", "f32", "rpi", ftz=True)))
# int -> float
for dst, src, r, ins, out in (("f32", "s32", "rn", "b32", "f32"), ("f32", "u32", "rz", "b32", "f32"),
                              ("f32", "s64", "rm", "b64", "f32"), ("f32", "u64", "rp", "b64", "f32"),
                              ("f64", "s64", "rn", "b64", "f64"), ("f64", "u64", "rz", "b64", "f64"),
                              ("f16", "s32", "rn", "b32", "b16"), ("f16", "u32", "rz", "b32", "b16"),
                              ("bf16", "s32", "rn", "b32", "b16"), ("f16", "s64", "rp", "b64", "b16")):
    add(Case(f"cvt.{r}.{dst}.{src}", f"cvt.{r}.{dst}.{src} %0, %1;", (ins,), out,
             lambda a, dst=dst, src=src, r=r: cv.cvt(a, dst, src, r)))
# float -> float integral
for t, r, ftz in (("f32", "rni", False), ("f32", "rmi", False), ("f32", "rpi", True), ("f64", "rzi", False)):
    add(Case(f"cvt.{r}{'.ftz' if ftz else ''}.{t}.{t}", f"cvt.{r}{'.ftz' if ftz else ''}.{t}.{t} %0, %1;", (t,), t,
             lambda a, t=t, r=r, ftz=ftz: cv.cvt(a, t, t, r, ftz=ftz)))
add(Case("cvt.rni.f16.f16", "cvt.rni.f16.f16 %0, %1;", ("b16",), "b16", lambda a: cv.cvt(a, "f16", "f16", "rni"),
         pools=("f16all",)))
# int -> int (16-bit results land in .u16 registers)
for dst, src, sat, ins, out in (("u16", "u32", False, "b32", "b16"), ("s16", "s32", True, "b32", "b16"),
                                ("u16", "s32", True, "b32", "b16"), ("s64", "s32", False, "b32", "b64"),
                                ("u32", "s64", True, "b64", "b32"), ("s32", "u64", True, "b64", "b32"),
                                ("u32", "s16", False, "b16", "b32"), ("s8", "s32", True, "b32", "b16"),
                                ("u64", "s8", False, "b16", "b64")):
    add(Case(f"cvt{'.sat' if sat else ''}.{dst}.{src}", f"cvt{'.sat' if sat else ''}.{dst}.{src} %0, %1;", (ins,), out,
             lambda a, dst=dst, src=src, sat=sat, out=out: cv.to_register(cv.cvt(a, dst, src, sat=sat), dst,
                                                                           int(out[1:]))))
# packed
add(Case("cvt.rn.f16x2.f32", "cvt.rn.f16x2.f32 %0, %1, %2;", ("f32", "f32"), "b32",
         lambda a, b: cv.cvt_x2_f32(a, b, "f16x2", "rn")))
add(Case("cvt.rz.relu.bf16x2.f32", "cvt.rz.relu.bf16x2.f32 %0, %1, %2;", ("f32", "f32"), "b32",
         lambda a, b: cv.cvt_x2_f32(a, b, "bf16x2", "rz", relu_=True)))
for f8 in ("e4m3x2", "e5m2x2"):
    add(Case(f"cvt.rn.satfinite.{f8}.f32", f"cvt.rn.satfinite.{f8}.f32 %0, %1, %2;", ("f32", "f32"), "b16",
             lambda a, b, f8=f8: cv.cvt_x2_f32(a, b, f8, "rn", satfinite=True)))
    add(Case(f"cvt.rn.satfinite.relu.{f8}.f32", f"cvt.rn.satfinite.relu.{f8}.f32 %0, %1, %2;", ("f32", "f32"), "b16",
             lambda a, b, f8=f8: cv.cvt_x2_f32(a, b, f8, "rn", satfinite=True, relu_=True)))
    add(Case(f"cvt.rn.f16x2.{f8}", f"cvt.rn.f16x2.{f8} %0, %1;", ("b16",), "b32",
             lambda a, f8=f8: cv.cvt_x2_from_x2(a, "f16x2", f8), pools=("f16all",)))
    add(Case(f"cvt.rn.satfinite.{f8}.f16x2", f"cvt.rn.satfinite.{f8}.f16x2 %0, %1;", ("b32",), "b16",
             lambda a, f8=f8: cv.cvt_x2_from_x2(a, f8, "f16x2", satfinite=True), pools=("f16x2",)))

# --------------------------------------------------------------------------------------------- integers
for w in (32, 64):
    t = f"b{w}"
    for sg in ("s", "u"):
        s = sg == "s"
        add(Case(f"div.{sg}{w}", f"div.{sg}{w} %0, %1, %2;", (t, t), t, lambda a, b, w=w, s=s: io.div(a, b, w, s)[0]))
        add(Case(f"rem.{sg}{w}", f"rem.{sg}{w} %0, %1, %2;", (t, t), t, lambda a, b, w=w, s=s: io.rem(a, b, w, s)[0]))
        add(Case(f"mul.hi.{sg}{w}", f"mul.hi.{sg}{w} %0, %1, %2;", (t, t), t,
                 lambda a, b, w=w, s=s: io.mul(a, b, w, s, "hi")))
    add(Case(f"popc.b{w}", f"popc.b{w} %0, %1;", (t,), "b32", lambda a, w=w: bo.popc(a, w)))
    add(Case(f"clz.b{w}", f"clz.b{w} %0, %1;", (t,), "b32", lambda a, w=w: bo.clz(a, w)))
    add(Case(f"brev.b{w}", f"brev.b{w} %0, %1;", (t,), t, lambda a, w=w: bo.brev(a, w)))
    add(Case(f"bfind.s{w}", f"bfind.s{w} %0, %1;", (t,), "b32", lambda a, w=w: bo.bfind(a, w, True)))
    add(Case(f"bfind.shiftamt.u{w}", f"bfind.shiftamt.u{w} %0, %1;", (t,), "b32",
             lambda a, w=w: bo.bfind(a, w, False, shiftamt=True)))
    add(Case(f"bfe.s{w}", f"bfe.s{w} %0, %1, %2, %3;", (t, "b32", "b32"), t,
             lambda a, b, c, w=w: bo.bfe(a, b, c, w, True), pools=(t, "small", "small")))
    add(Case(f"bfe.u{w}", f"bfe.u{w} %0, %1, %2, %3;", (t, "b32", "b32"), t,
             lambda a, b, c, w=w: bo.bfe(a, b, c, w, False), pools=(t, "small", "small")))
    add(Case(f"shl.b{w}", f"shl.b{w} %0, %1, %2;", (t, "b32"), t, lambda a, b, w=w: bo.shl(a, b, w),
             pools=(t, "small")))
    add(Case(f"shr.s{w}", f"shr.s{w} %0, %1, %2;", (t, "b32"), t, lambda a, b, w=w: bo.shr(a, b, w, True),
             pools=(t, "small")))
    add(Case(f"shr.u{w}", f"shr.u{w} %0, %1, %2;", (t, "b32"), t, lambda a, b, w=w: bo.shr(a, b, w),
             pools=(t, "small")))
add(Case("bfi.b32", "bfi.b32 %0, %1, %2, %3, %4;", ("b32", "b32", "b32", "b32"), "b32",
         lambda a, b, c, d: bo.bfi(a, b, c, d, 32), pools=("b32", "b32", "small", "small")))
add(Case("bfi.b64", "bfi.b64 %0, %1, %2, %3, %4;", ("b64", "b64", "b32", "b32"), "b64",
         lambda a, b, c, d: bo.bfi(a, b, c, d, 64), pools=("b64", "b64", "small", "small")))
add(Case("shr.s16", "shr.s16 %0, %1, %2;", ("b16", "b32"), "b16", lambda a, b: bo.shr(a, b, 16, True),
         pools=("b16", "small")))
add(Case("mul.wide.s32", "mul.wide.s32 %0, %1, %2;", ("b32", "b32"), "b64", lambda a, b: io.mul(a, b, 32, True, "wide")))
add(Case("mad.hi.sat.s32", "mad.hi.sat.s32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
         lambda a, b, c: io.mad(a, b, c, 32, True, "hi", sat=True)))
add(Case("add.sat.s32", "add.sat.s32 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.add(a, b, 32, True, sat=True)))
add(Case("sub.sat.s32", "sub.sat.s32 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.sub(a, b, 32, True, sat=True)))
add(Case("mul24.hi.s32", "mul24.hi.s32 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.mul24(a, b, True, "hi")))
add(Case("mul24.lo.u32", "mul24.lo.u32 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.mul24(a, b, False, "lo")))
add(Case("sad.s32", "sad.s32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32", lambda a, b, c: io.sad(a, b, c, 32, True)))
add(Case("abs.s32", "abs.s32 %0, %1;", ("b32",), "b32", lambda a: io.abs_(a, 32)))
add(Case("min.relu.s32", "min.relu.s32 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.min_(a, b, 32, True, relu=True)))
add(Case("max.u16x2", "max.u16x2 %0, %1, %2;", ("b32", "b32"), "b32",
         lambda a, b: io.simd(io.max_, a, b, lane_bits=16)))
add(Case("add.s16x2", "add.s16x2 %0, %1, %2;", ("b32", "b32"), "b32", lambda a, b: io.simd(io.add, a, b, lane_bits=16)))
for mode in ("clamp", "wrap"):
    for d in ("l", "r"):
        add(Case(f"shf.{d}.{mode}.b32", f"shf.{d}.{mode}.b32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
                 lambda a, b, c, d=d, mode=mode: bo.shf(a, b, c, d, mode), pools=("b32", "b32", "small")))
    add(Case(f"bmsk.{mode}.b32", f"bmsk.{mode}.b32 %0, %1, %2;", ("b32", "b32"), "b32",
             lambda a, b, mode=mode: bo.bmsk(a, b, mode), pools=("small", "small")))
    add(Case(f"szext.{mode}.s32", f"szext.{mode}.s32 %0, %1, %2;", ("b32", "b32"), "b32",
             lambda a, b, mode=mode: bo.szext(a, b, mode, True), pools=("b32", "small")))
for mode in bo.PRMT_MODES:
    m = f".{mode}" if mode else ""
    add(Case(f"prmt.b32{m}", f"prmt.b32{m} %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
             lambda a, b, c, mode=mode: bo.prmt(a, b, c, mode)))
for lut in (0x96, 0xE8, 0x1A, 0x40, 0x00, 0xFF):
    add(Case(f"lop3.b32.{lut:#04x}", f"lop3.b32 %0, %1, %2, %3, {lut};", ("b32", "b32", "b32"), "b32",
             lambda a, b, c, lut=lut: bo.lop3(a, b, c, lut)))
add(Case("dp4a.s32.u32", "dp4a.s32.u32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
         lambda a, b, c: io.dp4a(a, b, c, True, False)))
add(Case("dp2a.hi.u32.s32", "dp2a.hi.u32.s32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
         lambda a, b, c: io.dp2a(a, b, c, False, True, "hi")))
add(Case("fns.b32", "fns.b32 %0, %1, %2, %3;", ("b32", "b32", "b32"), "b32",
         lambda a, b, c: bo.fns(a, b, c)[0], pools=("b32", "small", "small")))
# carries: expose CC.CF through addc/subc of zeros
add(Case("add.cc.u32->CF", "{ .reg .u32 t; add.cc.u32 t, %1, %2; addc.u32 %0, 0, 0; }", ("b32", "b32"), "b32",
         lambda a, b: u32(io.add_cc(a, b, 32)[1])))
add(Case("sub.cc.u32->CF", "{ .reg .u32 t; sub.cc.u32 t, %1, %2; subc.u32 %0, 0, 0; }", ("b32", "b32"), "b32",
         lambda a, b: io.sub_cc(np.zeros_like(a), np.zeros_like(a), 32, io.sub_cc(a, b, 32)[1])[0]))
add(Case("addc.cc.u32 chain", "{ .reg .u32 t; add.cc.u32 t, %1, %2; addc.cc.u32 t, %1, %3; addc.u32 %0, 0, 0; }",
         ("b32", "b32", "b32"), "b32",
         lambda a, b, c: u32(io.add_cc(a, c, 32, io.add_cc(a, b, 32)[1])[1])))
add(Case("mad.lo.cc.u32->d", "{ .reg .u32 t; mad.lo.cc.u32 t, %1, %2, %3; addc.u32 %0, t, 0; }",
         ("b32", "b32", "b32"), "b32",
         lambda a, b, c: io.add(*io.mad_cc(a, b, c, 32, False, "lo"), 32)))
add(Case("madc.hi.cc.u64 chain", "{ .reg .u64 t; mad.lo.cc.u64 t, %1, %2, %3; madc.hi.u64 %0, %1, %2, 0; }",
         ("b64", "b64", "b64"), "b64",
         lambda a, b, c: io.mad_cc(a, b, np.zeros_like(a), 64, False, "hi", io.mad_cc(a, b, c, 64, False, "lo")[1])[0]))
add(Case("setp.lt.s32", pred("setp.lt.s32 p, %1, %2;"), ("b32", "b32"), "b32",
         lambda a, b: u32(cp.compare(a, b, "lt", ("s", 32)))))
add(Case("setp.hs.u64", pred("setp.hs.u64 p, %1, %2;"), ("b64", "b64"), "b32",
         lambda a, b: u32(cp.compare(a, b, "hs", ("u", 64)))))

# --------------------------------------------------------------------------------------------- NaN probes
# A few NaNs crossed with each other (grid only) to see which operand's payload an f64 result keeps.
for op, n in (("add.rn", 2), ("sub.rn", 2), ("mul.rn", 2), ("div.rn", 2), ("fma.rn", 3), ("min", 2), ("max", 2)):
    fn = {"add.rn": lambda a, b: fo.add(a, b, F64), "sub.rn": lambda a, b: fo.sub(a, b, F64),
          "mul.rn": lambda a, b: fo.mul(a, b, F64), "div.rn": lambda a, b: fo.div(a, b, F64),
          "fma.rn": lambda a, b, c: fo.fma(a, b, c, F64), "min": lambda a, b: fs.fmin(a, b, F64),
          "max": lambda a, b: fs.fmax(a, b, F64)}[op]
    args = ", ".join(f"%{i + 1}" for i in range(n))
    add(Case(f"probe.{op}.f64", f"{op}.f64 %0, {args};", ("f64",) * n, "f64", fn, pools=("f64nan",) * n,
             extra={"grid_only": True}))

# --------------------------------------------------------------------------------------------- manual bounds
# For each .approx case, check the hardware against the manual's own promise (9.7.3.x).


def _ulp32(v: np.ndarray) -> np.ndarray:
    return 2.0 ** np.maximum(np.frexp(np.abs(v))[1] - 24, -149)


def _normal(v: np.ndarray) -> np.ndarray:
    return np.isfinite(v) & ((np.abs(v) >= 2.0**-126) | (v == 0)) & (np.abs(v) < 3.4e38)


_PI = np.pi
BOUNDS = {
    "rcp": lambda x, y: (np.abs(y - 1 / x) <= _ulp32(1 / x), _normal(x) & (x != 0) & _normal(1 / x)),
    "sqrt": lambda x, y: (np.abs(y - np.sqrt(x)) <= 2.0**-23 * np.sqrt(x), _normal(x) & (x > 0)),
    "rsqrt": lambda x, y: (np.abs(y - 1 / np.sqrt(x)) <= 2.0**-22.9 / np.sqrt(x), _normal(x) & (x > 0)),
    "ex2": lambda x, y: (np.abs(y - np.exp2(x)) <= 2 * _ulp32(np.exp2(x)), _normal(x) & _normal(np.exp2(x))),
    "lg2": lambda x, y: (np.abs(y - np.log2(x)) <= np.where((x > 0.5) & (x < 2), 2.0**-22, 2.0**-22 * np.abs(np.log2(x))),
                         _normal(x) & (x > 0)),
    "sin": lambda x, y: (np.abs(y - np.sin(x)) <= np.where(np.abs(x) <= 2 * _PI, 2.0**-20.5, 2.0**-14.7),
                         _normal(x) & (np.abs(x) <= 100 * _PI)),
    "cos": lambda x, y: (np.abs(y - np.cos(x)) <= np.where(np.abs(x) <= 2 * _PI, 2.0**-20.5, 2.0**-14.7),
                         _normal(x) & (np.abs(x) <= 100 * _PI)),
    "tanh": lambda x, y: (np.abs(y - np.tanh(x)) <= 2.0**-11 * np.abs(np.tanh(x)), np.isfinite(x) & (x != 0)),
    "div": lambda a, b, y: (np.abs(y - a / b) <= 2 * _ulp32(a / b),
                            _normal(a) & (np.abs(b) >= 2.0**-126) & (np.abs(b) <= 2.0**126) & _normal(a / b)),
}
for case in CASES:
    head = case.name.split(".")[0]
    if case.approx_ulps is not None and case.name.endswith("f32") and head in BOUNDS:
        case.extra.update(bound=BOUNDS[head], in_fmts=(F32,) * len(case.ins), out_fmt=F32)

# Tininess for .ftz: 0x3F7FFFFF * 0x00800000 = 2**-126 - 2**-150 lies halfway between the largest
# subnormal and the smallest normal; .rn rounds it up to 2**-126.  A flush decided *before*
# rounding gives 0, one decided *after* rounding gives 2**-126 (our model).
for op, r, n in (("mul", "rn", 2), ("mul", "rp", 2), ("mul", "rz", 2), ("fma", "rn", 3), ("add", "rn", 2)):
    fn = (lambda a, b, r=r, op=op: getattr(fo, op)(a, b, F32, r, ftz=True)) if n == 2 else \
        (lambda a, b, c, r=r: fo.fma(a, b, c, F32, r, ftz=True))
    args = ", ".join(f"%{i + 1}" for i in range(n))
    add(Case(f"probe.{op}.{r}.ftz.f32", f"{op}.{r}.ftz.f32 %0, {args};", ("f32",) * n, "f32", fn,
             pools=("ftzprobe",) * n, extra={"grid_only": True}))
