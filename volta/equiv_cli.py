"""`volta check --equivalence`: is a candidate PTX the same function as its reference?

Two forms:
- `volta check CAND.ptx --contract NAME --equivalence [--reference-arch ARCH]`: the reference is
  Triton's PTX for the contract (any target; default: the one nearest the candidate's `.target`),
  both launched as the contract says;
- `volta check CAND.ptx --reference REF.ptx [--launch C.json] [--reference-launch R.json]`: two
  PTX kernels, each with its own launch (a tiled kernel and a naive one, one thread per element and
  one warp per row); buffers are matched by name. A buffer spec may say `"role": "in" | "out" |
  "inout"` (default: `in` for `init: random` or `data`, else `out`) and `"tolerance": [rtol, atol]`.

Both kernels run in check mode (the candidate's safety verdict comes first: a race is reported as
such); when both are race free, a concrete differential test (proofs/differential.py: both on the
emulator, the first draw) may answer `not_equivalent` at once with the emulated outputs as witness;
otherwise proofs/ discharges one obligation per output element. A suspect element becomes
`not_equivalent` only with an input on which the emulated outputs differ beyond the tolerance;
otherwise the verdict is `inconclusive`, saying what was not proved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ptx_parser import parse_file

__all__ = ["check_equivalence", "run_equivalence", "spec_kernel", "EquivalenceQuestion"]

_SPEC_FORMATS = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16", "float8_e4m3": "e4m3",
                 "float8_e5m2": "e5m2"}
_SPEC_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64, "uint64": 64}
#: Default (rtol, atol) per element format when a launch spec gives none (those of the contracts).
_DEFAULT_TOL = {"f32": (1e-5, 1e-6), "f16": (2e-3, 1e-5), "bf16": (1.6e-2, 1e-5), "f64": (1e-12, 1e-300),
                "e4m3": (1.25e-1, 1e-3), "e5m2": (2.5e-1, 1e-3)}


#: Said when the reference races only by replicated stores (proofs.equivalence.Side.replicated_stores_only).
REPLICATED_REFERENCE = (
    "the reference races (several warps store one value to the same shared bytes in one instruction, "
    "unordered: a data race by PTX 8.7.1); the proof reads those bytes as that value, which a later read "
    "returns whichever store it reads from, assuming the stores overlap completely (a uniform-size data race, "
    "8.7.2, where the coherence axioms hold, 8.9.6, 8.10.1): ")


@dataclass
class EquivalenceQuestion:
    """Two kernels to compare and how to look for a counterexample."""

    candidate: object  # proofs.prove.KernelUnderTest
    reference: object
    draws: Callable[[], list]  # () -> [proofs.witness.Draw]
    tolerance: Callable[[str], object]  # buffer name -> proofs.witness.Tolerance
    reference_name: str
    modules: dict  # label -> parsed module (for witness sites)


# ---------------------------------------------------------------------- launch specs

def _spec_of(path: Path, launch_path: Path | None) -> dict:
    from symexec.launch import LaunchError

    from .check_cli import header

    if launch_path is not None:
        try:
            return json.loads(launch_path.read_text())
        except json.JSONDecodeError as e:
            raise LaunchError(f"{launch_path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    hdr = header(path)
    if "launch" in hdr:
        try:
            return json.loads(hdr["launch"])
        except json.JSONDecodeError as e:
            raise LaunchError(f"{path}: '// launch:' header is not valid JSON: {e.msg} (col {e.colno})") from None
    sidecar = path.with_suffix(".json")
    if sidecar.exists():
        return json.loads(sidecar.read_text())
    raise LaunchError(f"{path}: no launch given (use --launch/--reference-launch, a '// launch: {{...}}' header or "
                      f"{sidecar.name})")


def _buffer_info(name: str, b: dict):
    from semantics.terms import bits_sort, float_sort
    from symexec.check.termshadow import GlobalInfo
    from symexec.launch import LaunchError

    dt = b.get("dtype", "float32")
    role = b.get("role")
    if role is None:
        role = "in" if b.get("init") == "random" or "data" in b else "out"
    if role not in ("in", "out", "inout"):
        raise LaunchError(f"buffers.{name}.role: expected in, out or inout, got {role!r}")
    if dt in _SPEC_FORMATS:
        fmt = _SPEC_FORMATS[dt]
        sort = float_sort(fmt)
        from semantics.formats import get_format

        eb = get_format(fmt).bits // 8
    elif dt in _SPEC_BITS:
        sort, eb = bits_sort(_SPEC_BITS[dt]), _SPEC_BITS[dt] // 8
    else:
        raise LaunchError(f"buffers.{name}.dtype: unknown dtype {dt!r}")
    return GlobalInfo(name, sort, eb, role in ("in", "inout"))


def spec_kernel(path: Path, label: str, launch_path: Path | None = None, entry: str | None = None):
    """(KernelUnderTest, spec, module) of a PTX file and its launch spec."""
    from proofs.prove import KernelUnderTest
    from symexec import load_program
    from symexec.launch import spec_to_launch

    from .check_cli import header

    module = parse_file(path)
    spec = _spec_of(path, launch_path)
    launch = spec_to_launch(spec, str(launch_path or path))
    name = entry or header(path).get("entry") or launch.kernel or \
        (module.kernels[0].name if len(module.kernels) == 1 else None)
    prog = load_program(module, name)
    infos = {n: _buffer_info(n, b) for n, b in spec.get("buffers", {}).items()}
    return KernelUnderTest(label, prog, launch, infos), spec, module


def _spec_draws(specs: list[dict], infos: dict, count: int = 8) -> list:
    """Input draws for launch-spec kernels: seeded normals (and positive, and small integers) per
    input buffer, the same for both kernels. An integer buffer's `"draw_range": [lo, hi]` draws its
    elements from lo..hi-1 (labels of a row of C columns: [0, C)); it shapes the witness search's
    inputs only, never what is proved (the proof is over every input)."""
    from proofs.witness import Draw
    from semantics.formats import get_format, round_f64
    from semantics.terms import SORTS, Kind

    sizes = {}
    ranges: dict[str, tuple[int, int]] = {}
    for spec in specs:
        for n, b in spec.get("buffers", {}).items():
            if n in infos and infos[n].symbolic:
                shape = b.get("shape") if "shape" in b else [len(b["data"])]
                sizes[n] = int(np.prod(shape if isinstance(shape, list) else [shape]))
                if "draw_range" in b:
                    lo, hi = (int(v) for v in b["draw_range"])
                    ranges[n] = (lo, hi)
    draws = []
    given = _given_data(specs, sizes)
    if given is not None:  # the values the launch spec gives: the user's own input comes first
        draws.append(given)
        count -= 1
    patterns = ["normal", "positive", "normal", "wide", "normal", "positive", "ones", "normal"]
    for k, pattern in enumerate(patterns[:count]):
        rng = np.random.default_rng(1000 + k)
        bufs = {}
        for n, size in sizes.items():
            s = SORTS[infos[n].sort]
            if s.kind is Kind.FLOAT:
                x = rng.standard_normal(size)
                if pattern == "positive":
                    x = np.abs(x) + 0.5
                elif pattern == "wide":
                    x = x * 2.0 ** rng.integers(-8, 8, size)
                elif pattern == "ones":
                    x = 1.0 + rng.integers(0, 8, size) * 2.0 ** -10
                bits = round_f64(x, get_format(s.fmt), "rn")
                bufs[n] = np.ascontiguousarray(bits.astype(get_format(s.fmt).dtype))
            else:
                dt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[s.width]
                if n in ranges:  # two's complement words of lo..hi-1
                    v = rng.integers(*ranges[n], size)
                    bufs[n] = np.array([int(x) % (1 << s.width) for x in v], dtype=dt)
                else:
                    bufs[n] = rng.integers(0, 1 << min(s.width, 16), size).astype(dt)
        draws.append(Draw(f"generated inputs: pattern {pattern}, seed {1000 + k}", bufs))
    return draws


def _given_data(specs: list[dict], sizes: dict[str, int]):
    """A draw of the `data` the launch specs give for their input buffers (the first spec that gives a
    buffer's data wins; converted as the launch converts it: symexec.launch.make_buffer), or None when no
    input buffer has data. Buffers without data keep each launch's own bytes (Draw.buffers falls back)."""
    from proofs.witness import Draw
    from symexec.launch import make_buffer

    bufs = {}
    for n in sizes:
        b = next((spec["buffers"][n] for spec in specs if "data" in spec.get("buffers", {}).get(n, {})), None)
        if b is not None:
            bufs[n] = np.ascontiguousarray(make_buffer(n, b).reshape(-1))
    return Draw("the launch's own data", bufs) if bufs else None


def _spec_tolerance(specs: list[dict], infos: dict):
    from proofs.witness import Tolerance
    from semantics.terms import SORTS

    def tol(name: str) -> Tolerance:
        for spec in specs:
            b = spec.get("buffers", {}).get(name, {})
            if "tolerance" in b:
                rtol, atol = b["tolerance"]
                return Tolerance(float(rtol), float(atol))
        s = SORTS[infos[name].sort]
        return Tolerance(*_DEFAULT_TOL.get(s.fmt or "", (0.0, 0.0)))

    return tol


def _check_buffers(cand, ref) -> None:
    from symexec.launch import LaunchError

    for n, info in ref.buffers.items():
        other = cand.buffers.get(n)
        if info.symbolic and other is None:
            raise LaunchError(f"the reference reads buffer {n!r}, which the candidate's launch does not have")
        if other is not None and (other.sort != info.sort or other.symbolic != info.symbolic):
            raise LaunchError(f"buffer {n!r}: the two launches give it different element types or roles")
        if other is not None and info.symbolic and cand.launch.buffers[n].nbytes != ref.launch.buffers[n].nbytes:
            raise LaunchError(f"buffer {n!r}: {cand.launch.buffers[n].nbytes} bytes in the candidate's launch, "
                              f"{ref.launch.buffers[n].nbytes} in the reference's")


def question(candidate: Path, *, contract: str | None = None, reference: Path | None = None,
             launch_path: Path | None = None, reference_launch: Path | None = None, arch: str | None = None,
             reference_arch: str | None = None, instance: str = "verify", entry: str | None = None
             ) -> EquivalenceQuestion:
    """The equivalence question of the CLI's options (raises for bad input)."""
    if reference is not None:
        cand, cspec, cmod = spec_kernel(candidate, "candidate", launch_path, entry)
        ref, rspec, rmod = spec_kernel(reference, "reference", reference_launch)
        _check_buffers(cand, ref)
        infos = {**ref.buffers, **cand.buffers}
        return EquivalenceQuestion(cand, ref, lambda: _spec_draws([cspec, rspec], infos),
                                   _spec_tolerance([cspec, rspec], infos), str(reference),
                                   {"candidate": cmod, "reference": rmod})
    if contract is None:
        raise ValueError("--equivalence needs --contract NAME (Triton's PTX is the reference) or --reference REF.ptx")
    from harness import suite
    from harness.equivalence import contract_draws, contract_kernel, contract_tolerance, triton_kernel

    from harness.candidate import nearest_arch

    try:
        c = suite.get(contract)
    except suite.SuiteError as e:
        raise ValueError(str(e)) from None
    module = parse_file(candidate)
    if arch is None:
        target = module.arch or "sm_90a"
        arch = nearest_arch(int("".join(ch for ch in target[3:] if ch.isdigit()) or 90), c.min_arch)
    ref_arch = reference_arch or arch
    cand = contract_kernel(c, module, arch, instance, entry, source=candidate)
    ref = triton_kernel(c, ref_arch, instance)
    return EquivalenceQuestion(cand, ref, lambda: contract_draws(c, instance), lambda n: contract_tolerance(c, n),
                               f"Triton's {ref_arch} build of contract {contract}",
                               {"candidate": module, "reference": ref.prog.module})


# ---------------------------------------------------------------------- the verdict

def check_equivalence(q: EquivalenceQuestion, kernel_label: str, certificate: Path | None = None):
    """Prove, look for a witness, and fold everything into one Report (symexec.check.findings);
    `certificate`: a directory to write the proof's certificate into when it is verified."""
    from proofs.equivalence import Outcome
    from proofs.precision import precision_findings
    from proofs.prove import prove
    from proofs.witness import search, suspects_by_buffer
    from symexec.check.findings import Finding, Report, Verdict
    from symexec.machine import FindingKind

    safety, early, differential_stats = _differential_first(q, kernel_label)
    if early is not None:
        return early
    rep = prove(q.candidate, q.reference, keep_forms=certificate is not None, safety=safety)
    if differential_stats is not None:  # the safety checks ran before the test: their times are there
        rep.seconds = {**{k: v for k, v in differential_stats["seconds"].items() if k.startswith("check ")},
                       **rep.seconds}
    cand_check, ref_check = rep.checks["candidate"], rep.checks["reference"]
    res = rep.result
    out = Report(Verdict.VERIFIED, kernel_label)
    out.assumptions = list(cand_check.assumptions)
    out.stats = {"candidate": cand_check.stats, "reference": ref_check.stats,
                 "equivalence": {"reference": q.reference_name, "proofs": [p.__dict__ for p in res.proofs],
                                 "suspects": res.suspect_count, "term_nodes": len(rep.store), **res.stats,
                                 "seconds": rep.seconds}}
    if differential_stats is not None:
        out.stats["equivalence"]["differential"] = differential_stats
        skipped = differential_stats.get("skipped", [])
        if skipped:
            out.notes.append(f"concrete differential test: {len(skipped)} draw(s) skipped, an operand outside its "
                             f"format (first: {skipped[0]})" + ("" if differential_stats["draws"] else
                                                                 "; no draw ran, the proof alone decides"))
    if cand_check.outcome is not Verdict.RACE_FREE:  # the candidate's own safety first
        out.decide(cand_check.outcome, cand_check.reason)
        out.findings = cand_check.findings
        out.notes = cand_check.notes + [f"equivalence not decided: the candidate is {cand_check.verdict}"]
        return out
    replicated = rep.sides["reference"].replicated_stores_only
    if ref_check.outcome is not Verdict.RACE_FREE and not replicated:
        out.decide(Verdict.INCONCLUSIVE, f"the reference is {ref_check.verdict}")
        out.notes = [f"reference: {n}" for n in ref_check.notes] + [f.message for f in ref_check.findings[:2]]
        return out
    precision = precision_findings(rep)
    rep.precision = precision
    out.assumptions += [f"reference: {q.reference_name}"] + res.assumptions
    if replicated:
        out.assumptions.append(REPLICATED_REFERENCE + "; ".join(
            "; ".join(s.describe() for s in f.sites) for f in ref_check.findings[:2]))
    if res.outcome is Outcome.UNSUPPORTED:
        out.decide(Verdict.UNSUPPORTED, res.reason)
        out.notes += res.notes
        return out
    suspects = suspects_by_buffer(res.suspects, res.obligations)
    for p in precision:  # narrower rounding: its elements are suspects for the search
        suspects.setdefault(p.buffer, np.array([], np.int64))
        suspects[p.buffer] = np.union1d(suspects[p.buffer], p.elements)
    if not suspects:
        out.notes += [p.describe() for p in precision]
        if certificate is not None:
            _certify(rep, out, q, kernel_label, certificate)
        return out
    w = search(rep.store, (q.candidate, rep.sides["candidate"]), (q.reference, rep.sides["reference"]),
               {k: _sample(v) for k, v in suspects.items()}, q.draws(), q.tolerance)
    if w is not None:
        out.decide(Verdict.NOT_EQUIVALENT)
        why = next((s.why for s in res.suspects if s.buffer == w.buffer and s.element == w.element), None)
        if why is None:
            why = next((p.describe() for p in precision if p.buffer == w.buffer), "not proved equal")
        sites = _witness_sites(rep, q, w)
        out.findings = [Finding(FindingKind.NOT_EQUIVALENT, f"output {w.describe()} ({why})", sites,
                                {"witness": w.__dict__})]
        out.notes += [p.describe() for p in precision]
        return out
    out.decide(Verdict.INCONCLUSIVE, res.reason or (precision[0].describe() if precision else "not proved"))
    out.notes += [f"{s.buffer}[{s.element}]: {s.why}" + (f": candidate {s.candidate} | reference {s.reference}"
                                                         if s.candidate else "") for s in res.suspects[:4]]
    out.notes += [p.describe() for p in precision]
    out.notes.append("no input among the draws tried shows a difference beyond the tolerance")
    return out


def _differential_first(q: EquivalenceQuestion, kernel_label: str):
    """Both kernels' safety reports, then, when both are race free, the concrete differential test
    (proofs.differential): (safety reports by label, a not_equivalent Report or None, the test's
    statistics or None where it did not run). The candidate's
    safety verdict still comes first; a reference that races (even by replicated stores only) is left
    to the proof, which decides what its races mean."""
    import time

    from proofs.differential import differential
    from proofs.prove import safety_report
    from symexec.check.findings import Finding, Report, Verdict
    from symexec.machine import FindingKind

    seconds: dict[str, float] = {}
    safety = {}
    for k in (q.candidate, q.reference):
        t0 = time.perf_counter()
        safety[k.label] = safety_report(k)
        seconds[f"check {k.label}"] = round(time.perf_counter() - t0, 3)
    if any(r.outcome is not Verdict.RACE_FREE for r in safety.values()):
        return safety, None, None
    t0, c0 = time.perf_counter(), time.process_time()
    d = differential(q.candidate, q.reference, q.draws(), q.tolerance)
    seconds["differential"] = round(time.perf_counter() - t0, 3)
    seconds["differential cpu"] = round(time.process_time() - c0, 3)
    diff_stats = {"draws": d.draws_tried, "differs": d.witness is not None, "seconds": seconds}
    if d.skipped:  # draws whose operands the formats exclude (semantics.errors.OutsideFormat)
        diff_stats["skipped"] = [f"{label}: {why}" for label, why in d.skipped]
    if d.witness is None:
        return safety, None, diff_stats
    w = d.witness
    cand_check, ref_check = safety["candidate"], safety["reference"]
    out = Report(Verdict.NOT_EQUIVALENT, kernel_label)
    out.assumptions = list(cand_check.assumptions) + [f"reference: {q.reference_name}"]
    out.stats = {"candidate": cand_check.stats, "reference": ref_check.stats,
                 "equivalence": {"reference": q.reference_name, "proofs": [], "suspects": 0, "term_nodes": 0,
                                 "differential": diff_stats, "seconds": seconds}}
    sites = _sites_of_writers(q, w, d.writers)
    out.findings = [Finding(FindingKind.NOT_EQUIVALENT, f"output {w.describe()} ({w.why})", sites,
                            {"witness": w.__dict__})]
    out.notes.append("decided by the concrete differential test: no output term was built or compared")
    return safety, out, diff_stats


def _sites_of_writers(q: EquivalenceQuestion, w, writers: dict[str, int]) -> list:
    """The store that last wrote the witness element in each kernel's emulator run."""
    from symexec.check.findings import site_for
    from symexec.check.run import _thread_of

    sites = []
    for label, k in (("candidate", q.candidate), ("reference", q.reference)):
        code = writers.get(label, -1)
        if code < 0:
            continue
        pc, row = code >> 32, code & 0xFFFFFFFF
        lpc = -(-k.launch.threads_per_block // 32) * 32
        cta, thread = _thread_of(k.launch, lpc, row)
        sites.append(site_for(k.prog.module, k.prog.code[pc], cta, thread, access=f"{label} write",
                              address=f"{w.buffer}[{w.element}]", space=".global"))
    return sites


def _certify(rep, out, q: EquivalenceQuestion, kernel_label: str, certificate: Path) -> None:
    """Write the certificate of a verified proof (proofs/certificate.py) and say so in the notes."""
    import time

    from proofs.certificate import CertificateError, write_certificate

    t0, c0 = time.perf_counter(), time.process_time()
    try:
        manifest = write_certificate(rep, certificate, kernels={"candidate": kernel_label,
                                                                "reference": q.reference_name},
                                     assumptions=out.assumptions)
    except (CertificateError, OSError) as e:
        out.notes.append(f"no certificate written: {e}")
        return
    rep.seconds["certificate"] = round(time.perf_counter() - t0, 3)
    rep.seconds["certificate cpu"] = round(time.process_time() - c0, 3)
    out.stats["equivalence"]["certificate"] = {"directory": str(certificate), "counts": manifest["counts"],
                                               "lemmas": len(manifest["lemmas"])}
    out.notes.append(f"certificate written to {certificate} (re-check it: volta recheck {certificate})")


def _sample(elems: np.ndarray, limit: int = 4096) -> np.ndarray:
    if elems.size <= limit:
        return elems
    return elems[np.linspace(0, elems.size - 1, limit).astype(np.int64)]


def _witness_sites(rep, q: EquivalenceQuestion, w) -> list:
    """The store that last wrote the element, in each kernel."""
    from symexec.check.findings import site_for
    from symexec.check.run import _thread_of

    sites = []
    for label, k in (("candidate", q.candidate), ("reference", q.reference)):
        o = rep.sides[label].outputs.get(w.buffer)
        if o is None:
            continue
        i = int(np.searchsorted(o.elements, w.element))
        if i >= o.elements.size or o.elements[i] != w.element or o.writer[i] < 0:
            continue
        pc, row = int(o.writer[i]) >> 32, int(o.writer[i]) & 0xFFFFFFFF
        lpc = -(-k.launch.threads_per_block // 32) * 32
        cta, thread = _thread_of(k.launch, lpc, row)
        ins = k.prog.code[pc]
        sites.append(site_for(k.prog.module, ins, cta, thread, access=f"{label} write",
                              address=f"{w.buffer}[{w.element}]", space=".global"))
    return sites


def run_equivalence(candidate: Path, *, contract: str | None = None, reference: Path | None = None,
                    launch_path: Path | None = None, reference_launch: Path | None = None, arch: str | None = None,
                    reference_arch: str | None = None, instance: str = "verify", entry: str | None = None,
                    timeout: float | None = None, certificate: Path | None = None):
    """The CLI's equivalence check: a Report (raises for bad input); a verified proof's certificate is
    written into `certificate` when given."""
    from symexec import ExecError, Unsupported, time_limit
    from symexec.check.findings import Report, Verdict

    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    q = question(candidate, contract=contract, reference=reference, launch_path=launch_path,
                 reference_launch=reference_launch, arch=arch, reference_arch=reference_arch, instance=instance,
                 entry=entry)
    label = f"{candidate}:{q.candidate.prog.function.name}"
    try:
        with time_limit(timeout):
            report = check_equivalence(q, label, certificate)
    except Unsupported as e:
        report = Report(Verdict.UNSUPPORTED, label, str(e).removeprefix("unsupported: "))
    except ExecError as e:
        at = f" at {e.ins.span}" if getattr(e, "ins", None) is not None and e.ins.span else ""
        report = Report(Verdict.INCONCLUSIVE, label, f"{e.message if hasattr(e, 'message') else e}{at}")
    if certificate is not None and "certificate" not in report.stats.get("equivalence", {}):
        report.notes.append(f"no certificate written: the verdict is {report.verdict}")
    return report
