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


def test_tensor_store_boxes_inside_the_tensor_are_proven_symbolically() -> None:
    r = check_file(REG / "tma_store_ctaid_box_disjoint_ok.ptx")
    assert r.verdict == "race_free", r.findings
    assert r.stats["grid_method"] == "symbolic", (r.stats["grid_method"], _note(r))


def test_overlapping_tensor_store_boxes_race_across_ctas() -> None:
    r = check_file(REG / "tma_store_ctaid_boxes_overlap_race.ptx")
    assert r.verdict == "race"
    assert r.stats["grid_method"] == "symbolic (Z3 overlap validated on two concrete CTAs)"
    assert r.findings[0].message.startswith("data race on global out[")
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in r.findings[0].message


def test_a_clipped_store_box_in_an_executed_cta_falls_back() -> None:
    r = check_file(REG / "tma_store_ctaid_box_clipped_ok.ptx")
    assert r.verdict == "race_free"
    assert r.stats["grid_method"].startswith("enumerate")
    assert "a tensor store's box reaches past the tensor (clipped) in an executed CTA" in _note(r)


def test_a_store_box_clipped_only_in_an_unexecuted_cta_falls_back(tmp_path: Path) -> None:
    """Coordinates 16 * (%ctaid % 65) in a 1030-row tensor: the executed CTAs 0 and 127 store rows
    0-15 and 992-1007 inside it, CTA 64 rows 1024-1039 (clipped): the obligation that every box
    lies inside the tensor fails in Z3, so the grid is enumerated (and CTAs 0/65 race)."""
    src = (REG / "tma_store_ctaid_box_disjoint_ok.ptx").read_text()
    src = src.replace("shl.b32 %r7, %r8, 4;", "rem.u32 %r9, %r8, 65;\n\tshl.b32 %r7, %r9, 4;")
    src = src.replace("[2048, 32]", "[1030, 32]").replace("[32, 2048]", "[32, 1030]").replace(
        "// expect: race_free", "// expect: race")
    p = tmp_path / "mid_clip.ptx"
    p.write_text(src)
    r = check_file(p)
    assert r.verdict == "race"
    assert r.stats["grid_method"].startswith("enumerate")
    assert "cp.async.bulk.tensor" in _note(r) and "some CTA decides it otherwise" in _note(r)
