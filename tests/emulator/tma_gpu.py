"""Cross-check the tensor-copy model (symexec/tma.py, symexec/tensormap.py) against a Hopper GPU.

    python tests/emulator/tma_gpu.py export .cache/tma_gpu/cases.npz          # here (emulator side)
    python tests/emulator/tma_gpu.py run .cache/tma_gpu/cases.npz OUT.npz      # on the GPU machine
    python tests/emulator/tma_gpu.py compare .cache/tma_gpu/cases.npz OUT.npz

`export` writes the hand-written kernels of test_tma.py (loads under every swizzle, boxes narrower
than the swizzle span, element strides, out-of-bounds boxes, stores, reductions, maps built on
the device with tensormap.replace, a copied parameter map) with their launch-spec tensor maps and
the emulator's outputs; `run` needs only numpy and cuda-python: it encodes each map with
cuTensorMapEncodeTiled, launches the PTX and stores the output buffers (a map the driver refuses
is recorded as such); `compare` prints, per case, how many output bytes differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
_DTYPE = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6, "float32": 7,
          "float64": 8, "bfloat16": 9}
_SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3, "128B_atom_32B": 4, "128B_atom_32B_flip_8B": 5,
            "128B_atom_64B": 6}


def _cases():
    import test_tma as T

    A = T.A
    zero_out = np.zeros(T.SMEM // 4, np.uint32)
    cases = []  # (name, body, map spec, inp, out, coords, nbytes)
    for sw, box in (("none", (16, 8)), ("32B", (8, 16)), ("64B", (16, 8)), ("128B", (32, 16)),
                    ("128B", (16, 16)), ("64B", (8, 16)), ("128B", (8, 32)), ("32B", (4, 16))):
        for coords in ((0, 0), (80, 36), (-8, -5), (88, 39), (-4, 2), (4, 1), (90, 39)):
            cases.append((f"load-{sw}-{box[0]}x{box[1]}-{coords[0]}_{coords[1]}", T.LOAD + T.DUMP,
                          T.map_spec("inp", 40, 96, box, sw), A, zero_out, coords, box[0] * box[1] * 4))
    cases.append(("load-estride", T.LOAD + T.DUMP, T.map_spec("inp", 40, 96, (16, 12), element_strides=[1, 3]),
                  A, zero_out, (8, 30), 16 * 4 * 4))
    cases.append(("load-estride-oob", T.LOAD + T.DUMP, T.map_spec("inp", 40, 96, (16, 12), element_strides=[1, 4]),
                  A, zero_out, (88, 20), 16 * 3 * 4))
    for sw in ("128B_atom_32B", "128B_atom_64B"):
        cases.append((f"load-{sw}", T.LOAD + T.DUMP, T.map_spec("inp", 40, 96, (32, 16), sw), A, zero_out, (0, 0),
                      2048))
    h16 = (np.random.default_rng(5).standard_normal((40, 96)) * 4).astype(np.float16)
    cases.append(("load-f16-128B", T.LOAD + T.DUMP, T.map_spec("inp", 40, 96, (64, 16), "128B", dtype="float16"),
                  h16, zero_out, (32, 30), 2048))
    src = np.arange(40 * 96, dtype=np.float32) + 1000
    cases.append(("store-oob", T.FILL + T.STORE, T.map_spec("out", 40, 96, (32, 16)), src,
                  np.full((40, 96), -1, np.float32), (80, 30), 0))
    cases.append(("store-128B", T.FILL + T.STORE, T.map_spec("out", 40, 96, (32, 16), "128B"), src,
                  np.full((40, 96), -1, np.float32), (64, 8), 0))
    for sw, box in (("128B", (16, 16)), ("64B", (8, 16)), ("32B", (4, 16))):  # rows narrower than the span
        cases.append((f"store-{sw}-{box[0]}x{box[1]}", T.FILL + T.STORE, T.map_spec("out", 40, 96, box, sw), src,
                      np.full((40, 96), -1, np.float32), (84, 30), 0))
    cases.append(("reduce-128B-narrow", T.FILL + T.REDUCE, T.map_spec("out", 40, 96, (16, 16), "128B"),
                  np.random.default_rng(4).standard_normal(40 * 96).astype(np.float32),
                  np.random.default_rng(5).standard_normal((40, 96)).astype(np.float32), (32, 28), 0))
    rng = np.random.default_rng(3)
    cases.append(("reduce-f32", T.FILL + T.REDUCE, T.map_spec("out", 40, 96, (32, 16)),
                  rng.standard_normal(40 * 96).astype(np.float32), rng.standard_normal((40, 96)).astype(np.float32),
                  (32, 28), 0))
    cases.append(("reduce-u32", T.FILL + T.REDUCE, T.map_spec("out", 40, 96, (32, 16), dtype="uint32"),
                  rng.integers(0, 1000, 40 * 96).astype(np.uint32), rng.integers(0, 1000, (40, 96)).astype(np.uint32),
                  (32, 28), 0))
    cases.append(("device-map", T.REPLACE_GLOBAL + T.LOAD_VIA.replace("{MAP}", "%rd4") + T.DUMP,
                  T.map_spec("inp", 1, 4, (4, 1)), A, zero_out, (88, 36), 16 * 8 * 4))
    cases.append(("template-map", T.TEMPLATE + T.FILL + T.STORE.replace("[%rd1,", "[%rd4,"),
                  T.map_spec("inp", 40, 96, (32, 16)), np.arange(40 * 96, dtype=np.float32),
                  np.full((40, 96), -1, np.float32), (64, 8), 0))
    cases.append(("nan-fill", T.LOAD + T.DUMP, T.map_spec("inp", 40, 96, (16, 8), oob_fill="nan_request_zero_fma"),
                  A, zero_out, (88, 36), 512))
    return cases


def export(path: str) -> None:
    import test_tma as T

    from ptx_parser import parse
    from symexec import load_program, run_kernel

    manifest, arrays = [], {}
    for name, body, tm, inp, out, coords, nbytes in _cases():
        text = T.kernel(body)
        try:
            glob, _, _ = run_kernel(load_program(parse(text)), T.launch(tm, inp, out, coords, nbytes))
            arrays[f"{name}/emu/out"] = glob.by_name("out").data.copy()
        except Exception as e:  # the GPU still runs it (e.g. the OOB-NaN pattern the emulator refuses)
            arrays[f"{name}/emu/error"] = np.frombuffer(str(e).encode(), np.uint8)
        arrays[f"{name}/in/inp"] = np.ascontiguousarray(inp).view(np.uint8).reshape(-1)
        arrays[f"{name}/in/out"] = np.ascontiguousarray(out).view(np.uint8).reshape(-1)
        manifest.append({"name": name, "ptx": text, "map": tm, "coords": list(coords), "nbytes": nbytes})
    arrays["manifest"] = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"exported {len(manifest)} cases to {path}")


def run(path: str, out_path: str) -> None:
    """Every case in its own process: a faulting kernel (an illegal instruction) is fatal to its
    CUDA context, and such errors cannot be cleared in the process."""
    import subprocess
    import tempfile

    manifest = json.loads(bytes(np.load(path)["manifest"]).decode())
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(manifest):
            one = Path(tmp) / f"{i}.npz"
            proc = subprocess.run([sys.executable, __file__, "run-one", path, str(i), str(one)], capture_output=True,
                                  text=True, timeout=120)
            if one.exists():
                with np.load(one) as got:
                    results.update({k: got[k] for k in got.files})
                print(case["name"], "ran")
            else:
                err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                print(case["name"], "FAILED", err)
                results[f"{case['name']}/error"] = np.frombuffer(err.encode(), np.uint8)
    np.savez_compressed(out_path, **results)


def run_one(path: str, index: int, out_path: str) -> None:
    import ctypes

    from cuda.bindings import driver as cu

    def ok(res):
        err, *rest = res if isinstance(res, tuple) else (res,)
        if err != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA error {err}")
        return rest[0] if len(rest) == 1 else rest

    data = np.load(path)
    case = json.loads(bytes(data["manifest"]).decode())[index]
    name = case["name"]
    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(dev))))
    mod = ok(cu.cuModuleLoadData(case["ptx"].encode() + b"\0"))
    fn = ok(cu.cuModuleGetFunction(mod, b"k"))
    ptrs = {}
    for b in ("inp", "out"):
        host = data[f"{name}/in/{b}"]
        d = ok(cu.cuMemAlloc(host.size))
        ok(cu.cuMemcpyHtoD(d, host, host.size))
        ptrs[b] = (d, host.size)
    scratch = ok(cu.cuMemAlloc(256))
    ok(cu.cuMemsetD8(scratch, 0, 256))
    m = case["map"]
    rank = len(m["global_dims"])
    u64 = lambda xs: [cu.cuuint64_t(int(x)) for x in xs]  # noqa: E731
    u32 = lambda xs: [cu.cuuint32_t(int(x)) for x in xs]  # noqa: E731
    tmap = ok(cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(_DTYPE[m["dtype"]]), rank, int(ptrs[m["buffer"]][0]) + m.get("offset", 0),
        u64(m["global_dims"]), u64(m["global_strides"]), u32(m["box_dims"]), u32(m.get("element_strides", [1] * rank)),
        cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(_SWIZZLE[m.get("swizzle", "none")]),
        cu.CUtensorMapL2promotion(0),
        cu.CUtensorMapFloatOOBfill(1 if m.get("oob_fill") == "nan_request_zero_fma" else 0)))
    words = (ctypes.c_uint64 * 16)(*[int(x) for x in tmap.opaque])
    c0, c1 = case["coords"]
    args = [words, ctypes.c_uint64(int(ptrs["inp"][0])), ctypes.c_uint64(int(ptrs["out"][0])),
            ctypes.c_uint64(int(scratch)), ctypes.c_uint32(c0 & 0xFFFFFFFF), ctypes.c_uint32(c1 & 0xFFFFFFFF),
            ctypes.c_uint32(case["nbytes"])]
    argv = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    ok(cu.cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, 0, ctypes.addressof(argv), 0))
    ok(cu.cuCtxSynchronize())
    d, size = ptrs["out"]
    host = np.zeros(size, np.uint8)
    ok(cu.cuMemcpyDtoH(host, d, size))
    np.savez_compressed(out_path, **{f"{name}/gpu/out": host})


def compare(path: str, gpu_path: str) -> list[tuple[str, int, int]]:
    data, gpu = np.load(path), np.load(gpu_path)
    manifest = json.loads(bytes(data["manifest"]).decode())
    rows = []
    for case in manifest:
        name = case["name"]
        if f"{name}/error" in gpu:
            print(f"{name:34s} GPU error: {bytes(gpu[name + '/error']).decode()}")
            continue
        g = gpu[f"{name}/gpu/out"]
        if f"{name}/emu/error" in data:
            nz = np.unique(g.view(np.uint32))[:6]
            print(f"{name:34s} emulator: {bytes(data[name + '/emu/error']).decode()[:90]}; GPU words {nz}")
            continue
        e = data[f"{name}/emu/out"]
        diff = int((e != g).sum())
        rows.append((name, diff, e.size))
        print(f"{name:34s} {diff:6d}/{e.size:6d} bytes differ")
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parents[1]))
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "export" and len(sys.argv) == 3:
        export(sys.argv[2])
    elif cmd == "run" and len(sys.argv) == 4:
        run(sys.argv[2], sys.argv[3])
    elif cmd == "run-one" and len(sys.argv) == 5:
        run_one(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "compare" and len(sys.argv) == 4:
        compare(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
