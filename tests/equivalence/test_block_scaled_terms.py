"""Term meaning of block-scaled mma.sync (PTX 9.7.14.5.14, block scaling 9.7.14.3; semantics.symbolic
`_mma_block_scale`): every output's term, evaluated at random register contents (any bits: NaN and
0xFF scale codes, padding bits of the 8-bit containers, every byte of the scale words), is the
emulator's result bit for bit (semantics/ptx/mma.py `mma_block_scale`), for every kind, element type,
.scale_vec, scale type and selector the handler models; the terms are built once per form by a check-mode
run with the equivalence shadow and evaluated on other inputs. Selectors read from data stay `unsupported`.
The plain .kind::f8f6f4 form reads an e2m1 from the central bits of its container (it read the low bits
before, 2026-12-05)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.equivalence import Outcome
from proofs.normal import UE4M3_ASSUMPTION, UE8M0_ASSUMPTION
from proofs.prove import prove
from ptx_parser import parse
from semantics.errors import Unsupported
from semantics.termeval import evaluate
from semantics.terms import CONCRETE, TermStore, bits_sort
from symexec import Launch, load_program, run_kernel
from symexec.check.run import run_checked
from symexec.check.termshadow import GlobalInfo, equivalence_run
from symexec.machine import ExecError
from tests.emulator.block_scale_kernel import kernel  # lane t: 14 words at in[14 t], d to out[4 t]
from volta.equiv_cli import spec_kernel

WORDS = 14  # per lane: a0..a3, b0, b1, c0..c3, scale-a-data, scale-b-data, two words of 16-bit selectors


def form(kind: str, a: str, b: str, vec: str = "", stype: str = "ue8m0") -> str:
    shape = "m16n8k32" if kind == "mxf8f6f4" else "m16n8k64"
    return f"mma.sync.aligned.{shape}.row.col.kind::{kind}.block_scale{vec}.f32.{a}.{b}.f32.{stype}"


INFOS = {"in": GlobalInfo("in", bits_sort(32), 4, True), "out": GlobalInfo("out", bits_sort(32), 4, False)}


class Terms:
    """The output terms of one kernel (a check-mode run with the shadow) and the emulator's outputs."""

    def __init__(self, src: str, words: np.ndarray) -> None:
        self.prog = load_program(parse(src))
        self.T = TermStore()
        launch = self._launch(words)
        run, self.shadow = equivalence_run(self.prog, launch, self.T, INFOS)
        self.report = run_checked(run, self.prog, launch)
        self.out = self.shadow.outputs().get("out")

    @staticmethod
    def _launch(words: np.ndarray) -> Launch:
        return Launch((1,), (32,), {"in": words.astype(np.uint32).copy(), "out": np.zeros((32, 4), np.uint32)},
                      ["in", "out"])

    def machine(self, words: np.ndarray) -> np.ndarray:
        glob, _, _ = run_kernel(self.prog, self._launch(words))
        return glob.by_name("out").data.view(np.uint32).reshape(-1)

    def evaluated(self, words: np.ndarray) -> np.ndarray:
        flat = words.astype(np.uint32).reshape(-1)

        def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
            assert buf == "in"
            return flat[np.asarray(elems)].astype(np.uint64)

        assert (self.out.terms != CONCRETE).all()
        got = np.zeros(32 * 4, np.uint64)
        got[self.out.elements] = evaluate(self.T, self.out.terms, leaf)
        return got


def _words(seed: int, selectors: tuple[int, int, int, int] = (0, 0, 0, 0)) -> np.ndarray:
    w = np.random.default_rng(seed).integers(0, 1 << 32, (32, WORDS), dtype=np.uint64).astype(np.uint32)
    w[:, 12] = selectors[0] | selectors[1] << 16
    w[:, 13] = selectors[2] | selectors[3] << 16
    return w


def _typical(seed: int) -> np.ndarray:
    """Finite operands and scales near 2^0 (the domain Triton's kernels see), C small."""
    rng = np.random.default_rng(seed)
    w = _words(seed)
    w[:, 6:10] = (rng.integers(-64, 64, (32, 4)) / 8.0).astype(np.float32).view(np.uint32)
    w[:, 10:12] = rng.integers(120, 134, (32, 2, 4)).astype(np.uint32) @ (1 << 8 * np.arange(4, dtype=np.uint32))
    return w


# (form, selectors as written, selectors' values): every kind and element type with ue8m0 scales
FORMS = [
    (form("mxf8f6f4", "e4m3", "e4m3", ".scale_vec::1X"), (0, 0, 0, 0)),  # what Triton 3.9 emits for tl.dot_scaled
    (form("mxf8f6f4", "e4m3", "e5m2"), (2, 1, 3, 2)),
    (form("mxf8f6f4", "e2m1", "e3m2"), (1, 0, 2, 3)),
    (form("mxf8f6f4", "e2m3", "e2m1"), (3, 1, 0, 1)),
    (form("mxf4", "e2m1", "e2m1"), (2, 1, 0, 3)),
    (form("mxf4nvf4", "e2m1", "e2m1", ".scale_vec::2X"), (2, 0, 2, 2)),
    (form("mxf4nvf4", "e2m1", "e2m1", ".scale_vec::4X"), (0, 0, 0, 1)),
    (form("mxf4nvf4", "e2m1", "e2m1", ".scale_vec::4X", "ue4m3"), (0, 1, 0, 3)),  # NVFP4
]
_BUILT: dict[str, Terms] = {}


def _terms(f: str, sel: tuple[int, int, int, int]) -> Terms:
    src = kernel(f, f"{{{sel[0]}, {sel[1]}}}", f"{{{sel[2]}, {sel[3]}}}")
    got = _BUILT.get(src)
    if got is None:
        words = _typical(0)
        if f.endswith(".ue4m3"):
            words[:, 10:12] &= 0x7F7F7F7F
        got = _BUILT[src] = Terms(src, words)
        assert got.report.verdict == "race_free", got.report.verdict
        assert not got.shadow.gaps, [g.describe() for g in got.shadow.gaps]
    return got


def _form_id(f: str) -> str:  # kind::mxf4nvf4.scale_vec::4X.e2m1.e2m1.ue4m3
    parts = f.split(".")
    vec = [x for x in parts if x.startswith("scale_vec")]
    return ".".join([parts[6], *vec, parts[-4], parts[-3], parts[-1]])


@pytest.mark.parametrize("f,sel", FORMS, ids=[_form_id(f) for f, _ in FORMS])
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), typical=st.booleans())
def test_terms_evaluate_to_the_emulators_bits(f: str, sel: tuple[int, int, int, int], seed: int, typical: bool) -> None:
    t = _terms(f, sel)
    words = _typical(seed) if typical else _words(seed)
    if f.endswith(".ue4m3"):  # a 7-bit format: a byte with bit 7 set is refused (test below); 0x7F is NaN
        words[:, 10:12] &= 0x7F7F7F7F
    assert (t.evaluated(words) == t.machine(words)).all()


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_unscaled_f8f6f4_reads_e2m1_from_the_centre_of_its_container(seed: int) -> None:
    """.kind::f8f6f4 e2m1 x e3m2 (no scales): the term read bits 0-3 of the container where the
    emulator reads bits 2-5 (9.7.14.5.14: "central 4 bits"); random padding bits tell them apart."""
    src = kernel("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32", "", "", scaled=False)
    t = _BUILT.get(src) or _BUILT.setdefault(src, Terms(src, _typical(0)))
    words = _typical(seed)
    assert (t.evaluated(words) == t.machine(words)).all()


def _gaps(src: str) -> list[str]:
    t = Terms(src, _typical(1))
    return [g.why for g in t.shadow.gaps]


def test_ue4m3_byte_with_bit_7_is_refused_by_terms_and_machine() -> None:
    """A ue4m3 scale byte with bit 7 set is no ue4m3 value (PTX 5.2.3): the emulator refuses the mma, and so does
    the terms' evaluation (never a value the machine would not give)."""
    f, sel = FORMS[-1]
    t = _terms(f, sel)
    words = _typical(3)
    words[:, 10:12] &= 0x7F7F7F7F
    assert (t.evaluated(words) == t.machine(words)).all()
    words[7, 11] |= 0x80 << 24  # lane 7 supplies SF_B of column 1 with thread-id-b 3: its byte 3 (4X: bytes 0-3)
    with pytest.raises(ExecError, match="bit 7"):
        t.machine(words)
    with pytest.raises(Unsupported, match="bit 7"):
        t.evaluated(words)


def test_selectors_read_from_data_stay_unsupported() -> None:
    src = kernel(form("mxf8f6f4", "e4m3", "e4m3"), "{%h0, %h1}", "{%h2, %h3}")
    assert any("data-dependent byte-id-a" in g for g in _gaps(src))


CASES = Path(__file__).parent / "cases"


def _prove(name: str):
    cand, _, _ = spec_kernel(CASES / f"{name}.ptx", "candidate")
    ref, _, _ = spec_kernel(CASES / "bsmma_ref.ptx", "reference")
    return prove(cand, ref, TermStore()).result


def test_split_k_is_proved_by_normal_forms() -> None:
    """Two block-scaled mmas over the halves of K, chained through C, against one (cases/bsmma_split_k.ptx):
    the terms differ, the normal forms (x * exp2(s) * 2^-127 per scaled element) are equal."""
    r = _prove("bsmma_split_k")
    assert r.outcome is Outcome.VERIFIED, r.verdict
    assert r.proofs[0].methods.get("equal real-arithmetic normal forms", 0) > 0
    assert UE8M0_ASSUMPTION in r.assumptions


@pytest.mark.parametrize("name,equal", [("bsmma_wrong_scale_byte", 0), ("bsmma_swapped_scales", 1)])
def test_seeded_scale_bugs_have_different_normal_forms(name: str, equal: int) -> None:
    """A wrong scale byte or swapped scale words: the normal forms differ on every element but, for swapped
    words, D[0, 0] (row 0's SF_A and column 0's SF_B both come from lane 0: the same exponent sum)."""
    r = _prove(name)
    assert r.outcome is Outcome.INCONCLUSIVE and r.suspect_count == 128 - equal, r.verdict
    assert r.suspects[0].why == "different real-arithmetic normal forms"  # the rest: instances of it (proofs.instances)


def _spec_file(tmp_path: Path, name: str, src: str, words: np.ndarray) -> Path:
    launch = {"grid": [1], "block": [32], "params": ["in", "out"],
              "buffers": {"in": {"dtype": "uint32", "data": words.astype(np.uint32).reshape(-1).tolist()},
                          "out": {"dtype": "float32", "shape": [128]}}}
    p = tmp_path / f"{name}.ptx"
    p.write_text(f"// launch: {json.dumps(launch)}\n{src}")
    return p


def _nvfp4_files(tmp_path: Path) -> tuple[dict[str, Path], np.ndarray]:
    """Launch-spec files of an NVFP4 (mxf4nvf4 .scale_vec::4X .ue4m3) kernel, `ref`; `split`: its K split over
    two mmas chained through C; `wrong`: SF_B from another thread of the quad (thread-id-b 2 for 3). Their
    data: finite operands, scale bytes with bit 7 clear."""
    f = form("mxf4nvf4", "e2m1", "e2m1", ".scale_vec::4X", "ue4m3")
    words = _typical(4)
    words[:, 10:12] &= 0x7F7F7F7F
    ref = kernel(f, "{0, 1}", "{0, 3}")
    one = f"{f} {{%d0,%d1,%d2,%d3}}, {{%a0,%a1,%a2,%a3}}, {{%b0,%b1}}, {{%c0,%c1,%c2,%c3}}, %sa, {{0, 1}}, %sb, {{0, 3}};"
    split = one.replace("{%a0,%a1,%a2,%a3}", "{%a0,%a1,%z,%z}").replace("{%d0,%d1,%d2,%d3}", "{%e0,%e1,%e2,%e3}") + \
        "\n " + one.replace("{%a0,%a1,%a2,%a3}", "{%z,%z,%a2,%a3}").replace("{%c0,%c1,%c2,%c3}", "{%e0,%e1,%e2,%e3}")
    split_src = ref.replace(one, "mov.b32 %z, 0;\n " + split).replace(".reg .b16 %h<4>;", ".reg .b16 %h<4>; .reg .b32 %z;"
                                                                     " .reg .f32 %e<4>;")
    assert split_src != ref
    wrong = ref.replace("%sb, {0, 3}", "%sb, {0, 2}")
    return {n: _spec_file(tmp_path, n, s, words) for n, s in (("ref", ref), ("split", split_src), ("wrong", wrong))}, words


def test_ue4m3_normal_forms(tmp_path: Path) -> None:
    """NVFP4 (mxf4nvf4 .scale_vec::4X .ue4m3): K split over two mmas chained through C is proved equal by
    normal forms (each scaled element x * ue4m3(s), ue4m3 uninterpreted); SF_B from another thread of the
    quad (thread-id-b 2 for 3) is not."""
    paths, _ = _nvfp4_files(tmp_path)
    reference, _, _ = spec_kernel(paths["ref"], "reference")
    ok = prove(spec_kernel(paths["split"], "candidate")[0], reference, TermStore()).result
    assert ok.outcome is Outcome.VERIFIED, ok.verdict
    assert ok.proofs[0].methods.get("equal real-arithmetic normal forms", 0) > 0 and UE4M3_ASSUMPTION in ok.assumptions
    bad = prove(spec_kernel(paths["wrong"], "candidate")[0], reference, TermStore()).result
    assert bad.outcome is Outcome.INCONCLUSIVE and bad.suspects[0].why == "different real-arithmetic normal forms"
    # its certificate re-checks: e2m1 elements read from random words, each scaled by ue4m3(s) of a scale byte
    # drawn among the format's numbers (proofs/recheck/reals.py), the normal forms' ue4m3 applications by value.
    # (Written from the proof directly; test_nvfp4_cli_... below goes through the CLI.)
    from proofs.certificate import write_certificate
    from proofs.recheck import recheck

    rep = prove(spec_kernel(paths["split"], "candidate")[0], reference, TermStore(), keep_forms=True)
    assert rep.result.outcome is Outcome.VERIFIED
    manifest = write_certificate(rep, tmp_path / "cert", kernels={"candidate": "split", "reference": "ref"},
                                 assumptions=list(rep.result.assumptions))
    again = recheck(tmp_path / "cert")
    assert again.ok, [str(f) for f in again.failures[:3]]
    assert again.checked.get("normal_form", 0) == manifest["counts"]["normal_form"] > 0


def test_nvfp4_cli_runs_the_launch_data_and_skips_draws_outside_the_format(tmp_path: Path) -> None:
    """`volta check CAND --reference REF` on NVFP4 kernels whose launch specs give the data: the concrete
    tests run the spec's own data first (random words put bit 7 in half the ue4m3 scale bytes, which the
    emulator refuses: semantics.errors.OutsideFormat) and skip a draw holding such a byte instead of
    answering `unsupported`; the split-K kernel is verified (with a certificate that re-checks), the wrong
    scale selector is not_equivalent on the launch's own data, and the witness search skips a bad draw."""
    from proofs.differential import differential
    from proofs.recheck import recheck
    from proofs.witness import Draw, search, suspects_by_buffer
    from volta.equiv_cli import question, run_equivalence

    paths, words = _nvfp4_files(tmp_path)
    q = question(paths["split"], reference=paths["ref"])
    draws = q.draws()
    assert draws[0].label == "the launch's own data" and len(draws) == 8
    assert np.array_equal(draws[0].buffers["in"], words.astype(np.uint32).reshape(-1))
    bad = words.copy()
    bad[:, 10:12] |= 0x80808080  # every scale byte with bit 7 set
    good = Draw("good", {"in": words.astype(np.uint32).reshape(-1)})
    d = differential(q.candidate, q.reference, [Draw("bad", {"in": bad.astype(np.uint32).reshape(-1)}), good],
                     q.tolerance, max_draws=1)
    assert d.witness is None and d.draws_tried == 1
    assert [label for label, _ in d.skipped] == ["bad"] and "has bit 7 set" in d.skipped[0][1]

    ok = run_equivalence(paths["split"], reference=paths["ref"], timeout=300, certificate=tmp_path / "cert")
    assert ok.verdict == "verified", (ok.verdict, ok.notes[:3])
    assert ok.stats["equivalence"]["differential"]["draws"] == 1 and UE4M3_ASSUMPTION in ok.assumptions
    again = recheck(tmp_path / "cert")
    assert again.ok and again.checked.get("normal_form", 0) > 0, [str(f) for f in again.failures[:3]]

    wrong = run_equivalence(paths["wrong"], reference=paths["ref"], timeout=300)
    assert wrong.verdict == "not_equivalent", (wrong.verdict, wrong.notes[:3])
    assert wrong.findings[0].details["witness"]["draw"] == "the launch's own data"

    # the witness search: the proof's suspects, a bad draw first (skipped), then the good one
    qw = question(paths["wrong"], reference=paths["ref"])
    rep = prove(qw.candidate, qw.reference, TermStore())
    suspects = suspects_by_buffer(rep.result.suspects, rep.result.obligations)
    w = search(rep.store, (qw.candidate, rep.sides["candidate"]), (qw.reference, rep.sides["reference"]), suspects,
               [Draw("bad", {"in": bad.astype(np.uint32).reshape(-1)}), good], qw.tolerance)
    assert w is not None and w.draw == "good" and w.replayed and w.draws_tried == 2
