"""`volta recheck DIR`: re-validate an equivalence certificate (proofs/certificate.py) in a fresh process.

Independent of the prover: nothing here imports the executor (symexec), the term store or the prover's
normal form (semantics/, proofs/normal.py); a certificate is JSON, SMT-LIB 2 and this package's own
arithmetic. What is checked, per obligation (docs/certificates.md says the same with the format):

- the manifest: format name and version, every listed file present with its SHA-256;
- per output buffer: both kernels wrote the same elements, each has exactly one discharged obligation;
- `identical`: the two term ids are one id (the writer's store is hash-consed: one id, one expression);
- `concrete`: the two recorded bit patterns are equal;
- `normal_form`: (A) the two normal forms are the same rational function over free atoms: evaluated at
  random points of GF(2^61 - 1) with let-atoms substituted (gfp.py; the error bound D/p is printed);
  (B) each normal form is its term's function: the term DAG and the normal form evaluated at random
  finite inputs with 256-bit reals agree (reals.py; a test at random points, not a proof);
- each bit-level lemma, and the IEEE 754 fact its template stands on (in SMT-LIB floating point): cvc5
  answers the SMT-LIB 2 script (the negated claim) as the writer's Z3 did (`unsat`); a `support`
  lemma's script states its term's whole table, so cvc5 re-validates the table for every input;
- truth and value tables of normal forms (functions of few input bits) are evaluated at the random
  points of (B) by their leaves' values, like every other atom; an integer input compared for equality
  with constants ([y == c] indicators) is drawn among those constants at most points, so that products
  of such indicators ([y == a] [y == b] = 0 for a != b, proofs/normal.py) are evaluated where one is 1,
  or at either side of a bound c it is compared with by an ordered comparison of the terms (c - 1, c, c + 1:
  a masked column [y == v] dropped under [y <s c], proofs/normal.py _indicator_algebra, is seen there).
Trusted: that the term DAG is the kernels' meaning (the executor wrote it: recheck does not re-run the
kernels), that a lemma's script states its claim about its terms, reals.py's IEEE 754 decoder, cvc5,
mpmath and Python's integers.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from .gfp import P, Degenerate, FieldPoint, degree
from .reals import Excluded, NormalValues, TermValues, Unevaluable, close, equality_hints
from .smt import SmtError, cvc5_result

__all__ = ["FORMAT", "VERSION", "BadCertificate", "Failure", "RecheckReport", "recheck"]

FORMAT = "volta-equivalence-certificate"
VERSION = 1
METHODS = ("identical", "concrete", "normal_form")


#: Lemma templates whose IEEE 754 fact is another template's (None: a claim about bits only, no fact):
#: a sign selection xors a float's sign bit (negation); a support lemma states a bit-level term's table.
_IEEE_FACT: dict[str, str | None] = {"identity": None, "support": None, "sign-select": "neg"}


class BadCertificate(Exception):
    """Not a readable certificate of this version (a missing or changed file, malformed JSON)."""


@dataclass
class Failure:
    """One obligation that did not re-validate."""

    obligation: str  # "out[17] normal_form", "lemma lemmas/0000.smt2", ...
    why: str

    def describe(self) -> str:
        return f"{self.obligation}: {self.why}"


@dataclass
class RecheckReport:
    verdict: str  # the certificate's verdict
    checked: dict[str, int] = field(default_factory=dict)  # obligation kind -> how many re-validated
    failures: list[Failure] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    degree_sum: int = 0  # the normal-form comparisons' degree bounds, added up (a union bound)
    error_bound_log2: float = -math.inf  # log2 of the probability that the field comparison missed a difference

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {"ok": self.ok, "verdict": self.verdict, "checked": self.checked,
                "failures": [f.__dict__ for f in self.failures], "assumptions": self.assumptions,
                "notes": self.notes, "field_error_bound_log2": self.error_bound_log2}


def _load(d: Path) -> tuple[dict, dict]:
    if not d.is_dir():
        raise BadCertificate(f"{d}: not a directory")
    try:
        manifest = json.loads((d / "manifest.json").read_text())
    except FileNotFoundError:
        raise BadCertificate(f"{d}: no manifest.json (not a certificate)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadCertificate(f"{d / 'manifest.json'}: not JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BadCertificate(f"{d / 'manifest.json'}: not a {FORMAT} manifest")
    if manifest.get("version") != VERSION:
        raise BadCertificate(f"{d / 'manifest.json'}: version {manifest.get('version')!r}; this volta reads {VERSION}")
    files = manifest.get("files")
    need = {"obligations.json", "terms.json", "normal.json"}
    if not isinstance(files, dict) or not need <= set(files):
        raise BadCertificate(f"{d / 'manifest.json'}: 'files' must list {', '.join(sorted(need))}")
    data = {}
    for name, digest in files.items():
        p = d / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise BadCertificate(f"{d / 'manifest.json'}: file {name!r} outside the certificate")
        try:
            raw = p.read_bytes()
        except OSError:
            raise BadCertificate(f"{p}: listed in the manifest but missing") from None
        got = hashlib.sha256(raw).hexdigest()
        if got != digest:
            raise BadCertificate(f"{p}: changed since it was written (SHA-256 {got[:16]}..., manifest says "
                                 f"{str(digest)[:16]}...)")
        if name.endswith(".json"):
            try:
                data[name] = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise BadCertificate(f"{p}: not JSON ({e})") from None
        else:
            data[name] = raw.decode("utf-8", "replace")
    return manifest, data


def recheck(d: Path, points: int = 2, seed: int = 0) -> RecheckReport:
    """Re-validate certificate directory `d` (raises BadCertificate for what is not one)."""
    d = Path(d)
    manifest, data = _load(d)
    try:
        return _recheck(manifest, data, points, seed)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise BadCertificate(f"{d}: malformed certificate ({type(e).__name__}: {e})") from None


def _recheck(manifest: dict, data: dict, points: int, seed: int) -> RecheckReport:
    rep = RecheckReport(str(manifest["verdict"]), assumptions=[str(a) for a in manifest.get("assumptions", [])])
    if rep.verdict != "verified":
        rep.failures.append(Failure("verdict", f"the certificate records {rep.verdict!r}, not 'verified'"))
    tables = data["normal.json"]
    nodes = data["terms.json"]["nodes"]
    rng = random.Random(seed)
    hints = equality_hints(tables["atoms"], nodes)  # labels drawn at the columns they are compared with
    pts = _InputPoints(nodes, tables, hints, rng, points)
    kinds = {n[0]: (n[1], n[3]) for n in nodes}
    deg_memo: dict = {}
    shared = [FieldPoint(tables, random.Random(rng.getrandbits(64)))]
    for ob in data["obligations.json"]["obligations"]:
        _buffer(ob, rep, tables, pts, kinds, rng, deg_memo, shared)
    if rep.degree_sum:
        rep.error_bound_log2 = math.log2(rep.degree_sum) - math.log2(P)
    answers: dict[str, str] = {}  # file -> cvc5's answer (a script shared by many lemmas is solved once)
    for lem in manifest.get("lemmas", []):
        name = f"lemma {lem['file']} ({lem.get('claim', '')})"
        text = data.get(lem["file"])
        if text is None:
            raise BadCertificate(f"{lem['file']}: a lemma file not listed in the manifest's files")
        try:
            got = answers.get(lem["file"]) or answers.setdefault(lem["file"], cvc5_result(text, lem["file"]))
        except SmtError as e:
            # cvc5 decides floating point of the standard sorts only (Float16 needs its experimental
            # --fp-exp solver): an IEEE fact of a 16-bit format is checked on every encoding instead
            why = _exhaustive_fact(lem) if lem.get("kind") == "ieee" else str(e)
            if why is None:
                rep.checked["IEEE 754 fact (every encoding)"] = rep.checked.get("IEEE 754 fact (every encoding)", 0) + 1
            else:
                rep.failures.append(Failure(name, f"{e}; {why}" if lem.get("kind") == "ieee" else why))
            continue
        if got != lem["expected"]:
            rep.failures.append(Failure(name, f"cvc5 answers {got}, the certificate says {lem['expected']}"))
        elif got != "unsat":
            rep.failures.append(Failure(name, f"{got}: a lemma is proved only by unsat of its negation"))
        else:
            kind = "IEEE 754 fact (cvc5)" if lem.get("kind") == "ieee" else "lemma (cvc5)"
            rep.checked[kind] = rep.checked.get(kind, 0) + 1
    facts = {(m.get("fmt"), m.get("template")) for m in manifest.get("lemmas", []) if m.get("kind") == "ieee"}
    for lem in manifest.get("lemmas", []):  # a bit-level lemma stands on an IEEE fact: it must be there too
        fact = _IEEE_FACT.get(lem.get("template", "identity"), lem.get("template"))
        if lem.get("kind") != "ieee" and fact is not None and (lem.get("fmt"), fact) not in facts:
            rep.failures.append(Failure(f"lemma {lem['file']} ({lem.get('claim', '')})",
                                        f"the IEEE 754 fact behind template {lem.get('template')} for "
                                        f"{lem.get('fmt')} is not in the certificate"))
    if manifest.get("uninterpreted"):
        rep.notes.append("uninterpreted functions (equal arguments, equal values; nothing more): "
                         + ", ".join(manifest["uninterpreted"]))
    rep.notes += [f"precision check (recorded, not re-checked): {p}" for p in manifest.get("precision", [])]
    return rep


#: Formats whose IEEE 754 facts are small enough to check on every encoding (2^16 of them).
_EXHAUSTIVE_BITS = 16


def _exhaustive_fact(lem: dict) -> str | None:
    """An IEEE 754 fact of a format of at most 16 bits checked on every encoding x with reals.py's
    decoder (the value-level reading the normal form uses; NaN encodings have none and are skipped,
    as inputs are finite): negation, |x|, -|x| by the sign bit (IEEE 754-2008 5.5.1), and the
    exponent-field add of k as x * 2^k while both exponents are normal (5.3.3). None when it holds,
    else why not."""
    from .reals import FORMATS, Unevaluable, decode

    fmt, template = lem.get("fmt"), str(lem.get("template"))
    if fmt not in FORMATS or 1 + sum(FORMATS[fmt]) > _EXHAUSTIVE_BITS:
        return f"no exhaustive check for format {fmt!r}"
    e, m = FORMATS[fmt]
    w = 1 + e + m
    sign = 1 << (w - 1)
    k = int(template.split(":")[1]) if template.startswith("scale:") else None
    if k is None and template not in ("neg", "abs", "negabs"):
        return f"no exhaustive check for template {template!r}"
    for x in range(1 << w):
        try:
            v = decode(x, fmt)
            if k is None:
                t = {"neg": x ^ sign, "abs": x & (sign - 1), "negabs": x | sign}[template]
                want = {"neg": -v, "abs": abs(v), "negabs": -abs(v)}[template]
            else:
                ex = x >> m & ((1 << e) - 1)
                if not (max(1, 1 - k) <= ex <= min((1 << e) - 2, (1 << e) - 2 - k)):
                    continue
                t, want = x + (k << m) if k >= 0 else x - ((-k) << m), v * 2 ** k
            if decode(t, fmt) != want:
                return f"fails at encoding 0x{x:x}"
        except Unevaluable:  # a NaN encoding: no value to compare
            continue
    return None


def _buffer(ob: dict, rep: RecheckReport, tables: dict, pts: "_InputPoints", kinds: dict,
            rng: random.Random, deg_memo: dict, shared: list) -> None:
    name = ob["buffer"]
    written = ob["written"]
    elems = [int(e) for e in ob["elements"]]
    if sorted(set(written["candidate"])) != sorted(set(written["reference"])):
        rep.failures.append(Failure(name, "the kernels wrote different elements"))
    if sorted(elems) != sorted(set(written["candidate"])):
        rep.failures.append(Failure(name, "the obligations do not cover every written element once"))
    methods, cand, ref = ob["method"], ob["candidate"], ob["reference"]
    if not (len(methods) == len(cand) == len(ref) == len(elems)):
        raise ValueError(f"buffer {name}: obligation arrays of different lengths")
    cbits, rbits = ob.get("candidate_bits"), ob.get("reference_bits")
    for i, (e, m, c, r) in enumerate(zip(elems, methods, cand, ref)):
        what = f"{name}[{e}] {m}"
        if m not in METHODS:
            rep.failures.append(Failure(what, "not discharged"))
            continue
        if m == "identical":
            why = None if c == r and c >= 0 else f"terms #{c} and #{r} are different ids"
        elif m == "concrete":
            why = None if c == r == -1 and cbits and cbits[i] is not None and cbits[i] == rbits[i] else \
                "the recorded bits differ" + (f" (0x{cbits[i]:x} vs 0x{rbits[i]:x})" if cbits and cbits[i] is not None
                                              and rbits[i] is not None else "")
        else:
            why = _normal(ob, i, c, r, tables, pts, kinds, rng, rep, deg_memo, shared)
        if why is None:
            rep.checked[m] = rep.checked.get(m, 0) + 1
        else:
            rep.failures.append(Failure(what, why))


class _InputPoints:
    """The random real inputs of (B), drawn once and shared by the obligations. Each obligation is evaluated
    at `need` points; a point where it reads a value the verdict's assumptions exclude (a NaN element or
    scale code drawn inside a word of random bits: reals.Excluded) is skipped, and more points are drawn, up
    to MOST_POINTS."""

    def __init__(self, nodes: list, tables: dict, hints: dict, rng: random.Random, need: int) -> None:
        self.nodes, self.tables, self.hints, self.rng, self.need = nodes, tables, hints, rng, need
        self.terms: list[TermValues] = []
        self.forms: list[NormalValues] = []
        for _ in range(need):
            self._draw()

    def _draw(self) -> None:
        tv = TermValues(self.nodes, random.Random(self.rng.getrandbits(64)), self.hints)
        self.terms.append(tv)
        self.forms.append(NormalValues(self.tables, tv))

    def at(self, k: int) -> tuple[TermValues, NormalValues] | None:
        """Point k (drawn when needed), None past MOST_POINTS."""
        if k >= max(MOST_POINTS, self.need):
            return None
        while k >= len(self.terms):
            self._draw()
        return self.terms[k], self.forms[k]


#: At most this many real input points per obligation (the rest excluded by the verdict's assumptions).
MOST_POINTS = 24


def _normal(ob: dict, i: int, c: int, r: int, tables: dict, pts: _InputPoints, kinds: dict,
            rng: random.Random, rep: RecheckReport, deg_memo: dict, shared: list) -> str | None:
    nf = ob["normal"].get(str(i))
    if nf is None:
        return "no normal forms recorded"
    for side, term, root, bits in (("candidate", c, nf["candidate_term"], ob.get("candidate_bits")),
                                   ("reference", r, nf["reference_term"], ob.get("reference_bits"))):
        if term >= 0 and root != term:
            return f"the {side}'s normal form is of term #{root}, its output is term #{term}"
        if term < 0:  # a concrete output: its normal form's term must be the constant of those bits
            got = kinds.get(root)
            if got is None or got[0] != "CONST" or bits is None or got[1] != bits[i]:
                return f"the {side}'s concrete value is not the constant term #{root}"
    # (A) the same rational function over free atoms, in GF(p): at the certificate's shared random point
    # (its let-atoms and polynomials evaluated once), or a fresh one where a denominator vanishes there
    for attempt in range(4):
        pt = shared[0] if attempt == 0 else FieldPoint(tables, rng)
        try:
            a, b = pt.nf(nf["candidate"]), pt.nf(nf["reference"])
            break
        except Degenerate:
            continue
    else:
        return "every random point of GF(p) made a denominator vanish"
    if a != b:
        return "the two normal forms are different rational functions (they differ at a random point of GF(p))"
    rep.degree_sum += degree(tables, nf["candidate"], deg_memo) + degree(tables, nf["reference"], deg_memo)
    # (B) each normal form is its term's function, at random real inputs
    done, k, excluded = 0, 0, None
    while done < pts.need:
        point = pts.at(k)
        if point is None:
            return (f"{k} random input points evaluated {done}: the others read values the verdict's assumptions "
                    f"exclude ({excluded})")
        tv, nv = point
        got_all = []
        for side in ("candidate", "reference"):
            try:
                want = tv.get(int(nf[f"{side}_term"]))
                got = nv.nf(nf[side])
            except Excluded as e:
                excluded = e
                break
            except Unevaluable as e:
                return f"the {side}'s term and normal form could not be re-evaluated: {e}"
            except (ZeroDivisionError, ValueError, OverflowError) as e:
                return f"the {side}'s normal form has no value at input point {k}: {e}"
            got_all.append((side, want, got))
        else:
            for side, want, got in got_all:
                if isinstance(want, bool) or not close(want, got):
                    return (f"the {side}'s normal form is not its term's value at input point {k} "
                            f"(term {_short(want)}, normal form {_short(got)})")
            done += 1
        k += 1
    return None


def _short(v) -> str:
    try:
        import mpmath

        return mpmath.nstr(v, 12)
    except (TypeError, ValueError):
        return str(v)
