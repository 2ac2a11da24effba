"""shadow.mix, the value numbers' combine: the numpy form against a one-word-at-a-time reference
(the definition: s = step(s) ^ part from s = key, then splitmix64's finaliser), scalars and arrays
giving one number for the same bits, and no equal numbers for distinct structured part tuples (the
kind check mode feeds it: lane numbers, write indices, counters, values differing in a sign bit)."""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from symexec.check.shadow import _U64, _mix_from, _splitmix_int, const_number, key_of, mix

_STEP = 0xD6E8FEB86659FD93


def _reference(key: int, parts: list) -> np.ndarray:
    arrs = [np.asarray(p, dtype=np.uint64) for p in parts]
    shape = np.broadcast_shapes(*[a.shape for a in arrs]) if arrs else ()
    out = np.zeros(shape, np.uint64)
    for idx in np.ndindex(shape):
        s = key & _U64
        for a in arrs:
            y = (s * _STEP) & _U64
            s = (y ^ (y >> 32)) ^ int(np.broadcast_to(a, shape)[idx])
        out[idx] = _splitmix_int(s)
    return out


_word = st.integers(0, 2**64 - 1)
_part = st.one_of(
    _word,  # a Python int
    _word.map(np.uint64),  # a numpy scalar
    st.lists(_word, min_size=4, max_size=4).map(lambda v: np.array(v, np.uint64)),  # a lane vector
    st.lists(st.integers(0, 2**31 - 1), min_size=4, max_size=4).map(lambda v: np.array(v, np.int64)),
    st.lists(_word, min_size=3, max_size=3).map(lambda v: np.array(v, np.uint64).reshape(3, 1)))  # broadcast


@settings(max_examples=400, deadline=None)
@given(_word, st.lists(_part, max_size=5))
def test_mix_equals_reference(key: int, parts: list) -> None:
    got = mix(key, *parts)
    want = _reference(key, parts)
    assert got.dtype == np.uint64 and got.shape == want.shape
    assert np.array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(_word, st.lists(_word, min_size=1, max_size=4), st.integers(0, 3))
def test_scalars_and_lanes_get_one_number(key: int, words: list, lanes: int) -> None:
    """A constant's number must not depend on whether its bits came as an immediate (a scalar, the
    Python-int path) or as a register's lanes (the array path)."""
    scalar = mix(key, *words)
    n = lanes + 1
    for split in range(len(words) + 1):  # the first `split` parts as scalars, the rest as lane vectors
        parts = list(words[:split]) + [np.full(n, w, np.uint64) for w in words[split:]]
        assert np.array_equal(mix(key, *parts), np.broadcast_to(scalar, mix(key, *parts).shape))
    assert np.array_equal(const_number(np.full(n, words[0], np.uint64)), np.full(n, const_number(words[0])))


def test_array_state_continues_as_int_state() -> None:
    """_mix_from(number, (k,)) (a collective's numbers, Tracker._collective) is the same function on
    an array state as on an int one."""
    from symexec.check.shadow import _finish, _step

    w = mix(key_of("warp"), np.arange(64, dtype=np.uint64))
    got = _mix_from(w, (np.uint64(3),))
    assert np.array_equal(got, [int(_mix_from(int(x), (3,))) for x in w])
    assert np.array_equal(got, _finish(_step(w) ^ np.uint64(3)))  # Tracker._collective's form


def test_structured_tuples_get_distinct_numbers() -> None:
    """Numbers are compared for equality only; equal numbers claim the same expression. Tuples that
    differ in a few low bits (lanes, write indices, counters) or in the sign bit of a 32- or 64-bit
    value, under a few keys, must all get distinct numbers."""
    lanes = np.arange(1024, dtype=np.uint64)
    seen = []
    for key, counter, k in itertools.product([key_of("fresh"), key_of("control"), key_of("const")], range(16),
                                             range(4)):
        seen.append(mix(key, np.uint64(counter), lanes, np.uint64(k)))
    vals = np.arange(4096, dtype=np.uint64)
    for sign in (0, 1 << 31, 1 << 63):
        seen.append(mix(key_of("const"), vals | np.uint64(sign)))
        a = mix(key_of("const"), vals)
        seen.append(mix(key_of("add.f32"), np.uint64(0), a, a ^ np.uint64(sign)))
        if sign:
            seen.append(mix(key_of("add.f32"), np.uint64(0), a ^ np.uint64(sign), a))
    allv = np.concatenate(seen)
    assert np.unique(allv).size == allv.size


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(1, 70), st.integers(0, 2**32 - 1), st.booleans())
def test_row_number_matmul_equals_row_sums(m: int, nb: int, seed: int, small: bool) -> None:
    """row_number's polynomial (one integer matmul) against the sum along the row it replaced, and
    _bytes_number (both row numbers from one call) against two row_number calls."""
    from symexec.check import shadow

    rng = np.random.default_rng(seed)
    H = rng.integers(0, 256 if small else 2**64, (m, nb), dtype=np.uint64, endpoint=False)
    got = shadow.row_number(5, H)
    if nb <= 2:
        want = mix(5, *[H[:, i] for i in range(nb)])
    else:
        with np.errstate(over="ignore"):
            poly = (H * shadow._POWERS[:nb]).sum(axis=1, dtype=np.uint64)
        want = mix(5, poly, np.uint64(nb))
    assert np.array_equal(got, want)
    P = rng.integers(0, 256, (m, nb), dtype=np.uint8)
    assert np.array_equal(shadow._bytes_number(H, P),
                          mix(shadow.BYTES_KEY, shadow.row_number(shadow.BYTES_KEY, H),
                              shadow.row_number(shadow.BYTES_KEY, P.astype(np.uint64))))


@settings(max_examples=100, deadline=None)
@given(_word, st.integers(1, 600), st.booleans(), st.booleans())
def test_spread_is_broadcast_to(v: int, n: int, readonly: bool, owned: bool) -> None:
    """shadow._spread (a zero-stride view from ndarray's constructor) as np.broadcast_to: the same
    values, shape and dtype, read-only, a view of x (a later change of a writable x shows through)."""
    from symexec.check.shadow import _spread

    x = np.asarray(np.uint64(v))
    x.flags.writeable = not readonly
    got, want = _spread(x, (n,), owned), np.broadcast_to(x, (n,))
    assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    assert not got.flags.writeable
    if x.flags.writeable:
        x[...] = np.uint64(v ^ 1)
        assert np.array_equal(got, np.full(n, v ^ 1, np.uint64))


_lanes = st.lists(_word, min_size=6, max_size=6).map(lambda v: np.array(v, np.uint64))


@settings(max_examples=300, deadline=None)
@given(_word, _word, _word, _lanes, _lanes, _lanes, _lanes, _lanes, st.booleans(), st.booleans())
def test_product_numbers_equal_two_mixes(key: int, k: int, rkey: int, a, b, c, x, y, three: bool,
                                         spread: bool) -> None:
    """product_numbers (a product's number and its real-arithmetic number in one (2, n) pass) gives
    the bits of the two mix calls it replaces in Tracker._result / Tracker._real, for lane vectors and
    for a constant spread over the lanes (zero-stride, read-only); the inputs are not changed."""
    from symexec.check.shadow import _spread, product_numbers
    if spread:  # a constant operand, as hash_in gives it
        b = _spread(const_number(np.uint64(k ^ 1)), (6,), owned=True)
        y = b
    c3 = c if three else None
    before = [v.copy() for v in (a, b, c, x, y)]
    h, r = product_numbers(key, k, a, b, c3, rkey, x, y)
    parts = [np.minimum(a, b), np.maximum(a, b)] + ([c] if three else [])
    assert np.array_equal(h, mix(key, np.uint64(k), *parts))
    assert np.array_equal(r, mix(rkey, np.minimum(x, y), np.maximum(x, y)))
    assert np.array_equal(h, _reference(key, [k] + parts))
    assert all(np.array_equal(v, w) for v, w in zip((a, b, c, x, y), before))
