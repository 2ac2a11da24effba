"""The `volta` command line. Exit codes: 0 ok, 1 bug found, 2 bad input, 3 unsupported/inconclusive."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ptx_parser import ParseError, parse_file

from .summary import ModuleSummary, summarize

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3

_err = Console(stderr=True, emoji=False, highlight=False, soft_wrap=True)
_out = Console(emoji=False, highlight=False, soft_wrap=True)


class _LazyGroup(click.Group):
    """Subcommands that live in their own modules are imported when named (`volta recheck` must not
    import the executor; the others import heavier dependencies)."""

    lazy = {"suite": ("volta.suite_cli", "suite"), "run": ("volta.run_cli", "run_cmd"),
            "check": ("volta.check_cli", "check_cmd"), "regress": ("volta.check_cli", "regress_cmd"),
            "eval": ("volta.eval_cli", "eval_cmd"), "baseline": ("volta.eval_cli", "baseline_cmd"),
            "agent": ("volta.agent_cli", "agent"), "recheck": ("volta.recheck_cli", "recheck_cmd")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.lazy:
            import importlib

            module, attr = self.lazy[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="volta", prog_name="volta")
def main() -> None:
    """Volta: formal verification for NVIDIA GPU kernels written in PTX."""


def _progress(total: int) -> Progress:
    return Progress(TextColumn("[bold]parsing"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.description}"),
                    console=_err, transient=True, disable=total < 8 or not _err.is_terminal)


@main.command("parse")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file (a JSON list).")
@click.option("--top", default=12, show_default=True, type=click.IntRange(min=0),
              help="Opcodes/modifiers shown per file in text mode (0: none).")
def parse_cmd(files: tuple[Path, ...], as_json: bool, top: int) -> None:
    """Parse PTX files and summarise them (kernels, instructions, opcodes, modifiers, target).

    Bad input is reported as file:line:col with the source line; the exit status is then 2.
    """
    results: list[dict] = []
    failed = 0
    with _progress(len(files)) as progress:
        task = progress.add_task("", total=len(files))
        for path in files:
            progress.update(task, description=str(path))
            try:
                summary = summarize(parse_file(path))
            except ParseError as e:
                failed += 1
                _err.print(str(e), markup=False)
                results.append({"file": str(path), "ok": False, "error": {
                    "message": e.message, "line": e.line, "col": e.col}})
            except OSError as e:
                failed += 1
                _err.print(f"{path}: error: cannot read file: {e.strerror}", markup=False)
                results.append({"file": str(path), "ok": False, "error": {"message": e.strerror}})
            else:
                results.append(summary.to_json())
                if not as_json:
                    _print_summary(summary, top)
            progress.advance(task)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    elif len(files) > 1:
        _out.print(f"{len(files) - failed} of {len(files)} files parsed", markup=False)
    sys.exit(EXIT_BAD_INPUT if failed else EXIT_OK)


def _print_summary(s: ModuleSummary, top: int) -> None:
    kernels = ", ".join(f.name for f in s.kernels) or "none"
    _out.print(f"{s.file}: PTX {s.version or '?'}, target {', '.join(s.target) or '?'}, "
               f"{len(s.kernels)} kernel(s) [{kernels}], {len(s.functions) - len(s.kernels)} function(s), "
               f"{s.instructions} instructions", markup=False)
    for fn in s.functions:
        dirs = " ".join(f"{k} {','.join(map(str, v))}".strip() for k, v in fn.directives.items())
        _out.print(f"  {fn.kind} {fn.name}: {fn.params} params, {fn.instructions} instructions"
                   + (f", {dirs}" if dirs else ""), markup=False)
    _out.print("  opcodes:   " + _top(s.opcodes, top), markup=False)
    _out.print("  modifiers: " + _top(s.modifiers, top), markup=False)
    if s.sections:
        _out.print(f"  sections:  {', '.join(s.sections)}", markup=False)


def _top(counts: dict[str, int], n: int) -> str:
    items = list(counts.items())
    text = " ".join(f"{k}({v})" for k, v in items[:n])
    if len(items) > n:
        text += f" ... (+{len(items) - n} more)"
    return text or "-"


if __name__ == "__main__":  # pragma: no cover
    main()
