"""Normal forms compared in a prime field (Schwartz-Zippel), without proofs/normal.py's arithmetic.

A certificate's normal form is `num / den`, polynomials with rational coefficients over atoms. For the
comparison every atom except a let-atom is a free variable (an exp2, a max, an indicator, an
application: whatever its value, equal polynomials over free variables are equal for every value, so
treating them as independent only loses completeness); a let-atom is substituted by the normal form it
stands for. Both sides are evaluated at a random point of GF(p), p = 2^61 - 1: if the two rational
functions differ, the cross-multiplied difference is a non-zero polynomial of degree at most D (bounded
by `degree`), which vanishes at a uniformly random point with probability at most D / p
(Schwartz-Zippel). A point where a denominator vanishes is redrawn.
"""

from __future__ import annotations

import hashlib
import random
from fractions import Fraction

P = (1 << 61) - 1

__all__ = ["P", "Degenerate", "FieldPoint", "degree"]


class Degenerate(Exception):
    """A denominator or a divided-out atom is 0 at this point (draw another)."""


def _inv(x: int) -> int:
    if x % P == 0:
        raise Degenerate("division by zero in GF(p)")
    return pow(x, P - 2, P)


class FieldPoint:
    """One random point: a value in GF(p) for every free atom; normal forms evaluated there."""

    def __init__(self, tables: dict, rng: random.Random) -> None:
        self.atoms, self.polys, self.keys = tables["atoms"], tables["polys"], tables["keys"]
        self.rng = rng
        self._atom: dict[str, int] = {}
        self._poly: dict[str, int] = {}
        self._key: dict[str, object] = {}
        self.salt = rng.getrandbits(128).to_bytes(16, "big")

    def nf(self, x: dict):
        """A normal form's value: an int of GF(p), or ("inf", sign)."""
        if "inf" in x:
            return ("inf", int(x["inf"]))
        v = self.terms(x["num"])
        if x.get("den") is not None:
            v = v * _inv(self.poly(str(x["den"]))) % P
        return v

    def terms(self, ts: list) -> int:
        total = 0
        for mono, c in ts:
            q = Fraction(c)
            v = q.numerator % P * _inv(q.denominator) % P
            for i in range(0, len(mono), 2):
                a, e = self.atom(str(mono[i])), int(mono[i + 1])
                v = v * pow(a if e > 0 else _inv(a), abs(e), P) % P
            total = (total + v) % P
        return total

    def poly(self, pid: str) -> int:
        got = self._poly.get(pid)
        if got is None:
            got = self._poly[pid] = self.terms(self.polys[pid])
        return got

    def atom(self, aid: str) -> int:
        got = self._atom.get(aid)
        if got is None:
            a = self.atoms[aid]
            kind = a["kind"]
            if kind == "LET":
                v = self.key(str(a["nf"]))
                if isinstance(v, tuple):
                    raise ValueError(f"let-atom {aid} stands for an infinity")
                got = v
            elif kind == "APP":  # a function of its arguments' values: equal arguments, equal values
                got = self._oracle((kind, a["fn"], *[self.key(str(k)) for k in a["args"]]))
            elif kind in ("MAX", "MIN"):
                got = self._oracle((kind, *sorted(set(map(repr, (self.key(str(k)) for k in a["args"]))))))
            elif kind == "EXP2" or (kind == "IND" and a.get("cond") in ("gt", "eq")):
                got = self._oracle((kind, a.get("cond"), self.poly(str(a["poly"]))))
            else:  # an input leaf, an integer or predicate term, a truth table: a variable of its own
                got = self.rng.randrange(1, P)
            self._atom[aid] = got
        return got

    def _oracle(self, args: tuple) -> int:
        """A random value determined by `args` (the same at this point for equal arguments): an atom
        with structure is a function of its arguments' values, so atoms that are equal only once
        let-atoms are expanded (sqrt of a let-atom and sqrt of what it stands for) get one value."""
        h = hashlib.blake2b(repr(args).encode(), key=self.salt, digest_size=16).digest()
        return int.from_bytes(h, "big") % (P - 1) + 1

    def key(self, k: str):
        if k not in self._key:
            self._key[k] = self.nf(self.keys[k])
        return self._key[k]


def degree(tables: dict, x: dict, memo: dict | None = None) -> int:
    """An upper bound on the degrees of the numerator and denominator of x as one fraction over the
    free atoms (let-atoms substituted)."""
    memo = {} if memo is None else memo
    if "inf" in x:
        return 0

    def atom(aid: str) -> int:
        if aid not in memo:
            memo[aid] = 1  # cycles cannot occur in a well-formed certificate; this keeps a bad one finite
            a = tables["atoms"][aid]
            memo[aid] = degree(tables, tables["keys"][str(a["nf"])], memo) if a["kind"] == "LET" else 1
        return memo[aid]

    def poly(ts: list) -> int:
        return sum(sum(abs(int(m[i + 1])) * atom(str(m[i])) for i in range(0, len(m), 2)) for m, _ in ts)

    d = poly(x["num"])
    if x.get("den") is not None:
        d += poly(tables["polys"][str(x["den"])])
    return d
