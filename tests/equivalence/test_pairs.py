"""The paper-style pairs of examples/pairs (issue 11's done-when): the tiled matmul and convolution
and FlashAttention forward (S = 128) proved equivalent to their naive kernels, each with its own
launch; their seeded-bug twins (an off-by-one halo mask; a missing online-softmax rescale, at S =
129 where there are two key tiles) are `not_equivalent` with an input that, replayed in the
emulator, shows the outputs differ beyond the tolerance. S = 512 is verified too, but over the CI budget: it
runs with VOLTA_EQUIV_ALL=1. Costs (time, peak memory) are measured by bench/equiv.py."""

from __future__ import annotations

import json
import os
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
    # one key tile at S = 128: never rescaling the accumulator is harmless there (the twin is
    # verified, rightly); a second tile (S = 129: one more key) exposes it
    ("attention_s128_bug_no_rescale", "attention/fast.bug_no_rescale.ptx", "attention/fast.s128.json",
     "attention/naive.ptx", "attention/naive.s128.json", "verified"),
    ("attention_s129_bug_no_rescale", "attention/fast.bug_no_rescale.ptx", "s129:fast", "attention/naive.ptx",
     "s129:naive", "not_equivalent"),
    # issue 11's S = 512: verified, but 74.9 s CPU and 3096 MiB peak at load 6-7 (bench/results/equiv-2026-12-04b:
    # main was 88.6 s and 3280 MiB at that load, 79.8 s and 3328 MiB at the end of equiv-2026-12-04u, with the
    # differential test in front; 87.5 s before it there; 80.9 s and 3097 MiB without that test in equiv-2026-12-04t;
    # 139.8 s and 3317 MiB in equiv-2026-12-04s before its cuts), over the CI budget and beside -n 2's other
    # worker over the runner's memory: run with VOLTA_EQUIV_ALL=1. 2026-12-06s36 (the instance check per class,
    # bench/results/i11cls-2026-12-06s36): 61.8 s CPU and 3222 MiB at load ~5, main 75.2 s and 3323 MiB right before.
    # 2026-12-06s39 (bench/results/i11fa-2026-12-06s39: no whole-store bincount, columns' spare capacity not
    # faulted in, the hash index rehashed in steps, no huge-page advice): 56.5 s CPU and 2552 MiB at load 5-6, main
    # 61.1 s and 3544 MiB right after; under the memory budget now, still over ~40 s CPU
    pytest.param("attention_s512", "attention/fast.ptx", "attention/fast.s512.json", "attention/naive.ptx",
                 "attention/naive.s512.json", "verified", id="attention_s512",
                 marks=pytest.mark.skipif(not os.environ.get("VOLTA_EQUIV_ALL"),
                                          reason="56 s CPU at load 5-6, 2.5 GiB peak: set VOLTA_EQUIV_ALL=1 to run it")),
]


def _attention_spec(tmp: Path, side: str, S: int) -> Path:
    """examples/pairs/launches.py's attention launch of `side` at sequence length S."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pair_launches", PAIRS / "launches.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp / f"{side}.s{S}.json"
    out.write_text(json.dumps(mod.attention(S)[side]))
    return out


def _p(rel: str | None) -> Path | None:
    return None if rel is None else PAIRS / rel


@pytest.mark.slow
@pytest.mark.parametrize("case,cand,cl,ref,rl,expected", CASES, ids=[c[0] if isinstance(c, tuple) else c.id for c in CASES])
def test_pair(case: str, cand: str, cl: str | None, ref: str, rl: str | None, expected: str, tmp_path: Path) -> None:
    cl_p, rl_p = (_attention_spec(tmp_path, x.split(":")[1], int(x.split(":")[0][1:])) if x and ":" in x else _p(x)
                  for x in (cl, rl))
    report = run_equivalence(_p(cand), reference=_p(ref), launch_path=cl_p, reference_launch=rl_p, timeout=3000 if case == "attention_s512" else 600)
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
