"""Everything of the evaluation harness that needs a GPU, in one run on an H200 (issue 14):

1. the baseline table: Triton's own kernel of every suite contract the device can run, at its bench
   instance, autotuned over the declared config space (harness.judge.baseline), with the median,
   quartiles, run-to-run spread and the roofline floor;
2. the eval of candidate PTX files (harness.evaluate with a GPU: numerics with guard bands,
   compute-sanitizer, timing against the autotuned baseline, Nsight Compute);
3. the integrity cases of tests/integrity on the GPU (harness.judge.integrity), each checked
   against the reasons its header names for a GPU run.

    python3 bench/h200_eval.py --out OUT [--candidates examples/candidates] [--budget 420]
    python3 bench/h200_eval.py --plan          # what would run, no GPU needed

Writes OUT/h200_eval.json (every record, written after each item) and OUT/h200_eval.md (the
tables). The run keeps to ``--budget`` seconds: Triton configs are compiled ahead in parallel
processes (their on-disk cache is then hit), the baseline table gets up to 45% of the budget,
candidates up to 75% (cumulative), integrity the rest; each timing adapts its repetitions to a
per-comparison budget; an item that does not fit is recorded as skipped, never silently dropped.
Needs torch, triton, cuda-python (cuda-bindings) and this repository's dependencies (lark and
z3-solver travel as wheels: DEVELOPERS.md, "The GPU run", says how).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)

from harness import suite  # noqa: E402
from harness.judge import baseline as B  # noqa: E402
from harness.judge import integrity as I  # noqa: E402
from harness.judge import roofline as R  # noqa: E402
from harness.judge.pipeline import ALL_SANITIZERS, EvalOptions, evaluate  # noqa: E402
from harness.judge.report import to_jsonable  # noqa: E402
from harness.judge.timing import TimingPlan  # noqa: E402

BASELINE_PLAN = TimingPlan(warmup=3, min_reps=20, max_reps=100, budget_s=1.0, block=10)
CANDIDATE_PLAN = TimingPlan(warmup=5, min_reps=30, max_reps=200, budget_s=4.0, block=20)
INTEGRITY_DIR = ROOT / "tests" / "integrity"


def discover(paths: list[str]) -> list[tuple[Path, str]]:
    """(file, contract) of every candidate: ``// contract: NAME`` in its header, else its folder's name
    (examples/candidates/<contract>/x.ptx)."""
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.rglob("*.ptx")) if p.is_dir() else [p] if p.suffix == ".ptx" else []
    out = []
    names = set(suite.names())
    for f in files:
        head = f.read_text(errors="replace").splitlines()[:30]
        named = next((ln.split(":", 1)[1].strip() for ln in head if ln.strip().startswith("// contract:")), None)
        contract = named or f.parent.name
        if contract in names:
            out.append((f, contract))
        else:
            print(f"skip {f}: no suite contract named {contract!r}", flush=True)
    return out


def integrity_options(case: I.Case, seed: int) -> EvalOptions:
    """Every stage (keep going) except those the case skips on a GPU; timing only where the case
    expects a timing verdict; the case's own sanitizer tools; no profile."""
    timed = case.gpu_timing or bool(case.expect_gpu and {"impossible_speed", "clock_mismatch"} & case.expect_gpu)
    skip = set(case.gpu_skip) | {"profile"} | (set() if timed else {"timing"})
    if not case.gpu_sanitize:
        skip.add("sanitize")
    return EvalOptions(seed=seed, unseen=1, keep_going=True, skip=frozenset(skip), sanitizers=case.gpu_sanitize,
                       profile=False, timing=dataclasses.replace(CANDIDATE_PLAN, budget_s=1.0, max_reps=50))


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def runnable(capability: int) -> list[Any]:
    return [c for c in suite.all_contracts() if c.min_arch <= capability]


# ------------------------------------------------------------------------------------------ tables
def _ms(x: float | None) -> str:
    return f"{x:.4f}" if isinstance(x, (int, float)) else "-"


def markdown(results: dict[str, Any]) -> str:
    env = results.get("env", {})
    lines = [f"# Evaluation harness on {env.get('device', '?')} ({time.strftime('%Y-%m-%d')})", "",
             f"torch {env.get('torch')}, Triton {env.get('triton')}, cuda-python {env.get('cuda_python')}, ptxas "
             f"{env.get('ptxas')}, Python {env.get('python')}; command: `{env.get('command')}`; wall "
             f"{results.get('seconds', 0):.0f} s.", ""]
    rows = results.get("baselines", [])
    if rows:
        lines += ["## Baselines: Triton autotuned, bench instance", "",
                  "| contract | shape | best config | median ms | IQR | run-to-run | min ms | floor ms | floor/median |"
                  " configs |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            s = r.get("stats") or {}
            shape = ", ".join(f"{k}={v}" for k, v in (r.get("dims") or {}).items())
            med = s.get("median_ms")
            spread = f"{(s['q75_ms'] - s['q25_ms']) / med:.1%}" if med else "-"
            ratio = f"{r['floor_ms'] / med:.2f}" if med and r.get("floor_ms") else "-"
            tried = f"{sum(1 for t in r.get('tried', []) if t.get('median_ms') is not None)}/{len(r.get('tried', []))}"
            lines.append(f"| {r['contract']} | {shape} | {r.get('best', '-')} | {_ms(med)} | {spread} | "
                         f"{s.get('run_to_run', 0):.1%} | {_ms(s.get('min_ms'))} | {_ms(r.get('floor_ms'))} | {ratio} | "
                         f"{tried} |" if s else f"| {r['contract']} | {shape} | - | - | - | - | - | - | - | "
                         f"{r.get('error', r.get('skipped', ''))[:80]} |")
        lines.append("")
    cands = results.get("candidates", [])
    if cands:
        lines += ["## Candidates", "", "| candidate | contract | verdict | speedup [95%] | candidate ms | baseline ms |"
                  " rejected for | sanitizer | profile |", "|---|---|---|---|---|---|---|---|---|"]
        for c in cands:
            rep = c.get("report") or {}
            st = {s["stage"]: s for s in rep.get("stages", [])}
            t = (st.get("timing") or {}).get("detail") or {}
            sp = rep.get("speedup") or {}
            speed = f"{sp['value']:.3f} [{sp['low']:.3f}, {sp['high']:.3f}]" if sp else "-"
            reasons = sorted({p["reason"] for s in rep.get("stages", []) for p in s["problems"]
                              if p["severity"] == "reject"})
            lines.append(f"| {c['file']} | {c['contract']} | {rep.get('verdict', c.get('error', '-'))} | {speed} | "
                         f"{_ms((t.get('candidate') or {}).get('median_ms'))} | "
                         f"{_ms((t.get('baseline') or {}).get('median_ms'))} | {', '.join(reasons) or '-'} | "
                         f"{(st.get('sanitize') or {}).get('status', '-')} | {(st.get('profile') or {}).get('status', '-')} |")
        lines.append("")
    cases = results.get("integrity", [])
    if cases:
        ok = sum(1 for c in cases if c.get("ok"))
        lines += [f"## Integrity cases on the GPU: {ok} of {len(cases)} as expected", "",
                  "| case | exploit | expected | rejected for | as expected |", "|---|---|---|---|---|"]
        for c in cases:
            got = ", ".join(c.get("reasons", [])) or c.get("verdict", "-")
            verdict = "yes" if c.get("ok") else "NO: " + "; ".join(c.get("failures", []))[:200]
            lines.append(f"| {c['case']} | {c['integrity'][:60]} | {c['expected']} | {got} | {verdict} |")
        lines.append("")
    skipped = results.get("skipped", [])
    if skipped:
        lines += ["## Not run (time budget)", ""] + [f"- {s}" for s in skipped] + [""]
    return "\n".join(lines)


def _write(out: Path, results: dict[str, Any], started: float) -> None:
    results["seconds"] = time.monotonic() - started
    (out / "h200_eval.json").write_text(json.dumps(to_jsonable(results), indent=1))
    (out / "h200_eval.md").write_text(markdown(to_jsonable(results)))


# ------------------------------------------------------------------------------------------ phases
def _precompile(contracts: list[Any], space_limit: int, workers: int, deadline: float) -> list[str]:
    import concurrent.futures
    import multiprocessing

    jobs = [(c.name, "bench", cfg.num_warps, cfg.num_stages) for c in contracts for cfg in B.config_space(c, space_limit)]
    errors: list[str] = []
    ctx = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx)
    futures = [pool.submit(B._warm, j) for j in jobs]
    try:
        for f in concurrent.futures.as_completed(futures, timeout=max(deadline - time.monotonic(), 1)):
            if f.result():
                errors.append(f.result())
    except concurrent.futures.TimeoutError:
        errors.append(f"precompile stopped at its time limit: {sum(f.done() for f in futures)} of {len(jobs)} done")
    pool.shutdown(wait=False, cancel_futures=True)
    return errors


def main(argv: list[str] | None = None, session_factory: Any = None) -> int:
    """``session_factory``: makes the GPU session (tests pass a fake; default harness.judge.worker.GpuSession)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("h200_eval_out"))
    ap.add_argument("--candidates", nargs="*", default=[str(ROOT / "examples" / "candidates")])
    ap.add_argument("--contracts", nargs="*", help="baseline table for these only (default: every runnable one)")
    ap.add_argument("--budget", type=float, default=420.0,
                    help="seconds for the whole run (an item in progress may overrun it by its own length)")
    ap.add_argument("--space-limit", type=int, default=6, help="configs per contract in the autotuning space")
    ap.add_argument("--workers", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)),
                    help="processes compiling Triton configs ahead (0: compile on first launch)")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--no-integrity", action="store_true")
    ap.add_argument("--no-profile", action="store_true", help="no ncu lane for the candidates (about 20 s each)")
    ap.add_argument("--cases", nargs="*", help="integrity cases to run (default: all of tests/integrity)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plan", action="store_true", help="print what would run and exit (no GPU)")
    ap.add_argument("--export-references", type=Path, metavar="FILE",
                    help="write this machine's Triton builds of every contract (sm_90a, verify and bench) to FILE "
                         "and exit (no GPU); carry it and pass --references FILE on the GPU machine")
    ap.add_argument("--references", type=Path, metavar="FILE",
                    help="judge against these builds (harness.compile.BUNDLE_ENV) instead of the GPU machine's Triton")
    ns = ap.parse_args(argv)
    if ns.export_references:
        from harness.compile import export_bundle

        ns.export_references.parent.mkdir(parents=True, exist_ok=True)
        n = export_bundle(suite.all_contracts(), "sm_90a", ns.export_references)
        print(f"{n} builds written to {ns.export_references}")
        return 0
    if ns.references:
        from harness.compile import BUNDLE_ENV

        os.environ[BUNDLE_ENV] = str(ns.references.resolve())
    started = time.monotonic()
    deadline = started + ns.budget
    candidates = discover(ns.candidates)
    cases = [] if ns.no_integrity else [c for c in I.cases(INTEGRITY_DIR) if not ns.cases or c.name in ns.cases]
    if ns.plan:
        contracts = [c for c in runnable(90) if not ns.contracts or c.name in ns.contracts]
        print(f"baselines ({len(contracts)} contracts at bench, sm_90):")
        for c in contracts:
            space = B.config_space(c, ns.space_limit)
            print(f"  {c.name:<22} {B.describe_space(space):<55} H200 floor {R.floor(c, 'bench', R.H200).ms:.4f} ms")
        print(f"candidates ({len(candidates)}): " + ", ".join(f"{f.name} ({c})" for f, c in candidates))
        print(f"integrity cases ({len(cases)}): " + ", ".join(c.name for c in cases))
        print(f"budget {ns.budget:.0f} s: baselines to 45%, candidates to 75%, integrity the rest")
        return 0
    ns.out.mkdir(parents=True, exist_ok=True)
    from harness.judge import ptxas as P
    from harness.judge.worker import GpuSession

    session = (session_factory or GpuSession)(timeout=180.0, space_limit=ns.space_limit).start()
    env = dict(session.info, command=" ".join([Path(sys.argv[0]).name] + (argv or sys.argv[1:])),
               ptxas=P.version(P.tool("ptxas")), platform=platform.platform())
    results: dict[str, Any] = {"env": env, "baselines": [], "candidates": [], "integrity": [], "skipped": []}
    print(f"# {env['device']} (sm_{env['capability']}), torch {env['torch']}, triton {env['triton']}, "
          f"cuda-python {env['cuda_python']}, ptxas {env['ptxas']}", flush=True)
    contracts = [c for c in runnable(session.capability) if not ns.contracts or c.name in ns.contracts]
    try:
        if not ns.no_baselines:
            errors = _precompile(contracts, ns.space_limit, ns.workers, started + 0.2 * ns.budget) if ns.workers else []
            results["precompile_errors"] = errors
            print(f"precompiled {len(contracts)} contracts' configs in {time.monotonic() - started:.0f} s "
                  f"({len(errors)} errors)", flush=True)
            for c in contracts:
                if time.monotonic() > started + 0.45 * ns.budget:
                    results["skipped"].append(f"baseline {c.name}")
                    continue
                try:
                    row = session.baseline(c.name, "bench", BASELINE_PLAN, ns.seed)
                    results["baselines"].append(row)
                    s = row.stats
                    print(f"baseline {c.name:<22} {row.best:<20} " + (f"{s.median_ms:.4f} ms IQR {s.spread:.1%} "
                          f"r2r {s.run_to_run:.1%} floor {row.floor_ms:.4f}" if s else row.error[:120]), flush=True)
                except Exception as e:
                    results["baselines"].append({"contract": c.name, "dims": c.instances["bench"], "error": str(e)})
                    print(f"baseline {c.name}: ERROR {str(e).splitlines()[0]}", flush=True)
                _write(ns.out, results, started)
        for path, contract in candidates:
            left = started + 0.75 * ns.budget - time.monotonic()
            if left < 30:
                results["skipped"].append(f"candidate {path}")
                continue
            opts = EvalOptions(seed=ns.seed, timing=CANDIDATE_PLAN,
                               sanitizers=ALL_SANITIZERS if left > 150 else ("memcheck", "racecheck"),
                               profile=left > 90 and not ns.no_profile)
            t0 = time.monotonic()
            try:
                rep = evaluate(contract, path.read_text(), name=path.name, gpu=session, options=opts)
                results["candidates"].append({"file": _display(path), "contract": contract, "report": rep.to_json()})
                print(f"candidate {path.name} ({contract}): {rep.verdict.value} "
                      f"{rep.speedup if rep.speedup else ''} in {time.monotonic() - t0:.0f} s", flush=True)
            except Exception as e:
                results["candidates"].append({"file": _display(path), "contract": contract, "error": str(e)})
                print(f"candidate {path.name}: ERROR {e}\n{traceback.format_exc(limit=4)}", flush=True)
            _write(ns.out, results, started)
        for case in cases:
            if time.monotonic() > deadline - 20:
                results["skipped"].append(f"integrity {case.name}")
                continue
            expected = " ".join(sorted(case.expect_gpu or case.expect)) or ("accepted" if case.accepted else "")
            if case.expect_gpu_any or (case.expect_any and case.expect_gpu is None):
                expected += " any of " + " ".join(sorted(case.expect_gpu_any or case.expect_any))
            try:
                rep = evaluate(case.contract, case.path.read_text(), name=case.path.name, gpu=session,
                               options=integrity_options(case, ns.seed))
                fails = I.failures(case, rep, gpu=True)
                results["integrity"].append({"case": case.name, "integrity": case.integrity, "expected": expected,
                                             "verdict": rep.verdict.value, "reasons": sorted(r.value for r in rep.reasons),
                                             "ok": not fails, "failures": fails, "report": rep.to_json()})
                print(f"integrity {case.name:<20} {'ok' if not fails else 'NOT AS EXPECTED: ' + '; '.join(fails)}",
                      flush=True)
            except Exception as e:
                results["integrity"].append({"case": case.name, "integrity": case.integrity, "expected": expected,
                                             "ok": False, "failures": [f"{type(e).__name__}: {e}"]})
                print(f"integrity {case.name}: ERROR {e}", flush=True)
            _write(ns.out, results, started)
    finally:
        session.close()
        _write(ns.out, results, started)
    print(markdown(to_jsonable(results)))
    bad = [c for c in results["integrity"] if not c.get("ok")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
