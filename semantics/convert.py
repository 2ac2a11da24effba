"""``cvt``: bit-exact conversions between PTX types (section 9.7.9.21 of the PTX ISA 9.2).

``cvt(a, dtype, atype, rnd=..., ...)`` converts numpy arrays of bit patterns.  Scalar types:
u8..u64, s8..s64, f16, bf16, tf32 (destination only, from f32), f32, f64, and the narrow
formats e4m3, e5m2, e2m3, e3m2, e2m1 (one element, as used inside the packed forms).  Packed
forms (``cvt_x2_f32``, ``cvt_x2_from_x2``, ``cvt_f16x2_from_f8x2``...) follow the manual's
packing rules: the value from operand ``a`` (or from the upper half of a packed source) lands
in the upper half of ``d``.

Rounding: ``rnd`` in rn/rna/rz/rm/rp for float results, rni/rzi/rmi/rpi for float->integer
and float->float integral rounding.  Float->integer conversions saturate to the destination
range; NaN -> 0, except that f64 sources or 64-bit destinations give 1 << (width - 1).
"""

from __future__ import annotations

import numpy as np

from semantics.floatops import _step_f64, relu, saturate
from semantics.formats import (
    BF16,
    E2M1,
    E2M3,
    E3M2,
    E4M3,
    E5M2,
    F16,
    F32,
    F64,
    TF32,
    FloatFormat,
    decode,
    decode_ue8m0,
    encode_ue8m0,
    flush_subnormal,
    get_format,
    is_nan,
    round_f64,
    to_odd,
    two_sum,
)
from semantics.intops import limits, u, value, wrap

INT_TYPES = {f"{k}{w}": (k == "s", w) for k in "us" for w in (8, 16, 32, 64)}
FLOAT_TYPES = {"f16": F16, "bf16": BF16, "tf32": TF32, "f32": F32, "f64": F64,
               "e4m3": E4M3, "e5m2": E5M2, "e2m3": E2M3, "e3m2": E3M2, "e2m1": E2M1}
INT_ROUNDINGS = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
FLOAT_ROUNDINGS = ("rn", "rna", "rz", "rm", "rp")


class ConvertError(ValueError):
    """An invalid combination of cvt types and modifiers."""


def _kind(t: str) -> tuple[str, object]:
    t = t.lstrip(".")
    if t in INT_TYPES:
        return "int", INT_TYPES[t]
    if t in FLOAT_TYPES:
        return "float", FLOAT_TYPES[t]
    raise ConvertError(f"cvt: unsupported type .{t}")


def _rank(f: FloatFormat) -> tuple[int, int]:
    return (f.precision, f.ebits)


def cvt(a: np.ndarray, dtype: str, atype: str, rnd: str | None = None, *, ftz: bool = False, sat: bool = False,
        relu_: bool = False, satfinite: bool = False) -> np.ndarray:
    """cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a  ->  bits of ``dtype``."""
    dk, dinfo = _kind(dtype)
    sk, sinfo = _kind(atype)
    r = rnd.lstrip(".") if rnd else None
    if r is not None and r not in INT_ROUNDINGS and r not in FLOAT_ROUNDINGS:
        raise ConvertError(f"cvt: unknown rounding modifier .{r}")
    if ftz and F32 not in (dinfo, sinfo):
        raise ConvertError("cvt: .ftz needs .f32 as source or destination type")
    if dk == "int" and sk == "int":
        if r is not None:
            raise ConvertError("cvt: integer-to-integer conversions take no rounding modifier")
        return _int_to_int(a, dinfo, sinfo, sat)
    if dk == "int":
        if r not in INT_ROUNDINGS:
            raise ConvertError("cvt: float-to-integer conversions need .rni/.rzi/.rmi/.rpi")
        return _float_to_int(a, dinfo, sinfo, r, ftz)
    if sk == "int":
        if r not in FLOAT_ROUNDINGS:
            raise ConvertError("cvt: integer-to-float conversions need .rn/.rz/.rm/.rp")
        out = _int_to_float(a, dinfo, sinfo, r, satfinite)
    else:
        out = _float_to_float(a, dinfo, sinfo, r, ftz, satfinite)
    if relu_:
        out = relu(out, dinfo)
    if sat:
        if dinfo not in (F16, F32, F64):
            raise ConvertError("cvt: .sat on floating-point results applies to .f16, .f32, .f64")
        out = saturate(out, dinfo)
    return out


# ---------------------------------------------------------------------------------------------


def _int_to_int(a: np.ndarray, dinfo: tuple[bool, int], sinfo: tuple[bool, int], sat: bool) -> np.ndarray:
    (ds, dw), (ss, sw) = dinfo, sinfo
    v = value(a, sw, ss)
    if not sat:
        return wrap(v, dw)  # sign-extend / zero-extend / truncate
    lo, hi = limits(dw, ds)
    if v.dtype == np.uint64:  # u64 source: never below any lower limit
        return wrap(np.minimum(v, np.uint64(hi)), dw)
    return wrap(np.clip(v, lo, min(hi, (1 << 63) - 1)), dw)


def _float_to_int(a: np.ndarray, dinfo: tuple[bool, int], src: FloatFormat, r: str, ftz: bool) -> np.ndarray:
    ds, dw = dinfo
    if src in (E4M3, E5M2, E2M3, E3M2, E2M1, TF32):
        raise ConvertError(f"cvt: no conversion from .{src.name} to integers")
    b = np.asarray(a).astype(src.dtype)
    if ftz:
        b = flush_subnormal(b, src)
    with np.errstate(invalid="ignore"):
        x = INT_ROUNDINGS[r](decode(b, src))
    lo, hi = limits(dw, ds)
    nan = np.isnan(x)
    xs = np.where(nan, 0.0, x)
    over = xs >= float(hi) + 1.0  # 2**k, exact in binary64
    under = xs < float(lo)
    inside = np.where(over | under, 0.0, xs)
    ints = inside.astype(np.uint64) if (dw == 64 and not ds) else inside.astype(np.int64)
    out = wrap(ints, dw)
    dt = out.dtype.type
    out = np.where(over, dt(hi & ((1 << dw) - 1)), out)
    out = np.where(under, dt(lo & ((1 << dw) - 1)), out)
    nan_val = (1 << (dw - 1)) if (src is F64 or dw == 64) else 0
    return np.where(nan, dt(nan_val), out).astype(dt)


def _int_to_float(a: np.ndarray, dst: FloatFormat, sinfo: tuple[bool, int], r: str, satfinite: bool) -> np.ndarray:
    if dst in (TF32, E4M3, E5M2, E2M3, E3M2, E2M1):
        raise ConvertError(f"cvt: no conversion from integers to .{dst.name}")
    ss, sw = sinfo
    v = value(a, sw, ss)
    if sw < 64:
        x = v.astype(np.float64)  # exact
        return round_f64(x, dst, r, satfinite=satfinite)
    # 64-bit: split into exactly representable halves, then an exact pair (hi, lo)
    bits = u(a, 64)
    top = (bits >> np.uint64(32)).astype(np.int64)
    if ss:
        top = np.where(top >= 1 << 31, top - (1 << 32), top)
    hi_part = top.astype(np.float64) * 4294967296.0
    lo_part = (bits & np.uint64(0xFFFFFFFF)).astype(np.float64)
    hi, lo = two_sum(hi_part, lo_part)
    if dst is F64:
        return round_f64(_step_f64(hi, lo, r), F64)
    return round_f64(to_odd(hi, lo), dst, r, satfinite=satfinite)


def _float_to_float(a: np.ndarray, dst: FloatFormat, src: FloatFormat, r: str | None, ftz: bool,
                    satfinite: bool) -> np.ndarray:
    if src is TF32:
        raise ConvertError("cvt: .tf32 is a destination type only")
    b = np.asarray(a).astype(src.dtype)
    flush_out = ftz and dst is F32
    if r in INT_ROUNDINGS:
        if dst is not src:
            raise ConvertError("cvt: integer rounding between floats needs equal source and destination types")
        if ftz:  # documented for cvt.ftz.f32.f32 with integer rounding (9.7.9.21)
            b = flush_subnormal(b, src)
        with np.errstate(invalid="ignore"):
            out = round_f64(INT_ROUNDINGS[r](decode(b, src)), dst, "rn", ftz=flush_out)
        return _nan_convert(b, src, dst, out)
    # .ftz here flushes f32 *results* only: an H200 does not flush the f32 source of
    # cvt.rp.ftz.f16.f32 (a subnormal rounds up to the smallest f16 subnormal).
    x = decode(b, src)
    narrowing = _rank(dst) < _rank(src) or dst.ebits < src.ebits
    if dst is TF32:
        if src is not F32:
            raise ConvertError("cvt: .tf32 is converted from .f32 only")
        if r not in ("rna", "rn", "rz"):
            raise ConvertError("cvt.tf32.f32 takes .rna, .rn or .rz")
    if narrowing and r is None:
        raise ConvertError(f"cvt.{dst.name}.{src.name} needs a rounding modifier")
    if not narrowing and r is not None and dst is not src:
        raise ConvertError(f"cvt.{dst.name}.{src.name} is exact and takes no rounding modifier")
    if src is F32 and dst is TF32 and r == "rna":
        return _tf32_rna_sm90(b, satfinite)
    if src is F32 and dst in (BF16, TF32) and r in _DROP_ROUND and not satfinite:
        return _f32_drop_bits(b, dst, r)
    out = round_f64(x, dst, r or "rn", ftz=flush_out, satfinite=satfinite)
    return _nan_convert(b, src, dst, out)


def _nan_convert(b: np.ndarray, src: FloatFormat, dst: FloatFormat, out: np.ndarray) -> np.ndarray:
    """NaN results of float-to-float cvt, as measured on an H200 (sm_90).

    Widening to f64 keeps the sign and payload and sets the quiet bit; f64 -> f32 keeps the sign
    and the top 22 payload bits, quiet; f64 -> f16/bf16 keeps only the sign; bf16 -> f32 is a
    plain shift (even signalling NaNs stay signalling); integral rounding of f64 quiets the
    operand; every other conversion gives the destination's canonical NaN (0x7FFFFFFF, 0x7FFF).
    """
    nan = is_nan(b, src)
    if not nan.any():
        return out
    w = b.astype(np.uint64)
    sign = (w >> np.uint64(src.bits - 1)) & np.uint64(1)
    frac = w & np.uint64((1 << src.mbits) - 1) if src is not F64 else w & np.uint64((1 << 52) - 1)
    if dst is F64 and src is F64:
        val = w | np.uint64(1 << 51)
    elif dst is F64:  # f32 / f16 / bf16 -> f64 (bf16 by analogy with f32: not measured)
        val = (sign << np.uint64(63)) | np.uint64(0x7FF8 << 48) | (frac << np.uint64(52 - src.mbits))
    elif src is F64 and dst is F32:
        val = (sign << np.uint64(31)) | np.uint64(0x7FC00000) | (frac >> np.uint64(29))
    elif src is F64 and dst in (F16, BF16):
        val = (sign << np.uint64(dst.bits - 1)) | np.uint64(0x7E00 if dst is F16 else 0x7FC0)
    elif src is BF16 and dst is F32:
        val = w << np.uint64(16)
    else:
        return out
    return np.where(nan, val.astype(dst.dtype), out).astype(dst.dtype)


def _tf32_rna_sm90(b: np.ndarray, satfinite: bool) -> np.ndarray:
    """cvt.rna{.satfinite}.tf32.f32 as an H200 computes it, on the raw bit pattern.

    Finite inputs: (bits + 0x1000) & ~0x1FFF (IEEE round-half-away; overflow gives inf).
    Inf/NaN inputs: the low 13 bits are cleared, so a NaN whose payload lies only there becomes
    an infinity.  With .satfinite, a result with an all-ones exponent (inf or NaN) then steps
    down by one tf32 ulp (0x2000): +inf -> 0x7F7FE000, and a NaN stays a (different) NaN.
    """
    w = b.astype(np.uint64)
    special = (w & np.uint64(0x7F800000)) == np.uint64(0x7F800000)
    w = np.where(special, w, w + np.uint64(0x1000)) & np.uint64(0xFFFFE000)
    if satfinite:
        top = (w & np.uint64(0x7F800000)) == np.uint64(0x7F800000)
        w = np.where(top, w - np.uint64(0x2000), w)
    return w.astype(np.uint32)


_DROP_ROUND = ("rn", "rna", "rz")


def _f32_drop_bits(b: np.ndarray, dst: FloatFormat, r: str) -> np.ndarray:
    """f32 -> bf16 / tf32 by integer rounding of the dropped low fraction bits.

    Adding the rounding increment to the whole pattern carries into the exponent when the
    fraction overflows, and turns the largest values into infinity, exactly as IEEE rounding
    does (the bit patterns of same-signed finite numbers are ordered like their values).
    """
    drop = 16 if dst is BF16 else 13
    w = b.astype(np.uint64)
    if r == "rn":
        w = w + np.uint64((1 << (drop - 1)) - 1) + ((w >> np.uint64(drop)) & np.uint64(1))
    elif r == "rna":
        w = w + np.uint64(1 << (drop - 1))
    w = w >> np.uint64(drop)
    if dst is TF32:
        w = (w << np.uint64(drop)) & np.uint64(0xFFFFFFFF)
    out = w.astype(dst.dtype)
    return np.where(is_nan(b, F32), dst.dtype(dst.canonical_nan), out).astype(dst.dtype)


# ---------------------------------------------------------------------------------------------
# packed conversions


def _pack(hi: np.ndarray, lo: np.ndarray, lane_bits: int) -> np.ndarray:
    dt = {4: np.uint8, 6: np.uint16, 8: np.uint16, 16: np.uint32}[lane_bits]
    step = 8 if lane_bits == 6 else lane_bits  # fp6 lanes sit in bytes with 2 zero MSBs
    mask = np.uint64((1 << step) - 1)
    return ((np.asarray(hi).astype(np.uint64) & mask) << np.uint64(step) |
            (np.asarray(lo).astype(np.uint64) & mask)).astype(dt)


def _lane_bits(f: FloatFormat) -> int:
    return {E2M1: 4, E2M3: 6, E3M2: 6}.get(f, f.bits)


def cvt_x2_f32(a: np.ndarray, b: np.ndarray, dtype: str, rnd: str = "rn", *, relu_: bool = False,
               satfinite: bool = False) -> np.ndarray:
    """cvt.rnd{.relu}{.satfinite}.{f16x2,bf16x2,e4m3x2,e5m2x2,e2m1x2,e2m3x2,e3m2x2}.f32 d, a, b.

    d = (convert(a) in the upper half) | (convert(b) in the lower half).  The fp8/fp6/fp4
    forms require .rn.satfinite (mandatory in PTX); we enforce that.
    """
    dst = get_format(dtype.lstrip(".").removesuffix("x2"))
    if dst in (E4M3, E5M2, E2M1, E2M3, E3M2) and not (rnd == "rn" and satfinite):
        raise ConvertError(f"cvt to .{dst.name}x2 requires .rn.satfinite")
    hi = cvt(a, dst.name, "f32", rnd, relu_=relu_, satfinite=satfinite)
    lo = cvt(b, dst.name, "f32", rnd, relu_=relu_, satfinite=satfinite)
    return _pack(hi, lo, _lane_bits(dst))


def unpack2(bits: np.ndarray, lane_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(upper lane, lower lane) of a packed pair; fp6 lanes are the low 6 bits of each byte."""
    step = 8 if lane_bits == 6 else lane_bits
    m = np.uint64((1 << lane_bits) - 1)
    w = np.asarray(bits).astype(np.uint64)
    return (w >> np.uint64(step)) & m, w & m


def cvt_x2_from_x2(a: np.ndarray, dtype: str, atype: str, rnd: str = "rn", *, relu_: bool = False,
                   satfinite: bool = False) -> np.ndarray:
    """cvt between packed pairs: {e4m3,e5m2,e2m1,e2m3,e3m2}x2 <-> {f16,bf16}x2 (upper to upper)."""
    dst = get_format(dtype.lstrip(".").removesuffix("x2"))
    src = get_format(atype.lstrip(".").removesuffix("x2"))
    if dst in (E4M3, E5M2, E2M1, E2M3, E3M2) and not (rnd == "rn" and satfinite):
        raise ConvertError(f"cvt to .{dst.name}x2 requires .rn.satfinite")
    hi_in, lo_in = unpack2(a, _lane_bits(src))
    out = []
    for lane in (hi_in, lo_in):
        lane = lane.astype(src.dtype)
        narrowing = _rank(dst) < _rank(src) or dst.ebits < src.ebits
        conv = _float_to_float(lane, dst, src, rnd if narrowing else None, False, satfinite)
        if relu_:
            conv = relu(conv, dst)
        out.append(conv)
    return _pack(out[0], out[1], _lane_bits(dst))


def cvt_bf16x2_scaled(a: np.ndarray, atype: str, scale: np.ndarray | int = 0x7F7F, *, relu_: bool = False,
                      satfinite: bool = False) -> np.ndarray:
    """cvt.rn{.satfinite}{.relu}.scaled::n2::ue8m0.bf16x2.{f8,f6,f4}x2: convert, times 2**(s-127)."""
    src = get_format(atype.lstrip(".").removesuffix("x2"))
    hi_in, lo_in = unpack2(a, _lane_bits(src))
    s_hi, s_lo = unpack2(scale, 8)
    out = []
    for lane, sc in ((hi_in, s_hi), (lo_in, s_lo)):
        v = decode(lane.astype(src.dtype), src) * decode_ue8m0(sc)  # power-of-two scaling: exact
        conv = round_f64(v, BF16, "rn", satfinite=satfinite)
        if relu_:
            conv = relu(conv, BF16)
        out.append(conv)
    return _pack(out[0], out[1], 16)


def cvt_ue8m0x2(a: np.ndarray, b: np.ndarray | None, atype: str, rnd: str, *, satfinite: bool = False) -> np.ndarray:
    """cvt.frnd3{.satfinite}.ue8m0x2.{f32 (a, b), bf16x2 (a)}: upper byte from a / a's upper half."""
    src = atype.lstrip(".")
    if src == "f32":
        if b is None:
            raise ConvertError("cvt.ue8m0x2.f32 takes two operands")
        hi, lo = decode(np.asarray(a).astype(np.uint32), F32), decode(np.asarray(b).astype(np.uint32), F32)
    elif src == "bf16x2":
        w = np.asarray(a).astype(np.uint32)
        hi = decode((w >> np.uint32(16)).astype(np.uint16), BF16)
        lo = decode((w & np.uint32(0xFFFF)).astype(np.uint16), BF16)
    else:
        raise ConvertError(f"cvt.ue8m0x2 converts from .f32 or .bf16x2, not .{src}")
    return _pack(encode_ue8m0(hi, rnd, satfinite=satfinite), encode_ue8m0(lo, rnd, satfinite=satfinite), 8)


def cvt_bf16x2_from_ue8m0x2(a: np.ndarray) -> np.ndarray:
    """cvt.rn.bf16x2.ue8m0x2: each scale 2**(e-127) exactly in bf16 (2**-127 is a bf16 subnormal)."""
    hi, lo = unpack2(a, 8)
    return _pack(round_f64(decode_ue8m0(hi), BF16), round_f64(decode_ue8m0(lo), BF16), 16)


def to_register(bits: np.ndarray, dtype: str, reg_width: int) -> np.ndarray:
    """Widen a cvt result of integer type ``dtype`` to a wider destination register.

    An H200 sign-extends signed results (cvt.rni.s8.f32 into a 16-bit register gives 0xFFFF for
    -1; likewise cvt.sat.s8.s32) and zero-extends unsigned ones.
    """
    kind, info = _kind(dtype)
    if kind != "int":
        raise ConvertError("to_register widens integer results only")
    signed, width = info
    if reg_width < width:
        raise ConvertError(f"a .{dtype.lstrip('.')} result does not fit a {reg_width}-bit register")
    return wrap(value(bits, width, signed), reg_width)
