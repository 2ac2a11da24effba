"""Certificates of an equivalence proof: every obligation written out for `volta recheck` to re-validate.

`volta check CAND.ptx --reference REF.ptx --certificate DIR` (or `--contract NAME --equivalence`) writes,
for a `verified` verdict, a directory that a fresh process can check without running the executor
and without trusting proofs/normal.py (proofs/recheck/ is the independent checker; the format is
documented in docs/certificates.md):

- manifest.json: format name and version, the verdict and every assumption printed with it, the
  kernels, per-buffer counts, the lemmas (SMT-LIB file, expected result), the uninterpreted functions
  the normal forms use, the precision check's findings, and the SHA-256 of every other file;
- obligations.json: per output buffer, the elements each kernel wrote and, per element, how its
  obligation was discharged (identical term, equal concrete bits, equal normal forms) with both terms;
- terms.json: the term DAG below the normal-form obligations (op, sort, constant bits / input element /
  modifiers, children);
- normal.json: both sides' normal forms of each normal-form obligation, as polynomials over atoms, and
  the atoms' definitions (input leaves, exp2 of a polynomial, max/min of normal forms, indicators,
  uninterpreted applications, let-atoms);
- lemmas/NNNN.smt2: each bit-level lemma (proofs/lemmas.py) as the SMT-LIB 2 script of its negated claim
  (a `support` lemma's script states the whole table of its term, so the recheck's solver checks the table);
  lemmas/ieee-FMT-TEMPLATE.smt2: the IEEE 754 fact its template stands on (sign-bit xor is negation, ...),
  in SMT-LIB floating point, so that the recheck's solver proves it too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import fields
from fractions import Fraction
from pathlib import Path

import numpy as np

from semantics.formats import get_format
from semantics.terms import CONCRETE, SORTS, Kind, Mods, Op, TermStore, mods

from .equivalence import METHOD_CODES, Method, Outcome, _as_term
from .normal import AtomKind, Inf, Normalizer, Rat

__all__ = ["FORMAT", "VERSION", "write_certificate", "empty_directory", "ieee_fact", "ieee_template",
           "CertificateError"]

FORMAT = "volta-equivalence-certificate"
VERSION = 1
_METHOD_NAMES = {code: m.name.lower() for m, code in METHOD_CODES.items()}  # identical, concrete, normal_form, ...


class CertificateError(Exception):
    """The proof cannot be written as a certificate (not verified, or the directory is not empty)."""


def write_certificate(rep, out: Path, *, kernels: dict[str, str], assumptions: list[str]) -> dict:
    """Write the certificate of `rep` (a proofs.prove.EquivalenceReport) into directory `out` (created;
    it must not exist or be empty). Returns the manifest."""
    res = rep.result
    if res.outcome is not Outcome.VERIFIED:
        raise CertificateError(f"no certificate: the equivalence verdict is {res.verdict}")
    out = empty_directory(Path(out))
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _write(rep, out, kernels, assumptions)
    except BaseException:  # nothing half-written stays behind (the directory was new or empty)
        if created:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for p in list(out.iterdir()):
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
        raise


def _write(rep, out: Path, kernels: dict[str, str], assumptions: list[str]) -> dict:
    res = rep.result
    T, N = rep.store, rep.normalizer
    writer = _NormalWriter(N)
    obligations, roots = [], []
    for name, elems, ct, rt, codes in res.obligations:
        sides = {lab: rep.sides[lab].outputs.get(name) for lab in ("candidate", "reference")}
        entry = {"buffer": name, "written": {lab: (o.elements.tolist() if o is not None else [])
                                             for lab, o in sides.items()},
                 "elements": elems.tolist(), "method": [_METHOD_NAMES.get(int(c), "unproved") for c in codes],
                 "candidate": ct.tolist(), "reference": rt.tolist(), "normal": {}}
        conc = (ct == CONCRETE) | (rt == CONCRETE)
        if conc.any():
            o_c, o_r = sides["candidate"], sides["reference"]
            cb = o_c.bits[np.searchsorted(o_c.elements, elems)]
            rb = o_r.bits[np.searchsorted(o_r.elements, elems)]
            entry["candidate_bits"] = [int(b) if t == CONCRETE else None for b, t in zip(cb.tolist(), ct.tolist())]
            entry["reference_bits"] = [int(b) if t == CONCRETE else None for b, t in zip(rb.tolist(), rt.tolist())]
        # an element the prover took as an instance of a proved one (input elements renamed) is written
        # with its own normal forms, which the recheck compares like any other
        inst = codes == METHOD_CODES[Method.INSTANCE]
        if inst.any():
            entry["method"] = ["normal_form" if k else m for m, k in zip(entry["method"], inst.tolist())]
        nf_idx = np.nonzero((codes == METHOD_CODES[Method.NORMAL_FORM]) | inst)[0]
        if nf_idx.size:
            o_c, o_r = sides["candidate"], sides["reference"]
            sort = o_c.sort
            cb = o_c.bits[np.searchsorted(o_c.elements, elems[nf_idx])]
            rb = o_r.bits[np.searchsorted(o_r.elements, elems[nf_idx])]
            croot = _as_term(T, ct[nf_idx], cb, sort)
            rroot = _as_term(T, rt[nf_idx], rb, sort)
            kept = dict(rep.forms or {})
            todo = [j for j, i in enumerate(nf_idx.tolist()) if (name, i) not in kept]
            if todo:  # not kept by the proof (instances, or no keep_forms): normalised here (memoised)
                nfs = N.of(np.concatenate([croot[todo], rroot[todo]]))
                for n, j in enumerate(todo):
                    kept[(name, int(nf_idx[j]))] = (nfs[n], nfs[len(todo) + n])
            for j, i in enumerate(nf_idx.tolist()):
                x, y = kept[(name, i)]
                entry["normal"][str(i)] = {"candidate_term": int(croot[j]), "reference_term": int(rroot[j]),
                                           "candidate": writer.nf(x), "reference": writer.nf(y)}
            roots += [croot, rroot]
        obligations.append(entry)
    lemmas = []
    (out / "lemmas").mkdir()
    scripts: dict[str, str] = {}  # one file per distinct script (lemmas of many elements are often one claim)
    for lem in N.lemmas:
        path = scripts.get(lem.smt2)
        if path is None:
            path = scripts[lem.smt2] = f"lemmas/{len(scripts):04d}.smt2"
            (out / path).write_text(lem.smt2)
        lemmas.append({"kind": "term", "file": path, "expected": lem.result, "term": lem.term, "source": lem.source,
                       "fmt": lem.fmt, "template": lem.template,
                       "claim": f"bits(#{lem.term}) = its table over the input leaves it reads (the first "
                                f"#{lem.source}), for every value of every input leaf" if lem.template == "support"
                       else f"bits(#{lem.term}) = {lem.template} of bits(#{lem.source}), every bit pattern",
                       "assumption": lem.assumption})
        roots.append(np.array([lem.term, lem.source], np.int64))
    facts = {(m["fmt"], ieee_template(m["template"])) for m in lemmas}
    for fmt, template in sorted(f for f in facts if f[1] is not None):
        claim, text = ieee_fact(fmt, template)
        path = f"lemmas/ieee-{fmt}-{template.replace(':', '')}.smt2"
        (out / path).write_text(text)
        scripts[text] = path
        lemmas.append({"kind": "ieee", "file": path, "expected": "unsat", "fmt": fmt, "template": template,
                       "claim": claim})
    files = {
        "obligations.json": {"obligations": obligations},
        "terms.json": {"nodes": _terms(T, np.concatenate(roots) if roots else np.zeros(0, np.int64))},
        "normal.json": writer.tables(),
    }
    for fname, data in files.items():
        (out / fname).write_text(json.dumps(data, separators=(",", ":")))
    counts: dict[str, int] = {}
    for o in obligations:
        for m in o["method"]:
            counts[m] = counts.get(m, 0) + 1
    manifest = {
        "format": FORMAT, "version": VERSION, "verdict": res.outcome.value, "kernels": kernels,
        "assumptions": assumptions, "counts": counts,
        "buffers": {o["buffer"]: len(o["elements"]) for o in obligations},
        "lemmas": lemmas,
        "uninterpreted": sorted({a["fn"] for a in writer.atoms.values() if a["kind"] == "APP"}),
        "precision": [p.describe() for p in rep.precision],
        "files": {p: _sha256(out / p) for p in sorted(list(files) + list(scripts.values()))},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def ieee_template(template: str) -> str | None:
    """The template of the IEEE 754 fact a lemma of `template` stands on, None for none: `identity`
    reads the same bits; `support` is a claim about bits only (a bit-level term equals a table); a
    sign selection xors a float's sign bit, so it stands on the negation fact (`neg`)."""
    if template in ("identity", "support"):
        return None
    if template == "sign-select":
        return "neg"
    return template


def ieee_fact(fmt_name: str, template: str) -> tuple[str, str]:
    """The IEEE 754 fact a bit-level lemma's template stands on, for every encoding x of the format, in
    SMT-LIB 2 floating point (negated: unsat proves it), proved here with Z3: the sign-bit operations
    (IEEE 754-2008 5.5.1: negate, abs) and, for an exponent-field add of k, multiplication by 2^k while
    the exponent stays normal (5.3.3 scaleB). Returns (the claim in words, the script)."""
    import z3

    fmt = get_format(fmt_name)
    if fmt.shift or fmt.bits != 1 + fmt.ebits + fmt.mbits:
        raise CertificateError(f"no IEEE 754 interchange format for {fmt_name}")
    w = fmt.bits
    x = z3.BitVec("x", w)
    S = z3.FPSort(fmt.ebits, fmt.mbits + 1)
    fx = z3.fpBVToFP(x, S)
    sign = 1 << (w - 1)
    if template == "neg":
        claim, c = "float(x xor sign bit) = -x", z3.fpBVToFP(x ^ sign, S) == z3.fpNeg(fx)
    elif template == "abs":
        claim, c = "float(x and not sign bit) = |x|", z3.fpBVToFP(x & (sign - 1), S) == z3.fpAbs(fx)
    elif template == "negabs":
        claim, c = "float(x or sign bit) = -|x|", z3.fpBVToFP(x | sign, S) == z3.fpNeg(z3.fpAbs(fx))
    elif template.startswith("scale:"):
        k = int(template.split(":")[1])
        e = z3.Extract(fmt.ebits + fmt.mbits - 1, fmt.mbits, x)
        lo, hi = 1, (1 << fmt.ebits) - 2
        ok = z3.And(z3.UGE(e, max(lo, lo - k)), z3.ULE(e, min(hi, hi - k)))
        t = x + (k << fmt.mbits) if k >= 0 else x - ((-k) << fmt.mbits)
        claim = f"float(x + ({k} << {fmt.mbits})) = x * 2^{k} when both exponents are normal"
        c = z3.Implies(ok, z3.fpBVToFP(t, S) == z3.fpMul(z3.RNE(), fx, z3.FPVal(2.0 ** k, S)))
    else:
        raise CertificateError(f"no IEEE 754 fact for lemma template {template!r}")
    s = z3.Solver()
    s.set("timeout", 60_000)
    s.add(z3.Not(c))
    if s.check() != z3.unsat:
        raise CertificateError(f"Z3 did not prove the IEEE 754 fact {claim} for {fmt_name}")
    return f"every {fmt_name} encoding x: {claim}", s.to_smt2()


def empty_directory(out: Path) -> Path:
    """`out` when it does not exist or is an empty directory (a certificate never overwrites anything)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CertificateError(f"--certificate {out}: exists and is not an empty directory (never overwritten)")
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _coef(c) -> str:
    return str(c) if isinstance(c, int) else str(Fraction(c))


class _NormalWriter:
    """Serialises the normal forms an obligation uses, with every atom, polynomial and key they reach."""

    def __init__(self, N: Normalizer) -> None:
        self.N = N
        self.atoms: dict[int, dict] = {}
        self.polys: dict[int, list] = {}
        self.keys: dict[int, dict] = {}

    def tables(self) -> dict:
        return {"atoms": {str(k): v for k, v in self.atoms.items()},
                "polys": {str(k): v for k, v in self.polys.items()},
                "keys": {str(k): v for k, v in self.keys.items()}}

    def nf(self, x) -> dict:
        if isinstance(x, Inf):
            return {"inf": x.sign}
        assert isinstance(x, Rat)
        if x.den is not None:
            self._poly(x.den)
        return {"num": self._terms(x.num), "den": x.den}

    def _terms(self, p: dict) -> list:
        out = []
        for mono, c in p.items():
            for i in range(0, len(mono), 2):
                self._atom(mono[i])
            out.append([list(mono), _coef(c)])
        return out

    def _poly(self, pid: int) -> int:
        if pid not in self.polys:
            self.polys[pid] = []  # reserved first: atoms inside may come back here
            self.polys[pid] = self._terms(self.N.polys[pid])
        return pid

    def _key(self, k: int) -> int:
        if k not in self.keys:
            self.keys[k] = {}
            self.keys[k] = self.nf(self.N.key_nf[k])
        return k

    def _atom(self, a: int) -> None:
        if a in self.atoms:
            return
        kind, payload = self.N.atoms[a]
        self.atoms[a] = {"kind": kind.name}
        if kind in (AtomKind.LEAF, AtomKind.TERM):
            d = {"term": int(payload[0])}
        elif kind is AtomKind.INT:
            t = payload[0]
            d = {"term": int(t), "signed": bool(payload[1])} if isinstance(t, (int, np.integer)) else \
                {"values": [int(v) for v in t[2]], "leaves": [int(v) for v in t[1]]}
        elif kind is AtomKind.EXP2:
            d = {"poly": self._poly(payload[0])}
        elif kind in (AtomKind.MAX, AtomKind.MIN):
            d = {"args": sorted(self._key(k) for k in payload[0])}
        elif kind is AtomKind.IND:
            c = payload[0]
            if c[0] in ("gt", "eq"):
                d = {"cond": c[0], "poly": self._poly(c[1])}
            elif c[0] == "table":
                d = {"cond": "table", "leaves": [int(v) for v in c[1]],
                     "table": np.frombuffer(c[2], np.uint64).astype(int).tolist()}
            else:
                t = c[1]
                if isinstance(t, (int, np.integer)):
                    d = {"cond": "term", "term": int(t)}
                elif t[0] == "cmp":  # a comparison of wide bit-vectors (proofs/normal.py `_bits_cmp`)
                    d = {"cond": "cmp", "cmp": str(t[1]), "signed": bool(t[2]),
                         "a": _cmp_operand(t[3]), "b": _cmp_operand(t[4])}
                else:
                    d = {"cond": "table", "leaves": [int(v) for v in t[1]],
                         "table": np.frombuffer(t[2], np.uint64).astype(int).tolist()}
        elif kind is AtomKind.APP:
            d = {"fn": payload[0], "args": [self._key(k) for k in payload[1:]]}
        elif kind is AtomKind.LET:
            d = {"nf": self._key(payload[0])}
        else:  # pragma: no cover - every AtomKind is listed above
            raise CertificateError(f"atom kind {kind!r}")
        self.atoms[a].update(d)


def _cmp_operand(x) -> dict:
    """An operand of a comparison indicator: a term, or ("value", v) (a constant of the other's width)."""
    if isinstance(x, tuple):
        return {"value": int(x[1])}
    return {"term": int(x)}


_DEFAULT_MODS = Mods()
_OP_BY_CODE = {int(o): o for o in Op}


def _terms(T: TermStore, roots: np.ndarray) -> list:
    """The DAG below `roots`, children first: [id, op, sort, aux, [kids]] with aux the constant's bits,
    the input's [buffer, element], or the non-default modifiers."""
    from semantics.termeval import subgraph

    nodes = subgraph(T, roots)
    ops, sorts, auxs = T.op[nodes].tolist(), T.sort[nodes].tolist(), T.aux[nodes].tolist()
    nk = T.nkids[nodes].astype(np.int64)
    starts = T._off.a[nodes]
    flat = T._kids.a[np.repeat(starts, nk) + (np.arange(int(nk.sum())) - np.repeat(np.cumsum(nk) - nk, nk))].tolist()
    ends = np.cumsum(nk).tolist()
    mods_json: dict[int, dict] = {}
    sort_names = [str(x) for x in SORTS]
    out, start = [], 0
    for j, i in enumerate(nodes.tolist()):
        op = _OP_BY_CODE[ops[j]]
        s = SORTS[sorts[j]]
        aux = auxs[j]
        if op is Op.CONST:
            a: object = aux & ((1 << s.width) - 1) if s.kind is not Kind.PRED else aux & 1
        elif op is Op.INPUT:
            a = list(T.input_name(aux))
        elif op is Op.OPAQUE:
            a = aux
        else:
            a = mods_json.get(aux)
            if a is None:
                m = mods(aux)
                a = mods_json[aux] = {f.name: (list(getattr(m, f.name)) if f.name == "elems" else getattr(m, f.name))
                                      for f in fields(m) if getattr(m, f.name) != getattr(_DEFAULT_MODS, f.name)}
        out.append([i, op.name, sort_names[sorts[j]], a, flat[start:ends[j]]])
        start = ends[j]
    return out
