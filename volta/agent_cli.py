"""`volta agent optimize` (the lowering loop) and `volta agent show` (browse what it recorded).

Exit codes of `volta agent optimize`: 0 the session ended with an accepted best candidate, 1 no
start was accepted, 2 bad input (unknown contract, a price or key missing), 3 the endpoint failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

EXIT_BAD_INPUT = 2


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


@click.group("agent")
def agent() -> None:
    """The LLM lowering loop: propose PTX for a contract, gate it with the harness (ptxas, numerics,
    volta check, GPU timing), diagnose, repeat."""


class _Live:
    """The live view on a terminal (round, best speedup so far, spend, the last events); silent in pipes."""

    def __init__(self, console: Any, store: Any) -> None:
        from rich.live import Live

        self.console, self.store, self.spent = console, store, "$0"
        self.events: list[str] = []
        self.state = {"run": "-", "round": 0, "best": "-", "speedup": "-"}
        self.live = Live(self._render(), console=console, refresh_per_second=4, transient=True) \
            if console.is_terminal else None

    def _render(self) -> Any:
        from rich.panel import Panel
        from rich.text import Text

        s = self.state
        head = f"run {s['run']}  round {s['round']}  best {s['best']} ({s['speedup']})  spent {self.spent}"
        return Panel(Text("\n".join(self.events[-8:]) or "starting..."), title=head, title_align="left")

    def __call__(self, e: Any) -> None:
        self.state["run"], self.state["round"] = e.run.rsplit(".", 1)[-1], e.round
        sp = self.store.spent(e.run.rsplit(".", 1)[0])
        self.spent = f"${sp.usd:.4f} ({sp.tokens} tokens)"
        if e.kind == "best":
            self.state["best"] = e.data.get("name", "-")
            sp = e.data.get("speedup")
            self.state["speedup"] = f"{sp:.3f}x" if sp is not None else "untimed"
        self.events.append(e.text[:160])
        if self.live is not None:
            self.live.update(self._render())

    def __enter__(self) -> "_Live":
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)


def _console() -> Any:
    """Standard output: the terminal's width, or 160 columns in a pipe (a report, not a screen)."""
    from rich.console import Console

    c = Console(emoji=False, highlight=False, soft_wrap=False)
    return c if c.is_terminal else Console(emoji=False, highlight=False, soft_wrap=False, width=160)


def _executor(gpu: bool, ray: bool, address: str | None):
    from taic_agent.scale import LocalExecutor, RayExecutor

    if ray or address:
        try:
            return RayExecutor(address)
        except RuntimeError as e:
            _fail(str(e))
    if gpu:
        from harness.judge.worker import GpuSession, WorkerError

        try:
            return LocalExecutor(GpuSession().start())
        except WorkerError as e:
            _fail(f"--gpu: {e}")
    return LocalExecutor()


@agent.command("optimize")
@click.option("--contract", required=True, help="Suite contract to lower (volta suite list).")
@click.option("--model", default="rules", show_default=True,
              help="Model name at the endpoint; 'rules' for the rule-based generator (no endpoint).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint (default: the openai client's).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="Environment variable with the key.")
@click.option("--budget", "budget_usd", type=click.FloatRange(min=0), default=None, help="Dollars the session may spend.")
@click.option("--budget-tokens", type=click.IntRange(min=1), default=None, help="Tokens the session may spend.")
@click.option("--price", default=None, help="USD per million input,output tokens (overrides the price table).")
@click.option("--runs", type=click.IntRange(1, 64), default=1, show_default=True, help="Independent runs (best of N).")
@click.option("--rounds", type=click.IntRange(0, 100), default=3, show_default=True,
              help="Rounds per run (judge, diagnose, plan, implement, gate).")
@click.option("--helpers", type=click.IntRange(1, 32), default=3, show_default=True,
              help="Helpers implementing each plan in parallel.")
@click.option("--repairs", type=click.IntRange(0, 10), default=2, show_default=True,
              help="Repair attempts for a rejected candidate.")
@click.option("--start", default="triton", show_default=True,
              help="'triton' (Triton's PTX for the contract), 'model' (the model writes it) or a PTX file.")
@click.option("--arch", default="sm_90a", show_default=True, help="Target the PTX is written and judged for.")
@click.option("--gpu", is_flag=True, help="Evaluate on this machine's GPU (timing, profile): needed for 'faster'.")
@click.option("--ray", "use_ray", is_flag=True, help="Evaluate through a local Ray instance (every core).")
@click.option("--address", default=None, help="Evaluate on the Ray cluster at this address.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Candidate store (SQLite; default $VOLTA_AGENT_STORE or .volta/agent.sqlite).")
@click.option("--resume", default=None, help="Resume an interrupted session of the store.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the runs (run i gets seed + i).")
@click.option("--verify-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              help="Seconds of volta check per candidate before its verdict is inconclusive.")
@click.option("--json", "as_json", is_flag=True, help="Print the final report as JSON.")
def optimize_cmd(contract: str, model: str, base_url: str | None, api_key_env: str, budget_usd: float | None,
                 budget_tokens: int | None, price: str | None, runs: int, rounds: int, helpers: int, repairs: int,
                 start: str, arch: str, gpu: bool, use_ray: bool, address: str | None, store_path: Path | None,
                 resume: str | None, seed: int, verify_timeout: float, as_json: bool) -> None:
    """Lower a contract to faster PTX: each round the harness judges the best kernel, the diagnosis
    ladder says why it is slow, a plan proposes 1-3 changes, helpers implement them, and only
    candidates that pass every gate and are faster survive. Without --gpu nothing is timed, so
    candidates can pass every gate but none is called faster (the report says so)."""
    from rich.console import Console

    from harness import suite
    from taic_agent import session as S
    from taic_agent.budget import PriceError, parse_price
    from taic_agent.llm import ModelError
    from taic_agent.records import StopReason
    from taic_agent.report import render, session_report
    from taic_agent.store import Store, default_path

    store = Store(store_path or default_path())
    try:
        if resume is None:
            try:
                suite.get(contract)
            except suite.SuiteError as e:
                _fail(str(e))
            start_ptx = None
            if start not in ("triton", "model"):
                try:
                    start_ptx = Path(start).read_text()
                except (OSError, UnicodeDecodeError) as e:
                    _fail(f"--start {start}: cannot read: {e}")
            settings = S.Settings(contract=contract, model=model, base_url=base_url, api_key_env=api_key_env,
                                  price=parse_price(price) if price else None, budget_usd=budget_usd,
                                  budget_tokens=budget_tokens, runs=runs, arch=arch, rounds=rounds, helpers=helpers,
                                  repairs=repairs, start=start if start_ptx is None else "file", start_ptx=start_ptx,
                                  seed=seed, verify_timeout=verify_timeout)
        elif store.session(resume) is None:
            _fail(f"--resume: no session {resume!r} in {store.path}")
    except PriceError as e:
        _fail(str(e))
    err = Console(stderr=True, emoji=False, highlight=False)
    executor = _executor(gpu, use_ray, address)
    live = _Live(err, store)
    try:
        with live:
            if resume is not None:
                result = S.resume(store, resume, executor=executor, on_event=live)
            else:
                result = S.optimize(settings, store, executor=executor, on_event=live)
    except (PriceError, ModelError) as e:
        _fail(str(e))
    finally:
        executor.close()
    rep = session_report(store, result.session)
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        render(rep, _console())
        click.echo(f"store {store.path}; browse with: volta agent show {result.session} --store {store.path}")
    stops = {r.stop for r in result.runs}
    if rep["best"] is not None:
        sys.exit(0)
    sys.exit(3 if StopReason.ERROR in stops else 1)


@agent.command("show")
@click.argument("run", required=False)
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Candidate store (SQLite; default $VOLTA_AGENT_STORE or .volta/agent.sqlite).")
@click.option("--candidate", default=None, help="One candidate of the run (e.g. r2.h1): its report and lineage.")
@click.option("--ptx", "show_ptx", is_flag=True, help="With --candidate: print its PTX.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def show_cmd(run: str | None, store_path: Path | None, candidate: str | None, show_ptx: bool, as_json: bool) -> None:
    """Browse a store: without RUN, its sessions; RUN is a session id or a run id (SESSION.N)."""
    from rich.console import Console

    from taic_agent.report import render, session_report
    from taic_agent.store import Store, default_path

    path = store_path or default_path()
    if not Path(path).exists():
        _fail(f"no store at {path}")
    store = Store(path)
    console = _console()
    if run is None:
        rows = store.sessions()
        if as_json:
            click.echo(json.dumps(rows, indent=2))
        for r in [] if as_json else rows:
            click.echo(f"{r['id']}  {r['contract']:<14} {r['generator']:<20} {r['status']:<8} best run "
                       f"{r['best_run'] or '-'}")
        return
    session = run if store.session(run) is not None else run.rsplit(".", 1)[0]
    if store.session(session) is None:
        _fail(f"no session or run {run!r} in {path}")
    only = run if run != session else None
    rep = session_report(store, session, only)
    if candidate is not None:
        rows = {c["name"]: c for r in store.runs(session) if only in (None, r["id"])
                for c in store.candidates(run=r["id"])}
        c = rows.get(candidate)
        if c is None:
            _fail(f"no candidate {candidate!r} in {run} (candidates: {', '.join(sorted(rows))})")
        if as_json:
            click.echo(json.dumps({**c, "report": json.loads(c["report"]) if c["report"] else None}, indent=2))
            return
        click.echo(f"{c['name']} (run {c['run']}, round {c['round']}, {c['origin']}): {c['decision']}: {c['why']}")
        click.echo(f"  changes: {', '.join(c['changes']) or '-'}; sha256 {c['sha256']}")
        if c["report"]:
            from taic_agent.records import Judged

            j = Judged.from_json(json.loads(c["report"]))
            for st in j.stages:
                click.echo(f"  {st.name:<9} {st.status:<11} {st.summary[:160]}")
            for p in j.problems:
                click.echo(f"  {p}")
        if show_ptx and c["ptx"]:
            click.echo(c["ptx"])
        return
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        render(rep, console)
