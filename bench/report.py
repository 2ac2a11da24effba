"""What the pair benches (bench/equiv.py, bench/certificates.py) share: their common options, the
load line that heads each table, and writing the table and its records under ``--out``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_run_options(ap: argparse.ArgumentParser, *, name: str, max_memory: str) -> None:
    """``--timeout``, ``--max-memory``, ``--out`` and ``--name`` (the file stem under ``--out``)."""
    ap.add_argument("--timeout", type=float, default=600.0, help="wall-clock limit per run, seconds")
    ap.add_argument("--max-memory", default=max_memory, help="address-space cap per run (e.g. 6G)")
    ap.add_argument("--out", type=Path, default=None, help="write NAME.md and NAME.json here")
    ap.add_argument("--name", default=name, help="file name stem under --out")


def load_line(start: float, end: float) -> str:
    """The sentence that heads a table: the 1-minute load average before and after the runs."""
    return (f"Load average (1 min) at the start: {start:.1f}, at the end: {end:.1f} (2-core machine shared "
            "with other jobs: wall times are inflated; CPU seconds are the tool's own).")


def write_report(out: Path | None, name: str, table: str, records: list[dict]) -> None:
    """Print the table; with ``--out``, also write ``NAME.md`` (the table) and ``NAME.json`` (the records)."""
    print(table)
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(table + "\n")
    (out / f"{name}.json").write_text(json.dumps(records, indent=1))
