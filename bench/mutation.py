"""Seeded-mutation table: every synchronisation mutant of the suite's sm_90a / sm_100a kernels,
checked with `volta check`'s checker, printed as Markdown (kernel, mutation, PTX line, verdict,
caught / benign + reason / known miss / unexplained).

    python bench/mutation.py                       # every site of every kernel, both targets
    python bench/mutation.py --arch sm_90a -k gemm_fp16 -k conv2d
    python bench/mutation.py --per-name 2          # at most 2 sites of each instruction name per kernel
    python bench/mutation.py --ci --seed 0         # the CI sample (tests/test_mutation.py)
    python bench/mutation.py --json out.json -j 2
    python bench/mutation.py --from-json out.json  # reprint a saved run against the current table

The reviewed reasons live in tests/mutation/verdicts.toml; the engine in tests/mutation/engine.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mutation.runner import (KernelRun, Status, describe, run_kernel, suite_sample, suite_targets,  # noqa: E402
                                   table)


def _one(args: tuple) -> KernelRun:
    name, arch, per_name, seed, only = args
    t0 = time.perf_counter()
    r = run_kernel(name, arch, per_name, seed, only=only)
    n = len(r.outcomes)
    print(f"{name} {arch}: {r.baseline.split(':', 1)[0]}, {n} mutants, {time.perf_counter() - t0:.0f} s",
          file=sys.stderr, flush=True)
    return r


def _load(path: Path) -> list[KernelRun]:
    """KernelRuns from a --json file, each outcome classified again against the current table."""
    from tests.mutation.engine import Mutant, Site
    from tests.mutation.runner import Outcome, classify, known_findings

    runs = []
    for r in json.loads(path.read_text()):
        run = KernelRun(r["kernel"], r["arch"], r["baseline"], r["baseline_seconds"],
                        baseline_findings=frozenset((k, tuple(ls), how) for k, ls, how in r.get("baseline_findings", [])),
                        known=known_findings().get((r["kernel"], r["arch"]), ""))
        run.sites = [None] * r["sites"]
        for o in r["outcomes"]:
            name, rest = o["mutation"].split("#", 1)
            ordinal, kind = rest.split(":", 1)
            site = Site(-1, name, int(ordinal), o["line"], o["text"], o["source"])
            new = tuple(o["new_findings"]) if "new_findings" in o else None
            out = Outcome(Mutant(r["kernel"], site, kind, "", o["description"]), o["verdict"], o["finding"],
                          o["seconds"], new=new)
            run.outcomes.append(classify(out, r["kernel"], r["arch"]))
        runs.append(run)
    return runs


def _write_json(path: Path, runs: list[KernelRun]) -> None:
    path.write_text(json.dumps([{
        "kernel": r.kernel, "arch": r.arch, "baseline": r.baseline, "baseline_seconds": r.baseline_seconds,
        "baseline_findings": sorted([k, list(ls), how] for k, ls, how in r.baseline_findings),
        "sites": len(r.sites),
        "outcomes": [{"mutation": o.mutant.key, "line": o.mutant.site.line, "source": o.mutant.site.source,
                      "text": o.mutant.site.text, "description": o.mutant.description, "verdict": o.verdict,
                      "finding": o.finding, "new_findings": list(o.new or ()), "caught": o.caught,
                      "seconds": round(o.seconds, 2), "status": o.status.value, "reason": o.reason}
                     for o in r.outcomes]} for r in runs], indent=1))


def _stale(runs: list[KernelRun]) -> None:
    """Table rows of a kernel build that ran but that match none of its mutants."""
    used = {(r.kernel, r.arch, o.mutant.key) for r in runs for o in r.outcomes}
    ran = {(r.kernel, r.arch) for r in runs if r.checkable}
    for k in table():
        if (k[0], k[1]) in ran and k not in used:
            print(f"table entry matches no mutant: {k}", file=sys.stderr)


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(runs: list[KernelRun], not_caught_only: bool = False) -> str:
    out = []
    total = {st: 0 for st in Status}
    out.append("| kernel | target | mutation | PTX line | verdict | result |")
    out.append("|---|---|---|---|---|---|")
    skipped = []
    for r in runs:
        if not r.checkable:
            skipped.append(r)
            continue
        for o in r.outcomes:
            total[o.status] += 1
            if not_caught_only and o.status is Status.CAUGHT:
                continue
            res = o.status.value + (f": {o.reason}" if o.reason else "")
            out.append(f"| {r.kernel} | {r.arch} | `{o.mutant.key}` | {o.mutant.site.line} | "
                       f"{_cell(o.shown_verdict)} | {_cell(res)} |")
    counts = ["| kernel | target | mutants | " + " | ".join(st.value for st in Status) + " |",
              "|---|---|---|" + "---|" * len(Status)]
    for r in runs:
        if r.checkable:
            n = {st: sum(o.status is st for o in r.outcomes) for st in Status}
            counts.append(f"| {r.kernel} | {r.arch} | {len(r.outcomes)} | " + " | ".join(str(n[st]) for st in Status) + " |")
    head = [f"Mutants: {sum(total.values())} over {sum(r.checkable for r in runs)} checkable kernel builds; "
            + ", ".join(f"{st.value} {n}" for st, n in total.items() if n), ""]
    known = [r for r in runs if r.checkable and r.baseline_findings]
    if known:
        head.append("Unmutated kernels with reviewed findings (TRITON_FINDINGS of tests/test_check_suite.py); a mutant "
                    "is caught only by a finding not among these (\"baseline only\": the report has only them):")
        head.append("")
        for r in known:
            head.append(f"- {r.kernel} {r.arch}: {r.known}: "
                        + "; ".join(describe(g) for g in sorted(r.baseline_findings)))
        head.append("")
    if skipped:
        head.append("Not checkable (unsupported/inconclusive unmutated verdict, or findings not listed in "
                    "TRITON_FINDINGS; mutants not run):")
        head.append("")
        for r in skipped:
            head.append(f"- {r.kernel} {r.arch}: {r.why_not_checkable} ({len(r.sites)} sites)")
        head.append("")
    return "\n".join(head + counts + [""] + out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", action="append", choices=["sm_90a", "sm_100a"], help="default: both")
    ap.add_argument("-k", "--kernel", action="append", help="suite kernel (default: all)")
    ap.add_argument("--per-name", type=int, default=None,
                    help="at most N sites of each instruction name per kernel (default: all)")
    ap.add_argument("--ci", action="store_true", help="the CI sample of tests/test_mutation.py (with --seed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="also write the outcomes as JSON")
    ap.add_argument("--not-caught", action="store_true", help="list only the mutants that are not caught")
    ap.add_argument("--from-json", type=Path, action="append", default=None,
                    help="reprint saved runs (--json output) classified by the current verdicts.toml; runs nothing")
    a = ap.parse_args()
    if a.from_json:
        runs = [r for f in a.from_json for r in _load(f)]
        print(markdown(runs, a.not_caught))
        _stale(runs)  # meaningful when the saved runs covered every site
        return 0
    arches = tuple(a.arch or ("sm_90a", "sm_100a"))
    targets = [t for t in suite_targets(arches) if not a.kernel or t[0] in a.kernel]
    if a.ci:
        from tests.test_mutation import ARCHES, SAMPLE
        sample = suite_sample(ARCHES, SAMPLE, a.seed)
        jobs = [(n, ar, None, a.seed, list(sample[(n, ar)])) for n, ar in targets if (n, ar) in sample]
    else:
        jobs = [(n, ar, a.per_name, a.seed, None) for n, ar in targets]
    t0 = time.perf_counter()
    done: dict[int, KernelRun] = {}
    with ProcessPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(_one, job): i for i, job in enumerate(jobs)}
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            if a.json:  # after every kernel, so that a long run that is stopped keeps what it did
                _write_json(a.json, [done[i] for i in sorted(done)])
    runs = [done[i] for i in sorted(done)]
    wall = time.perf_counter() - t0
    print(markdown(runs, a.not_caught))
    cpu = sum(r.baseline_seconds + sum(o.seconds for o in r.outcomes) for r in runs)
    print(f"\n{wall:.0f} s wall on {a.jobs} processes, {cpu:.0f} s of checking", file=sys.stderr)
    if a.per_name is None and not a.ci:
        _stale(runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
