"""Cost of `volta check` as the problem grows: one PTX (the bench build), 1x, 16x and 256x the elements.

    python bench/growth.py [--arch sm_80] [--timeout 300] [--max-gib 16] [--json out.json] [names...]

For each kernel the bench instance's grid-driving dim is divided by 256 (1x), 16 (16x) and 1
(256x, the bench instance itself); the other dims stay, so the PTX (compiled once, at the bench
instance) is the same in every row. Each check runs in its own child under the limits
(bench/limits.py): wall time of the check, peak RSS of the child, verdict and grid method. The
ratio column is cost at 256x over cost at 1x, measured in the same run (flat: close to 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from limits import run_limited  # noqa: E402

#: The dim whose size drives the grid (and the elements) of each kernel's bench instance.
GROWING = {"relu": "N", "sigmoid": "N", "swiglu": "M", "lion": "N", "rmsnorm": "M", "layernorm": "M",
           "softmax": "M", "rowsum": "M", "gemm_fp16": "M"}
FACTORS = (256, 16, 1)  # divisor of the bench dim: 1x, 16x, 256x the elements


def _one(name: str, arch: str, dim: str, value: int, timeout: float) -> dict:
    import ptx_parser
    import tcgen05  # noqa: F401
    from harness.compile import compile_contract
    from harness.emulate import launch_for
    from harness.suite import get
    from symexec import load_program, time_limit
    from symexec.check import check_kernel

    c = get(name)
    compiled = compile_contract(c, arch, instance="bench")
    dims = dict(c.instances["bench"], **{dim: value})
    c.instances["_growth"] = dims
    launch = launch_for(c, compiled, c.make_inputs("_growth", "normal", 0, lazy=True), "_growth")
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
    t0, c0 = time.perf_counter(), time.process_time()
    with time_limit(timeout):
        rep = check_kernel(prog, launch)
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "verdict": rep.verdict, "ctas": launch.num_ctas,
            "buffer_mib": sum(b.nbytes for b in launch.buffers.values()) / 2**20,
            "grid_method": str(rep.stats.get("grid_method", ""))[:80]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--max-gib", type=float, default=16)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--one", nargs=4, metavar=("NAME", "DIM", "VALUE", "TIMEOUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        name, dim, value, timeout = args.one
        print(json.dumps(_one(name, args.arch, dim, int(value), float(timeout))))
        return 0
    from harness.suite import get

    rows = []
    for name in args.names or list(GROWING):
        dim = GROWING[name]
        base = get(name).instances["bench"][dim]
        for f in FACTORS:
            value = max(16, base // f)
            m = run_limited([sys.executable, __file__, "--arch", args.arch, "--one", name, dim, str(value),
                             repr(args.timeout)], args.timeout + 120, int(args.max_gib * 2**30), cwd=str(ROOT),
                            env=dict(os.environ, PYTHONWARNINGS="ignore"))
            rec = {"kernel": name, "arch": args.arch, "dim": dim, "value": value, "scale": f"{FACTORS[0] // f}x",
                   "peak_rss_mib": m.peak_rss_mib, "wall_seconds": m.wall_seconds, "load1": os.getloadavg()[0]}
            try:
                rec.update(json.loads(m.stdout.strip().splitlines()[-1]))
            except (json.JSONDecodeError, IndexError):
                rec.update(verdict="error" if not m.timed_out else "timeout", detail=m.stderr.strip()[-200:])
            rows.append(rec)
            print(f"{name} {dim}={value} ({rec['scale']}): {rec.get('seconds', float('nan')):.2f} s check "
                  f"({rec.get('cpu_seconds', float('nan')):.2f} CPU s, load {rec['load1']:.1f}), "
                  f"{m.peak_rss_mib:.0f} MiB peak, {rec.get('verdict')}", flush=True)
    print("\n| kernel | scale | dim | CTAs | buffers MiB | check s | check CPU s | peak MiB | verdict | grid method "
          "| load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kernel']} | {r['scale']} | {r['dim']}={r['value']} | {r.get('ctas', '-')} | "
              f"{r.get('buffer_mib', 0):.1f} | {r.get('seconds', float('nan')):.2f} | "
              f"{r.get('cpu_seconds', float('nan')):.2f} | {r['peak_rss_mib']:.0f} | {r.get('verdict')} | "
              f"{r.get('grid_method', '-').split(' (')[0]} | {r['load1']:.1f} |")
    print("\n| kernel | time 256x/1x | CPU time 256x/1x | memory 256x/1x |")
    print("|---|---|---|---|")
    for name in dict.fromkeys(r["kernel"] for r in rows):
        rs = {r["scale"]: r for r in rows if r["kernel"] == name}
        lo, hi = rs.get("1x"), rs.get(f"{FACTORS[0]}x")
        if lo and hi and "seconds" in lo and "seconds" in hi:
            print(f"| {name} | {hi['seconds'] / lo['seconds']:.2f} | {hi['cpu_seconds'] / lo['cpu_seconds']:.2f} | "
                  f"{hi['peak_rss_mib'] / lo['peak_rss_mib']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
