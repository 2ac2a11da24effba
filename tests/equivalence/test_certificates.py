"""Certificates (issue 11 item 4): `volta check --reference REF --certificate DIR` writes every obligation of
a verified proof; `volta recheck DIR` re-validates them in a fresh process, with cvc5 for the lemmas and
its own normal-form checker, without importing the executor. Tampered certificates are rejected: a
changed file (exit 2, its hash), a changed coefficient, a flipped SMT result, a swapped term (exit 1,
the obligation named)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from volta.cli import main
from volta.equiv_cli import run_equivalence

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).parent / "cases"
PAIRS = ROOT / "examples" / "pairs"

#: (candidate, reference, what the proof needs): a reduction (warp shuffles), the sign-bit trick (a Z3
#: lemma, re-checked by cvc5), atomic split-K (an unordered sum), online softmax (exp2, max, let-atoms), packed
#: signs: a sign selection (its IEEE fact is negation's) and support lemmas (a 32-bit word's bit read as a table
#: over its byte; truth tables evaluated at the recheck's random points), a select chain ([y == a] [y == b] = 0), an
#: infinity under a data-dependent condition (the application ite([lab > 0], x, -inf)), block-scaled mma with e4m3
#: inputs and ue8m0 scales split over K (fp8 inputs, SCALE nodes, exp2 of scale bytes), a masked column's
#: ite([lab == 3], -inf, 0) under the label test [lab > -1] [lab < 3] (0: proofs/normal.py _indicator_algebra)
CERTIFIED = [("rowsum_shfl", "rowsum_ref"), ("sub_sign_trick", "sub_ref"), ("gemv_splitk_atomic", "gemv_ref"),
             ("softmax_online", "softmax_ref"), ("signdot_xor", "signdot_ref"), ("signdot32_word", "signdot32_ref"),
             ("keep_offset", "keep_ref"), ("pick_select_chain", "pick_masked_sum_ref"),
             ("keep_inf_offset", "keep_inf_ref"), ("bsmma_split_k", "bsmma_ref"),
             ("mask_pick_select_chain", "mask_pick_ref"),
             # a sign-bit xor of a sum with no f32 encoding: the recheck reads the sign edit on the value (reals.py)
             ("negsum_xor", "negsum_ref")]

#: run in a fresh interpreter: `volta recheck DIR --json`, then which modules it had imported
_FRESH = """
import json, sys
from volta.cli import main
try:
    main(["recheck", sys.argv[1], "--json"])
except SystemExit as e:
    code = e.code
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("symexec", "semantics", "tcgen05", "harness")
             or m in ("proofs.normal", "proofs.prove", "proofs.equivalence", "proofs.lemmas", "z3"))
sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "imported": bad}) + "\\n")
"""


def _recheck_fresh(d: Path) -> tuple[int, dict, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", _FRESH, str(d)], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=600)
    info = json.loads(p.stderr.rsplit("MODULES ", 1)[1])
    return info["code"], json.loads(p.stdout), info["imported"]


def _certify(cand: Path, ref: Path, out: Path, **kw) -> dict:
    report = run_equivalence(cand, reference=ref, certificate=out, timeout=300, **kw)
    assert report.verdict == "verified", (report.verdict, report.notes[:3])
    assert any("volta recheck" in n for n in report.notes)
    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("certs")
    out = {}
    for cand, ref in CERTIFIED:
        _certify(CASES / f"{cand}.ptx", CASES / f"{ref}.ptx", base / cand)
        out[cand] = base / cand
    return out


@pytest.mark.parametrize("case", [c for c, _ in CERTIFIED])
def test_certificate_rechecks_in_a_fresh_process_without_the_executor(case: str, certs: dict[str, Path]) -> None:
    d = certs[case]
    manifest = json.loads((d / "manifest.json").read_text())
    code, out, imported = _recheck_fresh(d)
    assert code == 0 and out["ok"], out["failures"][:3]
    assert imported == [], f"recheck imported {imported}"
    assert out["checked"].get("normal_form", 0) == manifest["counts"]["normal_form"] > 0
    assert sum(manifest["buffers"].values()) == sum(manifest["counts"].values())
    assert out["assumptions"] == manifest["assumptions"] and any("exact real arithmetic" in a for a in out["assumptions"])
    assert out["field_error_bound_log2"] < -40
    if case == "sub_sign_trick":  # the sign-bit xor is a Z3 lemma, standing on an IEEE 754 fact; cvc5 agrees
        assert manifest["lemmas"] and all(m["expected"] == "unsat" for m in manifest["lemmas"])
        facts = [m for m in manifest["lemmas"] if m["kind"] == "ieee"]
        assert [(m["fmt"], m["template"]) for m in facts] == [("f32", "neg")]
        assert out["checked"]["lemma (cvc5)"] == len(manifest["lemmas"]) - 1
        assert out["checked"]["IEEE 754 fact (cvc5)"] == 1
    if case == "negsum_xor":  # both rows' xor 0x80000000 of a 2080-term sum: one claim, one fact
        assert {(m["template"], m["fmt"]) for m in manifest["lemmas"]} == {("neg", "f32")}
        assert out["checked"]["lemma (cvc5)"] == 2 and out["checked"]["IEEE 754 fact (cvc5)"] == 1
    if case == "signdot_xor":  # a sign selection stands on the negation fact (it once raised: no fact for it)
        assert {m["template"] for m in manifest["lemmas"] if m["kind"] == "term"} == {"sign-select"}
        assert [(m["fmt"], m["template"]) for m in manifest["lemmas"] if m["kind"] == "ieee"] == [("f16", "neg")]
        # cvc5 has no Float16 outside its experimental solver: the f16 fact is checked on all 2^16 encodings
        assert out["checked"]["IEEE 754 fact (every encoding)"] == 1
    if case == "signdot32_word":  # 32 support lemmas (one per sign), claims about bits: no IEEE fact
        terms = [m for m in manifest["lemmas"] if m["kind"] == "term"]
        assert len(terms) == 32 and {m["template"] for m in terms} == {"support"}
        assert not [m for m in manifest["lemmas"] if m["kind"] == "ieee"]
        assert out["checked"]["lemma (cvc5)"] == 32


def test_recheck_evaluates_truth_tables(certs: dict[str, Path], tmp_path: Path) -> None:
    """The normal forms' truth tables (indicators of few input bits) are evaluated at the recheck's random
    points by their leaves' values: every table of the support certificate inverted is caught."""
    d = _copy(certs["signdot32_word"], tmp_path / "c")

    def invert(data: dict) -> None:
        tables = [a for a in data["atoms"].values() if a["kind"] == "IND" and a.get("cond") == "table"]
        assert tables
        for a in tables:
            a["table"] = [1 - int(v) for v in a["table"]]

    _edit(d, "normal.json", invert)
    code, out = _recheck(d)
    assert code == 1 and not out["ok"]
    assert any("not its term's value" in f["why"] for f in out["failures"])


def test_recheck_evaluates_comparison_indicators(certs: dict[str, Path], tmp_path: Path) -> None:
    """An indicator of a comparison of wide integers (lab - 0 > 0 and 0 < lab read as lab > 0: proofs/normal.py
    `_bits_cmp`) is written as its comparison and operands (writing it raised before: it was read as a
    table) and evaluated by the recheck on the terms' bits: the comparison turned around is caught."""
    d = _copy(certs["keep_offset"], tmp_path / "c")
    data = json.loads((d / "normal.json").read_text())
    cmps = [a for a in data["atoms"].values() if a["kind"] == "IND" and a.get("cond") == "cmp"]
    assert cmps and all(a["cmp"] == "gt" and a["signed"] and "term" in a["a"] for a in cmps)

    def turn(data: dict) -> None:
        for a in data["atoms"].values():
            if a.get("cond") == "cmp":
                a["cmp"] = "le"

    _edit(d, "normal.json", turn)
    code, out = _recheck(d)
    assert code == 1 and not out["ok"]
    assert any("not its term's value" in f["why"] for f in out["failures"])


def test_recheck_evaluates_ite_applications(certs: dict[str, Path], tmp_path: Path) -> None:
    """y = lab > 0 ? x : -inf has no real normal form: it is the uninterpreted application ite([lab > 0], x, -inf)
    (proofs/normal.py Normalizer.ite). The recheck evaluates it at its random points by its condition's value,
    so the certificate with every application's branches swapped is caught at each element."""
    d = _copy(certs["keep_inf_offset"], tmp_path / "c")
    data = json.loads((d / "normal.json").read_text())
    apps = [a for a in data["atoms"].values() if a["kind"] == "APP" and a["fn"] == "ite"]
    assert len(apps) == 64  # one per element (each its own x[i] and lab[i])

    def swap(data: dict) -> None:
        for a in data["atoms"].values():
            if a["kind"] == "APP" and a["fn"] == "ite":
                a["args"] = [a["args"][0], a["args"][2], a["args"][1]]

    _edit(d, "normal.json", swap)
    code, out = _recheck(d)
    assert code == 1 and not out["ok"] and len(out["failures"]) == 64
    assert all("not its term's value" in f["why"] for f in out["failures"])


def test_recheck_draws_labels_at_the_compared_columns(certs: dict[str, Path], tmp_path: Path) -> None:
    """pick_select_chain's normal forms hold [lab == j] for columns 0..3 (the select chain's products of two
    of them dropped as 0, proofs/normal.py): the recheck draws each label among those columns, so an
    indicator moved to another column is caught by its term's value (a uniform 32-bit label never hits one)."""
    d = _copy(certs["pick_select_chain"], tmp_path / "c")
    data = json.loads((d / "normal.json").read_text())
    eqs = [a for a in data["atoms"].values() if a.get("cond") == "cmp" and a["cmp"] == "eq"]
    assert sorted({a["b"]["value"] for a in eqs}) == [0, 1, 2, 3] and all("term" in a["a"] for a in eqs)

    def move(data: dict) -> None:
        for a in data["atoms"].values():
            if a.get("cond") == "cmp" and a["b"].get("value") == 1:
                a["b"]["value"] = 2

    _edit(d, "normal.json", move)
    code, out = _recheck(d)
    assert code == 1 and any("not its term's value" in f["why"] for f in out["failures"])


def test_recheck_sees_a_wrong_label_bound(tmp_path: Path, monkeypatch) -> None:
    """A wrong use of the masked-column rule leaves no trace in a certificate (the dropped product is absent).
    With [lab <s 4]'s words narrowed by one at the top (a wrong bound: read as lab <= 2), the prover drops mask_pick_wrong_bound's ite([lab == 3], -inf, 0) and calls the seeded bug
    verified; the recheck draws labels at the bounds of the term DAG's ordered comparisons (3 is one), where
    the candidate's term is +inf and its normal form 0."""
    from proofs.normal import Normalizer

    right = Normalizer._word_set

    def narrowed(self, key):
        got = right(self, key)
        if got is None or key[1][1] in ("eq", "ne"):
            return got
        x, words = got
        return x, tuple((lo, 2) if (lo, hi) == (0, 3) else (lo, hi) for lo, hi in words)  # lab <s 4 as lab <= 2

    monkeypatch.setattr(Normalizer, "_word_set", narrowed)
    # labels drawn in 0..2 only, so that the concrete differential test (which runs first) does not decide it
    for name in ("mask_pick_wrong_bound", "mask_pick_ref"):
        text = (CASES / f"{name}.ptx").read_text()
        assert '"draw_range": [-2, 6]' in text
        (tmp_path / f"{name}.ptx").write_text(text.replace('"draw_range": [-2, 6]', '"draw_range": [0, 3]'))
    d = tmp_path / "wrong"
    _certify(tmp_path / "mask_pick_wrong_bound.ptx", tmp_path / "mask_pick_ref.ptx", d)
    monkeypatch.undo()
    code, out = _recheck(d)
    assert code == 1 and not out["ok"]
    assert any("not its term's value" in f["why"] for f in out["failures"])


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit(d: Path, name: str, change, rehash: bool = True) -> None:
    """Change file `name` of certificate d (JSON through `change(data)`, text through `change(text)`)."""
    p = d / name
    if name.endswith(".json"):
        data = json.loads(p.read_text())
        change(data)
        p.write_text(json.dumps(data))
    else:
        p.write_text(change(p.read_text()))
    if rehash:
        m = json.loads((d / "manifest.json").read_text())
        m["files"][name] = hashlib.sha256(p.read_bytes()).hexdigest()
        (d / "manifest.json").write_text(json.dumps(m))


def _recheck(d: Path) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["recheck", str(d), "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, json.loads(r.output)


def _first_normal(data: dict) -> tuple[dict, str]:
    ob = next(o for o in data["obligations"] if o["normal"])
    return ob, next(iter(ob["normal"]))


def test_changed_coefficient_is_rejected(certs: dict[str, Path], tmp_path: Path) -> None:
    """One coefficient of one candidate normal form plus one: that element's obligation fails."""
    d = _copy(certs["softmax_online"], tmp_path / "c")
    ob, i = _first_normal(json.loads((d / "obligations.json").read_text()))

    def bump(data: dict) -> None:
        ob2 = next(o for o in data["obligations"] if o["buffer"] == ob["buffer"])
        term = ob2["normal"][i]["candidate"]["num"][0]
        term[1] = _plus_one(term[1])

    _edit(d, "obligations.json", bump)
    code, out = _recheck(d)
    assert code == 1 and not out["ok"]
    assert [f["obligation"] for f in out["failures"]] == [f"{ob['buffer']}[{ob['elements'][int(i)]}] normal_form"]


def _plus_one(c: str) -> str:
    from fractions import Fraction

    return str(Fraction(c) + 1)


def test_changed_file_without_its_hash_is_bad_input(certs: dict[str, Path], tmp_path: Path) -> None:
    d = _copy(certs["rowsum_shfl"], tmp_path / "c")
    _edit(d, "normal.json", lambda data: data["polys"].update({"999999": []}), rehash=False)
    r = CliRunner().invoke(main, ["recheck", str(d)])
    assert r.exit_code == 2 and "normal.json: changed since it was written" in r.output
    assert "Traceback" not in r.output


def test_flipped_smt_result_and_false_lemma_are_rejected(certs: dict[str, Path], tmp_path: Path) -> None:
    d = _copy(certs["sub_sign_trick"], tmp_path / "flip")
    m = json.loads((d / "manifest.json").read_text())
    m["lemmas"][0]["expected"] = "sat"
    (d / "manifest.json").write_text(json.dumps(m))
    code, out = _recheck(d)
    assert code == 1 and any("cvc5 answers unsat, the certificate says sat" in f["why"] for f in out["failures"])
    d2 = _copy(certs["sub_sign_trick"], tmp_path / "false")
    f = m["lemmas"][0]["file"]
    _edit(d2, f, lambda text: text.replace("(not ", "(and true ", 1))  # the claim itself asserted: satisfiable
    code, out = _recheck(d2)
    assert code == 1 and any(x["obligation"].startswith(f"lemma {f}") and "sat" in x["why"] for x in out["failures"])


def test_missing_ieee_fact_is_rejected(certs: dict[str, Path], tmp_path: Path) -> None:
    """A bit-level lemma whose IEEE 754 fact was dropped from the manifest no longer re-validates."""
    d = _copy(certs["sub_sign_trick"], tmp_path / "c")
    m = json.loads((d / "manifest.json").read_text())
    m["lemmas"] = [x for x in m["lemmas"] if x["kind"] != "ieee"]
    (d / "manifest.json").write_text(json.dumps(m))
    code, out = _recheck(d)
    assert code == 1 and all("IEEE 754 fact behind template neg for f32" in f["why"] for f in out["failures"])


def test_swapped_term_is_rejected(certs: dict[str, Path], tmp_path: Path) -> None:
    """Two elements' candidate terms exchanged, with the normal forms' term ids to match: each normal form
    no longer describes its term (the real evaluation sees it)."""
    d = _copy(certs["rowsum_shfl"], tmp_path / "c")

    def swap(data: dict) -> None:
        ob = next(o for o in data["obligations"] if len(o["normal"]) >= 2)
        a, b = list(ob["normal"])[:2]
        ia, ib = int(a), int(b)
        ob["candidate"][ia], ob["candidate"][ib] = ob["candidate"][ib], ob["candidate"][ia]
        na, nb = ob["normal"][a], ob["normal"][b]
        na["candidate_term"], nb["candidate_term"] = nb["candidate_term"], na["candidate_term"]

    _edit(d, "obligations.json", swap)
    code, out = _recheck(d)
    assert code == 1 and len(out["failures"]) == 2
    assert all("is not its term's value" in f["why"] for f in out["failures"]), out["failures"]


def test_identical_and_method_tampering(certs: dict[str, Path], tmp_path: Path) -> None:
    d = _copy(certs["rowsum_shfl"], tmp_path / "c")

    def relabel(data: dict) -> None:  # claim 'identical' for two different terms
        ob = data["obligations"][0]
        ob["method"][0] = "identical"

    _edit(d, "obligations.json", relabel)
    code, out = _recheck(d)
    assert code == 1 and "are different ids" in out["failures"][0]["why"]


@pytest.mark.parametrize("damage,message", [
    ("missing", "no manifest.json"), ("version", "version 99"), ("garbage", "not JSON"), ("nodir", "not a directory"),
    ("missing_file", "listed in the manifest but missing"), ("shape", "malformed certificate")])
def test_bad_certificates_are_bad_input(damage: str, message: str, certs: dict[str, Path], tmp_path: Path) -> None:
    d = _copy(certs["rowsum_shfl"], tmp_path / "c")
    if damage == "missing":
        (d / "manifest.json").unlink()
    elif damage == "version":
        m = json.loads((d / "manifest.json").read_text())
        m["version"] = 99
        (d / "manifest.json").write_text(json.dumps(m))
    elif damage == "garbage":
        (d / "manifest.json").write_text("{not json")
    elif damage == "nodir":
        d = tmp_path / "absent"
    elif damage == "missing_file":
        (d / "terms.json").unlink()
    else:
        _edit(d, "obligations.json", lambda data: data["obligations"][0].pop("method"))
    r = CliRunner().invoke(main, ["recheck", str(d)])
    assert r.exit_code == 2 and message in r.output, r.output
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit)


def test_cli_certificate_options(tmp_path: Path) -> None:
    runner = CliRunner()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    args = ["check", str(CASES / "sub_neg_add.ptx"), "--reference", str(CASES / "sub_ref.ptx")]
    r = runner.invoke(main, args + ["--certificate", str(busy)])
    assert r.exit_code == 2 and "not an empty directory" in r.output and (busy / "keep.txt").read_text() == "mine"
    r = runner.invoke(main, ["check", str(CASES / "sub_neg_add.ptx"), "--certificate", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--certificate needs --reference" in r.output
    r = runner.invoke(main, ["check", str(CASES / "sub_swapped.ptx"), "--reference", str(CASES / "sub_ref.ptx"),
                             "--certificate", str(tmp_path / "none")])
    assert r.exit_code == 1 and "no certificate written" in r.output and not (tmp_path / "none").exists()
    r = runner.invoke(main, args + ["--certificate", str(tmp_path / "ok"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["stats"]["equivalence"]["certificate"]["counts"]
    assert runner.invoke(main, ["recheck", str(tmp_path / "ok")]).exit_code == 0


def test_a_certificate_that_cannot_be_written_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    """A lemma whose IEEE fact cannot be stated (here: forced) makes no certificate, says so, and removes
    what it had written; the verdict stays."""
    import proofs.certificate as cert

    def refuse(fmt: str, template: str):
        raise cert.CertificateError(f"no IEEE 754 interchange format for {fmt}")

    monkeypatch.setattr(cert, "ieee_fact", refuse)
    out = tmp_path / "c"
    report = run_equivalence(CASES / "sub_sign_trick.ptx", reference=CASES / "sub_ref.ptx", certificate=out,
                             timeout=300)
    assert report.verdict == "verified"
    assert any(n.startswith("no certificate written: no IEEE 754 interchange format") for n in report.notes)
    assert not out.exists()


@pytest.mark.slow
def test_pair_certificate_rechecks(tmp_path: Path) -> None:
    """The paper-style tiled-vs-naive convolution pair: 14400 identical terms and ~2000 normal forms."""
    manifest = _certify(PAIRS / "conv" / "fast.ptx", PAIRS / "conv" / "naive.ptx", tmp_path / "conv")
    code, out, imported = _recheck_fresh(tmp_path / "conv")
    assert code == 0 and out["ok"] and imported == []
    assert out["checked"] == manifest["counts"] and manifest["counts"]["normal_form"] > 0


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from(["f16", "bf16", "f32"]), bits=st.integers(min_value=0, max_value=2**32 - 1))
def test_reals_encoding_round_trip(fmt: str, bits: int) -> None:
    """recheck's own IEEE 754 decoder and encoder are inverse on finite non-negative-zero encodings."""
    from proofs.recheck.reals import FORMATS, Unevaluable, decode, encode

    e, m = FORMATS[fmt]
    bits &= (1 << (1 + e + m)) - 1
    try:
        x = decode(bits, fmt)
    except Unevaluable:  # NaN
        assert (bits >> m) & ((1 << e) - 1) == (1 << e) - 1
        return
    if bits == 1 << (e + m):  # -0 reads as 0
        assert x == 0
        return
    assert encode(x, fmt) == bits


def test_recheck_sources_import_nothing_of_the_prover() -> None:
    """The independence is structural: proofs/recheck imports only the standard library, mpmath and cvc5."""
    import ast

    allowed = {"__future__", "hashlib", "json", "math", "random", "dataclasses", "pathlib", "fractions", "functools",
               "mpmath", "cvc5", "typing"}
    for f in (ROOT / "proofs" / "recheck").glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [] if node.level else [str(node.module).split(".")[0]]
            else:
                continue
            assert set(names) <= allowed, (f.name, names)


def test_field_comparison_applies_functions_to_argument_values() -> None:
    """sqrt of a let-atom and sqrt of what it stands for are one value (as the prover's let-expansion
    makes them, the rmsnorm candidate's case); sqrt(x) and sqrt(2x) are not."""
    import random

    from proofs.recheck.gfp import FieldPoint

    x = {"num": [[[0, 1], "1"]], "den": None}
    tables = {"atoms": {"0": {"kind": "LEAF", "term": 5}, "1": {"kind": "LET", "nf": 0},
                        "2": {"kind": "APP", "fn": "sqrt", "args": [1]}, "3": {"kind": "APP", "fn": "sqrt", "args": [0]},
                        "4": {"kind": "APP", "fn": "sqrt", "args": [2]}},
              "polys": {}, "keys": {"0": x, "1": {"num": [[[1, 1], "1"]], "den": None},
                                    "2": {"num": [[[0, 1], "2"]], "den": None}}}
    pt = FieldPoint(tables, random.Random(1))
    via_let, direct, doubled = ({"num": [[[a, 1], "1"]], "den": None} for a in (2, 3, 4))
    assert pt.nf(via_let) == pt.nf(direct) != pt.nf(doubled)


def test_sixteen_bit_ieee_facts_checked_on_every_encoding() -> None:
    """The recheck's fallback for the IEEE facts cvc5 cannot state (Float16, bfloat16): every template on every
    encoding with reals.py's decoder; what it has no check for is named, never passed."""
    from proofs.recheck import _exhaustive_fact

    for fmt in ("f16", "bf16"):
        for template in ("neg", "abs", "negabs", "scale:3", "scale:-2"):
            assert _exhaustive_fact({"fmt": fmt, "template": template}) is None, (fmt, template)
    assert "template" in _exhaustive_fact({"fmt": "f16", "template": "sign-select"})
    assert "format" in _exhaustive_fact({"fmt": "f32", "template": "neg"})


def test_recheck_evaluates_block_scale_factors(certs: dict[str, Path], tmp_path: Path) -> None:
    """The split-K block-scaled certificate's normal forms read each scale byte inside an exp2 atom (x * 2^(s - 127)):
    one exp2 atom given another scale byte (the same change on both sides, so the two normal forms stay one
    rational function) no longer is its terms' value, which the real-arithmetic evaluation of SCALE nodes sees."""
    d = _copy(certs["bsmma_split_k"], tmp_path / "c")

    def other_byte(data: dict) -> None:
        exp2 = [a for a in data["atoms"].values() if a["kind"] == "EXP2"]
        assert len(exp2) >= 2
        poly = data["polys"][str(exp2[0]["poly"])]
        others = {m[0][0] for a in exp2[1:] for m in data["polys"][str(a["poly"])]} - {m[0][0] for m in poly}
        poly[-1][0][0] = min(others)

    _edit(d, "normal.json", other_byte)
    code, out = _recheck(d)
    assert code == 1 and not out["ok"]
    assert out["failures"] and all("not its term's value" in f["why"] for f in out["failures"]), out["failures"][:2]


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue4m3"])
def test_recheck_narrow_formats_agree_with_the_emulator(fmt: str) -> None:
    """recheck's own decoder of the PTX 5.2.3 narrow formats (written from the manual, not imported) against the
    emulator's (semantics.formats) on every code, encode inverse to decode on every number but -0, and the
    formats' NaN codes, infinities and largest finite values (OCP MX: 448, 57344, 7.5, 28, 6)."""
    import mpmath

    from proofs.recheck.reals import MX_FORMATS, Excluded, decode, encode
    from semantics.formats import bits_to_fraction, get_format

    f = MX_FORMATS[fmt]
    emu = get_format("e4m3" if fmt == "ue4m3" else fmt)
    finite, nans, infs = [], [], []
    for code in range(1 << f.width):
        try:
            x = decode(code, fmt)
        except Excluded:
            nans.append(code)
            continue
        if mpmath.isinf(x):
            infs.append(code)
            continue
        finite.append(x)
        assert float(x) == float(bits_to_fraction(code, emu)), (fmt, hex(code))
        if not (x == 0 and code):
            assert encode(x, fmt) == code
    assert nans == {"e4m3": [0x7F, 0xFF], "e5m2": [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF], "ue4m3": [0x7F]}.get(fmt, [])
    assert infs == ([0x7C, 0xFC] if fmt == "e5m2" else [])
    assert max(finite) == {"e4m3": 448, "e5m2": 57344, "e2m3": 7.5, "e3m2": 28, "e2m1": 6, "ue4m3": 448}[fmt]


def test_integer_mma_conversions_recheck(tmp_path: Path) -> None:
    """wgmma_s8_f32_satfinite (A from registers, .satfinite) against wgmma_s8_f32 (descriptors, wrapping), both
    converted by cvt.rn.f32.s32: each element's two forms are one app("mma.s32.exact", S), S the exact sum. The
    recheck evaluates the integer MMA nodes as the emulator does (exact sum, clamped or wrapped to s32) and the
    application as S, so every obligation re-checks; S with one coefficient plus one is caught."""
    d = tmp_path / "c"
    manifest = _certify(CASES / "wgmma_s8_f32_satfinite.ptx", CASES / "wgmma_s8_f32.ptx", d)
    assert "mma.s32.exact" in manifest["uninterpreted"] and manifest["counts"]["normal_form"] == 512
    code, out, imported = _recheck_fresh(d)
    assert code == 0 and out["ok"], out["failures"][:3]
    assert imported == [] and out["checked"]["normal_form"] == 512
    tables = json.loads((d / "normal.json").read_text())
    key = next(str(a["args"][0]) for a in tables["atoms"].values()
               if a["kind"] == "APP" and a["fn"] == "mma.s32.exact")

    def bump(data: dict) -> None:
        term = data["keys"][key]["num"][0]
        term[1] = _plus_one(term[1])

    bad = _copy(d, tmp_path / "bad")
    _edit(bad, "normal.json", bump)
    code, out = _recheck(bad)
    assert code == 1 and not out["ok"] and out["failures"]
    assert all("is not its term's value" in f["why"] for f in out["failures"]), out["failures"][:2]
