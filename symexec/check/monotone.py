"""Refuting integer queries with products of variables by linear arithmetic and monotonicity lemmas.

A bounds query over symbolic sizes asks whether `row * N + col` can reach `M * N` when `row < M`
and `col < N` (PTX integer multiplication, 9.7.1.3 `mul`/`mad`, taken exactly over the integers by
bv2int.py). Over the integers this is nonlinear, and nlsat decides it slowly or not at all within a
resource limit; the argument a person makes is linear once two facts about products are granted:
`row <= M - 1` and `N >= 0` give `row * N <= M * N - N` (monotonicity of multiplication by a
non-negative factor).

`refute` abstracts every product of two or more non-constant factors as a fresh integer (one per
multiset of factors: the same monomial anywhere is the same variable) and adds, for every pair of
monomials `a * R` and `b * R` that differ in one factor, and for every monomial and its cofactor `R`,
lemmas that hold for all integers:
  R >= 0 and a <= b      ->  a * R <= b * R
  R >= 0 and a + 1 <= b  ->  a * R + R <= b * R
  R >= 0 and a >= 1      ->  a * R >= R
  every factor >= 0      ->  the product >= 0
Sums of products are first expanded and grouped by the factor most of their products share
(`_Abstraction.linear`): a pipelined tile's `N * row + 448 * N + 128 * N * t` becomes one monomial
`N * s` with a fresh s = row + 448 + 128 t, so the lemmas above compare it with `K * N` through the
linear fact `s + 1 <= K` (the tile's mask), which nothing could when each product stood alone.
Every model of the original formula is a model of the abstraction (each fresh variable set to its
product), so "unsat" for the abstraction is "unsat" for the original; "sat" or "unknown" proves
nothing and the caller goes on (grid.py's `_check`). The abstraction is linear integer arithmetic
with implications, which Z3 decides quickly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import z3


@dataclass(frozen=True)
class _Monomial:
    factors: tuple[z3.ArithRef, ...]  # non-constant factors, sorted by Z3 id, repeated for powers
    var: z3.ArithRef  # the fresh integer that stands for their product


def _key(factors) -> tuple[int, ...]:
    return tuple(sorted(f.get_id() for f in factors))


class _Abstraction:
    def __init__(self) -> None:
        self.monomials: dict[tuple[int, ...], _Monomial] = {}
        self.memo: dict[int, z3.ExprRef] = {}
        self.quotients: dict[tuple[int, int], z3.ArithRef] = {}
        self.side: list = []  # the quotients' and grouped sums' definitions
        self.sums: dict[tuple, z3.ArithRef] = {}  # a linear cofactor (`linear`) -> its fresh integer

    def monomial(self, factors: list) -> z3.ArithRef:
        if len(factors) == 1:
            return factors[0]
        factors = sorted(factors, key=lambda f: f.get_id())
        k = _key(factors)
        got = self.monomials.get(k)
        if got is None:
            got = self.monomials[k] = _Monomial(tuple(factors), z3.Int(f"mono!{len(self.monomials)}"))
        return got.var

    def term(self, e):
        key = e.get_id()
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._term(e)
        return got

    def _term(self, e):
        if z3.is_quantifier(e) or not z3.is_app(e) or e.num_args() == 0:
            return e
        k = e.decl().kind()
        if k in _POLY_OPS:
            p = self.poly(e)
            if p is not None:
                return self.linear(p)
        if z3.is_mul(e):
            coef, factors = 1, []
            stack = list(e.children())
            while stack:
                x = stack.pop()
                if z3.is_mul(x):
                    stack += x.children()
                    continue
                x = self.term(x)
                if z3.is_int_value(x):
                    coef *= x.as_long()
                else:
                    factors.append(x)
            if not factors:
                return z3.IntVal(coef)
            m = self.monomial(factors)
            return m if coef == 1 else coef * m
        k = e.decl().kind()
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD) and z3.is_int_value(e.arg(1)) and e.arg(1).as_long() > 0:
            return self.division(self.term(e.arg(0)), e.arg(1).as_long(), k == z3.Z3_OP_MOD)
        return e.decl()(*[self.term(x) for x in e.children()])

    # ---- polynomials: a sum of products as coefficients of monomials over abstracted atoms
    def poly(self, e) -> dict | None:
        """e (+, -, *, constants) as {key: (coefficient, atoms)}, the atoms the abstracted terms of its
        other sub-terms (variables, quotients, if-then-else); None past POLY_TERMS monomials."""
        k = e.decl().kind() if z3.is_app(e) else None
        if z3.is_int_value(e):
            return {(): (e.as_long(), ())}
        if k not in _POLY_OPS:
            a = self.term(e)
            if z3.is_int_value(a):
                return {(): (a.as_long(), ())}
            return {(a.get_id(),): (1, (a,))}
        parts = [self.poly(x) for x in e.children()]
        if any(x is None for x in parts):
            return None
        if k == z3.Z3_OP_UMINUS:
            return _scale(parts[0], -1)
        if k == z3.Z3_OP_ADD:
            out: dict = {}
            for x in parts:
                _accumulate(out, x)
            return out
        if k == z3.Z3_OP_SUB:
            out = dict(parts[0])
            for x in parts[1:]:
                _accumulate(out, _scale(x, -1))
            return out
        out = parts[0]  # Z3_OP_MUL
        for x in parts[1:]:
            prod: dict = {}
            for c1, a1 in out.values():
                for c2, a2 in x.values():
                    atoms = tuple(sorted(a1 + a2, key=lambda f: f.get_id()))
                    _accumulate(prod, {tuple(f.get_id() for f in atoms): (c1 * c2, atoms)})
            out = prod
            if len(out) > POLY_TERMS:
                return None
        return out

    def linear(self, p: dict):
        """The abstraction of the polynomial p: its products grouped by the atom R most of them share,
        `R * (L)` with L linear taken as one monomial of R and a fresh integer equal to L (the side
        definitions), so that `N * row + N * 448 + 128 * N * t` is `N * s` with s = row + 448 + 128 t:
        the monotonicity lemmas then compare it with `K * N` through `s + 1 <= K`, a linear fact."""
        p = {k: v for k, v in p.items() if v[0] != 0}
        nonlin = [v[1] for v in p.values() if len(v[1]) >= 2]
        if not nonlin:
            return z3.Sum([z3.IntVal(0)] + [c * (a[0] if a else 1) for c, a in p.values()])
        count: dict[int, int] = {}
        for atoms in nonlin:
            for f in {f.get_id(): f for f in atoms}.values():
                count[f.get_id()] = count.get(f.get_id(), 0) + 1
        rid = max(sorted(count), key=lambda i: count[i])
        r = next(f for atoms in nonlin for f in atoms if f.get_id() == rid)
        inside: dict = {}
        rest: dict = {}
        for key, (c, atoms) in p.items():
            ids = [f.get_id() for f in atoms]
            if rid in ids:
                i = ids.index(rid)
                co = atoms[:i] + atoms[i + 1:]
                _accumulate(inside, {tuple(f.get_id() for f in co): (c, co)})
            else:
                rest[key] = (c, atoms)
        if any(len(a) >= 2 for _, a in inside.values()):  # not linear in the cofactor: one monomial each
            return z3.Sum([z3.IntVal(0)] + [c * self.monomial(list(a)) if a else z3.IntVal(c)
                                            for c, a in p.values()])
        g = 0
        for c, _ in inside.values():
            g = math.gcd(g, c)
        body = {k: (c // g, a) for k, (c, a) in inside.items()}
        if len(body) == 1 and next(iter(body.values()))[0] == 1 and next(iter(body.values()))[1]:
            s = next(iter(body.values()))[1][0]
        else:
            key = tuple(sorted((k, c) for k, (c, _) in body.items()))
            s = self.sums.get(key)
            if s is None:
                s = self.sums[key] = z3.Int(f"sum!{len(self.sums)}")
                self.side.append(s == z3.Sum([z3.IntVal(0)] + [c * (a[0] if a else 1) for c, a in body.values()]))
        out = g * self.monomial([r, s])
        return out + self.linear(rest) if rest else out

    def division(self, x, c: int, mod: bool):
        """x div c or x mod c (c > 0, SMT-LIB's floor forms) as a fresh quotient q with
        c q <= x < c q + c, exact and linear."""
        key = (x.get_id(), c)
        q = self.quotients.get(key)
        if q is None:
            q = self.quotients[key] = z3.Int(f"quot!{len(self.quotients)}")
            self.side += [c * q <= x, x < c * q + c]
        return x - c * q if mod else q

    def lemmas(self) -> list:
        out = []
        # cofactors a pair of monomials, or a monomial and a factor, share: make them terms first
        for m in list(self.monomials.values()):
            for i in range(len(m.factors)):
                self.monomial(list(m.factors[:i] + m.factors[i + 1:]))
        monos = list(self.monomials.values())
        for m in monos:
            out.append(z3.Implies(z3.And([f >= 0 for f in m.factors]), m.var >= 0))
            for i, a in enumerate(m.factors):
                rest = list(m.factors[:i] + m.factors[i + 1:])
                r = self.monomial(rest)
                out.append(z3.Implies(z3.And([f >= 0 for f in rest] + [a >= 1]), m.var >= r))
        for m1, m2 in combinations(monos, 2):
            if len(m1.factors) != len(m2.factors):
                continue
            for i, a in enumerate(m1.factors):
                rest = list(m1.factors[:i] + m1.factors[i + 1:])
                k = _key(rest)
                for j, b in enumerate(m2.factors):
                    if _key(m2.factors[:j] + m2.factors[j + 1:]) != k:
                        continue
                    r = self.monomial(rest)
                    nonneg = [f >= 0 for f in rest]
                    for (x, px), (y, py) in (((a, m1.var), (b, m2.var)), ((b, m2.var), (a, m1.var))):
                        out.append(z3.Implies(z3.And(nonneg + [x <= y]), px <= py))
                        out.append(z3.Implies(z3.And(nonneg + [x + 1 <= y]), px + r <= py))
        return out


#: Arithmetic operations `_Abstraction.poly` expands; most monomials of one expansion.
_POLY_OPS = (z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS, z3.Z3_OP_MUL)
POLY_TERMS = 64


def _scale(p: dict, c: int) -> dict:
    return {k: (v[0] * c, v[1]) for k, v in p.items()}


def _accumulate(into: dict, p: dict) -> None:
    for k, (c, a) in p.items():
        was = into.get(k)
        into[k] = (was[0] + c, a) if was is not None else (c, a)


def refute(assertions, rlimit: int, timeout_ms: int) -> bool:
    """True when the integer `assertions` are unsatisfiable by their linear abstraction with the
    monotonicity lemmas (then they are unsatisfiable); False when that does not show it."""
    ab = _Abstraction()
    body = [ab.term(a) for a in assertions]
    if not ab.monomials:
        return False
    body += ab.side
    s = z3.Solver()
    s.set("rlimit", rlimit)
    s.set("timeout", timeout_ms)
    s.add(body + ab.lemmas())
    return s.check() == z3.unsat


__all__ = ["refute"]
