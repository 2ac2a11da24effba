"""Bit-vector queries as integer arithmetic, for refuting what bit-blasting cannot.

A bounds query over symbolic sizes multiplies sizes by CTA ids (`row * N + col < M * N`): 64-bit
bit-vector multiplications whose bit-blasted circuits Z3 does not refute in minutes, while the
same facts over the integers are a small nonlinear problem (nlsat) it refutes in about a second.

`to_int` rewrites a Z3 bit-vector formula into an equisatisfiable one over the integers, exactly:
a bit-vector of width w is an integer congruent to its unsigned value modulo 2^w (SMT-LIB's
bit-vector semantics; PTX integer arithmetic is modulo 2^w too, 9.7.1). Sums, differences,
products and left shifts are taken as they are; where the value itself is read (a comparison, a
division, a right shift, an extension) it is reduced, and the reduction is a `mod 2^w` only when the
term's range, computed from its operands' ranges and the bounds the assertions put on the
variables and on compound terms (a leading element count A*M of harness/sizes.py's facts, which
keeps A*M*K from wrapping; stated as side constraints), spans more than one window [k 2^w, (k + 1) 2^w) of the modulus: a wrap-around that
cannot happen costs nothing, and one that can is kept. Signed comparisons and extensions read the
value as two's complement. `and`/`or`/`xor` are taken where known bits make them arithmetic (a mask
of a few runs of ones; operands whose set bits are disjoint, as Triton's `or` for `+`). Only
operations with an exact integer form are taken (shifts and masks by constants, division by
constants); anything else raises `Untranslatable`, and the caller keeps the bit-vector query. The
result is used only to prove unsatisfiability (grid.py's `_check`), so a
model is never read back from it.
"""

from __future__ import annotations

import z3


class Untranslatable(Exception):
    """The formula has an operation without an exact integer form here."""


Range = tuple[int, int]


class _Translator:
    """Each bit-vector term of width w becomes (v, r): an integer term v whose value is congruent to
    the term's unsigned value modulo 2^w, and a range r = (lo, hi) that holds v in every model of the
    assertions. Addition, subtraction, negation, multiplication, shifts left and low extracts commute
    with `mod 2^w` (PTX 9.7.1: integer arithmetic is modulo 2^w), so they take v unreduced; an
    operation that reads the value itself (a comparison, a division, a right shift, an extension, a
    mask) reduces it first (`unsigned`, `signed`), and the reduction emits no `mod` when r lies in
    one window [k 2^w, (k + 1) 2^w) of the modulus: there the value is v - k 2^w exactly."""

    def __init__(self, known: dict[str, Range] | None = None, terms: "TermBounds | None" = None) -> None:
        self.known = known or {}  # ranges of variables the assertions bound (_known_ranges)
        self.terms = terms or TermBounds()  # ranges of compound terms they bound (_term_bounds)
        self.vars: dict[str, z3.ArithRef] = {}
        self.side: list = []  # range constraints of the variables and of the bounded terms (_narrowed)
        self.memo: dict = {}
        self.ones: dict = {}  # _may_be_one's memo

    # ---- reductions: the term's value from its congruent integer
    @staticmethod
    def unsigned(x, r: Range, w: int):
        """The unsigned value in [0, 2^w) of a term congruent to x (range r) modulo 2^w."""
        m = 2**w
        k = r[0] // m
        if r[1] < (k + 1) * m:  # one window: no wrap-around can happen
            return (x - k * m if k else x), (r[0] - k * m, r[1] - k * m)
        return x % m, (0, m - 1)

    @classmethod
    def signed(cls, x, r: Range, w: int):
        """The two's-complement value in [-2^(w-1), 2^(w-1)) of a term congruent to x modulo 2^w."""
        m, half = 2**w, 2 ** (w - 1)
        k = (r[0] + half) // m
        if r[1] + half < (k + 1) * m:  # one signed window
            return (x - k * m if k else x), (r[0] - k * m, r[1] - k * m)
        u, ru = cls.unsigned(x, r, w)
        if ru[1] < half:
            return u, ru
        if ru[0] >= half:
            return u - m, (ru[0] - m, ru[1] - m)
        return z3.If(u >= half, u - m, u), (-half, half - 1)

    def value(self, e):
        """The unsigned value of the bit-vector term e and its range."""
        x, r = self.bv(e)
        return self.unsigned(x, r, e.size())

    def signed_value(self, e):
        x, r = self.bv(e)
        return self.signed(x, r, e.size())

    def bv(self, e) -> tuple[z3.ArithRef, Range]:
        key = e.get_id()
        got = self.memo.get(key)
        if got is None:
            got = self._bv(e)
            bound = self.terms.by_id.get(key)
            if bound is not None:
                got = self._narrowed(got, bound, e.size())
            self.memo[key] = got
        return got

    def _narrowed(self, got: tuple[z3.ArithRef, Range], bound: Range, w: int) -> tuple[z3.ArithRef, Range]:
        """A term whose unsigned value a top-level conjunct bounds to `bound` in every model of the
        assertions (_term_bounds): its value, in the range its operands give cut to the bound. Stated as a
        side constraint, so every integer model has the value in that range too (equisatisfiable), and
        products and sums of it are then taken without a reduction where their ranges fit 2^w (the
        element count A*M*K of sizes < 2^31 each, once the leading count A*M is bounded)."""
        x, r = got
        u, ru = self.unsigned(x, r, w)
        lo, hi = max(ru[0], bound[0]), min(ru[1], bound[1])
        if (lo, hi) == ru or lo > hi:  # nothing narrower (or no model at all: keep the wider range)
            return got
        self.side += [u >= lo, u <= hi]
        return u, (lo, hi)

    def _product(self, factors: list) -> tuple[z3.ArithRef, Range]:
        """The product of bit-vector terms (one width), its range from its factors' ranges; a sub-product
        of them that a conjunct bounds (`TermBounds.products`, the same factors in any order) is taken
        as that term, narrowed (multiplication modulo 2^w is associative and commutative)."""
        parts, left = [], [f.get_id() for f in factors]
        for key, t in self.terms.products:  # the largest first
            rest = _without(left, key)
            if rest is not None and len(key) < len(factors):
                parts.append(self.bv(t))
                left = rest
        by_id = {f.get_id(): f for f in factors}
        parts += [self.bv(by_id[i]) for i in left]
        if not parts:  # a product of ones
            return z3.IntVal(1), (1, 1)
        out, r = parts[0]
        for t, ry in parts[1:]:
            ends = [r[0] * ry[0], r[0] * ry[1], r[1] * ry[0], r[1] * ry[1]]
            out, r = out * t, (min(ends), max(ends))
        return out, r

    def _bv(self, e):
        w = e.size()
        k = e.decl().kind()
        a = e.children()
        if z3.is_bv_value(e):
            v = e.as_long()
            return z3.IntVal(v), (v, v)
        if k == z3.Z3_OP_UNINTERPRETED and not a:
            name = e.decl().name()
            lo, hi = self.known.get(name, (0, 2**w - 1))
            lo, hi = max(lo, 0), min(hi, 2**w - 1)
            v = self.vars.get(name)
            if v is None:
                v = self.vars[name] = z3.Int(f"{name}!i")
                # the known range holds in every model of the assertions; stated, every integer model
                # has each term in its range too, so the translation is exact there (equisatisfiable)
                self.side += [v >= lo, v <= hi]
            return v, (lo, hi)
        if k == z3.Z3_OP_BADD:
            xs = [self.bv(x) for x in a]
            return z3.Sum([x for x, _ in xs]), (sum(r[0] for _, r in xs), sum(r[1] for _, r in xs))
        if k == z3.Z3_OP_BSUB:
            (x, rx), (y, ry) = self.bv(a[0]), self.bv(a[1])
            return x - y, (rx[0] - ry[1], rx[1] - ry[0])
        if k == z3.Z3_OP_BNEG:
            x, rx = self.bv(a[0])
            return -x, (-rx[1], -rx[0])
        if k == z3.Z3_OP_BMUL:
            return self._product(_factors(e) if self.terms.products else a)
        if k == z3.Z3_OP_CONCAT:
            out, r = z3.IntVal(0), (0, 0)
            for y in a:
                t, ry = self.value(y)
                s = 2 ** y.size()
                out, r = out * s + t, (r[0] * s + ry[0], r[1] * s + ry[1])
            return out, r
        if k == z3.Z3_OP_EXTRACT:
            hi, lo = e.params()
            if not lo:  # the low bits: congruent modulo 2^(hi + 1) already
                return self.bv(a[0])
            x, rx = self.value(a[0])
            return x / (2**lo), (rx[0] >> lo, rx[1] >> lo)
        if k == z3.Z3_OP_ZERO_EXT:
            return self.value(a[0])
        if k == z3.Z3_OP_SIGN_EXT:
            return self.signed_value(a[0])  # congruent to the extension modulo 2^w
        if k in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR):
            if not z3.is_bv_value(a[1]):
                raise Untranslatable("shift by a variable amount")
            n = a[1].as_long()
            if n >= w:
                if k == z3.Z3_OP_BASHR:
                    s, _ = self.signed_value(a[0])
                    return z3.If(s < 0, z3.IntVal(-1), z3.IntVal(0)), (-1, 0)
                return z3.IntVal(0), (0, 0)
            if k == z3.Z3_OP_BSHL:
                x, rx = self.bv(a[0])
                return x * 2**n, (rx[0] * 2**n, rx[1] * 2**n)
            if k == z3.Z3_OP_BLSHR:
                x, rx = self.value(a[0])
                return x / 2**n, (rx[0] >> n, rx[1] >> n)
            s, rs = self.signed_value(a[0])
            return s / 2**n, (rs[0] >> n, rs[1] >> n)  # Int `/` floors for a positive divisor, as sra does
        if k in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
            # bits that are never both set (a tile base | a lane offset below its alignment, Triton's
            # `or` for `add`): x | y = x ^ y = x + y, no carry
            seen = 0
            for x in a:
                m = self._may_be_one(x)
                if seen & m:
                    raise Untranslatable(f"bit-vector operation {e.decl().name()} of operands whose bits may meet")
                seen |= m
            xs = [self.value(x) for x in a]
            return z3.Sum([x for x, _ in xs]), (sum(r[0] for _, r in xs), sum(r[1] for _, r in xs))
        if k == z3.Z3_OP_BAND:
            consts = [x for x in a if z3.is_bv_value(x)]
            if len(a) != 2 or len(consts) != 1:
                raise Untranslatable("and of two variable terms")
            m = consts[0].as_long()
            runs = _runs_of_ones(m)
            if len(runs) > MASK_RUNS:
                raise Untranslatable(f"and with a mask of more than {MASK_RUNS} runs of ones")
            x, rx = self.bv(a[0] if z3.is_bv_value(a[1]) else a[1])
            # bits [lo, hi) of x: (x mod 2^hi) - (x mod 2^lo); (x mod 2^w) mod 2^k = x mod 2^k for k <= w
            out, top = [], 0
            for lo, hi in runs:
                part = self.unsigned(x, rx, hi)[0]
                out.append(part - self.unsigned(x, rx, lo)[0] if lo else part)
                top += 2**hi - 2**lo
            if not out:
                return z3.IntVal(0), (0, 0)
            if len(runs) == 1 and runs[0][0] == 0:
                return self.unsigned(x, rx, runs[0][1])
            return z3.Sum(out), (0, top)
        if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            if not z3.is_bv_value(a[1]) or a[1].as_long() == 0:
                raise Untranslatable("division by a variable")
            d = a[1].as_long()
            x, rx = self.value(a[0])
            if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I):
                return x / d, (rx[0] // d, rx[1] // d)
            if rx[1] < d:
                return x, rx
            return x % d, (0, d - 1)
        if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM, z3.Z3_OP_BSREM_I):
            if not z3.is_bv_value(a[1]):
                raise Untranslatable("division by a variable")
            d = a[1].as_long()
            if d == 0 or d >= 2 ** (w - 1):
                raise Untranslatable("signed division by zero or a negative constant")
            s, rs = self.signed_value(a[0])
            q, rq = _truncating_division(s, rs, d)
            if k in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I):
                return q, rq
            # the remainder has the dividend's sign and |r| < d (SMT-LIB bvsrem)
            lo = 0 if rs[0] >= 0 else max(rs[0], -(d - 1))
            hi = 0 if rs[1] <= 0 else min(rs[1], d - 1)
            return s - q * d, (lo, hi)
        if k == z3.Z3_OP_ITE:
            c = self.boolean(a[0])
            (x, rx), (y, ry) = self.bv(a[1]), self.bv(a[2])
            return z3.If(c, x, y), (min(rx[0], ry[0]), max(rx[1], ry[1]))
        raise Untranslatable(f"bit-vector operation {e.decl().name()}")

    def _may_be_one(self, e) -> int:
        """A mask of the bits of e that may be 1 in some model (the others are 0 in every model): a
        known-bits analysis over masks, shifts, extensions and concatenations, and for any other
        term the bits below its unsigned range's upper end, less its known low zeros (_low_zeros)."""
        key = e.get_id()
        got = self.ones.get(key)
        if got is None:
            got = self.ones[key] = self._ones(e)
        return got

    def _ones(self, e) -> int:
        w = e.size()
        full = 2**w - 1
        k, a = e.decl().kind(), e.children()
        if z3.is_bv_value(e):
            return e.as_long()
        if k == z3.Z3_OP_BAND:
            m = full
            for x in a:
                m &= self._may_be_one(x)
            return m
        if k in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
            m = 0
            for x in a:
                m |= self._may_be_one(x)
            return m
        if k in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR) and z3.is_bv_value(a[1]):
            n = a[1].as_long()
            if n >= w:
                return 0
            m = self._may_be_one(a[0])
            return (m << n) & full if k == z3.Z3_OP_BSHL else m >> n
        if k == z3.Z3_OP_ZERO_EXT:
            return self._may_be_one(a[0])
        if k == z3.Z3_OP_EXTRACT:
            hi, lo = e.params()
            return (self._may_be_one(a[0]) >> lo) & full
        if k == z3.Z3_OP_CONCAT:
            m = 0
            for x in a:
                m = (m << x.size()) | self._may_be_one(x)
            return m
        if k == z3.Z3_OP_ITE:
            return self._may_be_one(a[1]) | self._may_be_one(a[2])
        _, r = self.value(e)
        return (2 ** r[1].bit_length() - 1) & ~(2 ** _low_zeros(e) - 1) & full

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
                (x, rx), (y, ry) = self.bv(a[0]), self.bv(a[1])
                m = 2 ** a[0].size()
                if not (-m < rx[0] - ry[1] and rx[1] - ry[0] < m):
                    # equal modulo 2^w; where |x - y| < 2^w that is x = y, with no reduction
                    x, y = self.value(a[0])[0], self.value(a[1])[0]
            return x == y if k == z3.Z3_OP_EQ else x != y
        unsigned = {z3.Z3_OP_ULT: lambda x, y: x < y, z3.Z3_OP_ULEQ: lambda x, y: x <= y,
                    z3.Z3_OP_UGT: lambda x, y: x > y, z3.Z3_OP_UGEQ: lambda x, y: x >= y}
        signed = {z3.Z3_OP_SLT: lambda x, y: x < y, z3.Z3_OP_SLEQ: lambda x, y: x <= y,
                  z3.Z3_OP_SGT: lambda x, y: x > y, z3.Z3_OP_SGEQ: lambda x, y: x >= y}
        if k in unsigned:
            return unsigned[k](self.value(a[0])[0], self.value(a[1])[0])
        if k in signed:
            return signed[k](self.signed_value(a[0])[0], self.signed_value(a[1])[0])
        raise Untranslatable(f"boolean operation {e.decl().name()}")


#: An `and` with a constant mask of more runs of ones than this is left to the bit-vectors.
MASK_RUNS = 4


def _runs_of_ones(m: int) -> list[tuple[int, int]]:
    """The runs of set bits of m as (lo, hi): bits lo .. hi - 1; 0xF0 -> [(4, 8)]."""
    runs, i = [], 0
    while m >> i:
        if (m >> i) & 1:
            j = i
            while (m >> j) & 1:
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    return runs


def _truncating_division(s, rs: Range, d: int):
    """s / d rounded toward zero (bvsdiv, PTX div.s: 9.7.1.7) for d > 0, and its exact range: the
    quotient is monotone in s, so its ends are those of rs. Z3's Int `/` floors for d > 0, which is
    the truncation for s >= 0 and its mirror -((-s) / d) for s <= 0; a range on both sides needs both."""
    def trunc(v: int) -> int:
        return v // d if v >= 0 else -((-v) // d)
    rq = (trunc(rs[0]), trunc(rs[1]))
    if rs[0] >= 0:
        return s / d, rq
    if rs[1] <= 0:
        return -((-s) / d), rq
    return z3.If(s >= 0, s / d, -((-s) / d)), rq


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


def _factors(e) -> list:
    """The factors of a product, through nested products, less factors 1: bvmul(bvmul(a, 1, b), c) -> [a, b, c]
    (contracts build counts from 1, harness/sizes.py's _prod; the one's place does not change the product)."""
    out = []
    for x in e.children():
        if z3.is_app_of(x, z3.Z3_OP_BMUL):
            out += _factors(x)
        elif not (z3.is_bv_value(x) and x.as_long() == 1):
            out.append(x)
    return out


def _without(ids: list[int], key: tuple[int, ...]) -> list[int] | None:
    """ids less the multiset key (in ids' order), or None where key is not a sub-multiset of ids."""
    rest = list(ids)
    for k in key:
        if k not in rest:
            return None
        rest.remove(k)
    return rest


class TermBounds:
    """Unsigned ranges of compound terms that top-level conjuncts bound by constants (_term_bounds):
    by term id, and the products among them by their factors (sorted ids, a multiset), the largest first."""

    def __init__(self, by_id: dict[int, Range] | None = None, products: list | None = None) -> None:
        self.by_id: dict[int, Range] = by_id or {}
        self.products: list[tuple[tuple[int, ...], z3.ExprRef]] = products or []


def _conjuncts(assertions):
    for a in assertions:
        if z3.is_and(a):
            yield from _conjuncts(a.children())
        else:
            yield a


_SWAP = {z3.Z3_OP_ULT: z3.Z3_OP_UGT, z3.Z3_OP_ULEQ: z3.Z3_OP_UGEQ, z3.Z3_OP_UGT: z3.Z3_OP_ULT,
         z3.Z3_OP_UGEQ: z3.Z3_OP_ULEQ, z3.Z3_OP_SLEQ: z3.Z3_OP_SGEQ, z3.Z3_OP_SGEQ: z3.Z3_OP_SLEQ}


def _constant_bounds(assertions, key) -> dict:
    """Unsigned ranges of the terms that top-level conjuncts bound by constants, by `key(term)` (None:
    not collected): x <u k, x <=u k, x >=u k, x >u k, and a signed pair lo <=s x <=s hi with 0 <= lo,
    the constant on either side. In every model of the assertions the term's value lies in its range."""
    lo: dict = {}
    hi: dict = {}
    slo: dict = {}
    shi: dict = {}
    for c in _conjuncts(assertions):
        if not z3.is_app(c) or c.num_args() != 2:
            continue
        k = c.decl().kind()
        x, y = c.children()
        if z3.is_bv_value(x) and k in _SWAP:  # k >=s x, as z3's Python API builds x <=s k (a constant's
            x, y, k = y, x, _SWAP[k]          # own __ge__ answers when it is a subclass of x's type)
        if not (z3.is_bv(x) and z3.is_bv_value(y) and not z3.is_bv_value(x)):
            continue
        n = key(x)
        if n is None:
            continue
        v, w = y.as_long(), x.size()
        sv = v - 2**w if v >= 2 ** (w - 1) else v
        if k == z3.Z3_OP_ULT:
            hi[n] = min(hi.get(n, 2**w - 1), v - 1)
        elif k == z3.Z3_OP_ULEQ:
            hi[n] = min(hi.get(n, 2**w - 1), v)
        elif k == z3.Z3_OP_UGEQ:
            lo[n] = max(lo.get(n, 0), v)
        elif k == z3.Z3_OP_UGT:
            lo[n] = max(lo.get(n, 0), v + 1)
        elif k == z3.Z3_OP_SLEQ:
            shi[n] = min(shi.get(n, sv), sv)
        elif k == z3.Z3_OP_SGEQ:
            slo[n] = max(slo.get(n, sv), sv)
    out = {n: (lo.get(n, 0), h) for n, h in hi.items()}
    for n, l in slo.items():
        if l >= 0 and n in shi:
            out[n] = (max(l, out.get(n, (0, shi[n]))[0]), min(shi[n], out.get(n, (0, shi[n]))[1]))
    return out


def _known_ranges(assertions) -> dict[str, Range]:
    """Unsigned ranges of variables that top-level conjuncts bound by constants (_constant_bounds). In
    every model of the assertions the variable lies in its range, so the translation may take it as the
    variable's range (no wrap where none can be)."""
    return _constant_bounds(assertions, lambda x: x.decl().name() if z3.is_const(x) else None)


def _term_bounds(assertions) -> TermBounds:
    """Unsigned ranges of compound terms (a product of sizes, say) that top-level conjuncts bound by
    constants (_constant_bounds): the domain's leading element counts `A*M <= 2^31 - 1` (harness/sizes.py),
    which bound A*M*K's sub-product so that A*M*K itself cannot wrap 2^64 (_Translator._narrowed)."""
    terms: dict[int, z3.ExprRef] = {}

    def key(x):
        if z3.is_const(x):
            return None
        terms[x.get_id()] = x
        return x.get_id()

    by_id = _constant_bounds(assertions, key)
    products = [(tuple(sorted(f.get_id() for f in _factors(terms[i]))), terms[i]) for i in by_id
                if z3.is_app_of(terms[i], z3.Z3_OP_BMUL)]
    products.sort(key=lambda p: -len(p[0]))
    return TermBounds(by_id, products)


#: A disjunction of more rows than this (each a conjunction of variable = constant) is left out.
TABLE_ROWS = 64


def _table(c) -> bool:
    """A large table of rows: Or(And(x == k, y == l, ...), ...)."""
    if not z3.is_or(c) or c.num_args() <= TABLE_ROWS:
        return False
    row = c.arg(0)
    return z3.is_and(row) and all(z3.is_eq(x) and z3.is_bv_value(x.arg(1)) for x in row.children())


#: Rounds of `_bounds_by_terms`: a bound read from a term whose range a bound of the round before narrowed.
BOUND_ROUNDS = 2

_FLIP = {z3.Z3_OP_ULT: z3.Z3_OP_UGT, z3.Z3_OP_ULEQ: z3.Z3_OP_UGEQ, z3.Z3_OP_UGT: z3.Z3_OP_ULT,
         z3.Z3_OP_UGEQ: z3.Z3_OP_ULEQ}


def _variable(e) -> str | None:
    """The name of the variable e is, or zero-extends (the same unsigned value), else None."""
    while z3.is_app(e) and e.decl().kind() == z3.Z3_OP_ZERO_EXT:
        e = e.arg(0)
    if z3.is_const(e) and not z3.is_bv_value(e) and z3.is_bv(e):
        return e.decl().name()
    return None


def _bounds_by_terms(kept: list, known: dict[str, Range], terms: TermBounds | None = None) -> dict[str, Range]:
    """`known` narrowed by top-level unsigned comparisons of a variable (or its zero extension) with
    any term: x <u e gives x <= hi(e) - 1, x >=u e gives x >= lo(e), where (lo, hi) is e's unsigned
    range under the ranges known so far (a CTA id below a grid size that is a function of the sizes,
    say). Each such conjunct holds in every model, so the narrowed range does too."""
    out = dict(known)
    for _ in range(BOUND_ROUNDS):
        t = _Translator(out, terms)
        new = dict(out)
        for c in kept:
            if not z3.is_app(c) or c.num_args() != 2 or c.decl().kind() not in _FLIP:
                continue
            k = c.decl().kind()
            x, y = c.children()
            if _variable(x) is None:
                x, y, k = y, x, _FLIP[k]
            name = _variable(x)
            if name is None:
                continue
            try:
                _, (lo, hi) = t.value(y)
            except Untranslatable:
                continue
            was = new.get(name, (0, 2 ** _width(x) - 1))
            if k == z3.Z3_OP_ULT:
                got = (was[0], min(was[1], hi - 1))
            elif k == z3.Z3_OP_ULEQ:
                got = (was[0], min(was[1], hi))
            elif k == z3.Z3_OP_UGT:
                got = (max(was[0], lo + 1), was[1])
            else:
                got = (max(was[0], lo), was[1])
            if got[0] <= got[1]:  # an empty range: no model at all; keep the wider one
                new[name] = got
        if new == out:
            break
        out = new
    return out


def _width(e) -> int:
    while e.decl().kind() == z3.Z3_OP_ZERO_EXT:
        e = e.arg(0)
    return e.size()


def to_int(assertions) -> list:
    """The assertions (Z3 booleans over bit-vectors) as integer constraints: equisatisfiable, except
    that large tables of rows (`_table`) are left out, a weaker formula: unsat still means unsat.
    Callers put a compact summary of such a table beside it (grid.py `_affine_rows`)."""
    kept = [c for c in _conjuncts(list(assertions)) if not _table(c)]
    terms = _term_bounds(kept)
    t = _Translator(_bounds_by_terms(kept, _known_ranges(kept), terms), terms)
    out = [t.boolean(a) for a in kept]
    return t.side + out


__all__ = ["to_int", "Untranslatable"]
