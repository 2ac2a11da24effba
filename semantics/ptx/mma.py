"""Warp-level matrix instructions: mma.sync, ldmatrix, stmatrix, movmatrix (PTX 9.7.14.5).

Every instruction here is `.sync.aligned`: the 32 lanes of a warp execute it together, so the
executing mask must cover whole warps (a partial warp is undefined behaviour, 9.7.14.5.14). Each
warp computes independently; the work is vectorised over all warps of the executing group:
fragments of the 32 lanes are gathered into matrices of shape (warps, rows, cols), multiplied,
and the result is scattered back to the lanes.

Fragment layouts (9.7.14.5.1-9.7.14.5.13). Writing g = %laneid >> 2 and t = %laneid % 4, and p
for the number of elements packed into one register (32 / element bits; 1 for .f64), every
`.row.col` shape with M = 16 that is modelled here follows one rule, read off the manual's
per-shape tables:

    A, register r, packed element j:  row g + 8 * (r % 2),  column t*p + j + 4p * (r // 2)
    B, register r, packed element j:  row t*p + j + 4p * r,  column g
    C/D element i:                    row g + 8 * (i // 2), column 2t + (i % 2)

and for M = 8 (m8n8k4 .f64, m8n8k16, m8n8k32) the same with a single A register at row g and
two C/D elements at row g. Packed elements fill a register from its least significant bits up.

Arithmetic (9.7.14.5.14 "Precision and rounding"):
* Integer: exact products and sums; the s32 result wraps, or saturates with .satfinite.
* .f64: "identical to .f64 fused multiply-add": a chain of fma.rnd.f64 starting from c, in
  k order (the order is not in the manual; it matched an H200 on every finite element tested).
* .f16/.bf16/.tf32/.e4m3/.e5m2: accumulation order, intermediate rounding and subnormal handling
  are unspecified. MODEL: every product is exact in float64 (products of these formats always
  are); c and the products are summed in float64 in the order c, k = 0, 1, ..., K-1 (exact unless
  the addends span more than 53 bits) and the sum is rounded once, to nearest even, to the
  accumulator type. Real tensor cores align addends to a limited width and truncate: the
  H200's behaviour, measured, is mma_sm90.py, selectable through ACCUMULATION below (this
  model and the H200 differ by a few ulps on typical data). .tf32 operands are read from the
  top 19 bits of their .b32 registers (the low 13 bits are ignored, as on the H200). A NaN
  result is the accumulator type's canonical NaN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.floatops import fma
from semantics.formats import F16, F32, F64, decode, get_format, round_f64
from semantics.mxformats import ScaleType, decode_elements, decode_scale_checked, from_container8

from .core import Exec, handler
from .memory import space_of
from .mma_sm90 import mma_sm90

# Accumulation of floating-point mma (not .f64): "model" is the float64 model described above;
# "sm90" is the bit-exact model measured on an H200 (see mma_sm90.py), for that GPU only.
ACCUMULATION = "model"

_SHAPE = re.compile(r"^\.m(\d+)n(\d+)k(\d+)$")

# element types of the multiplicands: bits per element, kind
_ELEM = {"f16": (16, "f"), "bf16": (16, "f"), "tf32": (32, "f"), "f64": (64, "f"), "e4m3": (8, "f"),
         "e5m2": (8, "f"), "s8": (8, "s"), "u8": (8, "u"), "s4": (4, "s"), "u4": (4, "u"),
         # 4/6-bit elements of .kind::f8f6f4 each in an 8-bit container (semantics.mxformats.CONTAINER8)
         "e2m1": (8, "f"), "e2m3": (8, "f"), "e3m2": (8, "f")}

#: The largest magnitude of an integer multiplicand element (its type's range: s8 -128, u8 255, s4 -8, u4 15)
INT_ELEMENT_MAGNITUDE = {"s8": 128, "u8": 255, "s4": 8, "u4": 15}


def int_mma_bound(below: int | None, k: int, a: str, b: str) -> int | None:
    """A bound on |c + sum of k products a * b| for |c| <= `below` (integer mma / wgmma, .s32 accumulators), or
    None where that sum may leave int32 (or `below` is None, or an element type has no entry): there the
    instruction's value is the sum wrapped, or with .satfinite clamped (9.7.14.5.14, 9.7.15.5.2), not the sum."""
    if below is None or a not in INT_ELEMENT_MAGNITUDE or b not in INT_ELEMENT_MAGNITUDE:
        return None
    total = below + k * INT_ELEMENT_MAGNITUDE[a] * INT_ELEMENT_MAGNITUDE[b]
    return total if total < 1 << 31 else None


# shapes modelled per multiplicand family (9.7.14.5.14 "Syntax")
_FAMILY_SHAPES = {
    "f16": {(16, 8, 8), (16, 8, 16)},
    "bf16": {(16, 8, 8), (16, 8, 16)},
    "tf32": {(16, 8, 4), (16, 8, 8)},
    "fp8": {(16, 8, 16), (16, 8, 32)},
    "f64": {(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)},
    "i8": {(8, 8, 16), (16, 8, 16), (16, 8, 32)},
    "i4": {(8, 8, 32), (16, 8, 32), (16, 8, 64)},
}
_FAMILY = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8", "f64": "f64",
           "s8": "i8", "u8": "i8", "s4": "i4", "u4": "i4", "e2m1": "fp8", "e2m3": "fp8", "e3m2": "fp8"}
_SUB_BYTE = ("e2m1", "e2m3", "e3m2")  # only with .kind::f8f6f4 (or the block-scaled .kind::mxf8f6f4)
_ACCUM = {"f16": {"f16", "f32"}, "bf16": {"f32"}, "tf32": {"f32"}, "fp8": {"f16", "f32"}, "f64": {"f64"},
          "i8": {"s32"}, "i4": {"s32"}}
_ROUND = (".rn", ".rz", ".rm", ".rp")


# --------------------------------------------------------------------------- warps and layouts

def aligned_warps(ins: A.Instruction, x: Exec) -> np.ndarray:
    """Indices of the warps executing a `.sync.aligned` instruction; partial warps are UB."""
    if x.n % 32:
        raise Unsupported(f"{ins.name}: lanes not laid out in whole warps", ins)
    w = x.mask.reshape(-1, 32)
    some, every = w.any(axis=1), w.all(axis=1)
    partial = np.nonzero(some & ~every)[0]
    if partial.size:
        k = int(partial[0])
        missing = int(np.nonzero(~w[k])[0][0])
        raise UndefinedBehavior(f"{ins.name}: .aligned instruction executed by part of warp {k} "
                                f"(lane {missing} is not executing it)", ins)
    return np.nonzero(every)[0]


def _regs(x: Exec, ops: tuple, ty: str, warps: np.ndarray) -> np.ndarray:
    """(warps, 32, len(ops)) register values of the executing warps."""
    cols = [np.broadcast_to(x.read(op, ty), (x.n,)).reshape(-1, 32)[warps] for op in ops]
    return np.stack(cols, axis=2)


def _write_regs(x: Exec, ops: tuple, values: np.ndarray, ty: str, warps: np.ndarray, dtype) -> None:
    """Write (warps, 32, len(ops)) values to the executing warps' registers."""
    for r, op in enumerate(ops):
        full = np.zeros((x.n // 32, 32), dtype=dtype)
        full[warps] = values[:, :, r]
        x.write(op, full.reshape(-1), ty)


def _lane_ids() -> tuple[np.ndarray, np.ndarray]:
    lane = np.arange(32)
    return lane >> 2, lane % 4


def a_layout(m: int, nregs: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of A's element j of register r in each lane: arrays of shape (32, nregs, p)."""
    g, t = _lane_ids()
    r = np.arange(nregs)[None, :, None]
    j = np.arange(p)[None, None, :]
    g, t = g[:, None, None], t[:, None, None]
    if m == 8:
        row = np.broadcast_to(g, (32, nregs, p))
        col = t * p + j + 4 * p * r
    else:
        row = g + 8 * (r % 2)
        col = t * p + j + 4 * p * (r // 2)
    return np.broadcast_to(row, (32, nregs, p)), np.broadcast_to(col, (32, nregs, p))


def b_layout(nregs: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    g, t = _lane_ids()
    r = np.arange(nregs)[None, :, None]
    j = np.arange(p)[None, None, :]
    row = t[:, None, None] * p + j + 4 * p * r
    col = np.broadcast_to(g[:, None, None], row.shape)
    return row, col


def c_layout(m: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of accumulator element i in each lane: shape (32, elements)."""
    g, t = _lane_ids()
    count = 4 if m == 16 else 2
    i = np.arange(count)[None, :]
    row = g[:, None] + 8 * (i // 2)
    col = 2 * t[:, None] + (i % 2)
    return np.broadcast_to(row, (32, count)), col


# --------------------------------------------------------------------------- element packing

def _unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    """(..., nregs) registers -> (..., nregs, p) raw element bits, low bits first."""
    if bits >= 32:
        return regs[..., None].astype(np.uint64)
    p = 32 // bits
    shifts = (np.arange(p, dtype=np.uint64) * np.uint64(bits))
    return (regs.astype(np.uint64)[..., None] >> shifts) & np.uint64((1 << bits) - 1)


def _pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """(..., nregs, p) element bits -> (..., nregs) uint32 registers."""
    p = elems.shape[-1]
    shifts = np.arange(p, dtype=np.uint64) * np.uint64(bits)
    return (elems.astype(np.uint64) << shifts).sum(axis=-1).astype(np.uint32)


def _values(raw: np.ndarray, ty: str) -> np.ndarray:
    """Raw element bits -> float64 values (floats) or int64 (integers)."""
    bits, kind = _ELEM.get(ty, (32, "f"))  # accumulators: .f32 (.f16/.f64 are in _ELEM)
    if ty in _SUB_BYTE:
        return decode_elements(from_container8(raw, ty), ty)
    if kind == "f":
        return decode(raw.astype(get_format(ty).dtype), ty)
    v = raw.astype(np.int64)
    if kind == "s":
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


# --------------------------------------------------------------------------- mma

def _parse_mma(ins: A.Instruction) -> tuple[tuple[int, int, int], str, str, str, str, str | None]:
    shapes = [m for m in ins.modifiers if _SHAPE.match(m)]
    if len(shapes) != 1:
        raise Unsupported(f"{ins.name}: expected one .mMnNkK shape", ins)
    shape = tuple(int(v) for v in _SHAPE.match(shapes[0]).groups())  # type: ignore[union-attr]
    if len(ins.types) != 4:
        raise Unsupported(f"{ins.name}: expected .dtype.atype.btype.ctype", ins)
    d, a, b, c = (t.lstrip(".") for t in ins.types)
    for extra in ("kind::mxf4", "kind::mxf4nvf4", "kind::mxf8f6f4", "popc", "xor", "and"):
        if "." + extra in ins.modifiers:
            raise Unsupported(f"{ins.name}: .{extra} (block-scaled kinds need .block_scale; single-bit mma is not "
                              "modelled)", ins)
    allowed = {".sync", ".aligned", ".row", ".col", ".satfinite", ".kind::f8f6f4", shapes[0], *_ROUND}
    extra = ins.modifiers - allowed - {"." + t for t in (d, a, b, c)}
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)
    if ".sync" not in ins.modifiers or ".aligned" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: mma without .sync.aligned", ins)
    if ins.positional[:2] != (".row", ".col"):
        raise Unsupported(f"{ins.name}: layouts {''.join(ins.positional)} (only .row.col is modelled; "
                          f"m8n8k4 .f16 with other layouts is not)", ins)
    if a not in _ELEM or b not in _ELEM:
        raise Unsupported(f"{ins.name}: multiplicand types .{a}.{b}", ins)
    fam = _FAMILY[a]
    if _FAMILY[b] != fam or (fam in ("f16", "bf16", "tf32", "f64") and a != b):
        raise Unsupported(f"{ins.name}: multiplicand types .{a}.{b} do not form a valid mma", ins)
    if shape not in _FAMILY_SHAPES[fam]:
        raise Unsupported(f"{ins.name}: shape .m{shape[0]}n{shape[1]}k{shape[2]} with .{a} operands", ins)
    if c not in _ACCUM[fam] or d != c:
        raise Unsupported(f"{ins.name}: accumulator types .{d} / .{c} with .{a} operands", ins)
    if ".satfinite" in ins.modifiers and fam not in ("i8", "i4"):
        raise Unsupported(f"{ins.name}: .satfinite on a floating-point mma", ins)
    if ".kind::f8f6f4" in ins.modifiers and not (fam == "fp8" and shape == (16, 8, 32)):
        raise Unsupported(f"{ins.name}: .kind::f8f6f4 with .{a}.{b} (only m16n8k32 with f8/f6/f4 operands)", ins)
    if (a in _SUB_BYTE or b in _SUB_BYTE) and ".kind::f8f6f4" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: .{a}.{b} operands need .kind::f8f6f4 (9.7.14.5.14 syntax)", ins)
    rnd = next((r[1:] for r in _ROUND if r in ins.modifiers), None)
    if rnd is not None and fam != "f64":
        raise Unsupported(f"{ins.name}: rounding modifier .{rnd} on a non-.f64 mma", ins)
    return shape, d, a, b, c, rnd  # type: ignore[return-value]


def _vector(ins: A.Instruction, op: A.Operand, count: int, what: str) -> tuple:
    if not isinstance(op, A.Vector) or len(op.elements) != count:
        raise Unsupported(f"{ins.name}: operand {what} must be a vector of {count} registers", ins)
    return op.elements


@handler("mma")
def mma(ins: A.Instruction, x: Exec) -> None:
    if ".block_scale" in ins.modifiers:
        return mma_block_scale(ins, x)
    (m, n, k), d, a, b, c, rnd = _parse_mma(ins)
    warps = aligned_warps(ins, x)
    abits, bbits = _ELEM[a][0], _ELEM[b][0]
    pa, pb = max(1, 32 // abits), max(1, 32 // bbits)
    rega = m * k // 32 // pa
    regb = k * n // 32 // pb
    cbits = 64 if c == "f64" else 16 if c == "f16" else 32
    pc = 2 if c == "f16" else 1
    nc = m * n // 32
    if len(ins.operands) != 4:
        raise Unsupported(f"{ins.name}: expected d, a, b, c", ins)
    dops = _vector(ins, ins.operands[0], nc // pc, "d")
    aops = _vector(ins, ins.operands[1], rega, "a")
    bops = _vector(ins, ins.operands[2], regb, "b")
    cops = _vector(ins, ins.operands[3], nc // pc, "c")
    W = warps.size
    if W == 0:
        return
    reg_ty = ".b64" if abits == 64 else ".b32"
    ar, ac = a_layout(m, rega, pa)
    br, bc = b_layout(regb, pb)
    cr, cc = c_layout(m)
    is_int = _ELEM[a][1] != "f"
    raw = c == "f64"  # .f64 works on raw bits (fma chain)
    dt = np.uint64 if raw else np.int64 if is_int else np.float64
    value = (lambda bits, ty: bits) if raw else _values
    A_ = np.zeros((W, m, k), dtype=dt)
    A_[:, ar, ac] = value(_unpack(_regs(x, aops, reg_ty, warps), abits), a)
    B_ = np.zeros((W, k, n), dtype=dt)
    B_[:, br, bc] = value(_unpack(_regs(x, bops, reg_ty, warps), bbits), b)
    c_ty = ".b64" if cbits == 64 else ".b32"
    craw = _unpack(_regs(x, cops, c_ty, warps), cbits).reshape(W, 32, nc)
    C_ = np.zeros((W, m, n), dtype=dt)
    C_[:, cr, cc] = value(craw, c) if c != "s32" else craw.astype(np.int64).astype(np.uint32).view(np.int32)
    if is_int:
        D = _int_mma(A_, B_, C_, ".satfinite" in ins.modifiers)
        draw = D.astype(np.uint32)[:, cr, cc]
    elif c == "f64":
        draw = _f64_mma(A_, B_, C_, rnd or "rn")[:, cr, cc]
    else:
        out = F16 if d == "f16" else F32
        if ACCUMULATION == "sm90":
            draw = mma_sm90(A_, B_, C_, a, out)[:, cr, cc]
        else:
            draw = round_f64(_float_sum(A_, B_, C_)[:, cr, cc].reshape(-1), out, "rn").reshape(W, 32, nc)
    regs = _pack(draw.reshape(W, 32, nc // pc, pc), cbits) if pc > 1 else draw
    out_ty = ".b64" if cbits == 64 else ".b32"
    _write_regs(x, dops, regs.reshape(W, 32, nc // pc), out_ty, warps, np.uint64 if cbits == 64 else np.uint32)


def _float_sum(A_: np.ndarray, B_: np.ndarray, C_: np.ndarray) -> np.ndarray:
    """MODEL (module docstring): c + a[0]*b[0] + a[1]*b[1] + ... in float64, in this order (each
    product is exact; the float64 additions round only when the addends span more than 53 bits)."""
    S = C_.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        for q in range(A_.shape[2]):
            S += A_[:, :, q, None] * B_[:, None, q, :]
    return S


def _int_mma(A_: np.ndarray, B_: np.ndarray, C_: np.ndarray, satfinite: bool) -> np.ndarray:
    """Exact integer D = A*B + C (|sum| < 2**45: no int64 overflow), then wrap or saturate to s32."""
    S = np.matmul(A_, B_) + C_
    if satfinite:
        return np.clip(S, -(1 << 31), (1 << 31) - 1)
    return ((S + (1 << 31)) % (1 << 32)) - (1 << 31)


def _f64_mma(A_: np.ndarray, B_: np.ndarray, C_: np.ndarray, rnd: str) -> np.ndarray:
    """.f64 (9.7.14.5.14: the precision of f64 fused multiply-add): a chain of fma.rnd.f64,
    d = fma(a[K-1], b[K-1], ... fma(a[1], b[1], fma(a[0], b[0], c))), on raw bits (uint64 arrays),
    so NaN payloads and signed zeros follow fma's rules. The order is not in the manual; it is
    the one that matched an H200 bit for bit (see tests/emulator/mma_conformance.py)."""
    S = C_
    for q in range(A_.shape[2]):
        a = np.broadcast_to(A_[:, :, q, None], S.shape).reshape(-1)
        b = np.broadcast_to(B_[:, None, q, :], S.shape).reshape(-1)
        S = fma(a, b, S.reshape(-1), F64, rnd).reshape(S.shape)
    return S


# --------------------------------------------------------------------------- mma with block scaling

@dataclass(frozen=True)
class ScaledForm:
    """One block-scaled mma.sync (9.7.14.5.14 "Alternate floating point type with block scaling",
    Table 36): `D = (A * scale_A) * (B * scale_B) + C` (9.7.14.3)."""

    kind: str
    shape: tuple[int, int, int]
    atype: str
    btype: str
    stype: ScaleType
    vec: int  # scale factors per row of A and per column of B: .scale_vec::1X/2X/4X

    @property
    def elem_bits(self) -> int:
        """8 (each element in an 8-bit container) for .kind::mxf8f6f4; 4 (packed, "no explicit padding")
        for .kind::mxf4 / .kind::mxf4nvf4 (9.7.14.5.14)."""
        return 8 if self.kind == "mxf8f6f4" else 4

    @property
    def chunk(self) -> int:
        """K elements that share one scale factor."""
        return self.shape[2] // self.vec


# kind -> (shape, element types, {scale type: allowed .scale_vec}, default .scale_vec): the syntax of
# 9.7.14.5.14 and Table 36; "For mma with .kind::mxf4 when the qualifier .scale_vec_size is not
# specified, then it defaults to 2X ... when .kind is specified as .kind::mxf8f6f4 then the qualifier
# .scale_vec_size defaults to 1X. However, for .kind::mxf4nvf4, it is mandatory"
_SCALED_KINDS: dict[str, tuple[tuple[int, int, int], tuple[str, ...], dict[ScaleType, tuple[int, ...]], int | None]] = {
    "mxf8f6f4": ((16, 8, 32), ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1"), {ScaleType.UE8M0: (1,)}, 1),
    "mxf4": ((16, 8, 64), ("e2m1",), {ScaleType.UE8M0: (2,)}, 2),
    "mxf4nvf4": ((16, 8, 64), ("e2m1",), {ScaleType.UE8M0: (2, 4), ScaleType.UE4M3: (4,)}, None),
}
_SCALE_VEC = {".scale_vec::1X": 1, ".scale_vec::2X": 2, ".scale_vec::4X": 4}
# Table 37: valid byte-id per .scale_vec_size; thread-id-a in [0, 1] and thread-id-b in [0, 3]. The
# table's 2X / 4X rows leave the thread-id columns blank (cells merged with the 1X row in the
# rendered manual); MODEL: the same ranges for every size.
_BYTE_IDS = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}
_THREAD_IDS_A, _THREAD_IDS_B = (0, 1), (0, 1, 2, 3)


def _parse_scaled(ins: A.Instruction) -> ScaledForm:
    mods = ins.modifiers
    kinds = [m[len(".kind::"):] for m in mods if m.startswith(".kind::")]
    if len(kinds) != 1 or kinds[0] not in _SCALED_KINDS:
        raise Unsupported(f"{ins.name}: .block_scale needs one of .kind::mxf8f6f4/mxf4/mxf4nvf4", ins)
    kind = kinds[0]
    shape, elems, vecs, default = _SCALED_KINDS[kind]
    shapes = [m for m in mods if _SHAPE.match(m)]
    if len(shapes) != 1 or tuple(int(v) for v in _SHAPE.match(shapes[0]).groups()) != shape:  # type: ignore[union-attr]
        raise Unsupported(f"{ins.name}: .kind::{kind} is .m{shape[0]}n{shape[1]}k{shape[2]} only", ins)
    if len(ins.types) != 5:
        raise Unsupported(f"{ins.name}: expected .f32.atype.btype.f32.stype", ins)
    d, a, b, c, st = (t.lstrip(".") for t in ins.types)
    if (d, c) != ("f32", "f32") or a not in elems or b not in elems or st not in {t.value for t in vecs}:
        raise Unsupported(f"{ins.name}: types .{d}.{a}.{b}.{c}.{st} are not a .kind::{kind} form (Table 36)", ins)
    stype = ScaleType(st)
    given = [m for m in mods if m in _SCALE_VEC]
    vec = _SCALE_VEC[given[0]] if len(given) == 1 else default
    if len(given) > 1 or vec is None or vec not in vecs[stype]:
        raise Unsupported(f"{ins.name}: .scale_vec_size {' '.join(given) or '(none)'} with .kind::{kind} and .{st} "
                          "is not a valid combination (9.7.14.3, Table 36)", ins)
    allowed = {".sync", ".aligned", ".row", ".col", ".block_scale", ".kind::" + kind, shapes[0], *given,
               ".f32", "." + a, "." + b, "." + st}
    extra = mods - allowed
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)
    if ".sync" not in mods or ".aligned" not in mods or ins.positional[:2] != (".row", ".col"):
        raise Unsupported(f"{ins.name}: expected mma.sync.aligned...row.col", ins)
    return ScaledForm(kind, shape, a, b, stype, vec)


def _selector(ins: A.Instruction, x: Exec, op: A.Operand, warps: np.ndarray, what: str,
              valid: tuple[int, ...]) -> np.ndarray:
    """(warps,) value of one selector operand (unsigned 16-bit, 9.7.14.5.14), checked against Table 37.
    MODEL: a selector held in a register must be the same in every lane of the warp (the manual
    treats it as one value per instruction); otherwise `Unsupported`."""
    v = np.broadcast_to(np.asarray(x.read(op, ".u16")), (x.n,)).astype(np.int64).reshape(-1, 32)[warps]
    if (v != v[:, :1]).any():
        raise Unsupported(f"{ins.name}: selector {what} differs between the lanes of a warp", ins)
    bad = ~(v[:, :1] == np.asarray(valid, np.int64)).any(axis=1)  # np.isin, without its sort (tiny sets)
    if bad.any():
        raise UndefinedBehavior(f"{ins.name}: {what} = {int(v[bad][0, 0])} is not valid here (valid: "
                                f"{', '.join(map(str, valid))}; \"Any other value results in an undefined behavior\", "
                                "9.7.14.3 Table 37)", ins)
    return v[:, 0]


def scale_lanes(thread_id_a, thread_id_b) -> tuple[np.ndarray, np.ndarray]:
    """Lanes supplying SF_A of rows 0..15 and SF_B of columns 0..7 (9.7.14.3).

    Documented: "when thread-id-a set to 0, thread-pair satisfying: %laneid % 4 == 0 or 1 provides
    the SF_A ... when thread-id-a set to 1, ... %laneid % 4 == 2 or 3"; "each thread satisfying:
    %laneid % 4 == thread-id-b provides the SF_B". MODEL (Figures 43/44 draw the rest): in quad g
    (lanes 4g..4g+3) the first thread of the pair gives row g and the second row g + 8, and the
    selected thread gives column g; this is CUTLASS's SM120 block-scaled MMA traits
    (cute/atom/mma_traits_sm120.hpp: SFALayout ((2,2,8),K):((8,0,1),16), SFBLayout
    ((4,8),K):((0,1),8)), and the same quad-to-row/column rule as the A and B fragments.
    Integers give (16,) and (8,); arrays of W selectors (one per warp) give (W, 16) and (W, 8)."""
    rows = np.arange(16)
    cols = np.arange(8)
    ta = np.asarray(thread_id_a, np.int64)[..., None]
    tb = np.asarray(thread_id_b, np.int64)[..., None]
    return 4 * (rows % 8) + 2 * ta + rows // 8, 4 * cols + tb


def _scale_values(ins: A.Instruction, regs: np.ndarray, lanes: np.ndarray, byte_id: np.ndarray, f: ScaledForm,
                  what: str) -> np.ndarray:
    """(W, L, vec) scale factors: bytes byte_id[w] .. byte_id[w] + vec - 1 of the scale data of lanes
    lanes[w] (W, L) of each warp w ("one byte", "one byte-pair", "all four bytes", 9.7.14.3). MODEL: the
    byte with the lower address holds the scale of the lower K chunk (Figure 45; CUTLASS's register
    order). All warps at once: a ue4m3 byte with bit 7 set is reported for the first warp holding one."""
    W = regs.shape[0]
    sel = regs[np.arange(W)[:, None], lanes].astype(np.uint64)  # (W, L)
    shifts = np.uint64(8) * (byte_id[:, None, None].astype(np.uint64) + np.arange(f.vec, dtype=np.uint64))
    raw = (sel[:, :, None] >> shifts) & np.uint64(0xFF)
    return decode_scale_checked(raw, f.stype, f"{ins.name}: {what}", ins)


def _operand_values(raw: np.ndarray, ty: str, f: ScaledForm) -> np.ndarray:
    """Element bits from registers (low to high) -> float64: 8-bit containers for .kind::mxf8f6f4
    (semantics.mxformats.from_container8), packed e2m1 otherwise."""
    if f.elem_bits == 8:
        raw = from_container8(raw, ty)
    return decode_elements(raw, ty)


def mma_block_scale(ins: A.Instruction, x: Exec) -> None:
    """mma.sync.aligned.shape.row.col.kind.block_scale{.scale_vec_size}.f32.atype.btype.f32.stype
    d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}
    (9.7.14.5.14, block scaling 9.7.14.3). Fragments of A, B, C/D are those of the shape (m16n8k32
    with 8-bit containers, m16n8k64 with eight e2m1 per register). Arithmetic: the module's float64
    model, each element multiplied by its scale factor first (exact: at most 4 + 8 significant bits
    and exponents far inside float64), then c + sum over k of the scaled products in k order,
    rounded once to f32."""
    f = _parse_scaled(ins)
    m, n, k = f.shape
    ops = ins.operands
    if len(ops) != 8:
        raise Unsupported(f"{ins.name}: expected d, a, b, c, scale-a-data, {{byte-id-a, thread-id-a}}, scale-b-data, "
                          "{byte-id-b, thread-id-b}", ins)
    warps = aligned_warps(ins, x)
    p = 32 // f.elem_bits
    rega, regb = m * k // 32 // p, k * n // 32 // p
    dops = _vector(ins, ops[0], 4, "d")
    aops = _vector(ins, ops[1], rega, "a")
    bops = _vector(ins, ops[2], regb, "b")
    cops = _vector(ins, ops[3], 4, "c")
    sel_a = _vector(ins, ops[5], 2, "{byte-id-a, thread-id-a}")
    sel_b = _vector(ins, ops[7], 2, "{byte-id-b, thread-id-b}")
    W = warps.size
    if W == 0:
        return
    byte_a = _selector(ins, x, sel_a[0], warps, "byte-id-a", _BYTE_IDS[f.vec])
    tid_a = _selector(ins, x, sel_a[1], warps, "thread-id-a", _THREAD_IDS_A)
    byte_b = _selector(ins, x, sel_b[0], warps, "byte-id-b", _BYTE_IDS[f.vec])
    tid_b = _selector(ins, x, sel_b[1], warps, "thread-id-b", _THREAD_IDS_B)
    sa_regs = _regs(x, (ops[4],), ".b32", warps)[:, :, 0]  # (W, 32)
    sb_regs = _regs(x, (ops[6],), ".b32", warps)[:, :, 0]
    la, lb = scale_lanes(tid_a, tid_b)  # (W, 16), (W, 8)
    sa = _scale_values(ins, sa_regs, la, byte_a, f, "scale-a-data")  # (W, 16, vec)
    sb = _scale_values(ins, sb_regs, lb, byte_b, f, "scale-b-data")  # (W, 8, vec)
    ar, ac = a_layout(m, rega, p)
    br, bc = b_layout(regb, p)
    cr, cc = c_layout(m)
    A_ = np.zeros((W, m, k))
    A_[:, ar, ac] = _operand_values(_unpack(_regs(x, aops, ".b32", warps), f.elem_bits), f.atype, f)
    B_ = np.zeros((W, k, n))
    B_[:, br, bc] = _operand_values(_unpack(_regs(x, bops, ".b32", warps), f.elem_bits), f.btype, f)
    craw = _unpack(_regs(x, cops, ".b32", warps), 32).reshape(W, 32, 4)
    C_ = np.zeros((W, m, n))
    C_[:, cr, cc] = _values(craw, "f32")
    with np.errstate(invalid="ignore", over="ignore"):
        A_ = A_ * np.repeat(sa, f.chunk, axis=2)
        B_ = B_ * np.repeat(sb, f.chunk, axis=2).transpose(0, 2, 1)
    draw = round_f64(_float_sum(A_, B_, C_)[:, cr, cc].reshape(-1), F32, "rn").reshape(W, 32, 4)
    _write_regs(x, dops, draw, ".b32", warps, np.uint32)


# --------------------------------------------------------------------------- ldmatrix / stmatrix

_NUM = {".x1": 1, ".x2": 2, ".x4": 4}


def _matrix_form(ins: A.Instruction, allowed_extra: set[str]) -> tuple[int, bool, str]:
    """(number of 8x8 matrices, .trans, state space) of an m8n8 .b16 ldmatrix/stmatrix."""
    mods = ins.modifiers
    if ".m8n8" not in mods:
        shape = next((m for m in mods if m.startswith(".m")), "?")
        raise Unsupported(f"{ins.name}: shape {shape} (only .m8n8 .b16 is modelled)", ins)
    if ins.types != (".b16",):
        raise Unsupported(f"{ins.name}: type {''.join(ins.types)} (only .b16 is modelled)", ins)
    nums = [m for m in mods if m in _NUM]
    if len(nums) != 1:
        raise Unsupported(f"{ins.name}: expected one of .x1/.x2/.x4", ins)
    allowed = {".sync", ".aligned", ".m8n8", ".trans", ".b16", ".shared", ".shared::cta", nums[0], *allowed_extra}
    extra = mods - allowed
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)
    if ".sync" not in mods or ".aligned" not in mods:
        raise Unsupported(f"{ins.name}: without .sync.aligned", ins)
    space = space_of(ins)
    if space not in (".shared", ".generic"):
        raise Unsupported(f"{ins.name}: state space {space}", ins)
    return _NUM[nums[0]], ".trans" in mods, space


def _row_addresses(ins: A.Instruction, x: Exec, op: A.Operand, count: int, space: str,
                   warps: np.ndarray) -> np.ndarray:
    """Row addresses: lanes 8q..8q+7 give the rows of matrix q (9.7.14.5.15 table). Each row is
    16 bytes and must be 16-byte aligned; a generic address must fall in the shared window."""
    _, addrs = x.address(op)
    a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (x.n,)).reshape(-1, 32)[warps][:, : 8 * count]
    if (a % np.uint64(16) != 0).any():
        bad = int(a[a % np.uint64(16) != 0][0])
        raise UndefinedBehavior(f"{ins.name}: row address 0x{bad:x} is not 16-byte aligned", ins)
    if space == ".generic":
        full = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (x.n,))
        inside = np.asarray(x.in_space(".shared", full)).reshape(-1, 32)[warps][:, : 8 * count]
        if not inside.all():
            raise UndefinedBehavior(f"{ins.name}: generic row address outside the shared window", ins)
    return a


def _with_mask(x: Exec, mask: np.ndarray, fn):
    """Run a memory access on a subset of the executing lanes (the lanes that supply addresses)."""
    saved = x.mask
    x.mask = mask
    try:
        return fn()
    finally:
        x.mask = saved


def _address_lanes(x: Exec, warps: np.ndarray, count: int) -> np.ndarray:
    mask = np.zeros((x.n // 32, 32), dtype=bool)
    mask[warps, : 8 * count] = True
    return mask.reshape(-1)


def _fragment_index(trans: bool) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) in the 8x8 matrix as stored in memory of lane i's element j (32, 2): lane i holds
    row i/4, columns 2*(i%4)+j (Figure 104); with .trans the same fragment of the transpose."""
    lane = np.arange(32)[:, None]
    j = np.arange(2)[None, :]
    row, col = np.broadcast_to(lane // 4, (32, 2)), 2 * (lane % 4) + j
    return (col, row) if trans else (row, col)


@handler("ldmatrix")
def ldmatrix(ins: A.Instruction, x: Exec) -> None:
    """ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 (9.7.14.5.15)."""
    count, trans, space = _matrix_form(ins, set())
    dsts = _vector(ins, ins.operands[0], count, "d")
    warps = aligned_warps(ins, x)
    if warps.size == 0:
        return
    a = _row_addresses(ins, x, ins.operands[1], count, space, warps)
    full = np.zeros((x.n // 32, 32), dtype=np.uint64)
    full[warps, : 8 * count] = a
    data = _with_mask(x, _address_lanes(x, warps, count),
                      lambda: x.load(space, full.reshape(-1), 16, ins))
    rows = np.ascontiguousarray(data).view(np.uint16).reshape(-1, 32, 8)[warps][:, : 8 * count]
    mats = rows.reshape(warps.size, count, 8, 8)  # (warp, matrix, row, col)
    r, c = _fragment_index(trans)
    frag = mats[:, :, r, c]  # (warp, matrix, lane, 2)
    regs = _pack(frag.transpose(0, 2, 1, 3), 16)  # (warp, lane, matrix)
    _write_regs(x, dsts, regs, ".b32", warps, np.uint32)


@handler("stmatrix")
def stmatrix(ins: A.Instruction, x: Exec) -> None:
    """stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 (9.7.14.5.16): the mirror
    of ldmatrix; lane 8q+r writes row r of matrix q at its address."""
    count, trans, space = _matrix_form(ins, set())
    srcs = _vector(ins, ins.operands[1], count, "r")
    warps = aligned_warps(ins, x)
    if warps.size == 0:
        return
    a = _row_addresses(ins, x, ins.operands[0], count, space, warps)
    regs = _regs(x, srcs, ".b32", warps)  # (warp, lane, matrix)
    frag = _unpack(regs, 16).astype(np.uint16).transpose(0, 2, 1, 3)  # (warp, matrix, lane, 2)
    r, c = _fragment_index(trans)
    mats = np.zeros((warps.size, count, 8, 8), dtype=np.uint16)
    mats[:, :, r, c] = frag
    rows = np.zeros((x.n // 32, 32, 8), dtype=np.uint16)
    rows[warps, : 8 * count] = mats.reshape(warps.size, 8 * count, 8)
    full = np.zeros((x.n // 32, 32), dtype=np.uint64)
    full[warps, : 8 * count] = a
    data = np.ascontiguousarray(rows.reshape(x.n, 8)).view(np.uint8).reshape(x.n, 16)
    _store_sources(x, warps, count, r, c)
    _with_mask(x, _address_lanes(x, warps, count), lambda: x.store(space, full.reshape(-1), data, ins))


def _store_sources(x: Exec, warps: np.ndarray, count: int, r: np.ndarray, c: np.ndarray) -> None:
    """For the checker: stored byte j of address lane 8q+s comes from element j//2 of row s of
    matrix q, i.e. half (j//2 placement) of register q of the lane whose fragment holds it."""
    lane = np.broadcast_to(np.arange(32)[:, None], (32, 2))
    half = np.broadcast_to(np.arange(2)[None, :], (32, 2))
    code = np.full((count, 8, 8), -1, dtype=np.int64)
    for q in range(count):
        code[q][r, c] = (lane * count + q) * 2 + half
    per_warp = np.zeros((32, 8), dtype=np.int64)
    per_warp[: 8 * count] = code.reshape(8 * count, 8)
    el = np.repeat(per_warp, 2, axis=1)  # (32, 16): the element behind each stored byte
    src_lane_w, src_reg, src_half = el // (2 * count), (el // 2) % count, el % 2
    src_byte = src_half * 2 + np.arange(16)[None, :] % 2
    n = x.n
    base = (np.arange(n) // 32 * 32)[:, None]
    lanes = np.tile(src_lane_w, (n // 32, 1)) + base
    x.store_sources(lanes, np.tile(src_reg, (n // 32, 1)), np.tile(src_byte, (n // 32, 1)))


@handler("movmatrix")
def movmatrix(ins: A.Instruction, x: Exec) -> None:
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a (9.7.14.5.17): lane i holds row i/4, columns
    2*(i%4)+{0,1} of the source; d holds the same fragment of the transposed matrix."""
    mods = ins.modifiers
    extra = mods - {".sync", ".aligned", ".m8n8", ".trans", ".b16"}
    if extra or not {".sync", ".aligned", ".m8n8", ".trans"} <= mods or ins.types != (".b16",):
        raise Unsupported(f"{ins.name}: only movmatrix.sync.aligned.m8n8.trans.b16 is modelled", ins)
    warps = aligned_warps(ins, x)
    if warps.size == 0:
        return
    src = _unpack(_regs(x, (ins.operands[1],), ".b32", warps), 16).astype(np.uint16)[:, :, 0]  # (W, 32, 2)
    r, c = _fragment_index(False)
    mat = np.zeros((warps.size, 8, 8), dtype=np.uint16)
    mat[:, r, c] = src
    out = mat.transpose(0, 2, 1)[:, r, c]  # (W, 32, 2)
    _write_regs(x, (ins.operands[0],), _pack(out[:, :, None, :], 16), ".b32", warps, np.uint32)
