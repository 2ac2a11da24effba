"""Triton-interpreter outputs for differential testing: `python -m harness.interp_dump OUT.npz ...`.

Runs each named contract once per (distribution, seed) under TRITON_INTERPRET=1 (set by
`interpreter_outputs`, which runs this module in a fresh process) and saves every output tensor
as `<contract>/<distribution>/<seed>/<tensor>` in one .npz file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def interpreter_outputs(names: list[str], distributions: list[str], seed: int = 0, instance: str = "verify",
                        timeout: float = 1800.0, repeat: int = 0) -> dict[str, np.ndarray]:
    """{"name/dist/seed/tensor": array} computed by Triton's interpreter in a subprocess; with
    `repeat` > 0 also "__seconds__/name/dist": the mean time of one interpreted launch."""
    root = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.npz"
        cmd = [sys.executable, "-m", "harness.interp_dump", str(out), "--instance", instance,
               "--seed", str(seed), "--repeat", str(repeat), *[a for d in distributions for a in ("--dist", d)], *names]
        env = dict(os.environ, TRITON_INTERPRET="1")
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=root)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"interpreter run failed (rc={proc.returncode}):\n{proc.stderr[-3000:]}")
        with np.load(out) as data:
            return {k: data[k] for k in data.files}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.interp_dump")
    ap.add_argument("out")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--dist", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--instance", default="verify")
    ap.add_argument("--repeat", type=int, default=0, help="timed re-runs (saved as __seconds__/...)")
    ns = ap.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("error: TRITON_INTERPRET=1 must be set (use interpreter_outputs())", file=sys.stderr)
        return 2
    from harness import suite
    from harness.interpret import from_torch, launch

    saved: dict[str, np.ndarray] = {}
    for name in ns.names:
        c = suite.get(name)
        for dist in ns.dist or ["normal"]:
            arrays = c.make_inputs(ns.instance, dist, ns.seed)
            tensors, run = launch(c, arrays, ns.instance)
            with np.errstate(all="ignore"):
                run()  # the first call also traces the kernel: not timed
                t0 = time.perf_counter()
                for _ in range(ns.repeat):
                    run()
                saved[f"__seconds__/{name}/{dist}"] = np.asarray((time.perf_counter() - t0) / max(1, ns.repeat))
            for t in c.tensors:
                if t.is_output:
                    saved[f"{name}/{dist}/{ns.seed}/{t.name}"] = from_torch(tensors[t.name])
    np.savez(ns.out, **saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
