"""Launch specs (the `volta run/check --launch` format) and float64 references of the paper-style
pairs: for each pair, the naive and the fast kernel get the same input buffers (same names, dtypes,
shapes and seeds, so the same values) and write the same output buffer.

    python examples/pairs/launches.py     # rewrite the committed JSON specs

Committed specs: matmul/{naive,fast}.json (M = N = K = 128), attention/{naive,fast}.s128.json and
.s512.json (one head, head dim 32), conv/{naive,fast}.json (C = 16, 32 x 32, F = 16). Tests build
other sizes (ragged edges) from the same functions.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
Spec = dict[str, Any]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _buf(shape: list[int], seed: int | None = None) -> dict[str, Any]:
    b: dict[str, Any] = {"dtype": "float32", "shape": shape}
    if seed is not None:
        b.update(init="random", seed=seed)
    return b


def matmul(M: int, N: int, K: int) -> dict[str, Spec]:
    """C = A @ B, fp32 row-major."""
    bufs = {"A": _buf([M, K], 1), "B": _buf([K, N], 2), "C": _buf([M, N])}
    params = ["A", "B", "C", M, N, K]
    what = f"C = A @ B, M = {M}, N = {N}, K = {K}, fp32"
    return {
        "naive": {"comment": f"matmul_naive (one thread per output): {what}", "kernel": "matmul_naive",
                  "grid": [_cdiv(N, 16), _cdiv(M, 16), 1], "block": [16, 16, 1], "buffers": bufs, "params": params},
        "fast": {"comment": f"matmul_tiled (64 x 64 tiles): {what}", "kernel": "matmul_tiled",
                 "grid": [_cdiv(N, 64), _cdiv(M, 64), 1], "block": [16, 16, 1], "buffers": bufs, "params": params},
    }


ATTENTION_D = 32


def attention(S: int) -> dict[str, Spec]:
    """O = softmax(Q K^T / sqrt(32)) V for one head, Q, K, V, O [S, 32] fp32."""
    scale = {"float": 1.0 / math.sqrt(ATTENTION_D)}
    d = ATTENTION_D
    bufs = {"Q": _buf([S, d], 1), "K": _buf([S, d], 2), "V": _buf([S, d], 3), "O": _buf([S, d])}
    what = f"O = softmax(Q K^T / sqrt({d})) V, one head, S = {S}, head dim {d}, fp32"
    return {
        "naive": {"comment": f"attention_naive (one CTA per query row, the score row in shared memory): {what}",
                  "kernel": "attention_naive", "grid": [S, 1, 1], "block": [256, 1, 1], "buffers": bufs,
                  "params": ["Q", "K", "V", "O", S, scale]},
        "fast": {"comment": f"attention_flash (FlashAttention forward): {what}", "kernel": "attention_flash",
                 "grid": [_cdiv(S, 4), 1, 1], "block": [128, 1, 1], "buffers": bufs,
                 "params": ["Q", "K", "V", "O", S, scale]},
    }


def conv(C: int, H: int, W: int, F: int) -> dict[str, Spec]:
    """y [F, H, W] = 3 x 3 convolution (stride 1, padding 1) of x [C, H, W] with w [F, C, 3, 3], fp32."""
    bufs = {"x": _buf([C, H, W], 1), "w": _buf([F, C, 3, 3], 2), "y": _buf([F, H, W])}
    params = ["x", "w", "y", C, H, W, F]
    what = f"3 x 3 convolution, stride 1, padding 1, C = {C}, H = {H}, W = {W}, F = {F}, fp32"
    return {
        "naive": {"comment": f"conv_naive (one thread per output): {what}", "kernel": "conv_naive",
                  "grid": [_cdiv(W, 16), _cdiv(H, 16), F], "block": [16, 16, 1], "buffers": bufs, "params": params},
        "fast": {"comment": f"conv_tiled (16 x 16 x 8-filter tiles, shared halo): {what}", "kernel": "conv_tiled",
                 "grid": [_cdiv(W, 16), _cdiv(H, 16), _cdiv(F, 8)], "block": [16, 16, 1], "buffers": bufs,
                 "params": params},
    }


#: pair -> output buffer
OUTPUT = {"matmul": "C", "attention": "O", "conv": "y"}


def reference(pair: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The float64 result of `pair` on the input buffers (as the launch made them)."""
    x = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    if pair == "matmul":
        return x["A"] @ x["B"]
    if pair == "attention":
        s = x["Q"] @ x["K"].T / math.sqrt(ATTENTION_D)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        return (p / p.sum(axis=1, keepdims=True)) @ x["V"]
    if pair == "conv":
        c, h, w = x["x"].shape
        xp = np.pad(x["x"], ((0, 0), (1, 1), (1, 1)))
        y = np.zeros((x["w"].shape[0], h, w))
        for r in range(3):
            for s in range(3):
                y += np.einsum("fc,chw->fhw", x["w"][:, :, r, s], xp[:, r:r + h, s:s + w])
        return y
    raise KeyError(pair)


#: The committed specs: file name (under examples/pairs/<pair>/) -> spec.
def committed() -> dict[Path, Spec]:
    out: dict[Path, Spec] = {}
    for side, spec in matmul(128, 128, 128).items():
        out[Path("matmul") / f"{side}.json"] = spec
    for s in (128, 512):
        for side, spec in attention(s).items():
            out[Path("attention") / f"{side}.s{s}.json"] = spec
    for side, spec in conv(16, 32, 32, 16).items():
        out[Path("conv") / f"{side}.json"] = spec
    return out


def main() -> None:
    for rel, spec in committed().items():
        (HERE / rel).write_text(json.dumps(spec, indent=1) + "\n")
        print(f"wrote {rel}")


if __name__ == "__main__":
    main()
