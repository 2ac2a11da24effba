"""Verification time and peak memory per suite kernel, grid scaling, and the ratio to SentryWard.

    python bench/verify.py [--arch sm_90a] [--sentryward /path/to/sentryward] [names...]

Part 1: every suite kernel (verification-sized instance) checked by `volta check` and by
SentryWard on the same PTX and launch, each in its own process (wall time and peak RSS measured
the same way for both), with the ratio Volta / SentryWard.
Part 2: the same kernels with the grid scaled to 1, 4 and 16 CTAs (a problem dimension that
drives the grid is scaled), to show how the cost grows with the grid.

SentryWard is a peer tool installed in its own virtualenv (python -m venv /tmp/sw &&
/tmp/sw/bin/pip install sentryward); without it Part 1 prints Volta's numbers alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _volta_one(name: str, arch: str, scale: int) -> dict:
    """Run in a child process: check one kernel, report time and peak RSS."""
    import ptx_parser
    from harness.compile import compile_contract
    from harness.emulate import launch_for
    from harness.suite import get
    from symexec import load_program
    from symexec.check import check_kernel

    c = get(name)
    arrays = c.make_inputs("verify", "normal", 0)
    compiled = compile_contract(c, arch)
    launch = launch_for(c, compiled, arrays, "verify")
    if scale:
        launch = _scaled(c, compiled, scale)
    t0 = time.perf_counter()
    module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
    report = check_kernel(load_program(module, compiled.entry), launch)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"verdict": report.verdict, "seconds": dt, "peak_rss_mib": rss, "ctas": launch.num_ctas,
            "grid_method": str(report.stats.get("grid_method", "enumerate"))}


def _scaled(c, compiled, target_ctas: int):
    """The contract at its verify instance with one grid-driving dimension scaled so the grid has
    `target_ctas` CTAs (or as close as that dimension allows)."""
    from harness.emulate import launch_for

    base = c.resolve("verify")
    n0 = base.grid[0] * base.grid[1] * base.grid[2]
    best = None
    for dim, v in base.dims.items():
        for value in sorted({max(1, (v * m) // 16) for m in range(1, 16 * 64)} | {v * m for m in range(64, 4097, 64)}):
            dims = dict(base.dims, **{dim: value})
            c.instances["_scaled"] = dims
            try:
                r = c.resolve("_scaled")
            except Exception:  # noqa: BLE001 - an invalid scaling: try another
                continue
            n = r.grid[0] * r.grid[1] * r.grid[2]
            if n >= target_ctas and (best is None or n < best[0]):
                best = (n, dims)
            if n >= target_ctas:
                break
        if best is not None and best[0] == target_ctas:
            break
    if best is not None:
        c.instances["_scaled"] = best[1]
        arrays = c.make_inputs("_scaled", "normal", 0)
        return launch_for(c, compiled, arrays, "_scaled")
    raise ValueError(f"{c.name}: no dimension scales the grid to {target_ctas} CTAs (base {n0})")


def _sentryward(sw: str, name: str, arch: str) -> dict | None:
    from harness.compile import compile_contract
    from harness.suite import get

    c = get(name)
    compiled = compile_contract(c, arch)
    r = c.resolve("verify")
    decls, args = [], []
    for p in compiled.params:
        if p.arg is None:
            continue
        if p.is_pointer:
            decls.append({"parameter": p.name, "name": p.arg, "type": "pointer", "space": "global", "object": p.arg})
        else:
            ty = p.ptx_type.lstrip(".")
            ty = {"b32": "u32", "b64": "u64"}.get(ty, ty)
            decls.append({"parameter": p.name, "name": p.arg, "type": ty})
            v = r.scalars[p.arg]
            args.append({"field": p.arg, "value": v})
    spec = {"schema": "spverify.kernel-input/v1", "entry": compiled.entry,
            "launch": {"grid_dim": list(r.grid), "block_dim": [compiled.threads_per_block, 1, 1],
                       "dynamic_shared_bytes": compiled.shared},
            "declarations": decls, "arguments": args}
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / f"{name}.ptx"
        ptx.write_text(compiled.ptx)
        inp = Path(tmp) / "input.json"
        inp.write_text(json.dumps(spec))
        t0 = time.perf_counter()
        proc = subprocess.run([sw, str(ptx), "--input", str(inp), "--timeout", "300"], capture_output=True,
                              text=True, timeout=400)
        wall = time.perf_counter() - t0
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"result": f"error rc={proc.returncode}: {proc.stderr.strip()[-120:]}", "seconds": wall,
                "peak_rss_mib": float("nan")}
    return {"result": out.get("result"), "seconds": wall, "peak_rss_mib": out.get("peak_rss_mib", float("nan"))}


def _child(name: str, arch: str, scale: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--one", name, arch, str(scale)], capture_output=True,
                          text=True, cwd=str(ROOT), env=dict(os.environ, PYTHONWARNINGS="ignore"))
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"verdict": f"error: {proc.stderr.strip()[-120:]}", "seconds": float("nan"),
                "peak_rss_mib": float("nan"), "ctas": 0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--sentryward", default=shutil.which("sentryward") or "/tmp/sw/bin/sentryward")
    ap.add_argument("--scaling", nargs="*", default=["relu", "softmax", "layernorm", "gemm_fp16", "flash_attention"])
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        name, arch, scale = args.one
        print(json.dumps(_volta_one(name, arch, int(scale))))
        return 0
    from rich.console import Console
    from rich.table import Table

    from harness.suite import all_contracts

    console = Console(width=200)
    cap = int("".join(ch for ch in args.arch[3:] if ch.isdigit()))
    contracts = [c for c in all_contracts() if (not args.names or c.name in args.names) and cap >= c.min_arch]
    have_sw = Path(args.sentryward).exists()
    t1 = Table(title=f"volta check vs SentryWard, verify instances, {args.arch} (each in its own process)")
    for col in ("kernel", "CTAs", "volta verdict", "volta s", "volta MiB", "SentryWard result", "SW s", "SW MiB",
                "time ratio"):
        t1.add_column(col, justify="right")
    ratios = []
    for c in contracts:
        v = _child(c.name, args.arch, 0)
        sw = _sentryward(args.sentryward, c.name, args.arch) if have_sw else None
        ratio = ""
        if sw and math.isfinite(v["seconds"]) and sw["seconds"] > 0:
            ratios.append(v["seconds"] / sw["seconds"])
            ratio = f"{ratios[-1]:.2f}x"
        t1.add_row(c.name, str(v["ctas"]), str(v["verdict"])[:28], f"{v['seconds']:.2f}", f"{v['peak_rss_mib']:.0f}",
                   str(sw["result"])[:28] if sw else "-", f"{sw['seconds']:.2f}" if sw else "-",
                   f"{sw['peak_rss_mib']:.0f}" if sw else "-", ratio)
    console.print(t1)
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        console.print(f"GEOMEAN time volta/SentryWard = {gm:.2f}x over {len(ratios)} kernels")
    sizes = (1, 4, 16, 256, 1024)
    t2 = Table(title="Grid scaling: volta check (grid=auto: every CTA up to 64, a symbolic CTA pair above) "
                     "time and peak MiB")
    for col in ("kernel", *[f"{k} CTAs" for k in sizes], "1024/16 time"):
        t2.add_column(col, justify="right")
    for name in args.scaling:
        cells = []
        times = []
        for k in sizes:
            v = _child(name, args.arch, k)
            times.append(v["seconds"])
            method = "sym" if str(v.get("grid_method", "")).startswith("symbolic") else "enum"
            cells.append(f"{v['seconds']:.2f}s {v['peak_rss_mib']:.0f}MiB ({v['ctas']}, {method})")
        growth = f"{times[-1] / times[2]:.1f}x" if times[2] and math.isfinite(times[2]) else "-"
        t2.add_row(name, *cells, growth)
    console.print(t2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
