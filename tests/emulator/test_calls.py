"""Calls of .func functions: inlined by the program loader (parameters renamed to the caller's
argument variables, registers and labels respelled, `ret` -> jump to the call's end)."""

from __future__ import annotations

import numpy as np
import pytest

import ptx_parser
from symexec import Launch, Unsupported, load_program, run_kernel
from symexec.check import check_kernel
from tests.corpus import build_corpus

CALLS = [f for f in build_corpus(("nvcc",)) if f.path.name.startswith("device_call.")]


def _poly(v: np.float32, degree: int) -> np.float32:
    r = np.float32(1)
    for k in range(degree):
        r = np.float32(r * v + np.float32(k))
    return r


@pytest.mark.parametrize("cf", CALLS, ids=lambda f: f.path.name)
def test_nvcc_device_calls_run_and_match_the_cuda_source(cf) -> None:
    """tests/corpus/cuda/device_call.cu: struct return, float/int/pointer arguments, void calls."""
    n, degree = 200, 3
    x = np.random.default_rng(0).standard_normal(n) * 10
    prog = load_program(ptx_parser.parse(cf.path.read_text(), str(cf.path)), "call_kernel")
    assert not any(i.opcode == "call" for i in prog.code)
    launch = Launch((4,), (64,), {"in": x.copy(), "out": np.zeros(3 * n, np.float32)}, ["in", "out", n, degree])
    glob, _, _ = run_kernel(prog, launch)
    got = glob.by_name("out").data.view(np.float32)
    want = np.zeros(3 * n, np.float32)
    for i in range(n):
        hi = np.float32(x[i])
        lo = np.float32(x[i] - np.float64(hi))
        want[3 * i: 3 * i + 3] = (_poly(hi, degree), lo, _poly(lo, degree + 1))
    # optimised builds contract r * x + k into fma: one rounding fewer than the C source's
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert check_kernel(prog, launch).verdict == "race_free"


RECURSIVE = """
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) f(.param .b32 a)
{
	.reg .b32 %x;
	ld.param.b32 %x, [a];
	{
	.param .b32 p;
	.param .b32 q;
	st.param.b32 [p], %x;
	call.uni (q), f, (p);
	ld.param.b32 %x, [q];
	}
	st.param.b32 [r], %x;
	ret;
}
.visible .entry k(.param .u64 out)
{
	.reg .b32 %y;
	{
	.param .b32 p;
	.param .b32 q;
	st.param.b32 [p], 1;
	call.uni (q), f, (p);
	ld.param.b32 %y, [q];
	}
	ret;
}
"""


def test_recursion_stays_a_call_and_is_refused() -> None:
    prog = load_program(ptx_parser.parse(RECURSIVE, "rec.ptx"), "k")
    assert sum(i.opcode == "call" for i in prog.code) == 1  # inlined once, the recursive call kept
    with pytest.raises(Unsupported, match="call"):
        run_kernel(prog, Launch((1,), (32,), {"out": np.zeros(4, np.int32)}, ["out"]))
