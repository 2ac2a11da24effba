"""Slow, obviously-correct reference rounding for the semantics tests.

Written independently of ``semantics.formats``: it binary-searches the (monotonic) positive bit
patterns of a format for the two neighbours of an exact rational and picks one by the rounding
rule, so it shares no arithmetic with the production code.
"""

from __future__ import annotations

from fractions import Fraction

# (ebits, mbits) per format; bias = 2**(ebits-1) - 1 for all of these.
SHAPES = {"f64": (11, 52), "f32": (8, 23), "f16": (5, 10), "bf16": (8, 7), "tf32": (8, 10),
          "e4m3": (4, 3), "e5m2": (5, 2), "e2m3": (2, 3), "e3m2": (3, 2), "e2m1": (2, 1)}
NO_INF = {"e4m3", "e2m3", "e3m2", "e2m1"}


def magnitude(name: str, m: int) -> Fraction:
    """Value of magnitude pattern m read as a plain (ebits, mbits) number, no specials."""
    eb, mb = SHAPES[name]
    bias = (1 << (eb - 1)) - 1
    e, f = m >> mb, m & ((1 << mb) - 1)
    if e == 0:
        return Fraction(f) * Fraction(2) ** (1 - bias - mb)
    return Fraction((1 << mb) + f) * Fraction(2) ** (e - bias - mb)


def largest_finite(name: str) -> int:
    eb, mb = SHAPES[name]
    if name == "e4m3":
        return (1 << (eb + mb)) - 2
    if name in NO_INF:
        return (1 << (eb + mb)) - 1
    return ((1 << eb) - 2) << mb | ((1 << mb) - 1)


def ref_round(x: Fraction, name: str, rnd: str, neg_zero: bool = False) -> tuple[int, bool]:
    """(sign-and-magnitude pattern, overflowed) of x rounded to ``name`` (no container shift).

    On overflow the pattern holds the largest finite magnitude; IEEE infinity is that plus one.
    """
    eb, mb = SHAPES[name]
    neg = x < 0 or (x == 0 and neg_zero)
    ax = abs(x)
    top = largest_finite(name)
    lo, hi = 0, top + 1  # invariant: magnitude(lo) <= ax, search for the largest such
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if magnitude(name, mid) <= ax:
            lo = mid
        else:
            hi = mid
    below, above = lo, lo + 1
    vb, va = magnitude(name, below), magnitude(name, above)
    if vb == ax:
        pick = below
    elif rnd == "rz" or (rnd == "rp" and neg) or (rnd == "rm" and not neg):
        pick = below
    elif rnd in ("rp", "rm"):
        pick = above
    else:
        db, da = ax - vb, va - ax
        if db < da:
            pick = below
        elif da < db:
            pick = above
        elif rnd == "rna":
            pick = above
        else:
            pick = below if below % 2 == 0 else above
    over = pick > top  # then the magnitude is reported clamped to the largest finite value
    return ((1 << (eb + mb)) if neg else 0) | min(pick, top), over


# ---------------------------------------------------------------------------------------------
# operand generators shared by the tests

import numpy as np  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def bits_value(name: str, bits: int) -> Fraction | None:
    """Exact value of a finite pattern (no container shift), None for NaN / inf."""
    eb, mb = SHAPES[name]
    sign = bits >> (eb + mb) & 1
    mag = bits & ((1 << (eb + mb)) - 1)
    if mag > largest_finite(name):
        return None
    v = magnitude(name, mag)
    return -v if sign else v


def specials(name: str) -> list[int]:
    """Edge patterns: zeros, min/max subnormal, min normal, one, max finite, inf, NaN."""
    eb, mb = SHAPES[name]
    sgn = 1 << (eb + mb)
    top = largest_finite(name)
    one = ((1 << (eb - 1)) - 1) << mb
    base = [0, 1, (1 << mb) - 1, 1 << mb, (1 << mb) + 1, one, one + 1, one - 1, top, top - 1]
    base += [top + 1, top + 2, (1 << (eb + mb)) - 1]  # inf / NaNs where they exist
    base = [b for b in base if b < sgn]
    return base + [b | sgn for b in base]


def bits_strategy(name: str) -> st.SearchStrategy[int]:
    eb, mb = SHAPES[name]
    width = 1 + eb + mb
    return st.one_of(st.sampled_from(specials(name)), st.integers(0, (1 << width) - 1))


def arr(xs: list[int], dtype: type) -> np.ndarray:
    return np.array(xs, dtype=np.uint64).astype(dtype)
