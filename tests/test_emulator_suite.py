"""Differential tests: every suite contract's PTX, for every target, run on the CPU emulator.

The emulated outputs must match (1) the float64 reference within the contract's tolerance and
(2) Triton's interpreter on the same inputs: bit for bit where the arithmetic is exactly
specified (integer outputs and kernels listed in EXACT), within the contract tolerance elsewhere
(the compiled PTX uses hardware approximations such as ex2.approx and fused multiply-adds that
the interpreter's numpy arithmetic does not).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness import dtypes as _dt
from harness.contract import compare_arrays
from harness.emulate import emulate
from harness.interp_dump import interpreter_outputs
from harness.suite import all_contracts

ARCHES = ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"]
MAX_DISTRIBUTIONS = 2  # the first two of each contract's own input distributions
CONTRACTS = {c.name: c for c in all_contracts()}
# Outputs that must equal the interpreter's bit for bit (no rounding choices in the math).
EXACT = {"relu"}
# Features not yet modelled: the emulator must stop with `unsupported` (never a wrong answer).
KNOWN_GAPS: dict[str, str] = {}


def _cap(arch: str) -> int:
    return int("".join(ch for ch in arch[3:] if ch.isdigit()))


CASES = [pytest.param(name, arch, id=f"{name}-{arch}",
                      marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[name])] if name in KNOWN_GAPS else [])
         for name, c in CONTRACTS.items() for arch in ARCHES if _cap(arch) >= c.min_arch]


def _dists(c) -> list[str]:
    return list(c.distributions_for())[:MAX_DISTRIBUTIONS]


@pytest.fixture(scope="module")
def interp() -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    by_dists: dict[tuple, list[str]] = {}
    for name, c in CONTRACTS.items():
        by_dists.setdefault(tuple(_dists(c)), []).append(name)
    for dists, names in by_dists.items():
        out.update(interpreter_outputs(sorted(names), list(dists)))
    return out


@pytest.mark.parametrize("name,arch", CASES)
def test_emulated_ptx_matches_reference_and_interpreter(name: str, arch: str, interp) -> None:
    c = CONTRACTS[name]
    for dist in _dists(c):
        arrays = c.make_inputs("verify", dist, 0)
        res = emulate(c, arch, arrays=arrays)
        bad = [str(x) for x in res.comparisons if not x.ok]
        assert not bad, f"{name} on {arch} ({dist}) vs reference: {bad}"
        for t in c.tensors:
            if not t.is_output:
                continue
            got = np.asarray(res.outputs[t.name])
            want = np.asarray(interp[f"{name}/{dist}/0/{t.name}"]).reshape(got.shape)
            if name in EXACT or not _dt.dtype(t.dtype).is_float:
                assert np.array_equal(got.view(np.uint8), want.astype(got.dtype).view(np.uint8)), \
                    f"{name}.{t.name} on {arch} ({dist}) differs bitwise from the interpreter"
            else:
                # both sides are within (rtol, atol) of the reference, so of each other within twice that
                rtol, atol = c.tolerance_for(t.dtype)
                scale = c.abs_scale(arrays, "verify")
                cmp = compare_arrays(t.name, t.dtype, got, want, 2 * rtol, 2 * atol,
                                     None if scale is None else scale.get(t.name))
                assert cmp.ok, f"{name}.{t.name} on {arch} ({dist}) vs the interpreter: {cmp}"
