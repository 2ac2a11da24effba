"""`volta check` results as text: one block per file (verdict, findings with their sites, notes,
assumptions) and, for several files, a summary table and the set's exit code."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from symexec.check.findings import ExitCode

from .results import SET_ORDER, CheckResult, worst

_STYLE = {ExitCode.OK: "green", ExitCode.BUG: "red", ExitCode.BAD_INPUT: "magenta", ExitCode.UNDECIDED: "yellow"}
_WORD = {ExitCode.OK: "proved", ExitCode.BUG: "bug found", ExitCode.BAD_INPUT: "bad input",
         ExitCode.UNDECIDED: "undecided"}


def print_result(r: CheckResult, out: Console, err: Console) -> None:
    """One file: the report, or its bad input (on stderr, as compilers print errors)."""
    if r.report is None:
        err.print(r.error.text(), markup=False, highlight=False)
        return
    rep = r.report
    out.print(f"[bold {_STYLE[r.exit_code]}]{escape(rep.kernel)}: {escape(rep.verdict)}[/]")
    for f in rep.findings:
        out.print(f"  {f.kind.value}: {escape(f.message)}", highlight=False)
        for s in f.sites:
            out.print(f"    {escape(s.describe())}", highlight=False)
    for n in rep.notes:
        out.print(f"  note: {escape(n)}", highlight=False)
    if rep.assumptions:
        out.print("  assumptions:")
        for a in rep.assumptions:
            out.print(f"    - {escape(a)}", highlight=False)


def _detail(r: CheckResult) -> str:
    if r.report is None:
        return str(r.error).splitlines()[0]
    rep = r.report
    if rep.findings:
        f = rep.findings[0]
        where = f.sites[0].source or f.sites[0].ptx if f.sites else ""
        return f"{f.message} [{where}]" if where else f.message
    return rep.notes[0] if rep.notes and rep.exit_code else ""


def print_summary(results: list[CheckResult], out: Console) -> None:
    """The table of a set of files and the line that explains its exit code."""
    table = Table(title=f"volta check: {len(results)} files", title_justify="left")
    for col, kw in (("file", {}), ("verdict", {}), ("s", {"justify": "right"}), ("first finding / reason", {})):
        table.add_column(col, **kw)
    for r in results:
        table.add_row(escape(str(r.path)), f"[{_STYLE[r.exit_code]}]{escape(r.verdict[:60])}",
                      f"{r.seconds:.1f}", escape(_detail(r)[:100]))
    out.print(table)
    counts = Counter(r.exit_code for r in results)
    code = worst(r.exit_code for r in results)
    parts = ", ".join(f"{counts[c]} {_WORD[c]}" for c in SET_ORDER if counts[c])
    out.print(f"{len(results)} files: {parts}; exit {int(code)} ({_WORD[code]})", highlight=False)


__all__ = ["print_result", "print_summary"]
