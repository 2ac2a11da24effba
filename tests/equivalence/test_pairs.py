"""The paper-style pairs of examples/pairs (issue 11's done-when): the tiled matmul and convolution
and FlashAttention forward (S = 128) proved equivalent to their naive kernels, each with its own
launch; their seeded-bug twins (an off-by-one halo mask, a missing online-softmax rescale) are
`not_equivalent` with an input that, replayed in the emulator, shows the outputs differ beyond the
tolerance. Costs (time, peak memory, S = 512 too) are measured by bench/equiv.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from volta.equiv_cli import run_equivalence

PAIRS = Path(__file__).resolve().parents[2] / "examples" / "pairs"

#: (case, candidate, its launch, reference, its launch, expected verdict)
CASES = [
    ("matmul", "matmul/fast.ptx", None, "matmul/naive.ptx", None, "verified"),
    ("conv", "conv/fast.ptx", None, "conv/naive.ptx", None, "verified"),
    ("conv_bug_halo_mask", "conv/fast.bug_halo_mask.ptx", "conv/fast.json", "conv/naive.ptx", None, "not_equivalent"),
    ("attention_s128", "attention/fast.ptx", "attention/fast.s128.json", "attention/naive.ptx",
     "attention/naive.s128.json", "verified"),
    ("attention_s128_bug_no_rescale", "attention/fast.bug_no_rescale.ptx", "attention/fast.s128.json",
     "attention/naive.ptx", "attention/naive.s128.json", "not_equivalent"),
]


def _p(rel: str | None) -> Path | None:
    return None if rel is None else PAIRS / rel


@pytest.mark.slow
@pytest.mark.parametrize("case,cand,cl,ref,rl,expected", CASES, ids=[c[0] for c in CASES])
def test_pair(case: str, cand: str, cl: str | None, ref: str, rl: str | None, expected: str) -> None:
    report = run_equivalence(_p(cand), reference=_p(ref), launch_path=_p(cl), reference_launch=_p(rl), timeout=600)
    assert report.verdict == expected, (report.verdict, report.notes[:3])
    eq = report.stats["equivalence"]
    if expected == "verified":
        assert eq["suspects"] == 0 and sum(p["elements"] for p in eq["proofs"]) > 0
        assert any("exact real arithmetic" in a for a in report.assumptions)
    else:
        (f,) = report.findings
        w = f.details["witness"]
        assert w["replayed"] and abs(w["candidate"] - w["reference"]) > w["allowed"]
        assert f.sites and f.sites[0].ptx.startswith(str(_p(cand)))
