"""Symbolic problem sizes: what a launch's sizes are, as Z3 terms, for a proof over all of them.

A `SizeDomain` names the size variables of a launch (N, M, ...) with their ranges and the facts
the kernel was compiled under (Triton specialises an integer argument divisible by 16 with
`tt.divisibility = 16`: the PTX may rely on it), and says how the launch depends on them: which
kernel parameters hold a function of the sizes, the grid, and every global buffer's byte size.
The symbolic grid check (grid.py) then proves bounds and the absence of global races for every
CTA of every launch in the domain at once, and `launch_at` builds the concrete launch of one point
of it (a witness is always validated by running it).

Sizes are 64-bit signed bit-vectors (`SymInt`, with Python's integer operators: `cdiv` as
`-(-a // b)` works as written in a contract). Their arithmetic is modulo 2^64 and nothing checks
that a term does not wrap: sizes are < 2^31, so a sum or a product of two is its integer value, but
three multiply to up to 2^93. What the domain's facts state is what holds: harness/sizes.py bounds
every tensor's dims and leading partial counts (A, A*M, A*M*K) by 2^31 - 1 (`count_facts`), so its
element count and byte size are their integer values in every model; a contract function that
multiplies sizes otherwise may wrap there where a real launch (Python ints) would not.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

import z3

WIDTH = 64


class SymInt:
    """A Python-int-like wrapper of a 64-bit signed Z3 term: +, -, *, // (floor), %, comparisons."""

    __slots__ = ("t",)

    def __init__(self, t) -> None:
        self.t = t if isinstance(t, z3.ExprRef) else z3.BitVecVal(int(t), WIDTH)

    @staticmethod
    def of(x) -> "SymInt":
        return x if isinstance(x, SymInt) else SymInt(int(x))

    def __add__(self, o):
        return SymInt(self.t + SymInt.of(o).t)

    __radd__ = __add__

    def __sub__(self, o):
        return SymInt(self.t - SymInt.of(o).t)

    def __rsub__(self, o):
        return SymInt(SymInt.of(o).t - self.t)

    def __mul__(self, o):
        return SymInt(self.t * SymInt.of(o).t)

    __rmul__ = __mul__

    def __neg__(self):
        return SymInt(-self.t)

    def __floordiv__(self, o):
        a, b = self.t, SymInt.of(o).t
        q = a / b  # signed, truncating toward zero
        adjust = z3.And(z3.SRem(a, b) != 0, (a < 0) != (b < 0))
        return SymInt(z3.If(adjust, q - 1, q))

    def __rfloordiv__(self, o):
        return SymInt.of(o) // self

    def __mod__(self, o):
        return self - (self // o) * o

    def __lt__(self, o):
        return self.t < SymInt.of(o).t

    def __le__(self, o):
        return self.t <= SymInt.of(o).t

    def __gt__(self, o):
        return self.t > SymInt.of(o).t

    def __ge__(self, o):
        return self.t >= SymInt.of(o).t

    def __eq__(self, o):  # a Z3 term, never Python's identity (a fact `x % 16 == 0` must constrain x)
        return self.t == SymInt.of(o).t

    def __ne__(self, o):
        return self.t != SymInt.of(o).t

    __hash__ = None  # type: ignore[assignment]

    def __index__(self):  # a size used where Python needs a concrete int
        raise TypeError("a symbolic size has no concrete value here")

    def __bool__(self):
        raise TypeError("a symbolic size has no truth value (a branch on it)")


def term(x) -> z3.ExprRef:
    return SymInt.of(x).t


@dataclass(frozen=True)
class SizeVar:
    name: str
    lo: int
    hi: int
    multiple: int = 1  # the kernel was compiled for multiples of this (tt.divisibility)

    def describe(self) -> str:
        m = f", a multiple of {self.multiple}" if self.multiple > 1 else ""
        return f"{self.name} in [{self.lo}, {self.hi}]{m}"


Env = Mapping[str, SymInt]


@dataclass
class SizeDomain:
    """The sizes of a launch and how the launch depends on them (see the module docstring)."""

    vars: list[SizeVar]
    concrete: dict[str, int]  # the launch being checked: one point of the domain
    params: dict[str, Callable[[Env], object]]  # PTX parameter name -> its value as a function of sizes
    grid: Callable[[Env], tuple]  # (x, y, z) CTAs
    buffer_bytes: dict[str, Callable[[Env], object]]  # launch buffer name -> bytes
    launch_at: Callable[[dict[str, int]], object]  # sizes -> concrete symexec Launch (witness runs)
    facts: list[Callable[[Env], object]] = field(default_factory=list)  # more constraints (z3 Bool)
    assumptions: list[str] = field(default_factory=list)  # printed with the verdict
    concrete_from: dict[str, int] | None = None  # `at`: the checked launch's sizes, when `concrete` is another point

    def at(self, point: dict[str, int]) -> "SizeDomain":
        """The same domain, its representatives run at `point` instead of the checked launch's sizes."""
        return replace(self, concrete=dict(point), concrete_from=dict(self.concrete))

    def narrowed(self, top: int) -> "SizeDomain":
        """The domain with every size at most `top` (its multiple kept); one already below is unchanged."""
        vars_ = [v if v.hi <= top else replace(v, hi=max(v.lo, top - top % v.multiple)) for v in self.vars]
        return replace(self, vars=vars_)

    def env(self, tag: str) -> dict[str, SymInt]:
        return {v.name: SymInt(z3.BitVec(f"{tag}_{v.name}", WIDTH)) for v in self.vars}

    def constraints(self, env: Env) -> list:
        out = []
        for v in self.vars:
            n = env[v.name].t
            out += [n >= v.lo, n <= v.hi]
            if v.multiple > 1:
                out.append(z3.SRem(n, v.multiple) == 0)
        for f in self.facts:
            c = f(env)
            out.append(c.t if isinstance(c, SymInt) else c)
        return out

    def describe(self) -> str:
        return ", ".join(v.describe() for v in self.vars)

    def point(self, model: z3.ModelRef, env: Env) -> dict[str, int]:
        return {k: model.eval(s.t, model_completion=True).as_signed_long() for k, s in env.items()}


__all__ = ["SymInt", "SizeVar", "SizeDomain", "term", "Env"]
