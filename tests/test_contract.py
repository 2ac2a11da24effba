"""Contract validation, dtype rounding, input distributions and output comparison."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import dtypes
from harness.contract import Contract, ContractError, Scalar, Tensor, cdiv, compare_arrays
from harness.inputs import FLOAT_DISTRIBUTIONS, generate


@triton.jit
def _copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _scale_kernel(x, g, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n) * tl.exp(tl.load(g + offs, mask=offs < n))
    tl.store(y + offs, v, mask=offs < n)


def _ref(x, n):
    return {"y": x.astype(np.float64)}


def _make(**over):
    kw = dict(name="copy", description="copy", kernel=_copy_kernel,
              args=[Tensor("x", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="out"),
                    Scalar("n", "i32", value="N")],
              constexprs={"BLOCK": 128}, grid=lambda d: (cdiv(d["N"], 128),), reference=_ref,
              instances={"verify": {"N": 300}, "bench": {"N": 4096}})
    kw.update(over)
    return Contract(**kw)


def test_valid_contract_resolves():
    c = _make()
    r = c.resolve("verify")
    assert r.grid == (3, 1, 1) and r.block == (128, 1, 1)
    assert r.scalars == {"n": 300} and r.shapes == {"x": (300,), "y": (300,)}
    sig, consts, attrs = c.triton_signature("bench")
    assert sig == {"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    assert attrs[(2,)] == [["tt.divisibility", 16]]          # 4096 % 16 == 0
    assert (2,) not in c.triton_signature("verify")[2]        # 300 % 16 != 0


@pytest.mark.parametrize("over, field", [
    (dict(args=[Tensor("x", "fp32", ("N",)), Scalar("n", "i32", value="N")]), "args"),       # missing y
    (dict(args=[Tensor("x", "fp33", ("N",)), Tensor("y", "fp32", ("N",), role="out"),
                Scalar("n", "i32", value="N")]), "args"),                                      # dtype
    (dict(args=[Tensor("x", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="output"),
                Scalar("n", "i32", value="N")]), "args"),                                      # role
    (dict(args=[Tensor("y", "fp32", ("N",), role="out"), Tensor("x", "fp32", ("N",)),
                Scalar("n", "i32", value="N")]), "args"),                                      # order
    (dict(constexprs={}), "constexprs"),
    (dict(constexprs={"BLOCK": 128, "EXTRA": 1}), "constexprs"),
    (dict(grid=lambda d: (0,)), "grid"),
    (dict(grid=lambda d: (1, 70000)), "grid"),
    (dict(grid=lambda d: (d["MISSING"],)), "grid"),
    (dict(num_warps=64), "num_warps"),
    (dict(num_warps=3), "num_warps"),
    (dict(instances={"verify": {"N": 300}}), "instances"),
    (dict(instances={"verify": {"N": 0}, "bench": {"N": 1}}), "instances"),
    (dict(min_arch=75), "min_arch"),
    (dict(tolerance={"fp99": (1e-3, 0.0)}), "tolerance"),
    (dict(input_domain={"y": "positive"}), "input_domain"),
    (dict(input_domain={"x": "sometimes"}), "input_domain"),
    (dict(scale_by_abs_reference=True, abs_reference_keeps=("y",)), "abs_reference_keeps"),
    (dict(abs_reference_keeps=("x",)), "abs_reference_keeps"),
])
def test_validation_names_the_field(over, field):
    with pytest.raises(ContractError) as ei:
        _make(**over)
    assert ei.value.field == field
    assert f"field '{field}'" in str(ei.value)


def test_abs_scale_keeps_the_named_inputs():
    """The |inputs| reference takes |x| except for inputs named in abs_reference_keeps, which
    enter unchanged (a log-decay under exp must keep its sign)."""
    def ref(x, g, n):
        return {"y": x.astype(np.float64) * np.exp(g.astype(np.float64))}
    kw = dict(kernel=_scale_kernel, args=[Tensor("x", "fp32", ("N",)), Tensor("g", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="out"),
                    Scalar("n", "i32", value="N")], reference=ref, scale_by_abs_reference=True,
              instances={"verify": {"N": 2}, "bench": {"N": 4096}})
    arrays = {"x": np.array([-2.0, 3.0], np.float32), "g": np.array([-1.0, 0.5], np.float32)}
    kept = _make(abs_reference_keeps=("g",), **kw).abs_scale(arrays)["y"]
    assert np.allclose(kept, [2.0 * np.exp(-1.0), 3.0 * np.exp(0.5)])
    absed = _make(**kw).abs_scale(arrays)["y"]
    assert np.allclose(absed, [2.0 * np.exp(1.0), 3.0 * np.exp(0.5)])
    assert _make(**{**kw, "scale_by_abs_reference": False}).abs_scale(arrays) is None


def test_scalar_that_does_not_fit_is_rejected():
    with pytest.raises(ContractError, match="does not fit"):
        _make(args=[Tensor("x", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="out"),
                    Scalar("n", "i32", value=lambda d: 2**40)])


def test_unknown_instance():
    with pytest.raises(ContractError, match="unknown instance"):
        _make().resolve("huge")


def test_scalar_one_is_specialised_like_a_launch():
    c = _make(instances={"verify": {"N": 1}, "bench": {"N": 4096}})
    sig, consts, _ = c.triton_signature("verify")
    assert sig["n"] == "constexpr" and consts["n"] == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, width=32), min_size=1, max_size=50),
       st.sampled_from(["bf16", "fp16", "fp8e4m3", "fp8e5m2"]))
def test_quantize_matches_torch(values, name):
    x = np.array(values, dtype=np.float32)
    want = torch.from_numpy(x).to(getattr(torch, dtypes.dtype(name).torch)).to(torch.float32).numpy()
    got = dtypes.quantize(x, name).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])


@pytest.mark.parametrize("name", ["fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"])
@pytest.mark.parametrize("dist", FLOAT_DISTRIBUTIONS)
def test_distributions(name, dist):
    dt = dtypes.dtype(name)
    a = generate("x", name, (8, 64), dist, seed=3)
    b = generate("x", name, (8, 64), dist, seed=3)
    np.testing.assert_array_equal(a, b)                       # seeded
    assert a.shape == (8, 64) and np.isfinite(a).all()
    assert np.array_equal(dtypes.quantize(a, name), a)        # representable in the type
    v = a.astype(np.float64)
    if dist == "large":
        assert np.abs(v).min() >= dt.max_value / 8
    if dist == "tiny":
        assert np.abs(v).max() <= dt.tiny * 8
        assert (np.abs(v) < dt.tiny).any()                    # some subnormals
    if dist == "special":
        assert set(np.unique(v)) <= {0.0, 1.0, -1.0, 0.5, 2.0}
    if dist == "cancel":
        assert np.all(np.sign(v[:, 0::2]) == -np.sign(v[:, 1::2]))


def test_domains_and_ints():
    p = generate("p", "fp32", (1000,), "normal", 0, domain="probability")
    assert (p >= 0).all() and (p <= 1).all()
    q = generate("q", "fp16", (1000,), "special", 0, domain="positive")
    assert (q > 0).all()
    r = generate("r", "fp32", (1000,), "large", 0, domain=(-3.0, 5.0))
    assert r.min() >= -3 and r.max() <= 5
    i = generate("i", "i8", (1000,), "uniform", 0)
    assert i.dtype == np.int8 and i.min() < -100 and i.max() > 100


def test_compare_rules():
    e = np.array([1.0, np.nan, np.inf, 1e6, 0.0])
    ok = compare_arrays("y", "fp32", np.array([1.0, np.nan, np.inf, 1e6, 0.0], np.float32), e, 1e-5, 1e-6)
    assert ok.ok and ok.bad == 0
    assert not compare_arrays("y", "fp32", np.array([1.0, 0.0, np.inf, 1e6, 0.0]), e, 1e-5, 1e-6).ok
    assert not compare_arrays("y", "fp32", np.array([1.0, np.nan, -np.inf, 1e6, 0.0]), e, 1e-5, 1e-6).ok
    assert not compare_arrays("y", "fp32", np.array([1.0001, np.nan, np.inf, 1e6, 0.0]), e, 1e-5, 1e-6).ok
    # A reference above fp16's range must come back as inf from an fp16 kernel.
    assert compare_arrays("y", "fp16", np.array([np.inf], np.float16), np.array([7e4]), 1e-3, 0).ok
    assert not compare_arrays("y", "fp16", np.array([65504.0], np.float16), np.array([7e4]), 1e-3, 0).ok
    # Cancellation: a scale allows error relative to the sum of magnitudes.
    assert not compare_arrays("y", "fp32", np.array([1e-3]), np.array([0.0]), 1e-5, 1e-6).ok
    assert compare_arrays("y", "fp32", np.array([1e-3]), np.array([0.0]), 1e-5, 1e-6, scale=np.array([1e3])).ok


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False), st.floats(min_value=0, max_value=0.1))
def test_compare_relative_bound(x, rel):
    got = np.array([x * (1 + rel)])
    res = compare_arrays("y", "fp64", got, np.array([x]), 1e-3, 0.0)
    assert res.ok == (abs(got[0] - x) <= 1e-3 * abs(x))
