"""Every suite kernel, run by Triton's CPU interpreter at its verify instance over every input
distribution, matches its float64 reference within tolerance; broken kernels are caught.

The interpreter needs ``TRITON_INTERPRET=1`` before Triton is imported, so all runs happen in
one child process (``python -m harness.interpret``) per module of tests.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import suite
from harness.interpret import run_in_subprocess

BROKEN = Path(__file__).parent / "data" / "broken_kernels"
NAMES = [c.name for c in suite.all_contracts()]


@pytest.fixture(scope="module")
def results() -> dict:
    return run_in_subprocess(None)


def test_registry():
    assert len(NAMES) == len(set(NAMES)) >= 14
    for name in ("relu", "sigmoid", "swiglu", "rmsnorm", "layernorm", "softmax", "rope", "gemv", "rowsum",
                 "gemm_fp16", "gemm_fp8", "gemm_silu", "conv2d", "flash_attention"):
        assert suite.get(name).name == name
    with pytest.raises(suite.SuiteError) as ei:
        suite.get("no_such_kernel")
    assert "unknown kernel 'no_such_kernel'" in str(ei.value) and "relu" in str(ei.value)


@pytest.mark.parametrize("name", NAMES)
def test_interpreter_matches_reference(results, name):
    res = results[name]
    contract = suite.get(name)
    ran = [r["distribution"] for r in res["runs"]]
    assert ran == list(contract.distributions_for())
    failures = []
    for r in res["runs"]:
        if not r["ok"]:
            why = r.get("error") or "; ".join(o["text"] for o in r["outputs"] if not o["ok"])
            failures.append(f"{r['distribution']}: {why}")
        else:
            assert r["outputs"], "no outputs compared"
    assert not failures, "\n".join(failures)


def test_verify_instances_are_small():
    for c in suite.all_contracts():
        r = c.resolve("verify")
        ctas = r.grid[0] * r.grid[1] * r.grid[2]
        assert ctas <= 64, f"{c.name}: {ctas} CTAs in the verify instance"


def test_broken_kernels_are_caught():
    files = sorted(str(p) for p in BROKEN.glob("*.py"))
    res = run_in_subprocess(files=files)
    by_dist = {name: {r["distribution"]: r["ok"] for r in v["runs"]} for name, v in res.items()}
    # A kernel that leaves one element unwritten fails under every distribution (NaN sentinel).
    assert not any(by_dist["broken_relu_drops_tail"].values())
    # Softmax without max subtraction passes ordinary inputs but overflows on large ones.
    assert by_dist["broken_softmax_no_max"]["normal"] and not by_dist["broken_softmax_no_max"]["large"]
    # fp16 accumulation is outside the fp32 tolerance even on ordinary inputs.
    assert not by_dist["broken_rowsum_fp16_acc"]["normal"]
    # Mamba-2 weights cut to bf16 precision exceed the contract's rounding bound (2^-11 per term).
    assert not by_dist["broken_mamba2_scan_bf16"]["normal"] and not by_dist["broken_mamba2_scan_bf16"]["cancel"]


def test_gpu_check_dry_run_on_cpu(tmp_path):
    """harness.gpu_check's launch/compare path, run on the CPU through the interpreter."""
    import json
    import os
    import subprocess
    import sys
    out = tmp_path / "g.json"
    env = dict(os.environ, TRITON_INTERPRET="1")
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(root)
    proc = subprocess.run([sys.executable, "-m", "harness.gpu_check", "relu", "gemm_fp8", "flash_attention",
                           "gemm_tma_persistent", "--device", "cpu", "--instance", "verify", "--no-bench",
                           "--json", str(out)],
                          env=env, cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json.loads(out.read_text())["records"]
    assert [r["name"] for r in records] == ["relu", "gemm_fp8", "flash_attention", "gemm_tma_persistent"]
    assert all(r["ok"] and r["outputs"] and r["outputs"][0]["worst"] <= 1 for r in records)
