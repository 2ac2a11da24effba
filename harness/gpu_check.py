"""Run every suite kernel on a CUDA GPU: check it against its float64 reference, then time it.

    python -m harness.gpu_check --json out.json                # every contract, bench instance
    python -m harness.gpu_check gemm_fp16 softmax --dist all   # some kernels, every distribution

Needs only numpy, torch (CUDA), triton and this package on PYTHONPATH.  Inputs are generated on
the host (seeded), the reference runs in float64 numpy on the CPU, the kernel runs through
Triton's normal JIT launch, timing uses ``triton.testing.do_bench`` (median of repeated runs,
after warm-up).  "GB/s" counts each tensor read or written once: a lower bound on traffic.
Exit status: 0 if every check passed, 1 if any failed, 2 on bad usage / no GPU.

The float64 host reference dominates the wall time at bench sizes (references go one slice at a
time through BLAS matmuls; the 1G-element cross-entropy spends most of its time generating inputs).  Under a
time limit, run subsets, or pass ``--max-check-elements 2e8`` to check the largest kernels at
their verify instance (the table marks those "(at verify)") while still timing the bench one.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import traceback
from typing import Any

import numpy as np

from harness.contract import Contract
from harness.interpret import from_torch, to_torch
from harness.judge.roofline import min_bytes


def input_elements(contract: Contract, instance: str) -> int:
    r = contract.resolve(instance)
    return sum(int(np.prod(r.shapes[t.name], dtype=np.int64)) for t in contract.tensors if t.is_input)


def check_one(contract: Contract, instance: str, dist: str, seed: int, bench: bool,
              skip_reference: bool, check_instance: str | None = None, device: str = "cuda") -> dict[str, Any]:
    """Launch at ``instance``, compare with the reference, time with do_bench.  When
    ``check_instance`` differs from ``instance`` the comparison is made by a separate launch at
    that instance (the record's ``checked_at`` says so) and ``instance`` is only timed."""
    check_instance = check_instance or instance
    rec: dict[str, Any] = {"name": contract.name, "instance": instance, "checked_at": check_instance}
    if check_instance != instance and not skip_reference:
        rec["check"] = _run(contract, check_instance, dist, seed, False, False, device=device)
        rec["outputs"], rec["ok"] = rec["check"].pop("outputs"), rec["check"]["ok"]
        rec.update(_run(contract, instance, dist, seed, bench, True, keep_ok=False, device=device))
        return rec
    rec.update(_run(contract, instance, dist, seed, bench, skip_reference, device=device))
    return rec


def _run(contract: Contract, instance: str, dist: str, seed: int, bench: bool,
         skip_reference: bool, keep_ok: bool = True, device: str = "cuda") -> dict[str, Any]:
    import torch
    import triton.testing
    r = contract.resolve(instance)
    rec: dict[str, Any] = {"dims": r.dims, "distribution": dist, "grid": list(r.grid),
                           "num_warps": contract.num_warps}
    t0 = time.perf_counter()
    arrays = contract.make_inputs(instance, dist, seed)
    rec["gen_seconds"] = round(time.perf_counter() - t0, 2)
    tensors = {t.name: to_torch(arrays[t.name], t.dtype, device) for t in contract.tensors}
    args = contract.kernel_args(tensors, instance)

    def run() -> Any:
        return contract.kernel[r.grid](*args, **r.constexprs, num_warps=contract.num_warps,
                                       num_stages=contract.num_stages)

    compiled = run()
    if device == "cuda":
        torch.cuda.synchronize()
    md = getattr(compiled, "metadata", None)
    rec["shared"] = int(getattr(md, "shared", -1)) if md is not None else None
    rec["registers"] = getattr(compiled, "n_regs", None)
    rec["spills"] = getattr(compiled, "n_spills", None)
    if not skip_reference:
        got = {t.name: from_torch(tensors[t.name]) for t in contract.tensors if t.is_output}
        t0 = time.perf_counter()
        with np.errstate(all="ignore"):
            want = contract.run_reference(arrays, instance)
            scale = contract.abs_scale(arrays, instance)
            cmps = contract.compare(got, want, scale)
        rec["ref_seconds"] = round(time.perf_counter() - t0, 2)
        rec["outputs"] = [{"name": c.name, "dtype": c.dtype, "ok": c.ok, "worst": c.worst, "max_abs": c.max_abs,
                           "max_rel": c.max_rel, "rtol": c.rtol, "atol": c.atol, "bad": c.bad,
                           "detail": c.detail} for c in cmps]
        rec["ok"] = all(c.ok for c in cmps)
    elif keep_ok:
        rec["ok"] = None
    if bench:
        ms = float(triton.testing.do_bench(run))
        rec["ms"] = ms
        rec["gbps"] = min_bytes(contract, instance) / (ms * 1e-3) / 1e9
    del tensors, args
    if device == "cuda":
        torch.cuda.empty_cache()
    return rec


def _row(rec: dict[str, Any]) -> str:
    dims = ",".join(f"{k}={v}" for k, v in rec["dims"].items())
    if "error" in rec:
        return f"{rec['name']:<20} {rec['distribution']:<8} {dims:<34} ERROR {rec['error']}"
    outs = rec.get("outputs") or []
    err = " ".join(f"{o['name']}:{o['worst']:.2g}" for o in outs) or "-"
    if rec.get("checked_at") != rec.get("instance"):
        err += f" (at {rec.get('checked_at')})"
    verdict = {True: "ok", False: "FAIL", None: "skip"}[rec["ok"]]
    ms = f"{rec['ms']:9.4f}" if "ms" in rec else "        -"
    gbps = f"{rec['gbps']:8.1f}" if "gbps" in rec else "       -"
    secs = f"{rec.get('gen_seconds', 0):5.1f} {rec.get('ref_seconds', 0):5.1f}"
    return f"{rec['name']:<20} {rec['distribution']:<8} {dims:<34} {verdict:<4} {err:<24} {ms} {gbps} {secs}"


def _write_json(path: str, env: dict[str, Any], records: list[dict[str, Any]]) -> None:
    with open(path, "w") as f:
        json.dump({"env": env, "records": records}, f, indent=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.gpu_check", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="contracts to run (default: all)")
    ap.add_argument("--instance", default="bench")
    ap.add_argument("--dist", default="normal", help="a distribution name, or 'all'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-bench", action="store_true", help="check only, no timing")
    ap.add_argument("--skip-reference", action="store_true", help="time only, no reference check")
    ap.add_argument("--check-instance", help="compare at this instance instead (the timed one is --instance)")
    ap.add_argument("--max-check-elements", type=float, default=0,
                    help="compare at the verify instance when the timed instance has more input elements "
                         "than this (the float64 host reference is the slow part); 0 = no limit")
    ap.add_argument("--device", default="cuda",
                    help="torch device; 'cpu' only with TRITON_INTERPRET=1 and --no-bench (a dry run of this script)")
    ap.add_argument("--json", help="write the records here")
    ns = ap.parse_args(argv)
    try:
        import torch
        import triton
    except ImportError as e:
        print(f"error: {e}: the GPU check needs the 'torch' extra with a CUDA build of torch "
              "(pip install 'volta[torch]')", file=sys.stderr)
        return 2
    if ns.device == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    if ns.device != "cuda" and not ns.no_bench:
        print("error: timing needs CUDA; pass --no-bench with --device cpu", file=sys.stderr)
        return 2
    from harness import suite
    try:
        contracts = [suite.get(n) for n in ns.names] if ns.names else suite.all_contracts()
    except suite.SuiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cap = torch.cuda.get_device_capability() if ns.device == "cuda" else (12, 0)
    arch = cap[0] * 10 + cap[1]
    name = torch.cuda.get_device_name() if ns.device == "cuda" else f"{ns.device} (Triton interpreter)"
    env = {"device": name, "capability": arch, "torch": torch.__version__,
           "triton": triton.__version__, "python": platform.python_version()}
    print(f"# {env['device']} (sm_{arch}), torch {env['torch']}, triton {env['triton']}")
    print(f"{'kernel':<20} {'dist':<8} {'dims':<34} {'chk':<4} {'worst err/tol':<24} {'ms':>9} {'GB/s':>8} "
          f"{'gen_s':>5} {'ref_s':>5}")
    records = []
    for c in contracts:
        if arch < c.min_arch:
            rec = {"name": c.name, "ok": None, "skipped": f"needs sm_{c.min_arch}, device is sm_{arch}"}
            print(f"{c.name:<20} skipped: {rec['skipped']}")
            records.append(rec)
            continue
        dists = c.distributions_for() if ns.dist == "all" else (ns.dist,)
        for d in dists:
            if d not in c.distributions_for():
                d = c.distributions_for()[0]
            check_at = ns.check_instance or ns.instance
            if ns.max_check_elements and input_elements(c, ns.instance) > ns.max_check_elements:
                check_at = "verify"
            try:
                rec = check_one(c, ns.instance, d, ns.seed, not ns.no_bench, ns.skip_reference, check_at, ns.device)
            except Exception as e:  # keep going; the record says what broke
                rec = {"name": c.name, "instance": ns.instance, "distribution": d, "ok": False,
                       "dims": c.instances.get(ns.instance, {}), "error": f"{type(e).__name__}: {e}",
                       "traceback": traceback.format_exc(limit=8)}
            print(_row(rec), flush=True)
            records.append(rec)
            if ns.json:                       # after every run: a run cut off by a time limit keeps its records
                _write_json(ns.json, env, records)
    if ns.json:
        _write_json(ns.json, env, records)
    failed = [r for r in records if r.get("ok") is False]
    print(f"# {len(records)} runs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
