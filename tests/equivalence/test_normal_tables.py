"""proofs.normal reads a float whose bits are a function of few input bits by its value table
(a bit-pattern trick such as decoding packed codes into fp16): two values become v0 + (v1 - v0)
[bits], more become one atom per function. The float view of such a table once crashed (the
values were kept in a list, then used as a dictionary key) on bitdelta_batched's candidate."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id


def _f16_from_code_bits(T: TermStore, code: np.ndarray, lo: int, width: int) -> np.ndarray:
    """FLOAT.f16 of {the top bits of 1.0 (0x3C00), bits lo..lo+width-1 of code}."""
    part = T.make(Op.EXTRACT, bits_sort(width), mods_id(Mods(lo=lo, width=width)), [code])
    top = T.const(bits_sort(16 - width), 0x3C00 >> width)
    return T.make(Op.FLOAT, float_sort("f16"), 0, [T.make(Op.CONCAT, bits_sort(16), 0, [top, part])])


def test_float_views_of_small_bit_functions() -> None:
    T = TermStore()
    code = T.input("code", np.arange(1), bits_sort(8))
    roots = np.concatenate([_f16_from_code_bits(T, code, 0, 2), _f16_from_code_bits(T, code, 2, 2),
                            _f16_from_code_bits(T, code, 0, 1), _f16_from_code_bits(T, code, 0, 2)])
    four_low, four_high, two, four_low_again = Normalizer(T).of(roots)
    # one bit: 1.0 or 1.0 + 2^-10 (the last f16 mantissa bit at 1.0)
    assert two.den is None and two.num[()] == 1 and len(two.num) == 2
    assert sorted(two.num.values())[0] == Fraction(1, 1024)
    # four values: one atom per function of the input bits
    assert len(four_low.num) == 1 and four_low == four_low_again
    assert four_low != four_high  # the same shape over other bits is another function
