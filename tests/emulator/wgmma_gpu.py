"""Cross-check the wgmma model against a Hopper GPU.

    python tests/emulator/wgmma_gpu.py export .cache/wgmma_gpu/cases.npz     # here (emulator side)
    python tests/emulator/wgmma_gpu.py run .cache/wgmma_gpu/cases.npz OUT.npz  # on the GPU machine
    python tests/emulator/wgmma_gpu.py compare .cache/wgmma_gpu/cases.npz OUT.npz

`export` writes every hand-written case of test_wgmma.py and a few Triton sm_90a kernels (PTX,
buffers, parameters) with the emulator's outputs; `run` needs only numpy and cuda-python
(cuda.bindings): it loads each PTX with the driver, launches it and stores the output buffers;
`compare` prints, per case, how many output words differ and the largest relative difference.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _triton_cases(rng) -> list[tuple[str, str, int, int, dict, list, list]]:
    """(name, ptx, threads, shared, buffers, params, outputs) of Triton kernels."""
    import triton.language as tl

    from semantics.formats import E4M3, round_f64
    from wgmma_kernels import compile_ptx

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr", "PRECISION": "constexpr", "OUT": "constexpr"}
    out = []

    def gemm(name, adt, cdt, bm, bn, bk, k, prec, acc, warps, a, b, stages=2):
        ptx, sh = compile_ptx("gemm", dict(sig, a_ptr=adt, b_ptr=adt, c_ptr=cdt),
                              dict(BM=bm, BN=bn, BK=bk, PRECISION=prec, OUT=acc), num_warps=warps, num_stages=stages)
        c = np.zeros((bm, bn), {"*fp32": np.float32, "*fp16": np.float16, "*i32": np.int32}[cdt])
        out.append((name, ptx, 32 * warps, sh, {"a": a, "b": b, "c": c}, ["a", "b", "c", k], ["c"]))

    f16 = lambda *s: rng.standard_normal(s).astype(np.float16)  # noqa: E731
    gemm("triton-f16-w4", "*fp16", "*fp32", 128, 128, 64, 256, "ieee", tl.float32, 4, f16(128, 256), f16(256, 128))
    gemm("triton-f16-w8", "*fp16", "*fp32", 128, 128, 64, 128, "ieee", tl.float32, 8, f16(128, 128), f16(128, 128))
    gemm("triton-f16acc", "*fp16", "*fp16", 64, 64, 64, 128, "ieee", tl.float16, 4, f16(64, 128), f16(128, 64))
    e4 = lambda *s: np.asarray(round_f64(rng.standard_normal(s).reshape(-1), E4M3)).astype(np.uint8).reshape(s)  # noqa
    gemm("triton-fp8", "*fp8e4nv", "*fp32", 64, 64, 64, 128, "ieee", tl.float32, 4, e4(64, 128), e4(128, 64))
    i8 = lambda *s: rng.integers(-128, 128, s).astype(np.int8)  # noqa: E731
    gemm("triton-int8", "*i8", "*i32", 64, 64, 64, 128, "ieee", tl.int32, 4, i8(64, 128), i8(128, 64))
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    gemm("triton-tf32", "*fp32", "*fp32", 64, 64, 32, 64, "tf32", tl.float32, 4, f32(64, 64), f32(64, 64), stages=1)
    asig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp32", "L": "i32", "BM": "constexpr",
            "BN": "constexpr", "D": "constexpr"}
    ptx, sh = compile_ptx("attention", asig, dict(BM=64, BN=64, D=64))
    bufs = {"q": (f16(64, 64) / 8).astype(np.float16), "k": f16(128, 64), "v": f16(128, 64),
            "o": np.zeros((64, 64), np.float32)}
    out.append(("triton-attention", ptx, 128, sh, bufs, ["q", "k", "v", "o", 128], ["o"]))
    return out


def export(path: str) -> None:
    import ptx_parser
    import test_wgmma as T
    from symexec import Launch, load_program, run_kernel

    cases = []
    for name, c in T._CASES.items():
        text, bufs, params, _, _ = T.build_case(c)
        cases.append((name, text, 128, 0, bufs, params, ["out"]))
    big = np.full((64, 8), 2**31 - 5, dtype=np.int64)
    sat = T.Case(dtype=".s32", atype=".u8", btype=".u8", n=8, satfinite=True)
    text, bufs, params, _, _ = T.build_case(sat, d_old=big)
    cases.append(("u8-satfinite", text, 128, 0, bufs, params, ["out"]))
    diag = {  # D = A*B alone (scale-d = 0): the rounding of one instruction, many samples
        "diag-f16": T.Case(n=256, scale_d="0"),
        "diag-bf16": T.Case(atype=".bf16", btype=".bf16", n=256, scale_d="0"),
        "diag-tf32": T.Case(atype=".tf32", btype=".tf32", n=256, scale_d="0"),
        "diag-e4m3": T.Case(atype=".e4m3", btype=".e4m3", n=256, scale_d="0"),
        "diag-e4m3-f16": T.Case(atype=".e4m3", btype=".e4m3", dtype=".f16", n=256, scale_d="0"),
        "diag-f16-f16": T.Case(dtype=".f16", n=256, scale_d="0"),
        "diag-f16-acc": T.Case(n=256),
        **T._WIDE,
    }
    for name, c in diag.items():
        text, bufs, params, _, _ = T.build_case(c, seed=T.WIDE_SEED)
        cases.append((name, text, 128, 0, bufs, params, ["out"]))
    cases += _triton_cases(np.random.default_rng(7))
    manifest, arrays = [], {}
    for name, text, threads, shared, bufs, params, outs in cases:
        prog = load_program(ptx_parser.parse(text))
        params = params + [0] * (len(prog.params) - len(params))  # Triton's scratch pointers
        glob, _, _ = run_kernel(prog, Launch((1,), (threads,), bufs, params, dynamic_shared_bytes=shared))
        for b, arr in bufs.items():
            arrays[f"{name}/in/{b}"] = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        for o in outs:
            arrays[f"{name}/emu/{o}"] = glob.by_name(o).data.copy()
        manifest.append({"name": name, "ptx": text, "threads": threads, "shared": shared, "params": params,
                         "buffers": list(bufs), "outputs": outs})
    arrays["manifest"] = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"exported {len(manifest)} cases to {path}")


_PARAM = re.compile(r"\.param\s+\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*?(?:\.align\s+\d+\s+)?)?([A-Za-z_$][\w$]*)")


def run(path: str, out_path: str) -> None:
    import ctypes

    from cuda.bindings import driver as cu

    def ok(res):
        err, *rest = res if isinstance(res, tuple) else (res,)
        if err != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA error {err}")
        return rest[0] if len(rest) == 1 else rest

    data = np.load(path)
    manifest = json.loads(bytes(data["manifest"]).decode())
    ok(cu.cuInit(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
    ok(cu.cuCtxSetCurrent(ctx))
    results = {}
    for case in manifest:
        name = case["name"]
        try:
            ptx = case["ptx"].encode() + b"\0"
            mod = ok(cu.cuModuleLoadData(ptx))
            entry = re.search(r"\.entry\s+([A-Za-z_$][\w$]*)", case["ptx"]).group(1)
            fn = ok(cu.cuModuleGetFunction(mod, entry.encode()))
            if case["shared"] > 48 * 1024:
                ok(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         case["shared"]))
            head = case["ptx"][case["ptx"].index(".entry"):]
            decls = _PARAM.findall(head[:head.index(")")])
            ptrs = {}
            for b in case["buffers"]:
                host = data[f"{name}/in/{b}"]
                d = ok(cu.cuMemAlloc(max(host.size, 1)))
                ok(cu.cuMemcpyHtoD(d, host, host.size))
                ptrs[b] = (d, host.size)
            vals, types = [], []
            for (ty, _), p in zip(decls, case["params"]):
                vals.append(int(ptrs[p][0]) if isinstance(p, str) else int(p))
                types.append(ctypes.c_uint64 if ty.endswith("64") else ctypes.c_uint32)
            ok(cu.cuLaunchKernel(fn, 1, 1, 1, case["threads"], 1, 1, case["shared"], 0, (tuple(vals), tuple(types)), 0))
            ok(cu.cuCtxSynchronize())
            for o in case["outputs"]:
                d, size = ptrs[o]
                host = np.zeros(size, np.uint8)
                ok(cu.cuMemcpyDtoH(host, d, size))
                results[f"{name}/gpu/{o}"] = host
            for d, _ in ptrs.values():
                ok(cu.cuMemFree(d))
            print(name, "ran")
        except Exception as e:  # keep going: one bad case must not hide the others
            print(name, "FAILED", e)
            results[f"{name}/error"] = np.frombuffer(str(e).encode(), np.uint8)
    np.savez_compressed(out_path, **results)


def compare(path: str, gpu_path: str) -> list[tuple[str, int, int, float]]:
    data, gpu = np.load(path), np.load(gpu_path)
    manifest = json.loads(bytes(data["manifest"]).decode())
    rows = []
    for case in manifest:
        name = case["name"]
        if f"{name}/error" in gpu:
            print(f"{name:24s} GPU error: {bytes(gpu[name + '/error']).decode()}")
            continue
        for o in case["outputs"]:
            e, g = data[f"{name}/emu/{o}"], gpu[f"{name}/gpu/{o}"]
            width = 2 if name == "triton-f16acc" else 4
            ev, gv = e.view({2: np.uint16, 4: np.uint32}[width]), g.view({2: np.uint16, 4: np.uint32}[width])
            diff = int((ev != gv).sum())
            fl = {2: np.float16, 4: np.float32}[width]
            isfloat = not any(t in name for t in ("s8", "u8", "int8"))
            rel = 0.0
            if isfloat and diff:
                a, b = e.view(fl).astype(np.float64), g.view(fl).astype(np.float64)
                rel = float(np.nanmax(np.abs(a - b)) / max(np.nanmax(np.abs(b)), 1e-30))
            rows.append((f"{name}/{o}", diff, ev.size, rel))
            print(f"{name + '/' + o:28s} {diff:6d}/{ev.size:6d} words differ, max rel diff {rel:.3g}")
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parents[1]))
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "export" and len(sys.argv) == 3:
        export(sys.argv[2])
    elif cmd == "run" and len(sys.argv) == 4:
        run(sys.argv[2], sys.argv[3])
    elif cmd == "compare" and len(sys.argv) == 4:
        compare(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
