"""Check mode's cheaper forms (check-overhead-2026-12-05s33) against the forms they replace: a
floating-point product's number and real-arithmetic number computed together (shadow.product_numbers,
tests/check/test_mix.py for the bits), and the race detector's padding of consecutive shared-memory
rows (one offset per row)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from symexec.check.races import _BufferState


def _register_numbers(monkeypatch, name: str, fused: bool) -> list:
    """(register, number, real number) after every register write of a check run of suite kernel
    `name` at its verify instance (sm_80), with or without product_numbers."""
    import ptx_parser
    from harness.compile import compile_contract
    from harness.emulate import launch_for
    from harness.suite import all_contracts
    from symexec import load_program
    from symexec.check.run import new_run, run_checked
    from symexec.check.shadow import Tracker

    got: list = []
    write = Tracker.on_write_reg

    def recorded(self, reg, *a, **k) -> None:
        write(self, reg, *a, **k)
        h, r = self.reg_hash.get(reg), self.reg_real.get(reg)
        got.append((reg, None if h is None else np.array(h), None if r is None else np.array(r)))

    with monkeypatch.context() as m:
        m.setattr(Tracker, "on_write_reg", recorded)
        if not fused:
            m.setattr(Tracker, "_real_product", lambda self: False)
        c = {c.name: c for c in all_contracts()}[name]
        compiled = compile_contract(c, "sm_80")
        prog = load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
        launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
        run_checked(new_run(prog, launch), prog, launch)
    return got


def test_product_numbers_leave_every_register_number_alone(monkeypatch) -> None:
    """lion (fma.rn.f32 and mul.f32 on loaded data): every register's number and real number after
    every write are those of the separate mixes."""
    fused = _register_numbers(monkeypatch, "lion", True)
    plain = _register_numbers(monkeypatch, "lion", False)
    assert len(fused) == len(plain) > 0
    products = 0
    for (ra, ha, xa), (rb, hb, xb) in zip(fused, plain):
        assert ra == rb
        assert (ha is None) == (hb is None) and (ha is None or np.array_equal(ha, hb))
        assert (xa is None) == (xb is None) and (xa is None or np.array_equal(xa, xb))
        products += xa is not None and ha is not None and not np.array_equal(xa, ha)
    assert products > 0  # some real numbers differ from the numbers: products were numbered


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 200), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 64), st.integers(0, 2**32 - 1),
       st.booleans())
def test_padded_consecutive_rows_are_the_general_padding(stride: int, nb: int, k: int, seed: int,
                                                          inside: bool) -> None:
    """padded(flat, consecutive=True): the array the elementwise form gives, and still consecutive
    only when it is (a row crossing from one CTA's window into the next is padded byte by byte)."""
    from symexec.events import Buffer, MemSpace

    st_ = _BufferState(Buffer(MemSpace.SHARED), 8 * stride, 0, 16, False, stride)
    if not st_.pad:  # a stride of whole granules: no padding
        assert st_.padded(np.zeros((1, nb), np.int64), True)[1]
        return
    rng = np.random.default_rng(seed)
    hi = 8 * stride - nb
    if hi < 0:
        return
    starts = rng.integers(0, hi + 1, k)
    if inside:  # rows that stay in one window where they can (else some cross into the next)
        cta = starts // stride
        starts = np.where((starts + nb - 1) // stride == cta, starts, cta * stride)
    flat = (starts[:, None] + np.arange(nb)).astype(np.int64)
    want = flat + (flat // stride) * (st_.pad - stride)
    got, consecutive = st_.padded(flat, True)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    if consecutive:
        assert np.array_equal(got, got[:, :1] + np.arange(nb))
    general, c2 = st_.padded(flat, False)
    assert np.array_equal(general, want) and not c2



def test_padded_row_crossing_windows_is_not_consecutive() -> None:
    """A 4-byte row from byte 18 with 20-byte windows (padded to 32): bytes 18, 19 | 36, 37."""
    from symexec.events import Buffer, MemSpace

    st_ = _BufferState(Buffer(MemSpace.SHARED), 80, 0, 16, False, 20)
    got, consecutive = st_.padded(np.array([[18, 19, 20, 21], [0, 1, 2, 3]], np.int64), True)
    assert got.tolist() == [[18, 19, 32, 33], [0, 1, 2, 3]] and not consecutive
    got, consecutive = st_.padded(np.array([[20, 21, 22, 23], [40, 41, 42, 43]], np.int64), True)
    assert got.tolist() == [[32, 33, 34, 35], [64, 65, 66, 67]] and consecutive


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 30), st.integers(1, 40), st.integers(0, 60), st.integers(0, 2**32 - 1), st.booleans())
def test_table_at_is_2d_indexing(nrows: int, ncols: int, m: int, seed: int, negative: bool) -> None:
    """races._table_at(table, rows, cols): table[rows, cols] (values, dtype; a row past the end raises
    IndexError either way; negative indices wrap per axis)."""
    import pytest

    from symexec.check.races import _table_at

    rng = np.random.default_rng(seed)
    table = rng.integers(-5, 100, (nrows + 3, ncols)).astype(np.int32)[:nrows]  # a row slice, as Clocks.table
    lo = -nrows if negative else 0
    rows = rng.integers(lo, nrows, m).astype(np.int32)
    cols = rng.integers(-ncols if negative else 0, ncols, m).astype(np.int64)
    want = table[rows, cols]
    got = _table_at(table, rows, cols)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    if m:
        bad = rows.copy()
        bad[-1] = nrows
        with pytest.raises(IndexError):
            table[bad, cols]
        with pytest.raises(IndexError):
            _table_at(table, bad, cols)
