"""bv2int: `or`/`xor` of disjoint bits as a sum (a tile base | a lane offset below its alignment)."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.bv2int import Untranslatable, _low_zeros, to_int


def _tile_or_lane(k: int, base: int, step: int, t_hi: int, q_hi: int, op):
    """(base + t * step) op q over 32 bits, base and step multiples of 2^k, t <= t_hi, q <= q_hi."""
    t, q = z3.BitVec("t", 32), z3.BitVec("q", 32)
    e = op(z3.BitVecVal(base << k, 32) + t * z3.BitVecVal(step << k, 32), q)
    return e, [z3.ULE(t, t_hi), z3.ULE(q, q_hi)]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 12), base=st.integers(0, 64), step=st.integers(0, 64), t_hi=st.integers(0, 40),
       target=st.integers(0, 2**20), xor=st.booleans(), data=st.data())
def test_disjoint_or_is_a_sum_and_keeps_satisfiability(k, base, step, t_hi, target, xor, data) -> None:
    """Oracle: the bit-vector query itself (Z3). Equal answers for `e == target` and `e < target`."""
    q_hi = data.draw(st.integers(0, 2**k - 1))
    e, facts = _tile_or_lane(k, base, step, t_hi, q_hi, (lambda x, y: x ^ y) if xor else (lambda x, y: x | y))
    for goal in (e == target, z3.ULT(e, target)):
        bv, ints = z3.Solver(), z3.Solver()
        bv.add(facts + [goal])
        ints.add(to_int(facts + [goal]))
        assert ints.check() == bv.check()


def test_or_whose_bits_may_meet_is_not_translated() -> None:
    # q may reach 2^k: bit k of the base and of q can both be set, `|` is not `+`
    e, facts = _tile_or_lane(4, 1, 1, 8, 16, lambda x, y: x | y)
    with pytest.raises(Untranslatable):
        to_int(facts + [e == 17])


def test_low_zero_bits_of_address_shapes() -> None:
    t = z3.BitVec("t", 32)
    assert _low_zeros(z3.BitVecVal(0x4000, 32) + t * 0x1000) == 12
    assert _low_zeros(z3.ZeroExt(32, t << 3)) == 3
    assert _low_zeros(z3.Concat(t, z3.BitVecVal(0, 2))) == 2
    assert _low_zeros(t + 1) == 0
    assert _low_zeros(z3.BitVecVal(0, 8)) == 8
