"""Bit-vector queries as integer arithmetic, for refuting what bit-blasting cannot.

A bounds query over symbolic sizes multiplies sizes by CTA ids (`row * N + col < M * N`): 64-bit
bit-vector multiplications whose bit-blasted circuits Z3 does not refute in minutes, while the
same facts over the integers are a small nonlinear problem (nlsat) it refutes in about a second.

`to_int` rewrites a Z3 bit-vector formula into an equisatisfiable one over the integers, exactly:
a bit-vector of width w is the integer of its unsigned value in [0, 2^w); every operation wraps
with `mod 2^w` unless the operands' ranges show it cannot overflow (SMT-LIB's bit-vector semantics;
PTX integer arithmetic is modulo 2^w too, 9.7.1). Signed comparisons and extensions read the value
as two's complement. Only operations with an exact integer form are taken (shifts and masks by
constants, division by constants); anything else raises `Untranslatable`, and the caller keeps the
bit-vector query. The result is used only to prove unsatisfiability (grid.py's `_check`), so a
model is never read back from it.
"""

from __future__ import annotations

import z3


class Untranslatable(Exception):
    """The formula has an operation without an exact integer form here."""


Range = tuple[int, int]


class _Translator:
    def __init__(self, known: dict[str, Range] | None = None) -> None:
        self.known = known or {}  # ranges of variables the assertions bound by constants
        self.vars: dict[str, z3.ArithRef] = {}
        self.side: list = []  # range constraints of the variables
        self.memo: dict = {}

    # ---- helpers
    def wrap(self, x, r: Range, w: int):
        """x (an integer term of range r) modulo 2^w."""
        if 0 <= r[0] and r[1] < 2**w:
            return x, r
        return x % (2**w), (0, 2**w - 1)

    def signed(self, x, r: Range, w: int):
        half = 2 ** (w - 1)
        if r[1] < half:
            return x, r
        if r[0] >= half:
            return x - 2**w, (r[0] - 2**w, r[1] - 2**w)
        return z3.If(x >= half, x - 2**w, x), (-half, half - 1)

    def bv(self, e) -> tuple[z3.ArithRef, Range]:
        key = e.get_id()
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._bv(e)
        return got

    def _bv(self, e):
        w = e.size()
        k = e.decl().kind()
        a = e.children()
        if z3.is_bv_value(e):
            v = e.as_long()
            return z3.IntVal(v), (v, v)
        if k == z3.Z3_OP_UNINTERPRETED and not a:
            name = e.decl().name()
            v = self.vars.get(name)
            if v is None:
                v = self.vars[name] = z3.Int(f"{name}!i")
                self.side += [v >= 0, v < 2**w]
            return v, self.known.get(name, (0, 2**w - 1))
        if k == z3.Z3_OP_BADD:
            xs = [self.bv(x) for x in a]
            return self.wrap(z3.Sum([x for x, _ in xs]), (sum(r[0] for _, r in xs), sum(r[1] for _, r in xs)), w)
        if k == z3.Z3_OP_BSUB:
            (x, rx), (y, ry) = self.bv(a[0]), self.bv(a[1])
            return self.wrap(x - y, (rx[0] - ry[1], rx[1] - ry[0]), w)
        if k == z3.Z3_OP_BNEG:
            x, rx = self.bv(a[0])
            return self.wrap(-x, (-rx[1], -rx[0]), w)
        if k == z3.Z3_OP_BMUL:
            out, r = self.bv(a[0])
            for y in a[1:]:
                t, ry = self.bv(y)
                ends = [r[0] * ry[0], r[0] * ry[1], r[1] * ry[0], r[1] * ry[1]]
                out, r = self.wrap(out * t, (min(ends), max(ends)), w)
            return out, r
        if k == z3.Z3_OP_CONCAT:
            out, r = z3.IntVal(0), (0, 0)
            for y in a:
                t, ry = self.bv(y)
                s = 2 ** y.size()
                out, r = out * s + t, (r[0] * s + ry[0], r[1] * s + ry[1])
            return out, r
        if k == z3.Z3_OP_EXTRACT:
            hi, lo = e.params()
            x, rx = self.bv(a[0])
            if lo:
                x, rx = x / (2**lo), (rx[0] >> lo, rx[1] >> lo)
            return self.wrap(x, rx, hi - lo + 1)
        if k == z3.Z3_OP_ZERO_EXT:
            return self.bv(a[0])
        if k == z3.Z3_OP_SIGN_EXT:
            x, rx = self.bv(a[0])
            s, rs = self.signed(x, rx, a[0].size())
            return self.wrap(s, rs, w)
        if k in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR):
            if not z3.is_bv_value(a[1]):
                raise Untranslatable("shift by a variable amount")
            n = a[1].as_long()
            x, rx = self.bv(a[0])
            if n >= w:
                if k == z3.Z3_OP_BASHR:
                    s, _ = self.signed(x, rx, w)
                    return z3.If(s < 0, z3.IntVal(2**w - 1), z3.IntVal(0)), (0, 2**w - 1)
                return z3.IntVal(0), (0, 0)
            if k == z3.Z3_OP_BSHL:
                return self.wrap(x * 2**n, (rx[0] * 2**n, rx[1] * 2**n), w)
            if k == z3.Z3_OP_BLSHR:
                return x / 2**n, (rx[0] >> n, rx[1] >> n)
            s, rs = self.signed(x, rx, w)
            return self.wrap(s / 2**n, (rs[0] >> n, rs[1] >> n), w)  # Int `/` floors for a positive divisor
        if k in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR) and len(a) == 2:
            # disjoint bits (a tile base | a lane offset below its alignment, as Triton addresses): x + y
            for x, y in ((a[0], a[1]), (a[1], a[0])):
                (ix, rx), (iy, ry) = self.bv(x), self.bv(y)
                if ry[0] >= 0 and ry[1] < 2 ** _low_zeros(x):
                    return ix + iy, (rx[0] + ry[0], rx[1] + ry[1])
            raise Untranslatable(f"bit-vector operation {e.decl().name()} of operands whose bits may meet")
        if k == z3.Z3_OP_BAND:
            consts = [x for x in a if z3.is_bv_value(x)]
            if len(a) != 2 or len(consts) != 1 or consts[0].as_long() & (consts[0].as_long() + 1):
                raise Untranslatable("and with a mask that is not 2^k - 1")
            m = consts[0].as_long()
            x, rx = self.bv(a[0] if z3.is_bv_value(a[1]) else a[1])
            return self.wrap(x, rx, m.bit_length()) if m else (z3.IntVal(0), (0, 0))
        if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            if not z3.is_bv_value(a[1]) or a[1].as_long() == 0:
                raise Untranslatable("division by a variable")
            d = a[1].as_long()
            x, rx = self.bv(a[0])
            if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I):
                return x / d, (rx[0] // d, rx[1] // d)
            return x % d, (0, d - 1)
        if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM, z3.Z3_OP_BSREM_I):
            if not z3.is_bv_value(a[1]):
                raise Untranslatable("division by a variable")
            d = a[1].as_long()
            if d == 0 or d >= 2 ** (w - 1):
                raise Untranslatable("signed division by zero or a negative constant")
            x, rx = self.bv(a[0])
            s, rs = self.signed(x, rx, w)
            q = z3.If(s >= 0, s / d, -((-s) / d))  # truncating toward zero
            rq = (min(rs[0] // d, -((-rs[0]) // d)), max(rs[1] // d, 0))
            if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I):
                return self.wrap(q, rq, w)
            return self.wrap(s - q * d, (-(d - 1), d - 1), w)
        if k == z3.Z3_OP_ITE:
            c = self.boolean(a[0])
            (x, rx), (y, ry) = self.bv(a[1]), self.bv(a[2])
            return z3.If(c, x, y), (min(rx[0], ry[0]), max(rx[1], ry[1]))
        raise Untranslatable(f"bit-vector operation {e.decl().name()}")

    def boolean(self, e):
        key = e.get_id()
        got = self.memo.get(key)
        if got is not None:
            return got
        got = self.memo[key] = self._boolean(e)
        return got

    def _boolean(self, e):
        if z3.is_true(e) or z3.is_false(e):
            return e
        if z3.is_quantifier(e):
            if not e.is_forall():
                raise Untranslatable("exists")
            names = [z3.Const(f"{e.var_name(i)}!q{e.get_id()}", e.var_sort(i)) for i in range(e.num_vars())]
            body = z3.substitute_vars(e.body(), *reversed(names))
            ints, ranges = [], []
            for n in names:
                if not z3.is_bv(n):
                    raise Untranslatable("a quantified variable that is not a bit-vector")
                v = z3.Int(f"{n.decl().name()}!i")
                self.vars[n.decl().name()] = v
                ints.append(v)
                ranges += [v >= 0, v < 2 ** n.size()]
            return z3.ForAll(ints, z3.Implies(z3.And(ranges), self.boolean(body)))
        k = e.decl().kind()
        a = e.children()
        if k == z3.Z3_OP_AND:
            return z3.And([self.boolean(x) for x in a])
        if k == z3.Z3_OP_OR:
            return z3.Or([self.boolean(x) for x in a])
        if k == z3.Z3_OP_NOT:
            return z3.Not(self.boolean(a[0]))
        if k == z3.Z3_OP_IMPLIES:
            return z3.Implies(self.boolean(a[0]), self.boolean(a[1]))
        if k == z3.Z3_OP_XOR:
            return z3.Xor(self.boolean(a[0]), self.boolean(a[1]))
        if k == z3.Z3_OP_ITE:
            return z3.If(self.boolean(a[0]), self.boolean(a[1]), self.boolean(a[2]))
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(a) == 2:
            if z3.is_bool(a[0]):
                x, y = self.boolean(a[0]), self.boolean(a[1])
            else:
                x, y = self.bv(a[0])[0], self.bv(a[1])[0]
            return x == y if k == z3.Z3_OP_EQ else x != y
        unsigned = {z3.Z3_OP_ULT: lambda x, y: x < y, z3.Z3_OP_ULEQ: lambda x, y: x <= y,
                    z3.Z3_OP_UGT: lambda x, y: x > y, z3.Z3_OP_UGEQ: lambda x, y: x >= y}
        signed = {z3.Z3_OP_SLT: lambda x, y: x < y, z3.Z3_OP_SLEQ: lambda x, y: x <= y,
                  z3.Z3_OP_SGT: lambda x, y: x > y, z3.Z3_OP_SGEQ: lambda x, y: x >= y}
        if k in unsigned:
            return unsigned[k](self.bv(a[0])[0], self.bv(a[1])[0])
        if k in signed:
            w = a[0].size()
            (x, rx), (y, ry) = self.bv(a[0]), self.bv(a[1])
            return signed[k](self.signed(x, rx, w)[0], self.signed(y, ry, w)[0])
        raise Untranslatable(f"boolean operation {e.decl().name()}")


def _low_zeros(e) -> int:
    """How many low bits of the bit-vector term `e` are zero whatever its variables' values (0 when
    nothing shows it): constants, products (their factors' sum), sums (the least), shifts left by a
    constant, extensions and low extracts of such terms."""
    w = e.size()
    if z3.is_bv_value(e):
        v = e.as_long()
        return w if v == 0 else min(w, (v & -v).bit_length() - 1)
    k, a = e.decl().kind(), e.children()
    if k == z3.Z3_OP_BMUL:
        return min(w, sum(_low_zeros(x) for x in a))
    if k in (z3.Z3_OP_BADD, z3.Z3_OP_BSUB):
        return min(_low_zeros(x) for x in a)
    if k == z3.Z3_OP_BSHL and z3.is_bv_value(a[1]):
        return min(w, _low_zeros(a[0]) + a[1].as_long())
    if k in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT):
        z = _low_zeros(a[0])
        return w if z == a[0].size() else z
    if k == z3.Z3_OP_EXTRACT and e.params()[1] == 0:
        return min(w, _low_zeros(a[0]))
    if k == z3.Z3_OP_CONCAT:
        low = a[-1]
        z = _low_zeros(low)
        return z if z < low.size() else low.size() + _low_zeros(z3.Concat(*a[:-1]) if len(a) > 2 else a[0])
    return 0


def _conjuncts(assertions):
    for a in assertions:
        if z3.is_and(a):
            yield from _conjuncts(a.children())
        else:
            yield a


def _known_ranges(assertions) -> dict[str, Range]:
    """Unsigned ranges of variables that top-level conjuncts bound by constants: x <u k, x <=u k, and
    a signed pair lo <=s x <=s hi with 0 <= lo. In every model of the assertions the variable lies in
    its range, so the translation may take it as the variable's range (no wrap where none can be)."""
    lo: dict[str, int] = {}
    hi: dict[str, int] = {}
    slo: dict[str, int] = {}
    shi: dict[str, int] = {}
    for c in _conjuncts(assertions):
        if not z3.is_app(c) or c.num_args() != 2:
            continue
        k = c.decl().kind()
        x, y = c.children()
        if not (z3.is_bv(x) and z3.is_bv_value(y) and z3.is_const(x) and not z3.is_bv_value(x)):
            continue
        n, v, w = x.decl().name(), y.as_long(), x.size()
        sv = v - 2**w if v >= 2 ** (w - 1) else v
        if k == z3.Z3_OP_ULT:
            hi[n] = min(hi.get(n, 2**w - 1), v - 1)
        elif k == z3.Z3_OP_ULEQ:
            hi[n] = min(hi.get(n, 2**w - 1), v)
        elif k == z3.Z3_OP_UGEQ:
            lo[n] = max(lo.get(n, 0), v)
        elif k == z3.Z3_OP_SLEQ:
            shi[n] = min(shi.get(n, sv), sv)
        elif k == z3.Z3_OP_SGEQ:
            slo[n] = max(slo.get(n, sv), sv)
    out = {n: (lo.get(n, 0), h) for n, h in hi.items()}
    for n, l in slo.items():
        if l >= 0 and n in shi:
            out[n] = (max(l, out.get(n, (0, shi[n]))[0]), min(shi[n], out.get(n, (0, shi[n]))[1]))
    return out


#: A disjunction of more rows than this (each a conjunction of variable = constant) is left out.
TABLE_ROWS = 64


def _table(c) -> bool:
    """A large table of rows: Or(And(x == k, y == l, ...), ...)."""
    if not z3.is_or(c) or c.num_args() <= TABLE_ROWS:
        return False
    row = c.arg(0)
    return z3.is_and(row) and all(z3.is_eq(x) and z3.is_bv_value(x.arg(1)) for x in row.children())


def to_int(assertions) -> list:
    """The assertions (Z3 booleans over bit-vectors) as integer constraints: equisatisfiable, except
    that large tables of rows (`_table`) are left out, a weaker formula: unsat still means unsat.
    Callers put a compact summary of such a table beside it (grid.py `_affine_rows`)."""
    kept = [c for c in _conjuncts(list(assertions)) if not _table(c)]
    t = _Translator(_known_ranges(kept))
    out = [t.boolean(a) for a in kept]
    return t.side + out


__all__ = ["to_int", "Untranslatable"]
