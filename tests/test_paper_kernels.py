"""The paper-style suite kernels' float64 references against second, independent formulations,
plus checks that each contract's tolerance is tight enough to notice a missing paper-specific term,
and interpreter runs at extra seeds (tests/test_suite_reference.py runs seed 0).

Second formulations: bit-by-bit unpacking (BitDelta), torch attention with an explicit bias
(Forgetting, Sinkhorn), the sequential SSM recurrence (Mamba-2 chunk state + scan), torch
autograd (cross-entropy + z-loss), exact rational arithmetic (Lion's sign decision), torch
linear algebra (Dion), and quantisation bounds (SageAttention).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.contract import compare_arrays
from harness.interpret import run_in_subprocess
from harness.suite.kernels import (bitdelta, bitdelta_batched, cross_entropy_zloss, dion_update,
                                   forgetting_attention, lion, mamba2_chunk_scan, mamba2_chunk_state,
                                   sage_attention, sinkhorn_attention)

PAPER_KERNELS = ["bitdelta", "bitdelta_batched", "sinkhorn_attention", "forgetting_attention",
                 "sage_attention", "lion", "dion_update", "mamba2_chunk_state", "mamba2_chunk_scan",
                 "cross_entropy_zloss"]
F64 = torch.float64


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float,
                       bias: np.ndarray | None = None) -> np.ndarray:
    """torch SDPA in float64 with an additive float mask (-inf masks)."""
    mask = None if bias is None else torch.from_numpy(bias)
    out = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q).to(F64), torch.from_numpy(k).to(F64), torch.from_numpy(v).to(F64),
        attn_mask=mask, scale=scale)
    return out.numpy()


# --------------------------------------------------------------------------- BitDelta
@settings(max_examples=25, deadline=None)
@given(o=st.integers(1, 9), k=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_bitdelta_matches_bitwise_gemv(o, k, seed):
    rng = _rng(seed)
    kb = -(-k // 8)
    packed = rng.integers(0, 256, (o, kb), dtype=np.uint8)
    scale, x = rng.standard_normal(o), rng.standard_normal(k)
    want = np.zeros(o)
    for r in range(o):
        for j in range(k):
            bit = (int(packed[r, j // 8]) >> (j % 8)) & 1
            want[r] += (1.0 if bit else -1.0) * x[j]
    want *= scale
    got = bitdelta.reference(packed, scale, x, o, k, kb)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_unpack_signs_inverts_packbits():
    signs = _rng(1).choice([-1.0, 1.0], (5, 37))
    packed = np.packbits(signs > 0, axis=-1, bitorder="little")
    np.testing.assert_array_equal(bitdelta.unpack_signs(packed, 37), signs)


def test_bitdelta_batched_is_bitdelta_per_adapter_and_row():
    rng = _rng(2)
    a, m, o, k = 3, 4, 6, 21
    kb = -(-k // 8)
    x, packed = rng.standard_normal((a, m, k)), rng.integers(0, 256, (a, o, kb), dtype=np.uint8)
    scale = rng.standard_normal((a, o))
    got = bitdelta_batched.reference(x, packed, scale, k)["y"]
    for i in range(a):
        for r in range(m):
            np.testing.assert_allclose(got[i, r], bitdelta.reference(packed[i], scale[i], x[i, r], o, k, kb)["y"],
                                       rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- attention variants
def test_forgetting_attention_matches_sdpa_with_decay_bias():
    rng = _rng(3)
    bh, n, d = 2, 11, 8
    q, k, v = (rng.standard_normal((bh, n, d)) for _ in range(3))
    gate = rng.standard_normal((bh, n)) * 2
    scale = 1 / math.sqrt(d)
    logf = -np.log1p(np.exp(-gate))                       # log sigmoid, a different formula
    F = np.cumsum(logf, axis=-1)
    bias = np.empty((bh, n, n))
    for i in range(n):
        for j in range(n):
            bias[:, i, j] = F[:, i] - F[:, j] if j <= i else -np.inf
    want = _softmax_attention(q, k, v, scale, bias)
    got = forgetting_attention.reference(q, k, v, gate, scale)["o"]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # Gates saturated open (f = 1): plain causal attention.
    causal = np.where(np.tril(np.ones((n, n), dtype=bool)), 0.0, -np.inf)
    open_gate = forgetting_attention.reference(q, k, v, np.full((bh, n), 60.0), scale)["o"]
    np.testing.assert_allclose(open_gate, _softmax_attention(q, k, v, scale, np.broadcast_to(causal, (bh, n, n)).copy()),
                               rtol=1e-10, atol=1e-12)


def test_sinkhorn_row_step_normalises_rows_and_reduces_to_softmax():
    rng = _rng(4)
    bh, n, m, d = 2, 7, 9, 8
    q, k, v = rng.standard_normal((bh, n, d)), rng.standard_normal((bh, m, d)), rng.standard_normal((bh, m, d))
    g = rng.standard_normal((bh, m))
    inv_eps = 0.7
    out = sinkhorn_attention.reference(q, k, v, g, inv_eps)
    s = np.einsum("bid,bjd->bij", q, k) * inv_eps
    plan = np.exp(s + out["f"][:, :, None] + g[:, None, :])
    np.testing.assert_allclose(plan.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out["o"], plan @ v, rtol=1e-10, atol=1e-12)
    plain = sinkhorn_attention.reference(q, k, v, np.zeros((bh, m)), inv_eps)["o"]
    np.testing.assert_allclose(plain, _softmax_attention(q, k, v, inv_eps), rtol=1e-10, atol=1e-12)


def test_sinkhorn_alternating_half_steps_become_doubly_stochastic():
    """The column half-step is the same kernel with Q and K swapped; alternating them is
    Sinkhorn's algorithm, whose plan converges to doubly stochastic (square case)."""
    rng = _rng(5)
    n, d = 6, 4
    q, k = rng.standard_normal((1, n, d)), rng.standard_normal((1, n, d))
    v = np.zeros((1, n, 1))
    g = np.zeros((1, n))
    for _ in range(200):
        f = sinkhorn_attention.reference(q, k, v, g, 1.0)["f"]
        g = sinkhorn_attention.reference(k, q, v, f, 1.0)["f"]
    plan = np.exp(np.einsum("bid,bjd->bij", q, k) + f[:, :, None] + g[:, None, :])[0]
    np.testing.assert_allclose(plan.sum(axis=0), 1.0, atol=1e-8)
    np.testing.assert_allclose(plan.sum(axis=1), 1.0, atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), mag=st.sampled_from([1e-3, 1.0, 300.0]), block=st.sampled_from([4, 16]))
def test_sage_quantiser_bounds(seed, mag, block):
    x = (_rng(seed).standard_normal((2, 21, 8)) * mag).astype(np.float32)
    codes, scales = sage_attention.quantize_blocks(x, block)
    assert np.all(np.abs(codes) <= 127) and np.all(codes == np.round(codes))
    err = np.abs(codes * scales[:, :, None] - x)
    assert np.all(err <= scales[:, :, None] * (0.5 + 1e-5))
    for b in range(2):
        for r0 in range(0, 21, block):
            assert np.abs(codes[b, r0:r0 + block]).max() == 127      # the block maximum maps to 127


def test_sage_smoothing_is_what_makes_int8_accurate():
    """A shared offset in K (common in LLM keys) ruins per-block int8 unless K is smoothed;
    softmax invariance makes the smoothed result the true attention."""
    rng = _rng(6)
    bh, n, d = 1, 64, 64
    q, v = rng.standard_normal((bh, n, d)), rng.standard_normal((bh, n, d))
    k = rng.standard_normal((bh, n, d)) * 0.3 + 8.0 * rng.standard_normal(d)   # big channel bias
    scale = 1 / math.sqrt(d)
    exact = _softmax_attention(q, k, v, scale)
    smoothed = sage_attention.reference(q, k, k.mean(axis=1), v, scale, 16, 16)["o"]
    raw = sage_attention.reference(q, k, np.zeros((bh, d)), v, scale, 16, 16)["o"]
    err_s, err_r = np.abs(smoothed - exact).max(), np.abs(raw - exact).max()
    assert err_s < 0.05 and err_r > 2 * err_s


# --------------------------------------------------------------------------- optimizers
def test_lion_matches_torch_step():
    rng = _rng(7)
    p, g, m = (rng.standard_normal(1000) for _ in range(3))
    g = g.astype(np.float32)
    lr, b1, b2, wd = lion.LR, lion.BETA1, lion.BETA2, lion.WD
    tp, tg, tm = (torch.tensor(a, dtype=F64) for a in (p, g, m))
    tp.mul_(1 - lr * wd).add_(torch.sign(tm * b1 + tg * (1 - b1)), alpha=-lr)
    tm.mul_(b2).add_(tg, alpha=1 - b2)
    got = lion.reference(p, g, m, lr, b1, b2, wd)
    np.testing.assert_allclose(got["p"], tp.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["m"], tm.numpy(), rtol=1e-12, atol=1e-15)


_SUB = st.integers(-(1 << 12), 1 << 12).map(lambda i: float(np.float32(i * 2.0 ** -149)))


@settings(max_examples=200, deadline=None)
@given(m=_SUB, g_bits=st.integers(0, 0xFFFF))
def test_lion_sign_is_the_fp32_fma_sign(m, g_bits):
    """update_sign against exact rational arithmetic: fp32 fma(b1, m, a) is zero exactly when the
    exact value is at most half the smallest subnormal (2^-150), else it keeps the exact sign."""
    g = float(np.array([g_bits << 16], dtype=np.uint32).view(np.float32)[0])   # any bf16 value
    if not math.isfinite(g):
        return
    b1 = np.float32(lion.BETA1)
    addend = np.float32(np.float32(np.float32(1) - b1) * np.float32(g))
    if not math.isfinite(float(addend)):
        return
    exact = Fraction(float(b1)) * Fraction(m) + Fraction(float(addend))
    want = 0.0 if abs(exact) <= Fraction(1, 2**150) else math.copysign(1.0, exact)
    got = lion.update_sign(np.array([g], np.float32), np.array([m], np.float32), lion.BETA1)[0]
    assert got == want


def test_dion_matches_torch_linear_algebra():
    rng = _rng(8)
    mom, q = rng.standard_normal((3, 20, 12)), rng.standard_normal((3, 12, 4))
    got = dion_update.reference(mom, q, 0.0)
    tm, tq = torch.from_numpy(mom), torch.from_numpy(q)
    p = torch.nn.functional.normalize(tm @ tq, dim=1)
    r = tm.transpose(1, 2) @ p
    np.testing.assert_allclose(got["p"], p.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["r"], r.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["q_out"], torch.nn.functional.normalize(r, dim=1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(got["q_out"], axis=1), 1.0, rtol=1e-12)


def test_dion_power_iteration_finds_the_dominant_subspace():
    """Repeating the step (Q <- Q') on a matrix with a clear rank-2 part aligns P^ with it."""
    rng = _rng(9)
    u, _ = np.linalg.qr(rng.standard_normal((30, 2)))
    w, _ = np.linalg.qr(rng.standard_normal((16, 2)))
    mom = (u * [50.0, 40.0]) @ w.T + 0.01 * rng.standard_normal((30, 16))
    q = rng.standard_normal((1, 16, 2))
    for _ in range(30):
        out = dion_update.reference(mom[None], q, 1e-8)
        q = out["q_out"]
    p = out["p"][0]
    residual = p - u @ (u.T @ p)                        # component outside span(u)
    assert np.abs(residual).max() < 1e-3


# --------------------------------------------------------------------------- Mamba-2 SSD
def test_mamba2_chunked_equals_sequential_recurrence():
    rng = _rng(10)
    bsz, L, H, G, P, N, Q = 2, 23, 4, 2, 3, 5, 8
    x = rng.standard_normal((bsz, L, H, P))
    bm, cm = rng.standard_normal((bsz, L, G, N)), rng.standard_normal((bsz, L, G, N))
    dt = np.log1p(np.exp(rng.standard_normal((bsz, H, L))))       # softplus, > 0
    A = -np.exp(rng.standard_normal(H))
    Dskip = rng.standard_normal(H)
    # Sequential: h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t + D x_t.
    grp = np.arange(H) // (H // G)
    h = np.zeros((bsz, H, P, N))
    y_seq = np.zeros((bsz, L, H, P))
    for t in range(L):
        decay = np.exp(dt[:, :, t] * A)[:, :, None, None]
        h = decay * h + dt[:, :, t, None, None] * x[:, t, :, :, None] * bm[:, t, grp, None, :]
        y_seq[:, t] = np.einsum("bhpn,bhn->bhp", h, cm[:, t, grp]) + Dskip[None, :, None] * x[:, t]
    # Chunked: within-chunk cumsum, chunk states, inter-chunk recurrence, chunk scan.
    C = -(-L // Q)
    dA_cs = np.zeros_like(dt)
    for c in range(C):
        s, e = c * Q, min(L, (c + 1) * Q)
        dA_cs[:, :, s:e] = np.cumsum(dt[:, :, s:e] * A[None, :, None], axis=-1)
    states = mamba2_chunk_state.chunk_states(x, bm, dt, dA_cs, Q)
    prev = np.zeros((bsz, C, H, P, N))
    for c in range(1, C):
        end = min(L, c * Q) - 1
        prev[:, c] = np.exp(dA_cs[:, :, end])[:, :, None, None] * prev[:, c - 1] + states[:, c - 1]
    y = mamba2_chunk_scan.chunk_scan(x, cm, bm, dt, dA_cs, prev, Dskip, Q)
    np.testing.assert_allclose(y, y_seq, rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- cross-entropy + z-loss
def test_cross_entropy_zloss_matches_torch_autograd():
    rng = _rng(11)
    t, v, zc = 6, 13, 1e-3
    z = rng.standard_normal((t, v)) * 3
    labels = np.array([0, 12, -100, 5, 13, 7], dtype=np.int32)          # -100 and 13 are ignored
    gscale = 1 / t
    out = cross_entropy_zloss.reference(z, labels, zc, gscale)
    tz = torch.tensor(z, dtype=F64, requires_grad=True)
    valid = torch.tensor((labels >= 0) & (labels < v))
    safe = torch.tensor(np.where((labels >= 0) & (labels < v), labels, 0), dtype=torch.long)
    lse = torch.logsumexp(tz, dim=1)
    ce = torch.nn.functional.cross_entropy(tz, safe, reduction="none")
    loss = torch.where(valid, ce + zc * lse**2, torch.zeros_like(lse))
    (loss.sum() * gscale).backward()
    np.testing.assert_allclose(out["loss"], loss.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out["lse"], lse.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out["logits"], tz.grad.numpy(), rtol=1e-10, atol=1e-14)


# --------------------------------------------------------------------------- tolerances bite
def _differs(contract, name: str, got: np.ndarray, want: np.ndarray) -> bool:
    dtype = next(t.dtype for t in contract.tensors if t.name == name)
    rtol, atol = contract.tolerance_for(dtype)
    return not compare_arrays(name, dtype, got, want, rtol, atol).ok


def test_tolerances_notice_a_missing_term():
    """On each verify instance, dropping the kernel's paper-specific ingredient changes the
    output by more than the contract's tolerance."""
    c = forgetting_attention.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    sc = c.resolve("verify").scalars["sm_scale"]
    no_decay = forgetting_attention.reference(a["q"], a["k"], a["v"], np.full_like(a["fgate"], 60.0), sc)["o"]
    assert _differs(c, "o", no_decay, c.run_reference(a)["o"])

    c = sinkhorn_attention.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    no_g = sinkhorn_attention.reference(a["q"], a["k"], a["v"], np.zeros_like(a["g"]), c.resolve("verify").scalars["inv_eps"])
    assert _differs(c, "o", no_g["o"], c.run_reference(a)["o"])

    c = lion.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    no_wd = lion.reference(a["p"], a["g"], a["m"], lion.LR, lion.BETA1, lion.BETA2, 0.0)["p"]
    assert _differs(c, "p", no_wd, c.run_reference(a)["p"])

    c = cross_entropy_zloss.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    gs = c.resolve("verify").scalars["gscale"]
    no_z = cross_entropy_zloss.reference(a["logits"], a["labels"], 0.0, gs)
    assert _differs(c, "loss", no_z["loss"], c.run_reference(a)["loss"])

    c = mamba2_chunk_scan.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    no_state = dict(a, prev=np.zeros_like(a["prev"]))
    assert _differs(c, "y", c.run_reference(no_state)["y"], c.run_reference(a)["y"])

    c = mamba2_chunk_state.CONTRACT
    a = c.make_inputs("verify", "normal", 0)
    no_decay = dict(a, dA_cs=np.zeros_like(a["dA_cs"]))
    assert _differs(c, "states", c.run_reference(no_decay)["states"], c.run_reference(a)["states"])


# --------------------------------------------------------------------------- interpreter, more seeds
@pytest.mark.parametrize("seed", [1, 2])
def test_interpreter_matches_reference_other_seeds(seed):
    results = run_in_subprocess(PAPER_KERNELS, seed=seed)
    assert sorted(results) == sorted(PAPER_KERNELS)
    bad = [f"{name}/{r['distribution']}: {r.get('error') or [o['text'] for o in r['outputs'] if not o['ok']]}"
           for name, res in results.items() for r in res["runs"] if not r["ok"]]
    assert not bad, "\n".join(bad)
