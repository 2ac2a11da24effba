"""The numeric test's harness logic on a fake device: guard bands, input hashes, two sentinel runs,
stale memory, nondeterminism, a fault that loses the device (integrity classes 1, 2, 3, 5, 7)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from judge_fakes import FakeDevice, relu_kernel, rowsum_kernel

from harness import suite
from harness.judge.device import KernelCode, LaunchFailure
from harness.judge.numeric import GUARD_BYTES, Trial, run_numeric, sentinel_bytes
from harness.judge.report import Reason

RELU = suite.get("relu")
CODE = KernelCode("", b"", "relu_kernel")


def _trials(dists=("normal",), seed=3) -> list[Trial]:
    return [Trial("verify", dict(RELU.instances["verify"]), d, seed) for d in dists]


def _run(kernel, trials=None, **kw):
    dev = FakeDevice(kernel, **kw)
    problems, detail = run_numeric(dev, CODE, RELU, "sm_90a", trials or _trials(), param_count=3)
    return dev, problems, detail, {p.reason for p in problems}


def test_honest_kernel_passes_every_distribution() -> None:
    dev, problems, detail, _ = _run(relu_kernel, _trials(RELU.distributions_for()))
    assert problems == []
    assert len(detail.trials) == len(RELU.distributions_for()) and all(t.ok for t in detail.trials)
    assert dev.calls.count("launch") == 2 * len(detail.trials)  # every trial runs twice


def test_unwritten_element_is_caught_by_both_sentinels() -> None:
    _, problems, _, reasons = _run(functools.partial(relu_kernel, skip=17))
    assert reasons == {Reason.NAN_INF_MISMATCH, Reason.UNWRITTEN_OUTPUT}
    assert "(17,)" in next(p.message for p in problems if p.reason is Reason.UNWRITTEN_OUTPUT)


def test_stale_reference_result_in_fresh_memory_does_not_pass() -> None:
    """Integrity class 1: a kernel that writes nothing, on memory that still holds the right answer."""
    arrays = RELU.make_inputs("verify", "normal", 3)
    want = RELU.run_reference(arrays, "verify")["y"].astype(np.float32).tobytes()
    stale = (b"\0" * GUARD_BYTES + want) * 4
    _, _, _, reasons = _run(lambda dev, launch: None, stale=stale)
    assert Reason.UNWRITTEN_OUTPUT in reasons


def test_guard_band_write_and_input_mutation() -> None:
    _, problems, _, reasons = _run(functools.partial(relu_kernel, overrun=3))
    assert Reason.GUARD_BAND in reasons
    assert "at byte 0 past its end" in next(p.message for p in problems if p.reason is Reason.GUARD_BAND)
    _, _, _, reasons = _run(functools.partial(relu_kernel, write_input=True))
    assert reasons == {Reason.INPUT_MUTATED}


def test_nondeterminism_within_tolerance_is_caught() -> None:
    """A reduction whose order changes between runs: within the tolerance, not bitwise equal."""
    rowsum = suite.get("rowsum")
    trials = [Trial("verify", dict(rowsum.instances["verify"]), "normal", 5)]
    problems, detail = run_numeric(FakeDevice(rowsum_kernel), KernelCode("", b"", "rowsum_kernel"), rowsum,
                                   "sm_90a", trials, param_count=3)
    assert {p.reason for p in problems} == {Reason.NONDETERMINISTIC}
    assert detail.trials[0].outputs[0].ok  # the values alone pass
    import dataclasses

    relaxed = dataclasses.replace(rowsum, deterministic=False)  # an op declared nondeterministic
    problems, _ = run_numeric(FakeDevice(rowsum_kernel), KernelCode("", b"", "rowsum_kernel"), relaxed, "sm_90a",
                              trials, param_count=3)
    assert problems == []


def test_sticky_fault_stops_every_device_call() -> None:
    def faulting(dev, launch):
        raise LaunchFailure(Reason.MEMORY_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS", sticky=True)

    dev, problems, detail, reasons = _run(faulting, _trials(("normal", "large")))
    assert reasons == {Reason.MEMORY_FAULT} and detail.device_lost
    assert len(detail.trials) == 1 and dev.calls[-1] == "launch"


def test_undecided_device_leaves_the_stage_undecided() -> None:
    def cannot(dev, launch):
        raise LaunchFailure(None, "unsupported: some instruction")

    _, problems, detail, _ = _run(cannot)
    assert problems == [] and "unsupported" in detail.undecided


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "fp64", "i32", "u8"])
def test_sentinels_differ_and_floats_are_nan(dtype: str) -> None:
    from harness.emulate import from_device

    a, b = sentinel_bytes(dtype, 4, 0), sentinel_bytes(dtype, 4, 1)
    assert (a != b).any()
    if dtype[0] in "fb":
        assert np.isnan(from_device(a, dtype, (4,)).astype(np.float64)).all()
        assert np.isnan(from_device(b, dtype, (4,)).astype(np.float64)).all()


def test_sanitizer_lane_allocates_exactly() -> None:
    """guard=0: every allocation is exactly its tensor (memcheck then knows the bounds)."""
    from harness.judge.numeric import run_trial

    sizes = []
    dev = FakeDevice(relu_kernel)
    real_alloc = dev.alloc
    dev.alloc = lambda n: sizes.append(n) or real_alloc(n)
    res = run_trial(dev, None, CODE, RELU, "sm_90a", _trials()[0], 3, rerun=False, guard=0)
    assert res.ok and sizes == [2512 * 4, 2512 * 4]


def test_kernel_parameters_are_packed_one_buffer_each() -> None:
    """The cuLaunchKernel argument array (harness.judge.cuda.PackedParams) needs no GPU."""
    import ctypes

    import ptx_parser
    from harness.judge.cuda import PackedParams

    k = ptx_parser.parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a, "
                         ".param .u32 n, .param .f32 s, .param .align 64 .b8 tm[128]){ ret; }\n", "k.ptx").kernels[0]
    packed = PackedParams(k.params, [0x7F00_0000_1000, 2512, {"float": 0.5}, {"bytes": list(range(128))}])
    raw = [bytes(b.raw) for b in packed.buffers]
    assert raw[0] == (0x7F00_0000_1000).to_bytes(8, "little") and raw[1] == (2512).to_bytes(4, "little")
    assert raw[2] == bytes(ctypes.c_float(0.5)) and raw[3] == bytes(range(128))
    argv = ctypes.cast(packed.address, ctypes.POINTER(ctypes.c_void_p))
    assert [argv[i] for i in range(4)] == [ctypes.addressof(b) for b in packed.buffers]
