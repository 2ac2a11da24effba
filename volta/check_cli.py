"""`volta check` (verdict on one kernel) and `volta regress` (a folder of kernels with expected verdicts).

Exit codes: 0 proved (race_free), 1 bug found, 2 bad input, 3 unsupported or inconclusive.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from ptx_parser import ParseError, parse_file

from .sarif import to_sarif

EXIT_BAD_INPUT = 2
_HEADER = re.compile(r"^\s*//\s*(expect|launch|why|twin|entry)\s*:\s*(.*?)\s*$")


def header(path: Path) -> dict[str, str]:
    """`// expect: race`, `// launch: {json}`, `// why: ...` lines at the top of a .ptx file."""
    out: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines()[:40]:
        m = _HEADER.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _launch_from(path: Path, spec_path: Path | None, hdr: dict[str, str]):
    from symexec.launch import LaunchError, load_launch_spec, spec_to_launch

    if spec_path is not None:
        return load_launch_spec(spec_path)
    if "launch" in hdr:
        try:
            spec = json.loads(hdr["launch"])
        except json.JSONDecodeError as e:
            raise LaunchError(f"{path}: '// launch:' header is not valid JSON: {e.msg} (col {e.colno})") from None
        return spec_to_launch(spec, f"{path} launch header")
    sidecar = path.with_suffix(".json")
    if sidecar.exists():
        return load_launch_spec(sidecar)
    raise LaunchError(f"{path}: no launch given (use --contract, --launch spec.json, a '// launch: {{...}}' "
                      f"header or {sidecar.name})")


DEFAULT_TIMEOUT = 600.0


def check_file(path: Path, contract: str | None = None, launch_path: Path | None = None,
               arch: str | None = None, instance: str = "verify", entry: str | None = None,
               grid: str = "auto", timeout: float | None = DEFAULT_TIMEOUT, sizes: str = "launch"):
    """Parse, build the launch, run the checker (at most ``timeout`` seconds of emulation, then
    inconclusive); returns a Report. Raises for bad input."""
    from symexec import Unsupported, load_program, time_limit
    from symexec.check import check_kernel
    from symexec.check.findings import Report, Verdict

    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    module = parse_file(path)
    hdr = header(path)
    domain = None
    if contract is not None:
        from .run_cli import _contract_launch

        c, launch, _, compiled = _contract_launch(contract, module, instance, 0, "normal", entry, arch, lazy=True)
    elif sizes == "symbolic":
        raise ValueError("--sizes symbolic needs --contract: the contract says how the launch depends on the sizes")
    else:
        launch = _launch_from(path, launch_path, hdr)
    name = entry or hdr.get("entry") or launch.kernel or (module.kernels[0].name if len(module.kernels) == 1 else None)
    try:
        prog = load_program(module, name)
        if sizes == "symbolic":
            from harness.sizes import size_domain

            domain = size_domain(c, compiled, instance, [p.name for p in prog.params])
        with time_limit(timeout):
            report = check_kernel(prog, launch, grid=grid, sizes=domain)
    except Unsupported as e:  # a feature refused while loading or set up outside the machine's run
        report = Report(Verdict.UNSUPPORTED, name or "?", str(e).removeprefix("unsupported: "))
        report.notes.append("the kernel could not be loaded for checking: no property was checked")
        return _named(report, path, name)
    return _named(report, path, prog.function.name)


def _named(report, path: Path, kernel: str | None):
    report.kernel = f"{path}:{kernel}" if kernel else str(path)
    return report


def _print_report(report, out) -> None:
    color = "green" if report.exit_code == 0 else "red" if report.exit_code == 1 else "yellow"
    out(click.style(f"{report.kernel}: {report.verdict}", fg=color, bold=True))
    for f in report.findings:
        out(f"  {f.kind.value}: {f.message}")
        for s in f.sites:
            out(f"    {s.describe()}")
    for n in report.notes:
        out(f"  note: {n}")
    if report.assumptions:
        out("  assumptions:")
        for a in report.assumptions:
            out(f"    - {a}")


@click.command("check")
@click.argument("kernel", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--contract", default=None, help="Suite contract giving the launch (volta suite list).")
@click.option("--launch", "launch_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSON launch spec (format: symexec/launch.py).")
@click.option("--arch", default=None, help="Target to compile the contract's reference for (default: the PTX's).")
@click.option("--instance", default="verify", show_default=True, type=click.Choice(["verify", "bench"]))
@click.option("--entry", default=None, help="Kernel to check when the module has several.")
@click.option("--grid", type=click.Choice(["auto", "enumerate", "symbolic"]), default="auto", show_default=True,
              help="How CTAs are covered: run every CTA, or prove cross-CTA global races and bounds for a "
                   "symbolic pair of CTAs with Z3 (auto: symbolic above 64 CTAs where it applies).")
@click.option("--sizes", type=click.Choice(["launch", "symbolic"]), default="launch", show_default=True,
              help="launch: the verdict is for the instance's sizes; symbolic (with --contract): prove bounds and "
                   "global races for every size of the contract at once (Z3), the grid its function of the sizes; "
                   "falls back to the launch's sizes, and says why, where it cannot.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds of emulation before the verdict is inconclusive (a loop that does not end?).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write a SARIF 2.1.0 log here (for code-scanning tools); never overwrites.")
def check_cmd(kernel: Path, contract: str | None, launch_path: Path | None, arch: str | None, instance: str,
              entry: str | None, grid: str, sizes: str, timeout: float, as_json: bool, sarif_path: Path | None) -> None:
    """Prove KERNEL.ptx free of data races, barrier divergence, deadlocks and out-of-bounds accesses
    for a launch, or show a witness; or say what could not be decided."""
    from symexec import LaunchError

    if sarif_path is not None and sarif_path.exists():
        click.echo(f"error: {sarif_path} exists; not overwriting it", err=True)
        sys.exit(EXIT_BAD_INPUT)
    try:
        report = check_file(kernel, contract, launch_path, arch, instance, entry, grid, timeout, sizes)
    except ParseError as e:
        click.echo(str(e), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except OSError as e:
        click.echo(f"{kernel}: error: cannot read file: {e.strerror}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except (LaunchError, ValueError, KeyError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except MemoryError:
        click.echo(f"{kernel}: inconclusive: out of memory while checking (a smaller launch, or --grid symbolic, "
                   "may fit)", err=True)
        sys.exit(3)
    if sarif_path is not None:
        sarif_path.write_text(json.dumps(to_sarif([report]), indent=2))
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, default=str))
    else:
        _print_report(report, click.echo)
    sys.exit(report.exit_code)


@click.command("regress")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("-k", "pattern", default=None, help="Only files whose name contains this text.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds of emulation per file before its verdict is inconclusive.")
def regress_cmd(directory: Path, as_json: bool, pattern: str | None, timeout: float) -> None:
    """Check every .ptx in DIRECTORY whose header states `// expect: VERDICT`; table of expected vs
    actual; exit 1 on any mismatch."""
    from rich.console import Console
    from rich.table import Table

    from symexec import LaunchError

    files = sorted(p for p in directory.rglob("*.ptx") if pattern is None or pattern in p.name)
    rows = []
    for path in files:
        hdr = header(path)
        expected = hdr.get("expect")
        if expected is None:
            continue
        try:
            report = check_file(path, timeout=timeout)
            actual = report.verdict
            detail = report.findings[0].message if report.findings else (report.notes[0] if report.notes else "")
        except ParseError as e:
            actual, detail = "bad_input", str(e).splitlines()[0]
        except (LaunchError, ValueError, KeyError) as e:
            actual, detail = "bad_input", str(e)
        ok = actual == expected or actual.split(":")[0] == expected
        rows.append({"file": str(path.relative_to(directory)), "expected": expected, "actual": actual,
                     "ok": ok, "detail": detail})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        table = Table(title=f"volta regress {directory} ({len(rows)} cases)")
        for col in ("file", "expected", "actual", ""):
            table.add_column(col)
        for r in rows:
            table.add_row(r["file"], r["expected"], r["actual"][:60], "[green]ok" if r["ok"] else "[red]MISMATCH")
        Console().print(table)
        bad = [r for r in rows if not r["ok"]]
        click.echo(f"{len(rows) - len(bad)} passed, {len(bad)} failed")
    sys.exit(0 if all(r["ok"] for r in rows) else 1)
