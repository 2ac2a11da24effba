"""Run suite kernels through Triton's CPU interpreter and compare with their float64 references.

Triton only interprets kernels defined *after* ``TRITON_INTERPRET=1`` is set, so this module is
meant to run in its own process::

    python -m harness.interpret relu softmax          # a table
    python -m harness.interpret --all --json out.json # every contract, machine-readable

:func:`run_in_subprocess` does that from an ordinary process (tests use it).
"""
from __future__ import annotations

import os

if __name__ == "__main__":  # must precede any triton import in this process
    os.environ["TRITON_INTERPRET"] = "1"

import argparse
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from harness import dtypes as _dt
from harness.contract import Contract


def to_torch(arr: np.ndarray, dtype_name: str, device: str = "cpu") -> Any:
    """Host array -> torch tensor of the contract dtype (bf16/fp8 converted from float32)."""
    import torch
    dt = _dt.dtype(dtype_name)
    t = torch.from_numpy(np.array(arr, copy=True, order="C"))  # never alias the caller's array
    if dt.name in ("bf16", "fp8e4m3", "fp8e5m2"):
        t = t.to(getattr(torch, dt.torch))
    return t.to(device)


def from_torch(t: Any) -> np.ndarray:
    import torch
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        t = t.to(torch.float32)
    return t.detach().cpu().numpy()


def launch(contract: Contract, arrays: dict[str, np.ndarray], instance: str, device: str = "cpu"
           ) -> tuple[dict[str, Any], Any]:
    """Build torch arguments and return (torch tensors by name, a zero-arg launcher)."""
    r = contract.resolve(instance)
    tensors = {t.name: to_torch(arrays[t.name], t.dtype, device) for t in contract.tensors}
    args = contract.kernel_args(tensors, instance)

    def run() -> None:
        contract.kernel[r.grid](*args, **r.constexprs, num_warps=contract.num_warps,
                                num_stages=contract.num_stages)
    return tensors, run


def check_contract(contract: Contract, instance: str = "verify", seed: int = 0,
                   distributions: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Interpret ``contract`` once per distribution; a JSON-able summary."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("TRITON_INTERPRET=1 must be set before triton is imported; use run_in_subprocess")
    runs = []
    for dist in distributions or contract.distributions_for():
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"distribution": dist}
        try:
            arrays = contract.make_inputs(instance, dist, seed)
            tensors, run = launch(contract, arrays, instance)
            with np.errstate(all="ignore"):
                run()
                got = {t.name: from_torch(tensors[t.name]) for t in contract.tensors if t.is_output}
                want = contract.run_reference(arrays, instance)
                scale = contract.abs_scale(arrays, instance)
                cmps = contract.compare(got, want, scale)
            entry["ok"] = all(c.ok for c in cmps)
            entry["outputs"] = [{"name": c.name, "ok": c.ok, "max_abs": c.max_abs, "max_rel": c.max_rel,
                                 "bad": c.bad, "rtol": c.rtol, "atol": c.atol, "text": str(c)} for c in cmps]
        except Exception as e:  # report, do not abort the other distributions
            entry["ok"] = False
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["traceback"] = traceback.format_exc(limit=6)
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        runs.append(entry)
    return {"name": contract.name, "instance": instance, "ok": all(r["ok"] for r in runs), "runs": runs}


def load_file(path: str) -> Contract:
    """The ``CONTRACT`` of a kernel module outside the suite (e.g. a deliberately broken one)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"_volta_contract_{Path(path).stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not a Python module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    contract = getattr(mod, "CONTRACT", None)
    if not isinstance(contract, Contract):
        raise ValueError(f"{path}: no CONTRACT of type Contract")
    return contract


def run_in_subprocess(names: list[str] | None = None, instance: str = "verify", seed: int = 0,
                      timeout: float = 900.0, files: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Run this module in a fresh interpreter-mode process; results by contract name.
    ``files`` are kernel modules outside the suite, run instead of suite contracts."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "harness.interpret", "--json", str(out), "--instance", instance,
               "--seed", str(seed), "--quiet"]
        if files:
            cmd += [arg for f in files for arg in ("--file", str(f))]
        cmd += names if names else ([] if files else ["--all"])
        env = dict(os.environ, TRITON_INTERPRET="1")
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=root)
        if not out.exists():
            raise RuntimeError(f"interpreter run failed (rc={proc.returncode}):\n{proc.stderr[-3000:]}")
        return {r["name"]: r for r in json.loads(out.read_text())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.interpret", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all", action="store_true", help="every contract in the suite")
    ap.add_argument("--file", action="append", default=[], help="a kernel module outside the suite")
    ap.add_argument("--instance", default="verify")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dist", action="append", help="only this distribution (repeatable)")
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--quiet", action="store_true")
    ns = ap.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("error: run as `python -m harness.interpret` (TRITON_INTERPRET=1 is set there)", file=sys.stderr)
        return 2
    from harness import suite
    try:
        contracts = [load_file(f) for f in ns.file]
        if ns.all or ns.names or not ns.file:
            contracts += suite.all_contracts() if ns.all or not ns.names else [suite.get(n) for n in ns.names]
    except (suite.SuiteError, ValueError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    results = []
    for c in contracts:
        res = check_contract(c, ns.instance, ns.seed, tuple(ns.dist) if ns.dist else None)
        results.append(res)
        if not ns.quiet:
            for r in res["runs"]:
                status = "ok  " if r["ok"] else "FAIL"
                detail = r.get("error") or "; ".join(o["text"] for o in r.get("outputs", []) if not o["ok"])
                print(f"{status} {c.name:<16} {r['distribution']:<8} {r['seconds']:7.2f}s {detail}")
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
