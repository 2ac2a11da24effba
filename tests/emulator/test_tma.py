"""Tensor copies through tensor maps on the emulator (PTX 9.7.9.25.5), hand-written PTX with numpy
oracles: global -> shared loads completing tx bytes on an mbarrier (OOB fill, swizzles), bulk-group
tensor stores (OOB skipped) and reductions, a wrong expect_tx count (deadlock), prefetch, tensor
maps built on the device (tensormap.replace, tensormap.cp_fenceproxy, plain copies of the 128
bytes), and the refused forms. ptxas accepts every kernel here."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from ptx_parser import parse
from symexec import Deadlock, Launch, UndefinedBehavior, Unsupported, load_program, run_kernel
from symexec.launch import spec_to_launch
from symexec.tensormap import ElementType, Swizzle, TensorMap, shared_addresses, tile

THREADS = 64
SMEM = 8192

HEADER = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 pin, .param .u64 pout, .param .u64 pscratch,
                  .param .u32 c0, .param .u32 c1, .param .u32 nbytes)
{
.reg .b64 %rd<40>; .reg .b32 %r<64>; .reg .pred %p<8>; .reg .b16 %rs<4>;
.shared .align 1024 .b8 sm[8192];
.shared .align 128 .b8 tm_smem[128];
.shared .align 8 .b64 bar;
mov.u64 %rd1, tmap;
cvta.param.u64 %rd1, %rd1;          // generic address of the CUtensorMap parameter
ld.param.u64 %rd2, [pin];
ld.param.u64 %rd3, [pout];
ld.param.u64 %rd4, [pscratch];
ld.param.u32 %r10, [c0];
ld.param.u32 %r11, [c1];
ld.param.u32 %r12, [nbytes];
mov.u32 %r1, %tid.x;
setp.eq.u32 %p1, %r1, 0;
mov.u32 %r2, sm;
mov.u32 %r3, bar;
"""

# thread 0 issues the copy; everyone waits on the barrier's phase 0 (expect_tx %r12 bytes)
LOAD_VIA = """
@%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
fence.mbarrier_init.release.cluster;
bar.sync 0;
@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r12;
@%p1 cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [%r2], [{MAP}, {%r10, %r11}], [%r3];
WAIT:
mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
@!%p2 bra WAIT;
"""
LOAD = LOAD_VIA.replace("{MAP}", "%rd1")

# every thread copies 4-byte words of shared memory to out[] (the raw, swizzled bytes)
DUMP = """
mov.u32 %r20, %r1;
DUMP_LOOP:
shl.b32 %r21, %r20, 2;
add.u32 %r22, %r2, %r21;
ld.shared.u32 %r23, [%r22];
mul.wide.u32 %rd10, %r20, 4;
add.u64 %rd11, %rd3, %rd10;
st.global.u32 [%rd11], %r23;
add.u32 %r20, %r20, 64;
setp.lt.u32 %p3, %r20, 2048;
@%p3 bra DUMP_LOOP;
"""

# every thread fills shared memory with in[] words, then hands them to the async proxy
FILL = """
mov.u32 %r20, %r1;
FILL_LOOP:
shl.b32 %r21, %r20, 2;
add.u32 %r22, %r2, %r21;
mul.wide.u32 %rd10, %r20, 4;
add.u64 %rd11, %rd2, %rd10;
ld.global.u32 %r23, [%rd11];
st.shared.u32 [%r22], %r23;
add.u32 %r20, %r20, 64;
setp.lt.u32 %p3, %r20, 2048;
@%p3 bra FILL_LOOP;
fence.proxy.async.shared::cta;
bar.sync 0;
"""

STORE = """
@%p1 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r10, %r11}], [%r2];
@%p1 cp.async.bulk.commit_group;
@%p1 cp.async.bulk.wait_group 0;
"""

REDUCE = """
@%p1 cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r10, %r11}], [%r2];
@%p1 cp.async.bulk.commit_group;
@%p1 cp.async.bulk.wait_group 0;
"""


def kernel(body: str) -> str:
    return HEADER + body + "\nret;\n}\n"


def launch(tm: dict, inp: np.ndarray, out: np.ndarray, coords: tuple[int, int], nbytes: int,
           scratch: int = 256) -> Launch:
    """Through the JSON launch spec's {"tensor_map": ...} parameter."""
    spec = {"grid": [1], "block": [THREADS], "buffers": {
        "inp": {"dtype": str(inp.dtype), "data": inp.reshape(-1).tolist()},
        "out": {"dtype": str(out.dtype), "data": out.reshape(-1).tolist()},
        "scratch": {"dtype": "uint8", "shape": [scratch]}},
        "params": [{"tensor_map": tm}, "inp", "out", "scratch", coords[0] & 0xFFFFFFFF, coords[1] & 0xFFFFFFFF,
                   nbytes]}
    return spec_to_launch(spec, "test")


def run(body: str, tm: dict, inp: np.ndarray, out: np.ndarray, coords=(0, 0), nbytes: int = 0) -> dict:
    prog = load_program(parse(kernel(body)))
    glob, _, _ = run_kernel(prog, launch(tm, inp, out, coords, nbytes))
    return {name: glob.by_name(name).data for name in ("inp", "out", "scratch")}


def map_spec(buffer: str, rows: int, cols: int, box: tuple[int, int], swizzle: str = "none",
             dtype: str = "float32", **kw) -> dict:
    eb = np.dtype(dtype).itemsize
    return {"buffer": buffer, "dtype": dtype, "global_dims": [cols, rows], "global_strides": [cols * eb],
            "box_dims": list(box), "swizzle": swizzle, **kw}


def expected_smem(tm: dict, data: np.ndarray, coords, start: int = 0) -> np.ndarray:
    """The shared bytes of a load: the box gathered with zero fill, placed by the swizzle."""
    m = TensorMap.from_spec(tm)
    t = tile(m, coords)
    flat = data.reshape(-1).view(np.uint8)
    eb = m.elem_bytes
    box = np.zeros((t.n, eb), np.uint8)
    idx = t.offsets[t.inside]
    box[t.inside] = flat[idx[:, None] + np.arange(eb)]
    smem = np.zeros(SMEM, np.uint8)
    sh = shared_addresses(m, start, t.n)
    smem[sh[:, None] + np.arange(eb)] = box
    return smem


RNG = np.random.default_rng(7)
A = RNG.standard_normal((40, 96)).astype(np.float32)  # 40 rows of 96 floats


@pytest.mark.parametrize("swizzle, box", [("none", (16, 8)), ("32B", (8, 16)), ("64B", (16, 8)),
                                          ("128B", (32, 16))])
@pytest.mark.parametrize("coords", [(0, 0), (80, 36), (-8, -5), (88, 39), (-4, 37)])
def test_load_gathers_the_box_with_oob_fill(swizzle, box, coords) -> None:
    tm = map_spec("inp", 40, 96, box, swizzle)
    nbytes = box[0] * box[1] * 4
    out = run(LOAD + DUMP, tm, A, np.zeros(SMEM // 4, np.uint32), coords, nbytes)["out"]
    assert np.array_equal(out, expected_smem(tm, A, coords))


def test_misaligned_box_is_undefined() -> None:
    """The box's global address must be 16-byte aligned (5.5.3.1): column 90 of a float32 row is not
    (the H200 raises an illegal-instruction error, tests/emulator/tma_gpu.py)."""
    with pytest.raises(UndefinedBehavior, match="not 16-byte aligned"):
        run(LOAD + DUMP, map_spec("inp", 40, 96, (16, 8)), A, np.zeros(SMEM // 4, np.uint32), (90, 39), 512)


def test_load_with_element_strides() -> None:
    tm = map_spec("inp", 40, 96, (16, 12), element_strides=[1, 3])  # rows c1, c1+3, c1+6, c1+9
    out = run(LOAD + DUMP, tm, A, np.zeros(SMEM // 4, np.uint32), (8, 30), 16 * 4 * 4)["out"]
    got = out.view(np.float32)[:64].reshape(4, 16)
    want = np.zeros((4, 16), np.float32)
    for i, r in enumerate((30, 33, 36, 39)):
        want[i] = A[r, 8:24]
    assert np.array_equal(got, want)


def test_wrong_expect_tx_deadlocks() -> None:
    """expect_tx of one box plus 16 bytes: the phase never completes, the wait spins forever."""
    tm = map_spec("inp", 40, 96, (16, 8))
    with pytest.raises(Deadlock):
        run(LOAD + DUMP, tm, A, np.zeros(SMEM // 4, np.uint32), (0, 0), 16 * 8 * 4 + 16)


def test_load_lands_only_when_the_phase_completes() -> None:
    """Reading the destination before waiting on the barrier sees the old bytes (zero)."""
    early = LOAD.split("WAIT:")[0] + "bar.sync 0;\n" + DUMP
    tm = map_spec("inp", 40, 96, (16, 8))
    out = run(early, tm, A, np.ones(SMEM // 4, np.uint32), (0, 0), 16 * 8 * 4)["out"]
    assert not out.any()


def test_store_skips_out_of_bounds_elements() -> None:
    src = np.arange(SMEM // 4, dtype=np.float32) + 1000
    dst = np.full((40, 96), -1, np.float32)
    tm = map_spec("out", 40, 96, (32, 16))
    got = run(FILL + STORE, tm, src, dst.copy(), (80, 30), 0)["out"].view(np.float32).reshape(40, 96)
    want = dst.copy()
    box = src[:32 * 16].reshape(16, 32)
    want[30:40, 80:96] = box[:10, :16]  # rows 30..39 and columns 80..95 of the 16 x 32 box are inside
    assert np.array_equal(got, want)


def test_store_with_negative_coordinates_is_undefined() -> None:
    tm = map_spec("out", 40, 96, (32, 16))
    with pytest.raises(UndefinedBehavior, match="non-negative"):
        run(FILL + STORE, tm, np.zeros(SMEM // 4, np.float32), np.zeros((40, 96), np.float32), (-4, 0), 0)


@pytest.mark.parametrize("dtype", ["float32", "uint32", "int32", "float16"])
def test_reduce_adds_into_global(dtype) -> None:
    rng = np.random.default_rng(3)
    if dtype.startswith("float"):
        old = rng.standard_normal((40, 96)).astype(dtype)
        src = rng.standard_normal(SMEM // np.dtype(dtype).itemsize).astype(dtype)
    else:
        old = rng.integers(0, 1000, (40, 96)).astype(dtype)
        src = rng.integers(0, 1000, SMEM // 4).astype(dtype)
    box = (32, 16) if dtype != "float16" else (64, 16)
    tm = map_spec("out", 40, 96, box, dtype=dtype)
    got = run(FILL + REDUCE, tm, src.view(np.uint32), old.copy(), (32, 28), 0)["out"].view(dtype).reshape(40, 96)
    want = old.copy()
    rows = min(box[1], 40 - 28)
    want[28:28 + rows, 32:32 + box[0]] += src[:box[0] * box[1]].reshape(box[1], box[0])[:rows]
    assert np.array_equal(got, want)


def test_reduce_op_must_suit_the_element_type() -> None:
    tm = map_spec("out", 40, 96, (32, 16))
    body = FILL + REDUCE.replace(".add.tile", ".and.tile")
    with pytest.raises(UndefinedBehavior, match="float32"):
        run(body, tm, np.zeros(SMEM // 4, np.uint32), np.zeros((40, 96), np.float32), (0, 0), 0)


def test_prefetch_is_a_hint() -> None:
    body = "@%p1 cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r10, %r11}];\n"
    out = run(body, map_spec("inp", 40, 96, (16, 8)), A, np.zeros(4, np.uint32), (0, 0))["out"]
    assert not out.any()


# ---------------------------------------------------------------------- tensor maps built on the device

# thread 0 builds a 2-D float32 map of in[40][96] in the zero-filled global scratch buffer
REPLACE_GLOBAL = """
@%p1 tensormap.replace.tile.global_address.global.b1024.b64 [%rd4], %rd2;
@%p1 tensormap.replace.tile.rank.global.b1024.b32 [%rd4], 1;
mov.u32 %r30, 16;
@%p1 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd4], 0, %r30;
mov.u32 %r30, 8;
@%p1 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd4], 1, %r30;
mov.u32 %r30, 96;
@%p1 tensormap.replace.tile.global_dim.global.b1024.b32 [%rd4], 0, %r30;
mov.u32 %r30, 40;
@%p1 tensormap.replace.tile.global_dim.global.b1024.b32 [%rd4], 1, %r30;
mov.u64 %rd30, 384;
@%p1 tensormap.replace.tile.global_stride.global.b1024.b64 [%rd4], 0, %rd30;
mov.u32 %r30, 1;
@%p1 tensormap.replace.tile.element_stride.global.b1024.b32 [%rd4], 0, %r30;
@%p1 tensormap.replace.tile.element_stride.global.b1024.b32 [%rd4], 1, %r30;
@%p1 tensormap.replace.tile.elemtype.global.b1024.b32 [%rd4], 7;
@%p1 tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%rd4], 2;
fence.proxy.tensormap::generic.release.gpu;
bar.sync 0;
fence.proxy.tensormap::generic.acquire.gpu [%rd4], 128;
"""

# warp 0 copies the parameter's map into shared memory (8 x 16 bytes), points it at out[], and
# publishes it to the global scratch buffer with tensormap.cp_fenceproxy
TEMPLATE = """
mov.u32 %r40, tm_smem;
cvt.u64.u32 %rd25, %r40;
setp.lt.u32 %p4, %r1, 8;
shl.b32 %r41, %r1, 4;
mov.u64 %rd20, tmap;
cvt.u64.u32 %rd21, %r41;
add.u64 %rd22, %rd20, %rd21;
@%p4 ld.param.v4.b32 {%r42, %r43, %r44, %r45}, [%rd22];
add.u32 %r46, %r40, %r41;
@%p4 st.shared.v4.b32 [%r46], {%r42, %r43, %r44, %r45};
bar.sync 0;
@%p1 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd25], %rd3;
bar.sync 0;
setp.lt.u32 %p5, %r1, 32;
@%p5 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd4], [%rd25], 128;
@%p5 fence.proxy.tensormap::generic.acquire.gpu [%rd4], 128;
bar.sync 0;
"""


def test_map_built_by_tensormap_replace() -> None:
    coords = (88, 36)
    out = run(REPLACE_GLOBAL + LOAD_VIA.replace("{MAP}", "%rd4") + DUMP, map_spec("inp", 1, 4, (4, 1)), A,
              np.zeros(SMEM // 4, np.uint32), coords, 16 * 8 * 4)["out"]
    assert np.array_equal(out, expected_smem(map_spec("inp", 40, 96, (16, 8), "64B"), A, coords))


def test_unset_field_of_a_device_map_is_unsupported() -> None:
    body = REPLACE_GLOBAL.replace("@%p1 tensormap.replace.tile.elemtype.global.b1024.b32 [%rd4], 7;\n", "")
    with pytest.raises(Unsupported, match="elemtype: never set"):
        run(body + LOAD_VIA.replace("{MAP}", "%rd4"), map_spec("inp", 1, 4, (4, 1)), A,
            np.zeros(SMEM // 4, np.uint32), (0, 0), 16 * 8 * 4)


def test_copy_of_the_parameter_map_with_a_new_address() -> None:
    """A plain 128-byte copy of a known map is that map; replace edits the copy, not the original."""
    src = np.arange(40 * 96, dtype=np.float32)  # FILL reads its first 2048 words
    dst = np.full((40, 96), -1, np.float32)
    body = TEMPLATE + FILL + STORE.replace("[%rd1,", "[%rd4,")
    res = run(body, map_spec("inp", 40, 96, (32, 16)), src, dst.copy(), (64, 8), 0)
    got = res["out"].view(np.float32).reshape(40, 96)
    want = dst.copy()
    want[8:24, 64:96] = src[:512].reshape(16, 32)
    assert np.array_equal(got, want)
    assert np.array_equal(res["inp"].view(np.float32), src)  # the parameter's own map still points at in[]


def test_partial_copy_of_a_map_is_unknown() -> None:
    body = TEMPLATE.replace("setp.lt.u32 %p4, %r1, 8;", "setp.lt.u32 %p4, %r1, 7;")  # 112 of 128 bytes
    with pytest.raises(Unsupported, match="hold no tensor map"):
        run(body + FILL + STORE.replace("[%rd1,", "[%rd4,"), map_spec("inp", 40, 96, (32, 16)),
            np.zeros(40 * 96, np.float32), np.zeros((40, 96), np.float32), (0, 0), 0)


def test_zero_bytes_are_no_map() -> None:
    with pytest.raises(Unsupported, match="128 zero bytes"):
        run(LOAD_VIA.replace("{MAP}", "%rd4"), map_spec("inp", 40, 96, (16, 8)), A, np.zeros(4, np.uint32),
            (0, 0), 512)


# ---------------------------------------------------------------------- refused forms

REFUSED = [
    ("@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
     "[%r2], [%rd1, {%r10, %r11}], [%r3], %rs1;", "multicast"),
    ("@%p1 cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
     "[%r2], [%rd1, {%r10, %r11, %r11}], [%r3], {%rs1};", "im2col"),
    ("@%p1 cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%rd1, {%r10, %r11, %r11}], {%rs1};", "im2col"),
]


@pytest.mark.parametrize("line, what", REFUSED, ids=[w for _, w in REFUSED])
def test_refused_forms_are_unsupported(line, what) -> None:
    body = "mov.u16 %rs1, 1;\n@%p1 mbarrier.init.shared::cta.b64 [%r3], 1;\n" + line + "\n"
    with pytest.raises(Unsupported, match=what):
        run(body, map_spec("inp", 40, 96, (16, 8)), A, np.zeros(4, np.uint32), (0, 0))


def test_rank_mismatch_is_undefined() -> None:
    tm = {**map_spec("inp", 40, 96, (16, 8)), "global_dims": [96, 40, 1], "global_strides": [384, 15360],
          "box_dims": [16, 8, 1]}
    with pytest.raises(UndefinedBehavior, match="2d copy through a rank-3 tensor map"):
        run(LOAD, tm, A, np.zeros(4, np.uint32), (0, 0), 512)


def test_the_tensor_map_parameter_must_be_a_128_byte_array() -> None:
    text = kernel(LOAD).replace(".param .align 64 .b8 tmap[128]", ".param .align 64 .b8 tmap[64]")
    prog = load_program(parse(text))
    with pytest.raises(Exception, match=r"\.b8 tmap\[128\]"):
        run_kernel(prog, launch(map_spec("inp", 40, 96, (16, 8)), A, np.zeros(4, np.uint32), (0, 0), 512))


# ---------------------------------------------------------------------- ptxas

ALL_BODIES = [LOAD + DUMP, FILL + STORE, FILL + REDUCE, REPLACE_GLOBAL + LOAD_VIA.replace("{MAP}", "%rd4") + DUMP,
              TEMPLATE + FILL + STORE.replace("[%rd1,", "[%rd4,"),
              "@%p1 cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r10, %r11}];\n",
              *("mov.u16 %rs1, 1;\n" + line + "\n" for line, _ in REFUSED)]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("i", range(len(ALL_BODIES)))
def test_ptxas_accepts_every_kernel(i, tmp_path) -> None:
    path = tmp_path / "k.ptx"
    path.write_text(kernel(ALL_BODIES[i]))
    proc = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
