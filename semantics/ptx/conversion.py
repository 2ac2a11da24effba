"""Data movement between registers and conversions: mov, cvt (PTX 9.7.9.1, 9.7.9.21)."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics import convert as CV
from semantics.errors import Unsupported

from .core import Exec, check_mods, handler, rounding, tinfo

_CVT_MODS = {".rn", ".rz", ".rm", ".rp", ".rna", ".rni", ".rzi", ".rmi", ".rpi", ".ftz", ".sat",
             ".relu", ".satfinite"}


@handler("mov")
def mov(ins: A.Instruction, x: Exec) -> None:
    t = tinfo(ins.types[-1])
    check_mods(ins, set())
    dst, src = ins.operands[0], ins.operands[1]
    if isinstance(src, A.Vector):  # pack: mov.b64 d, {lo, hi} (element 0 in the low bits)
        parts = src.elements
        w = t.width // len(parts)
        acc = np.uint64(0)
        for i, p in enumerate(parts):
            v = x.read(p, f".b{w}").astype(np.uint64)
            acc = acc | (v << np.uint64(i * w))
        x.write(dst, np.asarray(acc).astype(t.dtype), t.name)
        return
    if isinstance(dst, A.Vector):  # unpack: mov.b64 {lo, hi}, s
        v = x.read(src, t.name).astype(np.uint64)
        w = t.width // len(dst.elements)
        for i, p in enumerate(dst.elements):
            if isinstance(p, A.Sink):
                continue
            part = (v >> np.uint64(i * w)) & np.uint64((1 << w) - 1)
            x.write(p, part.astype(tinfo(f"b{w}").dtype), f".b{w}")
        return
    x.write(dst, x.read(src, t.name), t.name)


@handler("cvt")
def cvt(ins: A.Instruction, x: Exec) -> None:
    if len(ins.types) != 2:
        raise Unsupported(f"{ins.name}: cvt takes a destination and a source type", ins)
    check_mods(ins, _CVT_MODS)
    dt, st = tinfo(ins.types[0]), tinfo(ins.types[1])
    mods = ins.modifiers
    kw = dict(relu_=".relu" in mods, satfinite=".satfinite" in mods)
    try:
        if dt.lanes == 2 and st.name == "f32":  # cvt.rn.f16x2.f32 d, a, b
            a, b = x.read(ins.operands[1], ".f32"), x.read(ins.operands[2], ".f32")
            r = CV.cvt_x2_f32(a, b, dt.name, rounding(ins) or "rn", **kw)
        elif dt.lanes == 2 and st.lanes == 2:
            a = x.read(ins.operands[1], f".b{st.width}")
            r = CV.cvt_x2_from_x2(a, dt.name, st.name, rounding(ins) or "rn", **kw)
        elif dt.lanes > 1 or st.lanes > 1:
            raise Unsupported(f"{ins.name}", ins)
        else:
            a = x.read(ins.operands[1], st.name)
            r = CV.cvt(a, dt.name, st.name, rounding(ins, None), ftz=".ftz" in mods, sat=".sat" in mods, **kw)
    except CV.ConvertError as e:
        raise Unsupported(f"{ins.name}: {e}", ins) from None
    x.write(ins.operands[0], np.asarray(r).astype(dt.dtype), dt.name)
