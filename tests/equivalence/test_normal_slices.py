"""proofs.normal: a float read from bits that are exactly another float's (dion_update's sm_89 build loads two
f32 elements as one b64 and truncates it to the low word: cvt.u32.u64(concat(hi, lo)) is lo's bits)."""

from __future__ import annotations

import numpy as np

from proofs.normal import Normalizer
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id

F, B32, B64 = float_sort("f32"), bits_sort(32), bits_sort(64)


def _cvt(T: TermStore, x: np.ndarray, dst: str, src: str, sort: int) -> np.ndarray:
    return T.make(Op.CVT, sort, mods_id(Mods(elems=(dst, src))), [x])


def test_the_low_word_of_a_pair_is_the_low_element() -> None:
    T = TermStore()
    m = T.input("mom", np.arange(2), F)
    pair = T.make(Op.CONCAT, B64, mods_id(Mods()), [m[1:2], m[0:1]])  # high, low
    low = T.make(Op.FLOAT, F, mods_id(Mods()), [_cvt(T, pair, "u32", "u64", B32)])
    high = T.make(Op.FLOAT, F, mods_id(Mods()), [T.make(Op.EXTRACT, B32, mods_id(Mods(lo=32, width=32)), [pair])])
    shifted = T.make(Op.FLOAT, F, mods_id(Mods()), [T.make(Op.EXTRACT, B32, mods_id(Mods(lo=16, width=32)), [pair])])
    N = Normalizer(T)
    fl, fh, fs, f0, f1 = N.of(np.concatenate([low, high, shifted, m[0:1], m[1:2]]))
    assert N.equal(fl, f0) and not N.equal(fl, f1)
    assert N.equal(fh, f1) and not N.equal(fh, f0)
    assert not N.equal(fs, f0) and not N.equal(fs, f1)  # straddles both: no element's bits
