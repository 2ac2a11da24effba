"""The symbolic grid and tensor copies (cp.async.bulk.tensor, PTX 9.7.9.25.5.2): a tile-mode load is
followed as reading its whole tensor (out-of-bounds box elements are filled, not read), so a
kernel whose CTAs load boxes at %ctaid-dependent coordinates keeps the symbolic grid; a load of a
tensor the kernel also writes, and tensor stores, fall back to running every CTA with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from volta.check_cli import check_file

REG = Path(__file__).resolve().parents[1] / "regression"


def _note(r) -> str:
    return " ".join(r.notes)


def test_tensor_load_boxes_keep_the_symbolic_grid() -> None:
    r = check_file(REG / "tma_load_ctaid_box_clipped_ok.ptx")
    assert r.verdict == "race_free", r.findings
    assert r.stats["grid_method"] == "symbolic", (r.stats["grid_method"], _note(r))


def test_tensor_load_of_a_written_tensor_falls_back_and_finds_the_race() -> None:
    r = check_file(REG / "tma_load_ctaid_box_tensor_written_race.ptx")
    assert r.verdict == "race"
    assert r.stats["grid_method"].startswith("enumerate")
    assert "reads a tensor of buffer x, which the kernel also writes" in _note(r)


@pytest.mark.parametrize("name,verdict", [("tma_store_ctaid_box_clipped_ok", "race_free"),
                                          ("tma_store_ctaid_boxes_overlap_race", "race")])
def test_tensor_store_is_refused_by_name(name: str, verdict: str) -> None:
    r = check_file(REG / f"{name}.ptx")
    assert r.verdict == verdict
    assert r.stats["grid_method"].startswith("enumerate")
    assert "a tensor store's box (its per-CTA global footprint) is not modelled" in _note(r)
