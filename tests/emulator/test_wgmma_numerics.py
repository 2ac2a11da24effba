"""symexec.wgmma_numerics: the two arithmetic models of one wgmma (the "sm90" one is checked bit for
bit against recorded H200 results in test_wgmma.py::test_matches_h200)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.wgmma_numerics import _rz_significant, accumulate, truncated_sum


def _slow_truncated_sum(a: list[float], b: list[float], old: float | None, frac: int) -> Fraction:
    """The same rule with Fractions and explicit exponents."""
    def expo(x: float) -> int:
        f = Fraction(abs(x))
        e = 0
        while f >= 2:
            f /= 2
            e += 1
        while f < 1:
            f *= 2
            e -= 1
        return e

    terms = [(Fraction(x) * Fraction(y), expo(x) + expo(y)) for x, y in zip(a, b) if x != 0 and y != 0]
    if old:
        terms.append((Fraction(old), expo(old)))
    if not terms:
        return Fraction(0)
    q = Fraction(2) ** (max(e for _, e in terms) - frac)
    total = Fraction(0)
    for t, _ in terms:
        n = t / q
        total += (n.numerator // n.denominator if n >= 0 else -((-n.numerator) // n.denominator)) * q
    return total


_f16 = st.floats(-8, 8, width=16, allow_subnormal=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(_f16, min_size=16, max_size=16), st.lists(_f16, min_size=16, max_size=16),
       st.one_of(st.none(), st.floats(-100, 100, width=32)), st.sampled_from([13, 25]))
def test_truncated_sum_matches_fraction_definition(a, b, old, frac) -> None:
    got = truncated_sum(np.array([a]), np.array([b]), None if old is None else np.array([[old]]), frac)[0, 0]
    assert Fraction(float(got)) == _slow_truncated_sum(a, b, old, frac)


def test_non_finite_terms_fall_back_to_ieee() -> None:
    a = np.array([[np.inf, 1.0]])
    b = np.array([[1.0, 1.0]])
    assert truncated_sum(a, b, None, 25)[0, 0] == np.inf
    assert np.isnan(truncated_sum(np.array([[np.inf, 1.0]]), np.array([[0.0, 1.0]]), None, 25)[0, 0])


def test_rz_significant() -> None:
    x = np.array([1 + 2**-13 + 2**-14, -(1 + 2**-13 + 2**-14), 3.0, 0.0])
    assert _rz_significant(x, 14).tolist() == [1 + 2**-13, -(1 + 2**-13), 3.0, 0.0]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wgmma arithmetic"):
        accumulate(np.ones((1, 1)), np.ones((1, 1)), None, ".f16", ".f32", "fast")
