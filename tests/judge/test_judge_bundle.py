"""Reference bundles: Triton builds made on one machine, used on another (the GPU machine's Triton
differs): compile_contract answers from the bundle, for every instance of the same specialisation."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import compile as C
from harness import suite
from harness.judge.shapes import UNSEEN, with_instance


def test_bundle_answers_without_compiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contracts = [suite.get("relu"), suite.get("softmax")]
    path = tmp_path / "refs.json.gz"
    assert C.export_bundle(contracts, "sm_90a", path) >= 2
    want = {c.name: C.compile_contract(c, "sm_90a", "verify") for c in contracts}
    monkeypatch.setenv(C.BUNDLE_ENV, str(path))
    monkeypatch.setenv("VOLTA_CACHE_DIR", str(tmp_path / "empty-cache"))

    def no_triton(*a, **k):
        raise AssertionError("compiled instead of using the bundle")

    monkeypatch.setattr(C, "_compile", no_triton)
    for c in contracts:
        got = C.compile_contract(c, "sm_90a", "verify")
        assert got.ptx == want[c.name].ptx and got.params == want[c.name].params and got.shared == want[c.name].shared
        assert C.compile_contract(c, "sm_90a", "bench").grid == c.resolve("bench").grid
    other = with_instance(suite.get("softmax"), UNSEEN, {"M": 5, "N": 2240})  # same specialisation
    assert C.compile_contract(other, "sm_90a", UNSEEN).grid == (5, 1, 1)
