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
Every model of the original formula is a model of the abstraction (each fresh variable set to its
product), so "unsat" for the abstraction is "unsat" for the original; "sat" or "unknown" proves
nothing and the caller goes on (grid.py's `_check`). The abstraction is linear integer arithmetic
with implications, which Z3 decides quickly.
"""

from __future__ import annotations

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
        self.side: list = []  # the quotients' definitions

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
