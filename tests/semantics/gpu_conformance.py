"""Bit-for-bit conformance of ``semantics`` against a real GPU (needs CuPy and an NVIDIA GPU).

Each case is one PTX instruction wrapped in inline assembly of a tiny CUDA kernel (one
instruction per thread, operands loaded from memory so nothing is folded).  The kernels are
compiled together with NVRTC, run over special values and random operands, and compared with
the value-level model.  Exact cases must match bit for bit (NaN results compared as "is NaN"
where the model's NaN choice is marked EMPIRICAL, reported separately); ``.approx`` cases
report how often they match and their worst error in ulps against the manual's bound.

    python tests/semantics/gpu_conformance.py --out results/   # writes conformance.json

Not collected by pytest (no GPU in CI).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from semantics.formats import decode, is_nan  # noqa: E402

# C type, inline-asm constraint, numpy storage dtype, float view dtype (for CuPy)
TYPES = {
    "f32": ("float", "f", np.uint32, np.float32),
    "f64": ("double", "d", np.uint64, np.float64),
    "b16": ("unsigned short", "h", np.uint16, None),
    "b32": ("unsigned int", "r", np.uint32, None),
    "b64": ("unsigned long long", "l", np.uint64, None),
}


@dataclass
class Case:
    name: str
    asm: str  # %0 is the result, %1.. the inputs
    ins: tuple[str, ...]
    out: str
    ref: Callable[..., np.ndarray]
    pools: tuple[str, ...] = ()  # operand pool per input (defaults from the type)
    nan_fmt: object = None  # compare NaN results only as "is NaN" (model's NaN is EMPIRICAL)
    approx_ulps: float | None = None  # .approx: report, do not require bit equality
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# operand pools

RNG = np.random.default_rng(20261129)
N_RANDOM = 6000


def f32_specials() -> list[int]:
    v = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x3FC00000, 0x40000000, 0x40400000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000, 0x007FFFFF, 0x00000001, 0x80000001, 0x00400000,
         0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0x3F800001, 0x4B800001, 0x3DCCCCCD,
         0xBDCCCCCD, 0x477FF000, 0x477FEFFF, 0x43E00000, 0x43E80000, 0x47600000, 0x47700000, 0x3F808000,
         0x3F818000, 0x3F801000, 0x7F7FF000, 0x33800000, 0x34000000, 0xB3800000, 0x4F000000, 0x4F800000,
         0xCF000000, 0x5F800000, 0x3EFFFFFF, 0x3F7FFFFF, 0xC0490FDB, 0x40C90FDB]
    return v


def f32_random(n: int) -> np.ndarray:
    kind = RNG.integers(0, 4, n)
    raw = RNG.integers(0, 2**32, n, dtype=np.uint64)
    sign = RNG.integers(0, 2, n, dtype=np.uint64) << np.uint64(31)
    mant = RNG.integers(0, 2**23, n, dtype=np.uint64)
    e_mid = RNG.integers(127 - 24, 127 + 24, n, dtype=np.uint64)
    e_low = RNG.integers(0, 6, n, dtype=np.uint64)
    mid = sign | (e_mid << np.uint64(23)) | mant
    low = sign | (e_low << np.uint64(23)) | mant
    short = sign | (e_mid << np.uint64(23)) | (mant & np.uint64(0x7FFF00))  # few significant bits
    out = np.select([kind == 0, kind == 1, kind == 2], [raw, mid, low], short)
    return out.astype(np.uint32)


def f64_specials() -> list[int]:
    return [0, 1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000, 0x7FEFFFFFFFFFFFFF,
            0x0010000000000000, 0x000FFFFFFFFFFFFF, 0x0000000000000001, 0x8000000000000001, 0x7FF0000000000000,
            0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123, 0x3FF0000000000001,
            0x4340000000000001, 0x3FB999999999999A, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x36A0000000000000,
            0x3810000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x43E0000000000000, 0x43F0000000000000]


def f64_random(n: int) -> np.ndarray:
    kind = RNG.integers(0, 3, n)
    raw = RNG.integers(0, 2**64 - 1, n, dtype=np.uint64)
    sign = RNG.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    mant = RNG.integers(0, 2**52, n, dtype=np.uint64)
    e_mid = RNG.integers(1023 - 60, 1023 + 60, n, dtype=np.uint64)
    mid = sign | (e_mid << np.uint64(52)) | mant
    short = sign | (e_mid << np.uint64(52)) | (mant & np.uint64(0xFFFFFFF000000))
    return np.select([kind == 0, kind == 1], [raw, mid], short).astype(np.uint64)


def b16_pool(n: int) -> np.ndarray:
    spec = [0, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7C00, 0xFC00, 0x7E00,
            0x7C01, 0x3F80, 0xBF80, 0x7F7F, 0x7F80, 0x7FC0, 0x0080, 0x3555, 0x3800, 0x4000, 0x4400]
    return np.concatenate([np.array(spec, dtype=np.uint16), RNG.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint16)])


def int_pool(width: int, n: int) -> np.ndarray:
    m = (1 << width) - 1
    spec = [0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, 65, 255, 256, m, m - 1, 1 << (width - 1), (1 << (width - 1)) - 1,
            (1 << (width - 1)) + 1, 0x12345678 & m, 0x80808080 & m, 0x7F7F7F7F & m]
    dt = TYPES[f"b{width}"][2]
    small = RNG.integers(0, 80, n // 4, dtype=np.uint64)
    rnd = RNG.integers(0, 2**64 - 1, n, dtype=np.uint64) & np.uint64(m)
    return np.concatenate([np.array(spec, dtype=np.uint64), small, rnd]).astype(dt)


def pool(kind: str) -> np.ndarray:
    if kind == "f32":
        return np.concatenate([np.array(f32_specials(), dtype=np.uint32), f32_random(N_RANDOM)])
    if kind == "f64":
        return np.concatenate([np.array(f64_specials(), dtype=np.uint64), f64_random(N_RANDOM)])
    if kind == "b16":
        return b16_pool(N_RANDOM)
    if kind == "b32":
        return int_pool(32, N_RANDOM)
    if kind == "b64":
        return int_pool(64, N_RANDOM)
    if kind == "f16all":
        return np.arange(1 << 16, dtype=np.uint16)
    if kind == "small":  # shift amounts, bit positions, lengths
        return np.concatenate([np.arange(0, 80), RNG.integers(0, 2**32, 200, dtype=np.uint64)]).astype(np.uint32)
    if kind == "ftzprobe":
        return np.array([0x3F7FFFFF, 0x00800000, 0x00800001, 0x3F800000, 0x80800000, 0x007FFFFF, 0x3F000000,
                         0x33800000], dtype=np.uint32)
    if kind == "f64nan":
        return np.array([0x7FF8000000000AAA, 0x7FF0000000000BBB, 0xFFF8000000000CCC, 0x3FF0000000000000,
                         0x7FF0000000000000], dtype=np.uint64)
    if kind == "f16x2":
        a, b = b16_pool(N_RANDOM), b16_pool(N_RANDOM)[::-1]
        return (a.astype(np.uint32) << np.uint32(16)) | b.astype(np.uint32)
    raise KeyError(kind)


def operands(case: Case) -> list[np.ndarray]:
    """Specials crossed with specials, plus random draws, one array per input."""
    kinds = case.pools or case.ins
    pools = [pool(k) for k in kinds]
    k = len(pools)
    if k == 1:
        return pools
    n_spec = 40 if k == 2 else 14
    grids = np.meshgrid(*[p[:n_spec] for p in pools], indexing="ij")
    cols = [g.reshape(-1) for g in grids]
    if case.extra.get("grid_only"):
        return [c.astype(p.dtype) for c, p in zip(cols, pools)]
    n = 3 * N_RANDOM
    rand = [p[RNG.integers(0, len(p), n)] for p in pools]
    return [np.concatenate([c.astype(p.dtype), r]) for c, r, p in zip(cols, rand, pools)]


# ---------------------------------------------------------------------------------------------
# running


def ordered(bits: np.ndarray, width: int) -> np.ndarray:
    """Map float bit patterns to integers ordered like their values (for ulp distances)."""
    b = bits.astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    mag = (b & ~sign).astype(np.int64)
    return np.where(b >= sign, -mag, mag)


def kernel_source(i: int, case: Case) -> str:
    params = [f"const {TYPES[t][0]}* __restrict__ a{j}" for j, t in enumerate(case.ins)]
    loads = "".join(f"    {TYPES[t][0]} x{j} = a{j}[i];\n" for j, t in enumerate(case.ins))
    ins = ", ".join(f'"{TYPES[t][1]}"(x{j})' for j, t in enumerate(case.ins))
    asm = case.asm.replace('"', '\\"')
    return (f'extern "C" __global__ void k{i}({", ".join(params)}, {TYPES[case.out][0]}* __restrict__ out, int n) {{\n'
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n{loads}"
            f"    {TYPES[case.out][0]} d;\n"
            f'    asm volatile("{asm}" : "={TYPES[case.out][1]}"(d) : {ins});\n'
            f"    out[i] = d;\n}}\n")


def compile_all(cases: list[Case]):  # noqa: ANN201
    import cupy as cp_

    funcs, errors = {}, {}
    src = "".join(kernel_source(i, c) for i, c in enumerate(cases))
    try:
        mod = cp_.RawModule(code=src)
        for i, c in enumerate(cases):
            funcs[c.name] = mod.get_function(f"k{i}")
        return funcs, errors
    except Exception:  # noqa: BLE001  one bad case: compile them one by one
        pass
    for i, c in enumerate(cases):
        try:
            funcs[c.name] = cp_.RawModule(code=kernel_source(i, c)).get_function(f"k{i}")
        except Exception as e:  # noqa: BLE001
            errors[c.name] = str(e).splitlines()[-3:]
    return funcs, errors


def run_case(case: Case, fn) -> dict:  # noqa: ANN001
    import cupy as cp_

    ops = operands(case)
    n = len(ops[0])
    dev = []
    for o, t in zip(ops, case.ins):
        view = TYPES[t][3]
        dev.append(cp_.asarray(o.view(view) if view is not None else o))
    odt = TYPES[case.out][3] or TYPES[case.out][2]
    out = cp_.zeros(n, dtype=odt)
    fn(((n + 255) // 256,), (256,), (*dev, out, np.int32(n)))
    got = cp_.asnumpy(out).view(TYPES[case.out][2])
    want = np.asarray(case.ref(*ops)).astype(np.uint64).astype(TYPES[case.out][2])
    res: dict = {"name": case.name, "n": int(n)}
    same = got == want
    if case.nan_fmt is not None:
        gn, wn = is_nan(got, case.nan_fmt), is_nan(want, case.nan_fmt)
        both = gn & wn
        res["nan_payload_diffs"] = int((both & ~same).sum())
        vals, counts = np.unique(got[gn], return_counts=True)
        res["hw_nan_patterns"] = {hex(int(v)): int(c) for v, c in sorted(zip(vals, counts), key=lambda t: -t[1])[:6]}
        same = same | both
    if case.approx_ulps is not None:
        width = np.dtype(TYPES[case.out][2]).itemsize * 8
        fin = ~(is_nan(got, case.nan_fmt) | is_nan(want, case.nan_fmt))
        d = np.abs(ordered(got[fin], width) - ordered(want[fin], width)).astype(np.float64)
        res["approx"] = {"exact_fraction": float(same.mean()), "max_ulps_vs_model": float(d.max() if d.size else 0),
                         "bound_ulps": case.approx_ulps, "within": bool((d <= case.approx_ulps).all())}
    bad = np.flatnonzero(~same)
    res["mismatch"] = int(bad.size)
    show = np.arange(n) if case.extra.get("grid_only") else bad[:8]
    res["examples"] = [{"in": [hex(int(o[j])) for o in ops], "gpu": hex(int(got[j])), "model": hex(int(want[j]))}
                       for j in show]
    bound = case.extra.get("bound")
    if bound is not None:
        xs = [decode(o, f) for o, f in zip(ops, case.extra["in_fmts"])]
        y = decode(got, case.extra["out_fmt"])
        with np.errstate(all="ignore"):
            ok, checked = bound(*xs, y)
        res["manual_bound"] = {"checked": int(checked.sum()), "violations": int((checked & ~ok).sum()),
                               "examples": [[hex(int(o[j])) for o in ops] + [hex(int(got[j]))]
                                            for j in np.flatnonzero(checked & ~ok)[:5]]}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="", help="substring filter on case names")
    args = ap.parse_args()
    from gpu_cases import CASES  # noqa: PLC0415  (sibling module)

    cases = [c for c in CASES if args.only in c.name]
    t0 = time.time()
    funcs, errors = compile_all(cases)
    print(f"compiled {len(funcs)} kernels in {time.time() - t0:.1f}s; {len(errors)} failed", flush=True)
    results = []
    for c in cases:
        if c.name in errors:
            results.append({"name": c.name, "compile_error": errors[c.name]})
            continue
        try:
            r = run_case(c, funcs[c.name])
        except Exception as e:  # noqa: BLE001
            r = {"name": c.name, "error": repr(e)}
        results.append(r)
        flag = "OK " if r.get("mismatch") == 0 else "BAD"
        extra = f" approx={r['approx']}" if "approx" in r else ""
        if "manual_bound" in r:
            extra += f" bound(checked={r['manual_bound']['checked']}, violations={r['manual_bound']['violations']})"
        nanp = f" nan={r.get('hw_nan_patterns')}" if r.get("hw_nan_patterns") else ""
        print(f"{flag} {c.name:40s} n={r.get('n')} mismatch={r.get('mismatch', r.get('error'))}{extra}{nanp}", flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    Path(args.out, "conformance.json").write_text(json.dumps({"results": results, "compile_errors": errors}, indent=1))
    print(f"done in {time.time() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
