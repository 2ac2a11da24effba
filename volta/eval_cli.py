"""`volta eval` (judge candidate PTX for a contract) and `volta baseline` (time Triton's own kernel).

Exit codes of `volta eval`: 0 every candidate accepted, 1 one was rejected, 2 bad input, 3 one
could not be decided (and none was rejected).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

EXIT_BAD_INPUT = 2


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _read(path: Path) -> bytes:
    """The candidate's bytes, read once (every stage judges these; their sha256 is in the report)."""
    try:
        return path.read_bytes()
    except OSError as e:
        _fail(f"{path}: cannot read file: {e.strerror}")
    raise AssertionError  # unreachable


def _session(gpu: bool):
    if not gpu:
        return None
    from harness.judge.worker import GpuSession, WorkerError

    try:
        return GpuSession().start()
    except WorkerError as e:
        _fail(f"--gpu: {e}")


_STYLE = {"passed": "green", "rejected": "red", "undecided": "yellow", "skipped": "dim", "unavailable": "yellow"}


def print_report(report, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    verdict = report.verdict.value
    color = {"accepted": "green", "rejected": "red", "undecided": "yellow"}[verdict]
    table = Table(title=f"[bold]{escape(report.candidate)}[/]: [{color}]{verdict.upper()}[/] ({report.contract}, "
                        f"{report.target}, sha256 {report.ptx_sha256[:12]}, {report.mode})", title_justify="left",
                  show_lines=False, expand=False)
    for col in ("stage", "status", "s", "summary"):
        table.add_column(col, overflow="fold")
    for s in report.stages:
        table.add_row(s.stage, f"[{_STYLE[s.status.value]}]{s.status.value}[/]",
                      f"{s.seconds:.1f}" if s.seconds else "", escape(s.summary))
    console.print(table)
    for p in report.problems:
        at = f" at {escape(p.where)}" if p.where else ""
        console.print(f"  [{'red' if p.severity.value == 'reject' else 'yellow'}]{p.reason.value}[/]{at}: "
                      f"{escape(p.message)}", highlight=False)
    prof = report.stage("profile")
    if prof is not None and getattr(prof.detail, "text", ""):
        console.print("  profile:\n    " + prof.detail.text.replace("\n", "\n    "), markup=False)
    console.print(f"  seed {report.seeds[0]} (--seed to replay)", markup=False, style="dim")


@click.command("eval")
@click.argument("candidates", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--contract", required=True, help="Suite contract the candidates implement (volta suite list).")
@click.option("--gpu", is_flag=True, help="Numerics, compute-sanitizer, timing against autotuned Triton and a profile "
                                          "on the GPU (one worker process for every candidate).")
@click.option("--json", "as_json", is_flag=True, help="Print the report(s) as JSON (a list for several candidates).")
@click.option("--arch", default=None, help="Target (default: the GPU's, else sm_90a).")
@click.option("--seed", type=int, default=None, help="Seed of inputs and sizes (default: fresh, printed).")
@click.option("--trials", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Seeds per input distribution at the verify instance.")
@click.option("--unseen", type=click.IntRange(0, 20), default=2, show_default=True,
              help="Sizes nobody saw (same specialisation as the verify build).")
@click.option("--keep-going", is_flag=True, help="Run every stage even after a rejection.")
@click.option("--skip", multiple=True, type=click.Choice(["static", "assemble", "numeric", "verify", "sanitize",
                                                          "timing", "profile"]), help="Skip a stage (repeatable).")
@click.option("--verify-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              help="Seconds of checking before the verify stage is undecided.")
@click.option("--sanitize", default="memcheck,racecheck,synccheck,initcheck", show_default=True,
              help="compute-sanitizer tools (comma-separated, or 'none').")
@click.option("--no-profile", is_flag=True, help="No Nsight Compute pass.")
@click.option("--timing-instance", default="bench", show_default=True, help="Contract instance that is timed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write each report as JSON into this folder (never overwrites).")
def eval_cmd(candidates: tuple[Path, ...], contract: str, gpu: bool, as_json: bool, arch: str | None,
             seed: int | None, trials: int, unseen: int, keep_going: bool, skip: tuple[str, ...],
             verify_timeout: float, sanitize: str, no_profile: bool, timing_instance: str, out: Path | None) -> None:
    """Judge CANDIDATE.ptx files for a contract: static gate, ptxas, numeric test (CPU emulator, or the
    GPU with --gpu), volta check on the same bytes, and with --gpu compute-sanitizer, timing against
    Triton's autotuned kernel and a profile."""
    from rich.console import Console

    from harness.judge.pipeline import ALL_SANITIZERS, EvalOptions, EvaluationError, evaluate

    tools = () if sanitize.strip() == "none" else tuple(t.strip() for t in sanitize.split(",") if t.strip())
    bad = [t for t in tools if t not in ALL_SANITIZERS]
    if bad:
        _fail(f"--sanitize: unknown tool(s) {bad}; known: {', '.join(ALL_SANITIZERS)}")
    texts = [(p, _read(p)) for p in candidates]
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        clash = [out / f"{p.stem}.json" for p in candidates if (out / f"{p.stem}.json").exists()]
        if clash:
            _fail(f"{clash[0]} exists; not overwriting it")
    options = EvalOptions(seed=seed, trials=trials, unseen=unseen, verify_timeout=verify_timeout,
                          keep_going=keep_going, skip=frozenset(skip), sanitizers=tools, profile=not no_profile,
                          timing_instance=timing_instance)
    session = _session(gpu)
    console = Console(emoji=False, highlight=False, soft_wrap=False)
    reports = []
    try:
        for path, text in texts:
            try:
                report = evaluate(contract, text, name=path.name, gpu=session, arch=arch, options=options)
            except EvaluationError as e:
                _fail(str(e))
            reports.append(report)
            if out is not None:
                (out / f"{path.stem}.json").write_text(json.dumps(report.to_json(), indent=1))
            if not as_json:
                print_report(report, console)
    finally:
        if session is not None:
            session.close()
    if as_json:
        payload = [r.to_json() for r in reports]
        click.echo(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2))
    codes = {r.exit_code for r in reports}
    sys.exit(1 if 1 in codes else 3 if 3 in codes else 0)


@click.command("baseline")
@click.option("--contract", required=True, help="Suite contract (volta suite list).")
@click.option("--instance", default="bench", show_default=True,
              help="The contract instance whose sizes are timed (bench: the timed sizes; verify: the small ones).")
@click.option("--plan", is_flag=True, help="Print the config space and the roofline floor only (no GPU needed).")
@click.option("--json", "as_json", is_flag=True, help="Print the baseline as JSON.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the GPU inputs.")
def baseline_cmd(contract: str, instance: str, plan: bool, as_json: bool, seed: int) -> None:
    """Time Triton's own kernel for a contract, autotuned over its declared config space (needs a GPU;
    --plan shows the space and the H200 roofline floor without one)."""
    from harness import suite
    from harness.contract import ContractError
    from harness.judge import baseline as B
    from harness.judge import roofline as R
    from harness.judge.report import to_jsonable
    from harness.judge.timing import TimingPlan

    try:
        c = suite.get(contract)
        r = c.resolve(instance)
    except (suite.SuiteError, ContractError) as e:
        _fail(str(e))
    space = B.config_space(c, 6)
    floor = R.floor(c, instance, R.H200)
    if plan:
        info = {"contract": c.name, "instance": instance, "dims": r.dims, "space": B.describe_space(space),
                "configs": [str(x) for x in space], "bytes": floor.bytes, "flops": floor.flops,
                "h200_floor_ms": floor.ms, "memory_floor_ms": floor.memory_ms, "compute_floor_ms": floor.compute_ms}
        if as_json:
            click.echo(json.dumps(info, indent=2))
        else:
            click.echo(f"{c.name} at {instance} ({', '.join(f'{k}={v}' for k, v in r.dims.items())}):")
            click.echo(f"  config space: {info['space']}: {', '.join(info['configs'])}")
            click.echo(f"  H200 roofline floor: {floor.ms:.4f} ms ({floor.bytes / 1e9:.3f} GB at 4.8 TB/s: "
                       f"{floor.memory_ms:.4f} ms; {floor.flops / 1e12:.3f} TFLOP: {floor.compute_ms:.4f} ms)")
        sys.exit(0)
    session = _session(True)
    try:
        row = session.baseline(c.name, instance, TimingPlan(), seed)
    finally:
        session.close()
    if as_json:
        click.echo(json.dumps(to_jsonable(row), indent=2))
    else:
        click.echo(f"{c.name} at {instance} on {session.info.get('device')}: {row.space}")
        for t in row.tried:
            click.echo(f"  {str(t.config):<22} " + (f"{t.median_ms:.4f} ms" if t.median_ms is not None else t.error))
        if row.stats is not None:
            s = row.stats
            click.echo(f"  best {row.best}: median {s.median_ms:.4f} ms (IQR {s.spread:.1%}, run-to-run "
                       f"{s.run_to_run:.1%}, n={s.n}); floor {row.floor_ms:.4f} ms")
        else:
            click.echo(f"  no config ran: {row.error}")
    sys.exit(0 if row.stats is not None else 1)
