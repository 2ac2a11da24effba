"""Parse the whole PTX corpus with Volta and with `ptxas -arch=compute_XX` in the same run.

`ptxas -arch=compute_XX` parses and validates PTX without generating SASS, so it is the closest
native baseline for a front end. Volta is timed in-process (as the verifier and the lowering
loop use it); ptxas is timed as a process, as it is always run. Both read the file from disk.

    python bench/parse.py [--repeat 3] [--origin triton|nvcc|handwritten] [--json out.json]

Prints per-origin totals and the overall ratio (Volta / ptxas). Target: <= 3x.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from ptx_parser import parse  # noqa: E402
from tests.corpus import build_corpus  # noqa: E402

_VERSION = re.compile(r"^(\s*\.version\s+)(\d+)\.(\d+)", re.M)


def ptxas_input(text: str) -> str:
    """Local ptxas 13.0 reads PTX up to 9.0: rewrite newer `.version` lines."""
    def repl(m: re.Match) -> str:
        major, minor = int(m.group(2)), int(m.group(3))
        return m.group(0) if (major, minor) <= (9, 0) else f"{m.group(1)}9.0"
    return _VERSION.sub(repl, text, count=1)


def compute_arch(target: str) -> str:
    return target.replace("sm_", "compute_")


def time_volta(text: str, name: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        parse(text, name)
        best = min(best, time.perf_counter() - t0)
    return best


def time_ptxas(path: Path, target: str, repeat: int) -> float | None:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(["ptxas", f"-arch={compute_arch(target)}", str(path), "-o", "/dev/null"],
                           capture_output=True)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            return None
        best = min(best, dt)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per file and tool")
    ap.add_argument("--origin", choices=["triton", "nvcc", "handwritten"], default=None)
    ap.add_argument("--json", type=Path, default=None, help="write per-file timings here")
    args = ap.parse_args()
    console = Console()
    if shutil.which("ptxas") is None:
        console.print("ptxas not found on PATH: no baseline to compare with")
        return 2
    files = [f for f in build_corpus() if args.origin in (None, f.origin)]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            text = Path(f.path).read_text()
            if i == 0:
                parse(text, str(f.path))  # load the LALR tables once, outside the timings
            src = Path(tmp) / "in.ptx"
            src.write_text(ptxas_input(text))
            tv = time_volta(text, str(f.path), args.repeat)
            tp = time_ptxas(src, f.arch, args.repeat)
            rows.append({"file": str(f.path), "origin": f.origin, "target": f.arch,
                         "bytes": len(text), "lines": text.count("\n"), "volta_s": tv, "ptxas_s": tp})
    table = Table(title=f"Parsing {len(rows)} corpus files (best of {args.repeat})")
    for col in ("origin", "files", "MB", "volta s", "ptxas s", "ratio", "median file ratio"):
        table.add_column(col, justify="right")
    groups = sorted({r["origin"] for r in rows}) + ["all"]
    summary = {}
    for g in groups:
        sel = [r for r in rows if (g == "all" or r["origin"] == g) and r["ptxas_s"] is not None]
        if not sel:
            continue
        tv = sum(r["volta_s"] for r in sel)
        tp = sum(r["ptxas_s"] for r in sel)
        med = statistics.median(r["volta_s"] / r["ptxas_s"] for r in sel)
        summary[g] = {"files": len(sel), "volta_s": tv, "ptxas_s": tp, "ratio": tv / tp}
        table.add_row(g, str(len(sel)), f"{sum(r['bytes'] for r in sel) / 1e6:.2f}", f"{tv:.3f}",
                      f"{tp:.3f}", f"{tv / tp:.2f}x", f"{med:.2f}x")
    console.print(table)
    rejected = [r["file"] for r in rows if r["ptxas_s"] is None]
    if rejected:
        console.print(f"ptxas rejected {len(rejected)} file(s) (excluded): {rejected[:5]}")
    slowest = sorted(rows, key=lambda r: r["volta_s"], reverse=True)[:5]
    console.print("slowest files for Volta: " + ", ".join(
        f"{Path(r['file']).name} {r['volta_s'] * 1e3:.1f} ms ({r['lines']} lines)" for r in slowest))
    console.print(f"RATIO volta/ptxas = {summary['all']['ratio']:.2f}x (target <= 3x)")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "files": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
