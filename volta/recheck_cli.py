"""`volta recheck DIR`: re-validate an equivalence certificate (written by `volta check ... --certificate DIR`).

Runs without the executor: this module imports only click, rich and proofs.recheck (which imports
neither symexec nor semantics nor the prover's normal form). Exit codes: 0 every obligation
re-validates, 1 one does not (each named), 2 bad input (not a certificate, a missing or changed file,
malformed JSON).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console

__all__ = ["recheck_cmd"]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


@click.command("recheck", epilog="\b\nExit codes: 0 every obligation re-validates, 1 one does not (named), "
                                 "2 bad input\n(not a certificate, a missing or changed file).")
@click.argument("directory", type=click.Path(path_type=Path), metavar="DIR")
@click.option("--points", default=2, show_default=True, type=click.IntRange(min=1, max=64),
              help="Random input points at which each term is evaluated against its normal form.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the random points.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def recheck_cmd(directory: Path, points: int, seed: int, as_json: bool) -> None:
    """Re-validate the certificate in DIR with a second solver (cvc5) and an independent normal-form
    checker, without running the kernels."""
    try:
        from proofs.recheck import BadCertificate, recheck
    except ImportError as e:  # mpmath: the certificates extra
        Console(stderr=True, emoji=False, highlight=False, soft_wrap=True).print(
            f"error: volta recheck needs {e.name} (pip install 'volta[certificates]')", markup=False)
        sys.exit(EXIT_BAD_INPUT)

    out = Console(emoji=False, highlight=False, soft_wrap=True)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        rep = recheck(directory, points=points, seed=seed)
    except BadCertificate as e:
        if as_json:
            click.echo(json.dumps({"ok": False, "error": str(e), "exit_code": EXIT_BAD_INPUT}, indent=2))
        else:
            Console(stderr=True, emoji=False, highlight=False, soft_wrap=True).print(f"error: {e}", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    seconds = {"wall": round(time.perf_counter() - t0, 3), "cpu": round(time.process_time() - c0, 3)}
    code = EXIT_OK if rep.ok else EXIT_FAILED
    if as_json:
        click.echo(json.dumps({**rep.to_json(), "seconds": seconds, "exit_code": code}, indent=2))
        sys.exit(code)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(rep.checked.items())) or "nothing"
    if rep.ok:
        out.print(f"[bold green]re-validated[/] {directory}: {counts} ({seconds['wall']:.2f} s)")
    else:
        out.print(f"[bold red]{len(rep.failures)} obligation(s) did not re-validate[/] in {directory} "
                  f"(re-validated: {counts})")
        for f in rep.failures[:20]:
            out.print(f"  {f.describe()}", markup=False)
        if len(rep.failures) > 20:
            out.print(f"  ... and {len(rep.failures) - 20} more", markup=False)
    if rep.error_bound_log2 > float("-inf"):
        out.print(f"normal forms compared in GF(2^61-1): probability that a difference was missed at most "
                  f"2^{rep.error_bound_log2:.0f} (all obligations together)", markup=False)
    for a in rep.assumptions:
        out.print(f"assumes: {a}", markup=False)
    for n in rep.notes:
        out.print(f"note: {n}", markup=False)
    sys.exit(code)
