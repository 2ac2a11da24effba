"""The concrete differential test that runs before any term is built (proofs/differential.py): a
seeded bug visible on the first draw is `not_equivalent` with the emulated outputs as its witness and
the candidate's store located; a kernel it cannot separate goes on to the proof, and a racy
candidate never reaches it (its safety verdict comes first)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from proofs.differential import differential, run_concrete
from volta.equiv_cli import question, run_equivalence

HERE = Path(__file__).parent / "cases"


def test_swapped_operands_are_decided_by_the_emulated_outputs() -> None:
    cand = HERE / "sub_swapped.ptx"
    report = run_equivalence(cand, reference=HERE / "sub_ref.ptx", timeout=300)
    assert report.verdict == "not_equivalent", (report.verdict, report.notes[:3])
    assert any("concrete differential test" in n for n in report.notes)
    eq = report.stats["equivalence"]
    assert eq["differential"]["differs"] and eq["differential"]["draws"] == 1 and eq["term_nodes"] == 0
    (f,) = report.findings
    w = f.details["witness"]
    # y = b - a against a - b: the candidate is the negated reference on every element
    assert w["replayed"] and w["candidate"] == -w["reference"] and abs(w["candidate"] - w["reference"]) > w["allowed"]
    assert f.sites[0].ptx == f"{cand}:27:2" and f.sites[0].instruction.startswith("st.global")
    assert f.sites[1].ptx.startswith(str(HERE / "sub_ref.ptx"))


def test_emulated_outputs_and_their_writers() -> None:
    """Every element of y is written once, by the kernel's only store, by thread (i % 128) of CTA (i // 128)."""
    q = question(HERE / "sub_ref.ptx", reference=HERE / "sub_ref.ptx")
    draw = q.draws()[0]
    out = run_concrete(q.candidate, draw, ["y"])
    a = np.frombuffer(bytes(np.asarray(draw.buffers["a"]).tobytes()), np.float32)
    b = np.frombuffer(bytes(np.asarray(draw.buffers["b"]).tobytes()), np.float32)
    assert np.array_equal(out.values["y"], (a - b).astype(np.float64))
    pcs, rows = out.writer["y"] >> 32, out.writer["y"] & 0xFFFFFFFF
    assert np.unique(pcs).size == 1 and q.candidate.prog.code[int(pcs[0])].opcode == "st"
    assert np.array_equal(rows, np.arange(256))  # CTA c, thread t: row c * 128 + t


def test_equal_kernels_are_not_separated_and_go_to_the_proof() -> None:
    q = question(HERE / "softmax_online.ptx", reference=HERE / "softmax_ref.ptx")
    d = differential(q.candidate, q.reference, q.draws(), q.tolerance, max_draws=2)
    assert d.witness is None and d.draws_tried == 2
    report = run_equivalence(HERE / "softmax_online.ptx", reference=HERE / "softmax_ref.ptx", timeout=300)
    assert report.verdict == "verified"
    assert report.stats["equivalence"]["differential"] == {**report.stats["equivalence"]["differential"],
                                                           "draws": 1, "differs": False}


def test_a_racy_candidate_is_reported_as_racy_before_any_differential_test() -> None:
    report = run_equivalence(HERE / "relu_racy_store.ptx", reference=HERE / "relu_ref.ptx", timeout=300)
    assert report.verdict == "race"
    assert "differential" not in report.stats["equivalence"]
