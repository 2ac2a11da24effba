"""`volta check` (verdicts on kernels: one file, many, or folders) and `volta regress` (a folder of
kernels with expected verdicts).

Exit codes: 0 proved (race_free), 1 bug found, 2 bad input, 3 unsupported or inconclusive; a set
of files exits with its worst result (volta.results.SET_ORDER: 1, then 2, then 3, then 0).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console

from .inputs import contract_launch, header, parse_ptx, spec_launch
from .progress import MemorySize, RunProgress, address_space_ceiling
from .results import BadInput, CheckResult, strict_json, worst, writable

__all__ = ["check_file", "check_cmd", "regress_cmd", "header", "DEFAULT_TIMEOUT"]

EXIT_BAD_INPUT = 2
DEFAULT_TIMEOUT = 600.0


def check_file(path: Path, contract: str | None = None, launch_path: Path | None = None,
               arch: str | None = None, instance: str = "verify", entry: str | None = None,
               grid: str = "auto", timeout: float | None = DEFAULT_TIMEOUT, sizes: str = "launch",
               max_memory: int | None = None, progress=None, equivalence: bool = False,
               reference: Path | None = None, reference_launch: Path | None = None,
               reference_arch: str | None = None, certificate: Path | None = None):
    """Parse, build the launch, run the checker (at most ``timeout`` seconds of emulation and
    ``max_memory`` bytes, then inconclusive); returns a Report. Raises BadInput for bad input.
    equivalence / reference: also prove the kernel computes what Triton's build for ``contract``
    (or the PTX kernel ``reference``) computes (volta/equiv_cli.py), writing a verified proof's
    certificate into directory ``certificate`` when given."""
    if equivalence or reference is not None:
        return _equivalence_file(Path(path), contract, launch_path, arch, instance, entry, timeout, max_memory,
                                 reference, reference_launch, reference_arch, certificate)
    if certificate is not None:
        raise BadInput("--certificate needs --reference or --equivalence (it certifies an equivalence proof)")
    if reference_launch is not None or reference_arch is not None:
        raise BadInput("--reference-launch and --reference-arch need --reference or --equivalence")
    from symexec import LaunchError, Unsupported, load_program, run_limits
    from symexec.check import check_kernel
    from symexec.check.findings import Report, Verdict

    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    path = Path(path)
    if contract is not None and launch_path is not None:
        raise BadInput("give --contract NAME or --launch spec.json, not both (the contract makes the launch)")
    if sizes == "symbolic" and contract is None:
        raise BadInput("--sizes symbolic needs --contract: the contract says how the launch depends on the sizes")
    module = parse_ptx(path)
    domain = None
    if contract is not None:
        c, launch, _, compiled = contract_launch(contract, module, path, instance, 0, "normal", entry, arch,
                                                 lazy=True)
    else:
        launch, _ = spec_launch(path, module, launch_path, entry)
    name = launch.kernel
    try:
        prog = load_program(module, name)
        if sizes == "symbolic":
            from harness.sizes import size_domain

            from harness.candidate import read_header

            domain = size_domain(c, compiled, instance, [p.name for p in prog.params], read_header(path))
        with address_space_ceiling(max_memory), run_limits(timeout, max_memory, progress):
            report = check_kernel(prog, launch, grid=grid, sizes=domain)
    except LaunchError as e:  # a launch the kernel's directives forbid (the machine refuses it)
        raise BadInput(str(e)) from None
    except Unsupported as e:  # a feature refused while loading or set up outside the machine's run
        report = Report(Verdict.UNSUPPORTED, name or "?", str(e).removeprefix("unsupported: "))
        report.notes.append("the kernel could not be loaded for checking: no property was checked")
        return _named(report, path, name)
    except MemoryError:
        why = (f"memory limit of {max_memory / 2**20:.0f} MiB reached (an allocation beyond it failed)"
               if max_memory else "out of memory")
        report = Report(Verdict.INCONCLUSIVE, name or "?", why)
        report.notes.append("the check stopped there: nothing was decided (a smaller launch, or --grid symbolic, "
                            "may fit)")
        return _named(report, path, name)
    if contract is not None:
        _refuse_short_shared(report, prog, launch, contract, compiled)
        _header_assumption(report, path)
    return _named(report, path, prog.function.name)


def _equivalence_file(path: Path, contract, launch_path, arch, instance, entry, timeout, max_memory, reference,
                      reference_launch, reference_arch, certificate=None):
    """`volta check --equivalence/--reference`: the safety verdict, then the equivalence proof."""
    from symexec import LaunchError
    from ptx_parser import ParseError

    from .equiv_cli import run_equivalence

    if reference is not None and contract is not None:
        raise BadInput("give --reference REF.ptx or --contract NAME --equivalence, not both")
    try:
        with address_space_ceiling(max_memory):
            report = run_equivalence(path, contract=contract, reference=reference, launch_path=launch_path,
                                     reference_launch=reference_launch, arch=arch, reference_arch=reference_arch,
                                     instance=instance, entry=entry, timeout=timeout, certificate=certificate)
    except ParseError as e:
        raise BadInput(str(e)) from None
    except (LaunchError, ValueError) as e:
        raise BadInput(str(e)) from None
    except MemoryError:
        from symexec.check.findings import Report, Verdict

        why = (f"memory limit of {max_memory / 2**20:.0f} MiB reached (an allocation beyond it failed)"
               if max_memory else "out of memory")
        report = Report(Verdict.INCONCLUSIVE, str(path), why)
        report.notes.append("the equivalence proof stopped there: nothing was decided")
        return report
    if contract is not None:
        _header_assumption(report, path)
    return report


def _header_assumption(report, path: Path) -> None:
    """A candidate's `// volta-launch:` header chose the launch shape: say so with the verdict."""
    from harness.candidate import header_assumption, read_header

    cand = read_header(path)
    if cand is not None:
        report.assumptions.append(header_assumption(cand))


def _refuse_short_shared(report, prog, launch, contract: str, compiled) -> None:
    """A contract's build that gives the kernel less shared memory than it uses is the wrong build
    for this PTX (another --arch or instance), not a bug of the kernel: bad input."""
    from symexec.machine import FindingKind

    have = prog.shared_size() + launch.dynamic_shared_bytes
    for f in report.findings:
        if f.kind is not FindingKind.OUT_OF_BOUNDS:
            continue
        over = [s for s in f.sites if (s.space or "").startswith(".shared") and s.byte is not None and s.byte >= have]
        if over:
            s = over[0]
            raise BadInput(f"{s.instruction} at {s.ptx} uses shared memory at byte {s.byte}, but contract {contract}'s "
                           f"{compiled.target} build gives a CTA {have} bytes ({prog.shared_size()} static + "
                           f"{launch.dynamic_shared_bytes} dynamic): this PTX needs the build it was compiled for; "
                           f"pass that target with --arch (and --instance)")


def _named(report, path: Path, kernel: str | None):
    report.kernel = f"{path}:{kernel}" if kernel else str(path)
    return report


def collect(paths: tuple[Path, ...]) -> list[Path]:
    """The PTX files named: files as given, folders searched for *.ptx (sorted)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.rglob("*.ptx"))
            if not found:
                raise BadInput(f"{p}: no .ptx file in this folder")
            out += found
        else:
            out.append(p)
    return out


def _run_one(path: Path, bar: RunProgress, **kw) -> CheckResult:
    t0 = time.perf_counter()
    try:
        report = check_file(path, progress=bar.start(path.name), **kw)
    except BadInput as e:
        return CheckResult(path, error=e, seconds=time.perf_counter() - t0)
    return CheckResult(path, report, seconds=time.perf_counter() - t0)


_EPILOG = """\b
Exit codes: 0 proved, 1 a bug was found, 2 bad input, 3 unsupported or inconclusive.
With several files the worst wins: 1, then 2, then 3, then 0.

\b
The launch of a file, first found of: --contract NAME; --launch spec.json;
a '// launch: {...}' line in the file's first 40 lines; KERNEL.json beside
KERNEL.ptx. The spec's format is in the README ("volta check") and is
checked against a schema and the kernel's .param declarations.

\b
Progress (CTAs, instructions/s, memory, time left) is shown on a terminal.
"""


@click.command("check", epilog=_EPILOG)
@click.argument("kernels", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="KERNEL.ptx|DIR...")
@click.option("--contract", default=None, metavar="NAME",
              help="Take the launch from this suite contract (volta suite list): its arguments, and the threads and "
                   "shared memory of Triton's build of it. Needs the 'triton' extra.")
@click.option("--launch", "launch_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="SPEC.json", help="Take the launch from this JSON launch spec (grid, block, buffers, params; see "
                                        "the README).")
@click.option("--arch", default=None, metavar="TARGET",
              help="With --contract: the Triton build (sm_80, sm_89, sm_90a, sm_100a, sm_120) that supplies threads "
                   "and shared memory. Default: the one nearest the PTX's .target.")
@click.option("--instance", default="verify", show_default=True, type=click.Choice(["verify", "bench"]),
              help="With --contract: the contract instance whose sizes make the launch (verify: small sizes, the "
                   "bench build's tiles; bench: the timed sizes).")
@click.option("--entry", default=None, metavar="KERNEL",
              help="The kernel (.entry) to check when the module has several (default: the file's '// entry:' line, "
                   "the spec's \"kernel\", or the only kernel).")
@click.option("--grid", type=click.Choice(["auto", "enumerate", "symbolic"]), default="auto", show_default=True,
              help="How CTAs are covered: run every CTA, or prove cross-CTA global races and bounds for a "
                   "symbolic pair of CTAs with Z3 (auto: symbolic above 64 CTAs where it applies; a fallback to "
                   "enumeration is said in a note).")
@click.option("--sizes", type=click.Choice(["launch", "symbolic"]), default="launch", show_default=True,
              help="launch: the verdict is for the instance's sizes; symbolic (with --contract): prove bounds and "
                   "global races for every size of the contract at once (Z3), the grid its function of the sizes; "
                   "falls back to the launch's sizes, and says why, where it cannot.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds of emulation per file before its verdict is inconclusive (it says how far it got).")
@click.option("--max-memory", type=MemorySize(), default=None, metavar="SIZE",
              help="Memory ceiling for the process (e.g. 8G, 500M): past it the verdict is 'inconclusive: memory "
                   "limit' instead of exhausting the machine. Default: none.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the result as JSON on stdout (one file: its report; several: {files, summary, exit_code}); "
                   "bad input too.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="Also write a SARIF 2.1.0 log here (code-scanning tools); never overwrites.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Also write a self-contained HTML report here (races as a timeline of the two threads); never "
                   "overwrites.")
@click.option("--equivalence", is_flag=True,
              help="Also prove KERNEL computes what Triton's build for --contract computes (verified, or "
                   "not_equivalent with an input replayed in the emulator); see --reference-arch.")
@click.option("--reference", "reference", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="REF.ptx", help="Prove KERNEL equivalent to this PTX kernel, each with its own launch "
                                      "(buffers matched by name).")
@click.option("--reference-launch", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="SPEC.json", help="Launch spec of --reference (default: its '// launch:' line or REF.json).")
@click.option("--reference-arch", default=None, metavar="TARGET",
              help="With --contract --equivalence: the target of Triton's reference build (default: --arch's).")
@click.option("--certificate", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="With --reference/--equivalence: write a verified proof's certificate (every obligation, "
                   "SMT-LIB lemmas, normal forms) into DIR (new or empty); re-check it with `volta recheck DIR`.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display (it is off anyway when stderr is not a "
                                                  "terminal).")
def check_cmd(kernels: tuple[Path, ...], contract: str | None, launch_path: Path | None, arch: str | None,
              instance: str, entry: str | None, grid: str, sizes: str, timeout: float, max_memory: int | None,
              as_json: bool, sarif_path: Path | None, html_path: Path | None, equivalence: bool,
              reference: Path | None, reference_launch: Path | None, reference_arch: str | None,
              certificate: Path | None, quiet: bool) -> None:
    """Prove each KERNEL.ptx (or every .ptx under DIR) free of data races, barrier divergence, deadlocks,
    out-of-bounds accesses and tensor-memory/mbarrier lifecycle errors for a launch, or show a witness;
    or say what could not be decided. Several files end with a summary table."""
    out = Console(emoji=False, highlight=False, soft_wrap=True)
    err = Console(stderr=True, emoji=False, highlight=False, soft_wrap=True)
    started = time.time()
    try:
        if contract is not None and launch_path is not None:
            raise BadInput("give --contract NAME or --launch spec.json, not both (the contract makes the launch)")
        writable(sarif_path, "--sarif")
        writable(html_path, "--html")
        if html_path is not None and sarif_path is not None and html_path.resolve() == sarif_path.resolve():
            raise BadInput("--sarif and --html name the same file")
        files = collect(kernels)
        if certificate is not None:
            from proofs.certificate import CertificateError, empty_directory

            if len(files) != 1:
                raise BadInput("--certificate certifies one kernel's proof: give one KERNEL.ptx")
            try:
                empty_directory(certificate)
            except CertificateError as e:
                raise BadInput(str(e)) from None
    except BadInput as e:
        _fail(e, as_json, err)
    kw = dict(contract=contract, launch_path=launch_path, arch=arch, instance=instance, entry=entry, grid=grid,
              timeout=timeout, sizes=sizes, max_memory=max_memory, equivalence=equivalence, reference=reference,
              reference_launch=reference_launch, reference_arch=reference_arch, certificate=certificate)
    results: list[CheckResult] = []
    with RunProgress(err, enabled=not quiet) as bar:
        for path in files:
            r = _run_one(path, bar, **kw)
            results.append(r)
            if not as_json:
                from .text_report import print_result

                print_result(r, out, err)
    code = worst(r.exit_code for r in results)
    if as_json:
        payload = results[0].to_json() if len(results) == 1 else {
            "files": [r.to_json() for r in results], "exit_code": int(code),
            "summary": {v: sum(r.verdict.split(":")[0] == v for r in results)
                        for v in dict.fromkeys(r.verdict.split(":")[0] for r in results)}}
        click.echo(json.dumps(strict_json(payload), indent=2))
    elif len(results) > 1:
        from .text_report import print_summary

        print_summary(results, out)
    invocation = {"argv": sys.argv, "started": started, "ended": time.time(), "exit_code": int(code)}
    try:
        if sarif_path is not None:
            from .sarif import to_sarif

            sarif_path.write_text(json.dumps(to_sarif(results, invocation), indent=2))
        if html_path is not None:
            from .html_report import render

            html_path.write_text(render(results, invocation))
    except OSError as e:
        err.print(f"error: cannot write {e.filename}: {e.strerror}", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    sys.exit(int(code))


def _fail(e: BadInput, as_json: bool, err: Console):
    if as_json:
        click.echo(json.dumps({"verdict": "bad_input", "exit_code": EXIT_BAD_INPUT, "error": e.to_json()}, indent=2))
    err.print(e.text(), markup=False)
    sys.exit(EXIT_BAD_INPUT)


@click.command("regress")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("-k", "pattern", default=None, help="Only files whose name contains this text.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds of emulation per file before its verdict is inconclusive.")
def regress_cmd(directory: Path, as_json: bool, pattern: str | None, timeout: float) -> None:
    """Check every .ptx in DIRECTORY whose header states `// expect: VERDICT` (and, optionally, the whole
    verdict in `// verdict: ...`); table of expected vs actual; exit 1 on any mismatch, 2 when no file
    is a case."""
    from rich.table import Table

    everything = sorted(directory.rglob("*.ptx"))
    files = [p for p in everything if pattern is None or pattern in p.name]
    rows = []
    for path in files:
        hdr = header(path)
        expected = hdr.get("expect")
        if expected is None:
            continue
        exact = hdr.get("verdict")  # the whole verdict, where the case is about how far it reaches
        try:
            report = check_file(path, timeout=timeout)
            actual = report.verdict
            detail = report.findings[0].message if report.findings else (report.notes[0] if report.notes else "")
        except BadInput as e:
            actual, detail = "bad_input", str(e).splitlines()[0]
        ok = actual == exact if exact is not None else (actual == expected or actual.split(":")[0] == expected)
        rows.append({"file": str(path.relative_to(directory)), "expected": exact or expected, "actual": actual,
                     "ok": ok, "detail": detail})
    if not rows:
        why = (f"-k {pattern!r} matched none of the {len(everything)} .ptx file(s)" if pattern and not files else
               f"{len(files)} .ptx file{'s' if len(files) != 1 else ''} under {directory}, none with a "
               "'// expect: VERDICT' line in its header")
        click.echo(f"error: no case to run: {why}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        table = Table(title=f"volta regress {directory} ({len(rows)} cases)")
        for col in ("file", "expected", "actual", ""):
            table.add_column(col)
        for r in rows:
            table.add_row(r["file"], r["expected"], r["actual"][:60], "[green]ok" if r["ok"] else "[red]MISMATCH")
        Console(emoji=False, soft_wrap=True).print(table)
        bad = [r for r in rows if not r["ok"]]
        click.echo(f"{len(rows) - len(bad)} passed, {len(bad)} failed")
    sys.exit(0 if all(r["ok"] for r in rows) else 1)
