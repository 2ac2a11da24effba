"""Check mode's cheaper forms (check-overhead-2026-12-05s32) against the forms they replace: the
cached number of a constant, mix's scratch-array combine, a partly tainted result's numbers of its
untainted lanes, and the race detector's run starts / one-element concatenations (np.r_)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from symexec.check import shadow
from symexec.check.races import _after, _starts, _then
from symexec.check.shadow import CONST_KEY, Tracker, _mix_from, const_number, mix

_word = st.integers(0, 2**64 - 1)
_DTYPES = (np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64, np.float32)


@settings(max_examples=300, deadline=None)
@given(_word, st.sampled_from(_DTYPES), st.booleans())
def test_const_number_of_one_value_is_mix_of_its_bits(w: int, dtype, as_array: bool) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.array(w).astype(dtype) if dtype is not np.float32 else np.float32(w % 2**24)
    v = np.asarray(v) if as_array else v[()] if isinstance(v, np.ndarray) else v
    want = mix(CONST_KEY, np.asarray(v).astype(np.uint64))
    got = const_number(v)
    assert got.shape == () and got.dtype == np.uint64 and int(got) == int(want)
    assert not got.flags.writeable  # shared between calls: nobody may change it
    assert const_number(v) is got or int(const_number(v)) == int(want)


def test_const_number_cache_clears_when_full() -> None:
    shadow._CONST_NUMBERS.clear()
    for v in range(shadow._CONST_NUMBERS_MAX + 10):
        assert int(const_number(np.uint32(v))) == int(mix(CONST_KEY, np.uint64(v)))
    assert len(shadow._CONST_NUMBERS) <= shadow._CONST_NUMBERS_MAX


@settings(max_examples=200, deadline=None)
@given(st.lists(_word, min_size=5, max_size=5), st.lists(st.lists(_word, min_size=5, max_size=5), min_size=0, max_size=3))
def test_mix_from_array_state_leaves_the_state_alone(state: list, parts: list) -> None:
    """_mix_from works in place only on arrays it made: an array state is the caller's."""
    h = np.array(state, np.uint64)
    before = h.copy()
    arrays = [np.array(p, np.uint64) for p in parts]
    got = _mix_from(h, arrays)
    assert np.array_equal(h, before)
    for lane in range(5):  # lane by lane: the int state's path (test_mix's reference agrees with it)
        assert int(got[lane]) == int(_mix_from(int(before[lane]), [int(a[lane]) for a in arrays]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.floats(0, 1), st.sampled_from([0, 1, 3]))
def test_numbered_equals_the_lanes_bits_numbers(n: int, seed: int, p_taint: float, values: int) -> None:
    """_numbered: h on tainted lanes, const_number of each other lane's bits, whether the untainted
    lanes hold one value (numbered once) or several."""
    rng = np.random.default_rng(seed)
    t = Tracker(n)
    h = rng.integers(0, 2**63, n, dtype=np.uint64)
    taint = (rng.random(n) < p_taint).astype(np.uint8)
    value = rng.integers(0, values + 1, n).astype(np.uint32) * np.uint32(0x9E3779B9)
    got = t._numbered(h, taint, value)
    want = np.where(taint != 0, h, mix(CONST_KEY, value.astype(np.uint64)))
    assert np.array_equal(got, want)
    got0 = t._numbered(h, taint, np.uint32(7))  # a 0-d value: every lane the same bits
    assert np.array_equal(got0, np.where(taint != 0, h, mix(CONST_KEY, np.full(n, 7, np.uint64))))


_ints = st.lists(st.integers(-5, 5), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(_ints, st.sampled_from([np.int64, np.int32]))
def test_starts_after_then_are_np_r(a: list, dtype) -> None:
    x = np.sort(np.array(a, dtype))
    assert np.array_equal(_starts(x), np.r_[True, x[1:] != x[:-1]])
    assert _starts(x).dtype == np.bool_
    for got, want in ((_after(-1, x), np.r_[-1, x]), (_then(x, 99), np.r_[x, 99])):
        assert got.dtype == x.dtype and np.array_equal(got, want)
    b = x > 0
    assert np.array_equal(_then(b, False), np.r_[b, False]) and _then(b, False).dtype == np.bool_


def test_consecutive_accesses_have_consecutive_rows(monkeypatch) -> None:
    """Memory.read / write say their rows are consecutive bytes (MemoryAccess.consecutive), and the
    detector then takes _contiguous's answer as all-true: every such event's rows must be so; the
    reports stay those of the tested form (tests/regression cases, their expected verdicts)."""
    from pathlib import Path

    from symexec.check.races import RaceDetector
    from volta.check_cli import check_file

    seen: list[int] = []
    add = RaceDetector.add

    def checked_add(self, e) -> None:
        if e.consecutive:
            nb = e.flat.shape[1]
            assert np.array_equal(e.flat, e.flat[:, :1] + np.arange(nb))
            seen.append(nb)
        add(self, e)

    monkeypatch.setattr(RaceDetector, "add", checked_add)
    root = Path(__file__).resolve().parents[1] / "regression"
    for name in ("block2d_transpose_missing_barrier", "block2d_transpose_with_barrier", "addr64_global_index"):
        check_file(root / f"{name}.ptx")
    assert seen and max(seen) >= 1


def test_page_layout_makes_its_direct_table_at_first_locate() -> None:
    """A layout never indexed costs no page table; its first locate makes it and finds the same
    positions as a layout whose table was made up front would (pages in order of first touch)."""
    from symexec.paged import PAGE, PagedArray, constant

    a = PagedArray(64 * PAGE, np.int32, constant(-1, np.int32))
    assert a._layout._direct is None
    a[np.array([5 * PAGE + 3, 2 * PAGE])] = np.array([7, 9], np.int32)
    assert a._layout._direct is not None
    assert a[np.array([5 * PAGE + 3, 2 * PAGE, 40 * PAGE])].tolist() == [7, 9, -1]
    assert a.made_pages().tolist() == [2, 5, 40]
