"""Warp-matrix instructions on a real GPU against the emulator, bit for bit (not collected by pytest).

Three steps, so that the GPU machine needs only numpy and CuPy (no project imports there):

    python tests/emulator/mma_conformance.py gen DIR [SEED]   # here: PTX kernels + inputs
    python tests/emulator/mma_conformance.py run DIR OUT      # on the GPU (CuPy): OUT/gpu.npz
    python tests/emulator/mma_conformance.py compare DIR OUT/gpu.npz   # here: emulator vs GPU

Every mma form the emulator models is run by 32 warps on raw register contents drawn from three
distributions: `normal` (typical values), `special` (zeros, subnormals, infinities, NaNs, extremes
mixed with random bit patterns) and `span` (random finite bit patterns: addends spanning the whole
exponent range, which exposes the accumulation order and internal precision that the manual
leaves unspecified). ldmatrix/stmatrix/movmatrix forms are run on random data. The comparison is
per accumulator element; float mismatches are summarised in ulps of the accumulator type.
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

MMA_FORMS = [
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32",
    "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
    "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
    "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
    "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32",
    "mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32",
    "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32",
    "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32",
    "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32",
    "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
    "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64",
    "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64",
    "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
]
MATRIX_FORMS = [(op, count, trans) for op in ("ldmatrix", "stmatrix") for count in (1, 2, 4)
                for trans in (False, True)]
WARPS = 32
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
         "s4": 4, "u4": 4, "f32": 32, "s32": 32}
_SPECIAL = {"f16": [0, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0xFBFF],
            "bf16": [0, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F80, 0xFF80, 0x7FC0, 0x7F7F, 0xFF7F],
            "tf32": [0, 0x80000000, 0x00002000, 0x00001FFF, 0x00800000, 0x7F800000, 0xFF800000,
                     0x7FC00000, 0x7F7FE000, 0x7F7FFFFF],
            "f32": [0, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F800000, 0xFF800000,
                    0x7FC00000, 0x7F7FFFFF, 0xFF7FFFFF],
            "f64": [0, 1 << 63, 1, 0x0010000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                    0x7FF8000000000000, 0x7FEFFFFFFFFFFFFF],
            "e4m3": [0, 0x80, 0x01, 0x07, 0x08, 0x7E, 0xFE, 0x7F, 0xFF],
            "e5m2": [0, 0x80, 0x01, 0x03, 0x04, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E]}


def _parse_form(form: str) -> dict:
    parts = form.split(".")
    shape = next(p for p in parts if p.startswith("m") and "n" in p and "k" in p)
    m, rest = shape[1:].split("n")
    n, k = (int(v) for v in rest.split("k"))
    d, a, b, c = parts[-4:]
    pa = max(1, 32 // _BITS[a])
    pc = 2 if c == "f16" else 1
    return {"M": int(m), "N": n, "K": k, "a": a, "b": b, "c": c, "pa": pa,
            "na": int(m) * k // 32 // pa, "nb": k * n // 32 // pa, "nc": int(m) * n // 32 // pc}


def _finite(bits: np.ndarray, ty: str) -> np.ndarray:
    """Replace NaN/Inf encodings by zero (for the `span` distribution)."""
    if ty in ("s8", "u8", "s4", "u4", "s32"):
        return bits
    w = _BITS[ty]
    if ty == "e4m3":
        return np.where((bits & 0x7F) == 0x7F, 0, bits)
    e = {"f16": (10, 0x1F), "bf16": (7, 0xFF), "tf32": (23, 0xFF), "f32": (23, 0xFF), "f64": (52, 0x7FF),
         "e5m2": (2, 0x1F)}[ty]
    if w == 64:
        ex = (bits >> np.uint64(e[0])) & np.uint64(e[1])
        return np.where(ex == e[1], np.uint64(0), bits)
    return np.where(((bits >> e[0]) & e[1]) == e[1], 0, bits)


def _elements(rng, ty: str, count: int, dist: str) -> np.ndarray:
    """`count` raw element bit patterns of type `ty` (uint64)."""
    w = _BITS[ty]
    raw = rng.integers(0, 1 << min(w, 63), count, dtype=np.uint64)
    if w == 64:
        raw |= rng.integers(0, 2, count, dtype=np.uint64) << np.uint64(63)
    if ty in ("s8", "u8", "s4", "u4", "s32"):
        if dist == "special" and ty == "s32":
            raw = np.where(rng.random(count) < 0.5, rng.choice([0x7FFFFFF0, 0x80000010, 0x7FFFFFFF, 0x80000000],
                                                               count), raw).astype(np.uint64)
        return raw
    if dist == "normal":
        v = rng.standard_normal(count)
        if ty == "f64":
            return v.view(np.uint64)
        if ty in ("f32", "tf32"):
            bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
            return bits | rng.integers(0, 1 << 13, count, dtype=np.uint64) if ty == "tf32" else bits
        if ty == "f16":
            return v.astype(np.float16).view(np.uint16).astype(np.uint64)
        if ty == "bf16":
            return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
        return _finite(raw, ty)  # fp8: every finite pattern is a typical value
    if dist == "span":
        return _finite(raw, ty)
    pick = rng.random(count) < 0.3
    return np.where(pick, rng.choice(np.array(_SPECIAL[ty], dtype=np.uint64), count), raw).astype(np.uint64)


def _registers(rng, ty: str, nregs: int, per: int, dist: str) -> np.ndarray:
    """(32*WARPS, nregs) registers, each packing `per` elements low bits first."""
    w = _BITS[ty]
    el = _elements(rng, ty, 32 * WARPS * nregs * per, dist).reshape(32 * WARPS, nregs, per)
    if per == 1:
        return el[:, :, 0]
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(w)
    return (el << shifts).sum(axis=2, dtype=np.uint64)


def gen(out: Path, seed: int = 0) -> None:
    sys.path.insert(0, str(HERE))
    from test_mma import _matrix_kernel, _mma_kernel  # noqa: E402  (the unit tests' kernels)

    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for form in MMA_FORMS:
        f = _parse_form(form)
        reg_a = ".f64" if f["a"] == "f64" else ".b32"
        reg_c = {"f32": ".f32", "f64": ".f64"}.get(f["c"], ".b32")
        text = _mma_kernel(form, f["na"], f["nb"], f["nc"], reg_a, reg_c).replace(".target sm_90a", ".target sm_90")
        pc = 2 if f["c"] == "f16" else 1
        dists = ["normal", "special"] + ([] if f["c"] == "s32" else ["span"])
        for dist in dists:
            name = f"{form.split('aligned.')[1]}__{dist}"
            rng = np.random.default_rng([zlib.crc32(name.encode()), seed])
            dt_a = np.uint64 if f["a"] == "f64" else np.uint32
            dt_c = np.uint64 if f["c"] == "f64" else np.uint32
            c_ty = "f16" if f["c"] == "f16" else f["c"]
            bufs = {"a": _registers(rng, f["a"], f["na"], f["pa"], dist).astype(dt_a),
                    "b": _registers(rng, f["b"], f["nb"], f["pa"], dist).astype(dt_a),
                    "c": _registers(rng, c_ty, f["nc"], pc, dist).astype(dt_c),
                    "d": np.zeros((32 * WARPS, f["nc"]), dtype=dt_c)}
            cases.append(_write(out, name, text, bufs, ["a", "b", "c", "d"], ["d"], 32 * WARPS, form, f["c"]))
    for op, count, trans in MATRIX_FORMS:
        name = f"{op}.x{count}{'.trans' if trans else ''}"
        rng = np.random.default_rng([zlib.crc32(name.encode()), seed])
        slots = rng.permutation(64)[: 8 * count]
        off = np.full(32, 3, dtype=np.uint32)
        off[: 8 * count] = slots * 16
        bufs = {"in": rng.integers(0, 1 << 16, 512).astype(np.uint16), "off": off,
                "regs": rng.integers(0, 1 << 32, (32, 4), dtype=np.uint64).astype(np.uint32),
                "out": np.zeros(512, dtype=np.uint16)}
        text = _matrix_kernel(op, count, trans, False).replace(".target sm_90a", ".target sm_90")
        cases.append(_write(out, name, text, bufs, ["in", "off", "regs", "out"], ["regs", "out"], 32, name, "b16"))
    (out / "cases.json").write_text(json.dumps(cases, indent=1))
    print(f"{len(cases)} cases in {out}")


def _write(out: Path, name: str, text: str, bufs: dict, params: list, outputs: list, threads: int,
           form: str, acc: str) -> dict:
    (out / f"{name}.ptx").write_text(text)
    np.savez(out / f"{name}.npz", **bufs)
    return {"name": name, "params": params, "outputs": outputs, "threads": threads, "form": form, "acc": acc}


def run(cases_dir: Path, out: Path) -> None:
    """On the GPU: run every case with CuPy (the driver JIT-compiles the PTX)."""
    import cupy as cp

    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for case in json.loads((cases_dir / "cases.json").read_text()):
        name = case["name"]
        try:
            mod = cp.RawModule(path=str(cases_dir / f"{name}.ptx"))
            fn = mod.get_function("k")
            host = np.load(cases_dir / f"{name}.npz")
            dev = {k: cp.asarray(host[k]) for k in case["params"]}
            fn((1,), (case["threads"],), tuple(dev[k] for k in case["params"]))
            cp.cuda.runtime.deviceSynchronize()
            for k in case["outputs"]:
                results[f"{name}/{k}"] = cp.asnumpy(dev[k])
            print("ran", name, flush=True)
        except Exception as e:  # report and go on: one bad form must not hide the others
            print("FAILED", name, type(e).__name__, str(e)[:300], flush=True)
    np.savez(out / "gpu.npz", **results)


def compare(cases_dir: Path, gpu_file: Path) -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from ptx_parser import parse
    from symexec import Launch, load_program, run_kernel

    gpu = np.load(gpu_file)
    report = {}
    for case in json.loads((cases_dir / "cases.json").read_text()):
        name = case["name"]
        host = np.load(cases_dir / f"{name}.npz")
        bufs = {k: host[k].copy() for k in case["params"]}
        prog = load_program(parse((cases_dir / f"{name}.ptx").read_text()))
        try:
            glob, _, _ = run_kernel(prog, Launch((1,), (case["threads"],), bufs, case["params"]))
        except Exception as e:
            report[name] = {"emulator_error": str(e)[:200]}
            print(f"{name:55s} emulator error: {e}")
            continue
        entry = {}
        for k in case["outputs"]:
            key = f"{name}/{k}"
            if key not in gpu:
                entry[k] = "no GPU result"
                continue
            want = gpu[key]
            got = glob.by_name(k).data.view(want.dtype).reshape(want.shape)
            entry[k] = _diff(got, want, case["acc"] if k == "d" else "bits")
        report[name] = entry
        print(f"{name:55s} " + "; ".join(f"{k}: {v['summary'] if isinstance(v, dict) else v}" for k, v in entry.items()))
    return report


def _diff(got: np.ndarray, want: np.ndarray, acc: str) -> dict:
    if acc == "f16":
        got = np.stack([got & 0xFFFF, got >> 16], axis=-1).astype(np.uint16)
        want = np.stack([want & 0xFFFF, want >> 16], axis=-1).astype(np.uint16)
    same = got == want
    d = {"elements": int(same.size), "mismatches": int((~same).sum())}
    if acc in ("f32", "f16", "f64") and (~same).any():
        ft = {"f32": np.float32, "f16": np.float16, "f64": np.float64}[acc]
        st = {"f32": np.int32, "f16": np.int16, "f64": np.int64}[acc]
        gv, wv = got.view(ft), want.view(ft)
        both_nan = np.isnan(gv) & np.isnan(wv)
        d["nan_payload_only"] = int((both_nan & ~same).sum())
        bad = ~same & ~both_nan
        gi, wi = got.view(st).astype(np.int64), want.view(st).astype(np.int64)
        # ordered integer images: distance in ulps for finite values of equal sign
        gi = np.where(gi < 0, np.iinfo(st).min - gi, gi)
        wi = np.where(wi < 0, np.iinfo(st).min - wi, wi)
        ulps = np.abs(gi - wi)[bad]
        if ulps.size:
            d["max_ulps"] = int(ulps.max())
            d["ulps_le_1"] = int((ulps <= 1).sum())
            idx = np.argwhere(bad)[:3]
            d["examples"] = [(tuple(int(v) for v in i), float(gv[tuple(i)]), float(wv[tuple(i)])) for i in idx]
    d["summary"] = (f"{d['mismatches']}/{d['elements']} differ" +
                    (f" (max {d.get('max_ulps')} ulp, {d.get('ulps_le_1')} within 1 ulp, "
                     f"{d.get('nan_payload_only')} NaN payload only)" if "max_ulps" in d or d.get("nan_payload_only")
                     else ""))
    return d


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("gen", "run", "compare"):
        print(__doc__)
        sys.exit(2)
    if sys.argv[1] == "gen":
        gen(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    elif sys.argv[1] == "run":
        run(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        rep = compare(Path(sys.argv[2]), Path(sys.argv[3]))
        if len(sys.argv) > 4:
            Path(sys.argv[4]).write_text(json.dumps(rep, indent=1, default=str))
