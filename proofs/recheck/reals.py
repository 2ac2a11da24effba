"""The real-arithmetic meaning of a certificate's terms and normal forms, evaluated at random inputs.

This is the recheck's link between a term and the normal form the certificate claims for it, written
independently of proofs/normal.py and semantics/: each term node is evaluated by its PTX operation's
exact real meaning (floating-point operations as the real operations they approximate, PTX ISA 9.7.3;
conversions between float formats as the identity; bit-level operations on the encodings, PTX ISA
9.7.1/9.7.8) with 256-bit mpmath numbers, on inputs drawn as random finite values of their formats
(so their encodings are exact); each normal form is evaluated from its atoms' definitions (exp2 as 2^x,
max, min, indicators, the named functions). A term and its normal form must agree to 2^-120 relative
at every point. It is a test at random points, not a proof: what it rules out is a normal form that is
not the term's function (a changed coefficient, a swapped term, a wrong lemma used).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import mpmath

__all__ = ["Unevaluable", "Excluded", "FORMATS", "MX_FORMATS", "TermValues", "NormalValues", "close", "equality_hints",
           "is_float"]

PREC = 256
TOL = mpmath.mpf(2) ** -120

#: IEEE 754 binary formats by PTX name: (exponent bits, fraction bits).
FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


@dataclass(frozen=True)
class MxFormat:
    """A narrow float format of PTX 5.2.3 (OCP microscaling): bias 2^(e-1) - 1, subnormals at exponent 0.
    `ieee`: the all-ones exponent is infinity (fraction 0) or NaN, as IEEE 754 (e5m2); otherwise it holds
    numbers, and `nan` is the one magnitude code that is NaN (e4m3: 0x7f, ue4m3: 0x7f; fp6/fp4: none)."""

    ebits: int
    mbits: int
    signed: bool = True
    ieee: bool = False
    nan: int | None = None

    @property
    def width(self) -> int:
        return int(self.signed) + self.ebits + self.mbits


#: The 8/6/4-bit element formats and the ue4m3 scale format (PTX 5.2.3 "Alternate floating point data
#: formats"): e4m3 has no infinity and NaN only at 0x7f/0xff; e5m2 keeps IEEE's; e2m3, e3m2, e2m1 have
#: neither; ue4m3 is unsigned (7 bits), NaN at 0x7f. ue8m0 is a power of two, read by SCALE directly.
MX_FORMATS = {"e4m3": MxFormat(4, 3, nan=0x7F), "e5m2": MxFormat(5, 2, ieee=True), "e2m3": MxFormat(2, 3),
              "e3m2": MxFormat(3, 2), "e2m1": MxFormat(2, 1), "ue4m3": MxFormat(4, 3, signed=False, nan=0x7F)}


def is_float(sort: str) -> bool:
    return sort in FORMATS or sort in MX_FORMATS


@lru_cache(maxsize=None)
def _mx_values(fmt: str) -> tuple[tuple, dict]:
    """Every code of an MX format with its value (None: NaN), and the code of each value (the + code for 0)."""
    f = MX_FORMATS[fmt]
    bias = (1 << (f.ebits - 1)) - 1
    values, codes = [], {}
    with mpmath.workprec(PREC):
        for code in range(1 << f.width):
            mag = code & ((1 << (f.ebits + f.mbits)) - 1)
            sign = -1 if f.signed and code >> (f.ebits + f.mbits) else 1
            ex, frac = mag >> f.mbits, mag & ((1 << f.mbits) - 1)
            if f.ieee and ex == (1 << f.ebits) - 1:
                v = None if frac else sign * mpmath.inf
            elif f.nan is not None and mag == f.nan:
                v = None
            elif ex == 0:
                v = sign * mpmath.ldexp(frac, 1 - bias - f.mbits)
            else:
                v = sign * mpmath.ldexp((1 << f.mbits) | frac, ex - bias - f.mbits)
            values.append(v)
            if v is not None and v not in codes:  # +0 before -0
                codes[v] = code
    return tuple(values), codes


class Unevaluable(Exception):
    """A node or atom this evaluator has no meaning for (named in the message)."""


class Excluded(Unevaluable):
    """A value the verdict's assumptions exclude at this point (a NaN encoding, a scale code that is not a
    number): the point says nothing about the obligation, another is drawn."""


def _width(sort: str) -> int:
    if sort == "pred":
        return 1
    if sort[0] == "b" and sort[1:].isdigit():
        return int(sort[1:])
    if sort in FORMATS:
        e, m = FORMATS[sort]
        return 1 + e + m
    if sort in MX_FORMATS:
        return MX_FORMATS[sort].width
    raise Unevaluable(f"sort {sort}")


def decode(bits: int, fmt: str):
    """An IEEE 754 (or PTX 5.2.3 narrow) encoding's value (mpf; +-inf); NaN is unevaluable."""
    if fmt in MX_FORMATS:
        v = _mx_values(fmt)[0][bits & ((1 << MX_FORMATS[fmt].width) - 1)]
        if v is None:
            raise Excluded(f"a NaN {fmt} encoding")
        return v
    if fmt not in FORMATS:
        raise Unevaluable(f"float format {fmt}")
    e, m = FORMATS[fmt]
    sign = -1 if bits >> (e + m) & 1 else 1
    ex = bits >> m & ((1 << e) - 1)
    frac = bits & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    if ex == (1 << e) - 1:
        if frac:
            raise Excluded("a NaN encoding")
        return sign * mpmath.inf
    if ex == 0:
        return sign * mpmath.ldexp(frac, 1 - bias - m)
    return sign * mpmath.ldexp((1 << m) | frac, ex - bias - m)


def encode(x, fmt: str) -> int:
    """The encoding of x in fmt when x is exactly representable there (else unevaluable)."""
    if fmt in MX_FORMATS:
        code = _mx_values(fmt)[1].get(x)
        if code is None:
            raise Unevaluable(f"{x} is not representable in {fmt}")
        return code
    e, m = FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    sign = 0
    if mpmath.isinf(x):
        return ((1 if x < 0 else 0) << (e + m)) | (((1 << e) - 1) << m)
    if x < 0:
        sign, x = 1, -x
    if x == 0:
        return sign << (e + m)
    man, exp = mpmath.mpf(x).man_exp  # x = man * 2^exp, man odd
    top = exp + man.bit_length() - 1  # unbiased exponent of the leading bit
    if top > bias:
        raise Unevaluable(f"{x} overflows {fmt}")
    if top >= 1 - bias:  # normal
        shift = exp - (top - m)
        if shift < 0:
            raise Unevaluable(f"{x} is not representable in {fmt}")
        full = man << shift
        return sign << (e + m) | (top + bias) << m | (full & ((1 << m) - 1))
    shift = exp - (1 - bias - m)
    if shift < 0:
        raise Unevaluable(f"{x} is not representable in {fmt}")
    return sign << (e + m) | (man << shift)


def _signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


def _is_int_type(t: str) -> bool:
    return t[0] in "bsu" and t[1:].isdigit()


_ROUND = {"rni": lambda x: mpmath.nint(x), "rzi": lambda x: mpmath.floor(x) if x >= 0 else mpmath.ceil(x),
          "rmi": mpmath.floor, "rpi": mpmath.ceil}
_FCMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
         "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


_FLOAT_OPS = {
    "FADD": lambda x: x[0] + x[1], "FSUB": lambda x: x[0] - x[1], "FMUL": lambda x: x[0] * x[1],
    "FFMA": lambda x: x[0] * x[1] + x[2], "FNEG": lambda x: -x[0], "FABS": lambda x: abs(x[0]),
    "FMIN": lambda x: min(x[0], x[1]), "FMAX": lambda x: max(x[0], x[1]), "FDIV": lambda x: x[0] / x[1],
    "FRCP": lambda x: 1 / x[0], "FSQRT": lambda x: mpmath.sqrt(x[0]), "FRSQRT": lambda x: 1 / mpmath.sqrt(x[0]),
    "FEX2": lambda x: mpmath.power(2, x[0]), "FLG2": lambda x: mpmath.log(x[0], 2),
    "FSIN": lambda x: mpmath.sin(x[0]), "FCOS": lambda x: mpmath.cos(x[0]), "FTANH": lambda x: mpmath.tanh(x[0]),
    "FCOPYSIGN": lambda x: abs(x[1]) if x[0] >= 0 else -abs(x[1])}  # PTX ISA 9.7.4: copysign(a, b) has a's sign


@dataclass(frozen=True)
class SignBits:
    """The bits of a float of format `fmt` whose exact value (a real the format may not represent: reals are
    exact here) had only its sign bit edited: a sign-magnitude encoding stays meaningful for any magnitude."""

    value: object  # mpf
    fmt: str


class TermValues:
    """Every node of terms.json evaluated at one random input (children first, as stored)."""

    def __init__(self, nodes: list, rng: random.Random, hints: dict[int, list[int]] | None = None) -> None:
        """`hints`: integer input leaf -> the constants it is compared with for equality in the normal
        forms ([x == v] indicators); such a leaf is drawn among them (one of them, or uniformly, each as
        likely), so that the indicators, and products of two of them, are 1 at some point and the normal
        form's handling of them ([x == a] [x == b] = 0 for a != b) is evaluated, not only the all-zero case."""
        self.hints = hints or {}
        self.scale_bytes = _scale_bytes(nodes)
        self.val: dict[int, object] = {}
        self.why: dict[int, Unevaluable] = {}  # node -> why it could not be evaluated
        self.sort: dict[int, str] = {}
        with mpmath.workprec(PREC):
            for i, op, sort, aux, kids in nodes:
                self.sort[i] = sort
                bad = next((self.why[k] for k in kids if k in self.why), None)
                if bad is not None:
                    self.why[i] = bad
                    continue
                try:
                    hint = self.hints.get(i) if op == "INPUT" else None
                    if hint and rng.randrange(len(hint) + 1):
                        self.val[i] = rng.choice(hint) % (1 << _width(sort))
                        continue
                    self.val[i] = self._node(op, sort, aux, kids, rng)
                    for lo, stype in self.scale_bytes.get(i, ()):  # a block scale byte: a number of its format
                        code = rng.randrange(0x7F if stype == "ue4m3" else 0xFF)
                        self.val[i] = self.val[i] & ~(0xFF << lo) | code << lo
                except (Unevaluable, ZeroDivisionError, ValueError, KeyError, TypeError) as e:
                    self.why[i] = (Excluded if isinstance(e, Excluded) else Unevaluable)(f"#{i} {op}: {e}")

    def get(self, i: int):
        if i in self.why:
            e = self.why[i]
            raise type(e)(str(e))
        if i not in self.val:
            raise Unevaluable(f"term #{i} is not in terms.json")
        return self.val[i]

    def bits(self, k: int) -> int:
        """A child's bits (a float child's exact encoding)."""
        v, s = self.val[k], self.sort[k]
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int):
            return v
        if isinstance(v, SignBits):
            return encode(v.value, v.fmt)
        return encode(v, s)

    def _sign_edit(self, op: str, sort: str, kids: list) -> SignBits | None:
        """x xor SIGN, x or SIGN, x and ~SIGN for a float x (or such bits) of a format as wide as the node whose
        exact value has no encoding (a sum, a logarithm): the value -x, -|x|, |x|. IEEE 754-2008 5.5.1: negate,
        abs and copySign change only the sign bit; PTX ISA 9.7.3.10 (neg), 9.7.3.11 (abs). None for any other
        operand or constant (the encoding's bits then decide, or the node is unevaluable)."""
        if len(kids) != 2:
            return None
        w = _width(sort)
        for a, c in (kids, kids[::-1]):
            v, fa = self.val[a], self.sort[a]
            if isinstance(v, SignBits):
                v, fa = v.value, v.fmt
            elif not (fa in FORMATS and isinstance(v, mpmath.mpf)):
                continue
            k = self.val[c]
            if fa not in FORMATS or _width(fa) != w or isinstance(k, bool) or not isinstance(k, int):
                continue
            sign, k = 1 << (w - 1), k & ((1 << w) - 1)
            try:
                encode(v, fa)
                return None  # an exact encoding: its bits decide, as for every other bit operation
            except Unevaluable:
                pass
            if op == "XOR" and k == sign:
                return SignBits(-v, fa)
            if op == "OR" and k == sign:
                return SignBits(-abs(v), fa)
            if op == "AND" and k == sign - 1:
                return SignBits(abs(v), fa)
        return None

    def _node(self, op: str, sort: str, aux, kids: list, rng: random.Random):
        fl = is_float(sort)
        if op == "CONST":
            return bool(aux & 1) if sort == "pred" else decode(aux, sort) if fl else int(aux)
        if op == "INPUT":
            if sort in MX_FORMATS:  # any number of the format: every code but NaN (and infinities)
                finite = [v for v in _mx_values(sort)[0] if v is not None and not mpmath.isinf(v)]
                return rng.choice(finite)
            if fl:
                e, m = FORMATS[sort]
                v = mpmath.ldexp(rng.randrange(1 << m, 1 << (m + 1)), rng.randrange(-3, 2) - m)
                return -v if rng.random() < 0.5 else v
            if sort == "pred":
                return rng.random() < 0.5
            return rng.randrange(0, 1 << _width(sort))
        if op == "OPAQUE":
            raise Unevaluable("an opaque value")
        x = [self.val[k] for k in kids]
        mods = aux if isinstance(aux, dict) else {}
        if op == "MMA" and list(mods.get("elems", []))[2:] == ["s32"]:  # an integer MMA: bits, as the emulator
            return self._int_mma(kids, mods)
        if op in ("FADD", "FSUB", "FMUL", "FFMA", "FNEG", "FABS", "FMIN", "FMAX", "FDIV", "FRCP", "FSQRT", "FRSQRT",
                  "FEX2", "FLG2", "FSIN", "FCOS", "FTANH", "FCOPYSIGN", "MMA"):
            r = self._float(op, x, kids, mods)
            if mods.get("relu"):
                r = max(r, mpmath.mpf(0))
            if mods.get("sat"):
                r = min(max(r, mpmath.mpf(0)), mpmath.mpf(1))
            return r
        if op == "SCALE":  # x * scale(s), s a scale byte (PTX 9.7.14.3; formats 5.2.3)
            stype = list(mods.get("elems", []))[1:]
            s = self.bits(kids[1]) & 0xFF
            if stype == ["ue8m0"]:  # 2^(s - 127); 0xFF is NaN
                if s == 0xFF:
                    raise Excluded("a NaN ue8m0 scale factor")
                return mpmath.ldexp(self._operand(kids[0], self.sort[kids[0]]), s - 127)
            if stype == ["ue4m3"]:
                return self._operand(kids[0], self.sort[kids[0]]) * _ue4m3(mpmath.mpf(s))
            raise Unevaluable(f"scale type {mods.get('elems')}")
        if op == "CVT":
            return self._cvt(x[0], kids[0], sort, mods)
        if op == "FLOAT":
            ks = self.sort[kids[0]]
            if ks == sort:
                return x[0]
            if isinstance(x[0], SignBits) and x[0].fmt == sort and _width(ks) == _width(sort):
                return x[0].value
            if is_float(ks):
                raise Unevaluable(f"{ks} bits read as {sort}")
            return decode(self.bits(kids[0]) & ((1 << _width(sort)) - 1), sort)
        if op == "ITE":
            return x[1] if x[0] else x[2]
        if op in ("PAND", "POR", "PXOR", "PNOT"):
            return {"PAND": lambda: x[0] and x[1], "POR": lambda: x[0] or x[1], "PXOR": lambda: x[0] != x[1],
                    "PNOT": lambda: not x[0]}[op]()
        if op == "CMP":
            return self._cmp(x, kids, mods)
        if op in ("XOR", "OR", "AND"):
            got = self._sign_edit(op, sort, kids)
            if got is not None:
                return got
        return self._bits_op(op, sort, kids, mods)

    def _float(self, op: str, x: list, kids: list, mods: dict):
        if op == "MMA":
            a_t, b_t, _ = mods["elems"]
            k = (len(kids) - 1) // 2
            acc = x[0]
            for q in range(k):
                acc += self._operand(kids[1 + q], a_t) * self._operand(kids[1 + k + q], b_t)
            return acc
        return _FLOAT_OPS[op](x)

    def _int_mma(self, kids: list, mods: dict) -> int:
        """An integer MMA's s32 bits: c + sum a * b exact, then clamped to int32 with .satfinite (the `sat` flag),
        else wrapped (PTX 9.7.14.5.14, 9.7.15.5.2; semantics.termeval._mma computes the same)."""
        a_t, b_t, _ = mods["elems"]
        k = (len(kids) - 1) // 2
        s = _signed(self.bits(kids[0]) & 0xFFFFFFFF, 32)
        for q in range(k):
            s += int(self._operand(kids[1 + q], a_t)) * int(self._operand(kids[1 + k + q], b_t))
        s = min(max(s, -(1 << 31)), (1 << 31) - 1) if mods.get("sat") else s
        return s & 0xFFFFFFFF

    def _operand(self, k: int, t: str):
        v = self.val[k]
        if _is_int_type(t):
            w = int(t[1:])
            b = self.bits(k) & ((1 << w) - 1)
            return mpmath.mpf(_signed(b, w) if t[0] == "s" else b)
        if isinstance(v, int) and not isinstance(v, bool):
            return decode(v & ((1 << _width(t)) - 1), t)
        if isinstance(v, SignBits):
            return v.value if v.fmt == t else decode(self.bits(k) & ((1 << _width(t)) - 1), t)
        return v

    def _cvt(self, v, kid: int, sort: str, mods: dict):
        dst, src = mods["elems"]
        if not _is_int_type(src):
            r = v
        else:
            w = int(src[1:])
            b = self.bits(kid) & ((1 << w) - 1)
            r = _signed(b, w) if src[0] == "s" else b
        if not _is_int_type(dst):  # to a float: the same real (rounding is the precision check's)
            r = mpmath.mpf(r)
            if mods.get("relu"):
                r = max(r, mpmath.mpf(0))
            if mods.get("sat"):
                r = min(max(r, mpmath.mpf(0)), mpmath.mpf(1))
            return r
        w = int(dst[1:])
        if not _is_int_type(src):
            rnd = mods.get("rnd") or "rzi"
            if rnd not in _ROUND:
                raise Unevaluable(f"float-to-integer rounding {rnd}")
            r = int(_ROUND[rnd](r))
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, (1 << w) - 1)
        if mods.get("sat") or not _is_int_type(src):  # float to integer saturates (PTX ISA 9.7.9.21)
            r = min(max(r, lo), hi)
        return r & ((1 << _width(sort)) - 1)

    def _cmp(self, x: list, kids: list, mods: dict) -> bool:
        c = mods["cmp"]
        if is_float(self.sort[kids[0]]):
            if c in ("num",):
                return True
            if c in ("nan",):
                return False
            return _FCMP[c.rstrip("u") if c not in ("eq", "ne") else c](x[0], x[1])
        w = _width(self.sort[kids[0]])
        a, b = self.bits(kids[0]), self.bits(kids[1])
        if mods.get("signed") and c in ("lt", "le", "gt", "ge"):
            a, b = _signed(a, w), _signed(b, w)
        c = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(c, c)
        return _FCMP[c](a, b)

    def _bits_op(self, op: str, sort: str, kids: list, mods: dict) -> int:
        w = _width(sort)
        mask = (1 << w) - 1
        b = [self.bits(k) for k in kids]
        signed = mods.get("signed", False)
        kw = [_width(self.sort[k]) for k in kids]
        if op == "AND":
            r = b[0] & b[1]
        elif op == "OR":
            r = b[0] | b[1]
        elif op == "XOR":
            r = b[0] ^ b[1]
        elif op == "NOT":
            r = ~b[0]
        elif op == "SHL":
            r = 0 if b[1] >= w else b[0] << b[1]
        elif op == "SHR":
            a = _signed(b[0], w) if signed else b[0]
            r = (a >> min(b[1], w)) if signed else (0 if b[1] >= w else a >> b[1])
        elif op == "IADD":
            r = b[0] + b[1]
        elif op == "ISUB":
            r = b[0] - b[1]
        elif op == "INEG":
            r = -b[0]
        elif op == "IMUL":
            a, c = (_signed(b[0], kw[0]), _signed(b[1], kw[1])) if signed else (b[0], b[1])
            r = a * c >> kw[0] if mods.get("mode") == "hi" else a * c
        elif op in ("IMIN", "IMAX", "IABS"):
            a = [_signed(v, w) if signed else v for v in b]
            r = min(a) if op == "IMIN" else max(a) if op == "IMAX" else abs(a[0])
        elif op == "CONCAT":
            r = 0
            for v, k in zip(b, kw):
                r = r << k | (v & ((1 << k) - 1))
        elif op == "EXTRACT":
            r = b[0] >> mods.get("lo", 0)
        elif op == "POPC":
            r = bin(b[0]).count("1")
        elif op == "BFE":
            pos, ln = b[1] & 0xFF, b[2] & 0xFF
            r = (b[0] >> pos) & ((1 << ln) - 1) if ln else 0
            if signed and ln and r >> (ln - 1) & 1:
                r -= 1 << ln
        else:
            raise Unevaluable(f"operation {op}")
        return r & mask


def equality_hints(atoms: dict, nodes: list) -> dict[int, list[int]]:
    """Integer input leaves compared for equality with constants by the normal forms' indicators (a
    `cmp` atom `eq` with one operand a term and the other a value): leaf -> the sorted constants; and
    leaves compared with a constant c by an ordered comparison of the term DAG (a CMP node of the leaf and
    a CONST): c - 1, c and c + 1, the words on both sides of its bound. The normal form drops a masked
    column's [y == v] under [y <s c] where v >= c and [y <s c] under [y == v] where v < c (proofs/normal.py
    _indicator_algebra), which leaves no trace in the forms: drawn at the bounds, a label makes a wrong
    bound (a column kept or dropped on the wrong side) show in a term's value."""
    inputs = {n[0] for n in nodes if n[1] == "INPUT" and not is_float(n[2]) and n[2] != "pred"}
    out: dict[int, set[int]] = {}
    for a in atoms.values():
        if a.get("kind") != "IND" or a.get("cond") != "cmp" or a.get("cmp") != "eq":
            continue
        for s, t in (("a", "b"), ("b", "a")):
            term, value = a[s].get("term"), a[t].get("value")
            if term is not None and value is not None and int(term) in inputs:
                out.setdefault(int(term), set()).add(int(value))
    consts = {n[0]: int(n[3]) for n in nodes if n[1] == "CONST" and isinstance(n[3], int) and n[2] != "pred"}
    for n in nodes:
        if n[1] != "CMP" or len(n[4]) != 2 or not isinstance(n[3], dict):
            continue
        if n[3].get("cmp") not in ("lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
            continue
        for leaf, other in ((n[4][0], n[4][1]), (n[4][1], n[4][0])):
            if leaf in inputs and other in consts:
                c = consts[other]
                out.setdefault(int(leaf), set()).update((c - 1, c, c + 1))  # drawn modulo 2^w
    return {k: sorted(v) for k, v in out.items()}


def close(a, b) -> bool:
    """Equal reals to 2^-120 relative (infinities equal only themselves)."""
    if mpmath.isinf(a) or mpmath.isinf(b):
        return a == b
    with mpmath.workprec(PREC):
        return abs(a - b) <= TOL * max(mpmath.mpf(1), abs(a), abs(b))


def _scale_bytes(nodes: list) -> dict[int, list[tuple[int, str]]]:
    """Integer input leaves holding block scale factors (a SCALE node's scale operand, an 8-bit EXTRACT of the
    leaf, PTX 9.7.14.3): leaf -> (bit offset, scale type). Such bytes are drawn among the numbers of their format
    (the verdict assumes scale factors read from data are numbers: ue4m3 bit 7 clear and not 0x7f, ue8m0 not
    0xff), as a random word would have a ue4m3 NaN or padding bit set in half of its bytes."""
    by_id = {n[0]: n for n in nodes}
    out: dict[int, list[tuple[int, str]]] = {}
    for _, op, _, aux, kids in nodes:
        stype = list(aux.get("elems", []))[1:] if op == "SCALE" and isinstance(aux, dict) else []
        if stype not in (["ue4m3"], ["ue8m0"]):
            continue
        node, lo = by_id.get(kids[1]), 0
        while node is not None and node[1] == "EXTRACT" and isinstance(node[3], dict):
            lo += int(node[3].get("lo", 0))
            node = by_id.get(node[4][0])
        if node is not None and node[1] == "INPUT" and node[2][0] == "b" and lo % 8 == 0 \
                and lo + 8 <= _width(node[2]) and (lo, stype[0]) not in out.get(node[0], []):
            out.setdefault(node[0], []).append((lo, stype[0]))
    return out


def _ue4m3(code):
    """The value of a ue4m3 scale byte given as a number (PTX 5.2.3: 7 bits, bit 7 clear; 0x7f is NaN)."""
    if code != int(code) or not 0 <= code < 0x80:
        raise Excluded(f"a ue4m3 scale byte {code} (not a 7-bit code)")
    return decode(int(code), "ue4m3")


_APPS = {"sqrt": mpmath.sqrt, "log2": lambda x: mpmath.log(x, 2), "sin": mpmath.sin, "cos": mpmath.cos,
         "tanh": mpmath.tanh, "abs": abs, "copysign": lambda a, b: abs(b) if a >= 0 else -abs(b),
         "ite": lambda c, a, b: a if c != 0 else b}  # proofs/normal.py: an infinity under a condition


class NormalValues:
    """Normal forms (normal.json) evaluated at the point of a TermValues, from the atoms' definitions."""

    def __init__(self, tables: dict, terms: TermValues) -> None:
        self.atoms, self.polys, self.keys = tables["atoms"], tables["polys"], tables["keys"]
        self.terms = terms
        self._atom: dict[str, object] = {}
        self._key: dict[str, object] = {}
        self._poly: dict[str, object] = {}
        self._coef: dict[str, object] = {}

    def nf(self, x: dict):
        with mpmath.workprec(PREC):
            if "inf" in x:
                return mpmath.inf if int(x["inf"]) > 0 else -mpmath.inf
            v = self._terms(x["num"])
            if x.get("den") is not None:
                v = v / self.poly(str(x["den"]))
            return v

    def _terms(self, ts: list):
        total = mpmath.mpf(0)
        coef = self._coef
        for mono, c in ts:
            v = coef.get(c)
            if v is None:
                num, _, den = str(c).partition("/")
                v = coef[c] = mpmath.mpf(int(num)) / (int(den) if den else 1)
            for i in range(0, len(mono), 2):
                a, e = self.atom(str(mono[i])), mono[i + 1]
                v = v * a if e == 1 else v * mpmath.power(a, int(e))
            total += v
        return total

    def poly(self, pid: str):
        if pid not in self._poly:
            self._poly[pid] = self._terms(self.polys[pid])
        return self._poly[pid]

    def key(self, k: str):
        if k not in self._key:
            self._key[k] = self.nf(self.keys[k])
        return self._key[k]

    def atom(self, aid: str):
        got = self._atom.get(aid)
        if got is None:
            got = self._atom[aid] = self._atom_value(self.atoms[aid])
        return got

    def _table_index(self, leaves: list) -> int:
        """The row of a table over input leaves at this point: the leaves' bits side by side, the
        first leaf in the low bits (proofs/normal.py's order)."""
        index, shift = 0, 0
        for leaf in leaves:
            t = int(leaf)
            sort = self.terms.sort.get(t)
            if sort is None:
                raise Unevaluable(f"table leaf #{t} is not in terms.json")
            self.terms.get(t)  # raises when the leaf has no value at this point
            index |= self.terms.bits(t) << shift  # a float leaf by its encoding
            shift += _width(sort)
        return index

    def _bits_cmp(self, a: dict) -> bool:
        """A comparison of bit-vectors (`cmp` as setp spells it, PTX 9.7.3.x): operands a term's bits or a
        constant of the other operand's width, two's complement where `signed` and ordered."""
        terms = [a[s].get("term") for s in ("a", "b")]
        widths = [_width(self.terms.sort[int(t)]) for t in terms if t is not None]
        if not widths:
            raise Unevaluable("a comparison of two constants")
        w = widths[0]
        vals = []
        for s, t in zip(("a", "b"), terms):
            if t is None:
                vals.append(int(a[s]["value"]) & ((1 << w) - 1))
            else:
                self.terms.get(int(t))  # raises when the term has no value at this point
                vals.append(self.terms.bits(int(t)))
        c = str(a["cmp"])
        if a.get("signed") and c in ("lt", "le", "gt", "ge"):
            vals = [_signed(v, w) for v in vals]
        c = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(c, c)
        return _FCMP[c](vals[0], vals[1])

    def _atom_value(self, a: dict):
        kind = a["kind"]
        if kind in ("LEAF", "TERM"):
            v = self.terms.get(int(a["term"]))
            if not isinstance(v, mpmath.mpf):
                raise Unevaluable(f"{kind} atom of a non-float term #{a['term']}")
            return v
        if kind == "INT":
            if "term" not in a:  # a function of few input bits by its value table
                return mpmath.mpf(int(a["values"][self._table_index(a["leaves"])]))
            t = int(a["term"])
            b = self.terms.bits(t) if t in self.terms.val else self.terms.get(t)
            return mpmath.mpf(_signed(b, _width(self.terms.sort[t])) if a["signed"] else b)
        if kind == "EXP2":
            return mpmath.power(2, self.poly(str(a["poly"])))
        if kind in ("MAX", "MIN"):
            vals = [self.key(str(k)) for k in a["args"]]
            return max(vals) if kind == "MAX" else min(vals)
        if kind == "LET":
            return self.key(str(a["nf"]))
        if kind == "IND":
            c = a["cond"]
            if c == "term":
                return mpmath.mpf(1 if self.terms.get(int(a["term"])) else 0)
            if c in ("gt", "eq"):
                p = self.poly(str(a["poly"]))
                if c == "gt":
                    return mpmath.mpf(1 if p > 0 else 0)
                return mpmath.mpf(1 if close(p, mpmath.mpf(0)) else 0)
            if c == "table":
                return mpmath.mpf(1 if int(a["table"][self._table_index(a["leaves"])]) else 0)
            if c == "cmp":
                return mpmath.mpf(1 if self._bits_cmp(a) else 0)
            raise Unevaluable(f"an indicator of condition {c}")
        if kind == "APP":
            fn, args = a["fn"], [self.key(str(k)) for k in a["args"]]
            if fn in _APPS:
                return _APPS[fn](*args)
            if fn == "mma.s32.exact":  # a bounded integer MMA's exact sum, read as .s32 (proofs/normal.py
                # _exact_int_mma): the sum itself; one outside int32 breaks the claim, so it is no value here
                (s,) = args
                if s != int(s) or not -(1 << 31) <= s < 1 << 31:
                    raise Unevaluable(f"mma.s32.exact of {s}: not an int32")
                return s
            if fn == "ue4m3":  # a block scale factor's value (PTX 5.2.3; proofs/normal.py leaves it uninterpreted)
                return _ue4m3(args[0])
            if fn.startswith("float.") and is_float(fn[6:]):
                return decode(int(args[0]) & ((1 << _width(fn[6:])) - 1), fn[6:])
            raise Unevaluable(f"uninterpreted function {fn}")
        raise Unevaluable(f"atom kind {kind}")
