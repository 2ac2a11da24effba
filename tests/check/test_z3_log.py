"""VOLTA_Z3_LOG prints slow Z3 queries to stderr; 0, false, no and off (any case) leave it off, as
an unset or empty variable does (VOLTA_Z3_LOG=0 printed every query before)."""

from __future__ import annotations

import pytest
import z3

from symexec.check import grid


def _query() -> z3.Solver:
    x = z3.BitVec("x", 32)
    s = z3.Solver()
    s.add(x * x == 49, x < 100)
    return s


@pytest.mark.parametrize("value,printed", [("1", True), ("yes", True), ("on", True), (" ON ", True),
                                           ("0", False), ("false", False), ("No", False), ("OFF", False),
                                           ("", False), (None, False)])
def test_off_words_leave_the_log_off(monkeypatch, capsys, value, printed: bool) -> None:
    if value is None:
        monkeypatch.delenv("VOLTA_Z3_LOG", raising=False)
    else:
        monkeypatch.setenv("VOLTA_Z3_LOG", value)
    monkeypatch.setattr(grid, "Z3_LOG_MS", 0)  # every query is slow enough to print
    assert grid._check(_query()) == z3.sat
    err = capsys.readouterr().err
    assert ("volta z3: sat" in err) is printed, err
