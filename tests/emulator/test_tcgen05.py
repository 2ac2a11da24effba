"""tcgen05 unit (PTX 9.7.16): descriptors, tensor memory ld/st, allocator lifecycle, asynchrony, MMA.

Hand-written PTX kernels run on the emulator and are checked against numpy; every kernel that should
be valid is also assembled with `ptxas -arch=sm_100a` when ptxas is on PATH. No Blackwell GPU exists
here, so the MMA numerics are the documented float64 model (tcgen05/ops.py).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from semantics.errors import UndefinedBehavior, Unsupported
from symexec import Launch, load_program, run_kernel
from symexec.machine import Machine
from tcgen05.descriptors import (decode_instr_desc, decode_smem_desc, encode_instr_desc, encode_smem_desc,
                                 operand_addresses)
from tcgen05.ops import fragment, matmul_t, smem_operand
from ptx_kit import copy_to_smem

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"


def _ptxas_ok(src: str, tmp_path) -> None:
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas not on PATH")
    f = tmp_path / "k.ptx"
    f.write_text(src)
    r = subprocess.run(["ptxas", "-arch=sm_100a", str(f), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


class _FinishingMachine(Machine):
    """Calls each unit's finish(batch) when a batch is done (the hook tcgen05 asks the machine for)."""

    def _run_batch(self, b) -> None:
        super()._run_batch(b)
        for u in b.units.values():
            fin = getattr(u, "finish", None)
            if fin is not None:
                fin(b)


def _run(src: str, buffers: dict, params: list, threads: int = 128, finish: bool = True):
    prog = load_program(ptx_parser.parse(src), None)
    launch = Launch((1, 1, 1), (threads, 1, 1), buffers, params)
    if finish:
        m = _FinishingMachine(prog, launch)
        return m.run()
    return run_kernel(prog, launch)[0]


# ---------------------------------------------------------------------- the MMA's matrix product


@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 32), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 7, -7, 60]))
@settings(max_examples=80, deadline=None)
def test_matmul_t_is_the_exact_sum_of_products(m, n, k, seed, shift):
    """tcgen05.ops.matmul_t (the model's one float64 product, its right operand made contiguous) against an
    independent oracle: per element, Python's exact rational sum of the products, on operands whose products and
    sums are exact in float64 (scaled small integers, as fp8 values times power-of-two scales are), transposed
    views and NaNs included."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    a = rng.integers(-16, 17, (m, k)).astype(np.float64) * 2.0**shift
    b = np.ascontiguousarray(rng.integers(-16, 17, (k, n)).astype(np.float64).T) * 2.0**-shift  # (n, k)
    if seed % 5 == 0:
        a[seed % m, seed % k] = np.nan
    got = matmul_t(a, b)
    assert got.shape == (m, n) and got.dtype == np.float64
    for i in range(m):
        for j in range(n):
            if np.isnan(a[i]).any() or np.isnan(b[j]).any():
                assert np.isnan(got[i, j])
            else:
                assert got[i, j] == float(sum(Fraction(x) * Fraction(y) for x, y in zip(a[i], b[j])))
    # the right operand given as a transposed view (as smem_operand's may be) gives the same bits
    assert np.array_equal(matmul_t(a, np.asfortranarray(b)), got, equal_nan=True)


# ---------------------------------------------------------------------- descriptors


def test_smem_descriptor_fields_of_a_triton_descriptor():
    # Triton 3.9, sm_100a, fp16 128x128x64: high word 0x40004040, start field 0x40 (0x400 bytes)
    d = decode_smem_desc(0x40004040_02000040)
    assert (d.start, d.lbo, d.sbo) == (0x400, 0x200 << 4, 1024)
    assert d.fixed == 0b001 and d.swizzle == 2 and d.swizzle_bytes == 128 and d.base_offset == 0


@given(st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.sampled_from([0, 2, 4, 6]))
@settings(max_examples=60, deadline=None)
def test_smem_descriptor_round_trip(start, lbo, sbo, swz):
    raw = encode_smem_desc(start << 4, lbo << 4, sbo << 4, swz)
    d = decode_smem_desc(raw)
    assert (d.start, d.lbo, d.sbo, d.swizzle, d.fixed) == (start << 4, lbo << 4, sbo << 4, swz, 1)
    assert (raw >> 14) & 3 == 0 and (raw >> 30) & 3 == 0 and (raw >> 53) & 0xFF == 0


def test_instruction_descriptor_of_triton():
    d = decode_instr_desc(0x08210010, "f16")
    assert (d.m, d.n, d.k, d.dtype, d.atype, d.btype) == (128, 128, 16, "f32", "f16", "f16")
    assert d.transpose_b and not d.transpose_a and not d.sparse and d.notes == ()
    # reserved bit 29 (set by Triton for some shapes): warned, not rejected
    assert decode_instr_desc(0x08210010 | 1 << 29, "f16").notes


@pytest.mark.parametrize("kind,at,dt", [("f16", "bf16", "f32"), ("tf32", "tf32", "f32"), ("f8f6f4", "e5m2", "f32"),
                                        ("i8", "s8", "s32")])
def test_instruction_descriptor_round_trip(kind, at, dt):
    raw = encode_instr_desc(kind, 64, 48, at, at, dt, transpose_a=True, negate_b=kind != "i8")
    d = decode_instr_desc(raw, kind)
    assert (d.m, d.n, d.atype, d.btype, d.dtype, d.transpose_a, d.negate_b) == (64, 48, at, at, dt, True, kind != "i8")


@pytest.mark.parametrize("raw,kind", [(encode_instr_desc("f16", 128, 64, "f16", "f16") | 3 << 7, "f16"),
                                      (encode_instr_desc("f16", 96, 64, "f16", "f16"), "f16"),
                                      (encode_instr_desc("f16", 128, 264, "f16", "f16") & ~(0x3F << 17), "f16"),
                                      (encode_instr_desc("i8", 128, 40, "s8", "s8", "s32"), "i8")])
def test_instruction_descriptor_invalid(raw, kind):
    with pytest.raises(UndefinedBehavior):
        decode_instr_desc(raw, kind)


def test_k_major_128b_swizzle_addresses_match_chunk_xor():
    # 128B swizzle, K-major: row r is 128 bytes at r*128 (SBO = 1024 per 8 rows); 16-byte chunk c of
    # row r lives at chunk c ^ (r % 8)
    d = decode_smem_desc(encode_smem_desc(0, 16, 1024, swizzle=2) + (2 << 0))  # start 32 bytes: K step 16 f16
    got = operand_addresses(d, 16, 16, 2, k_major=True)
    r = np.arange(16)[:, None]
    kb = 32 + 2 * np.arange(16)[None, :]
    want = r * 128 + ((kb // 16) ^ (r % 8)) * 16 + kb % 16
    assert (got == want).all()


def test_mn_major_no_swizzle_core_matrices():
    # MN-major, interleaved: 8 (K) x 16 bytes (MN) core matrices; SBO between MN groups, LBO between K groups
    d = decode_smem_desc(encode_smem_desc(256, 2048, 128))
    got = operand_addresses(d, 16, 16, 2, k_major=False)  # 16 MN x 16 K, f16: T = 8
    i = np.arange(16)[:, None]
    k = np.arange(16)[None, :]
    want = 256 + (i % 8) * 2 + (i // 8) * 128 + (k % 8) * 16 + (k // 8) * 2048
    assert (got == want).all()


def test_smem_operand_rejects_bad_fixed_bits():
    smem = np.zeros(4096, np.uint8)
    with pytest.raises(UndefinedBehavior):
        smem_operand(smem, decode_smem_desc(encode_smem_desc(0, 16, 128) & ~(1 << 46)), 8, 16, "f16", True, None)
    with pytest.raises(UndefinedBehavior):
        smem_operand(smem, decode_smem_desc(encode_smem_desc(0, 16, 128, swizzle=3)), 8, 16, "f16", True, None)
    with pytest.raises(Unsupported):
        smem_operand(smem, decode_smem_desc(encode_smem_desc(0, 16, 128, swizzle=1)), 8, 16, "f16", True, None)


def test_fragments_cover_each_cell_once():
    for shape, per in (("32x32b", 1), ("16x64b", 1), ("16x128b", 2), ("16x256b", 4), ("16x32bx2", 1)):
        fr = fragment(shape, 4, split_off=4 if shape == "16x32bx2" else 0)
        assert fr.regs == 4 * per
        cells = set(zip(fr.lane.ravel().tolist(), fr.col.ravel().tolist()))
        assert len(cells) == fr.lane.size  # no two (thread, register) pairs share a cell
        assert max(fr.lane.ravel()) < fr.lanes_touched


# ---------------------------------------------------------------------- ld / st / allocator kernels

def _ldst_kernel(wait_ld: bool = True, wait_st: bool = True, lane_shift: str = "shl.b32 %r4, %r3, 21;",
                 ld_col: int = 2, ncols: str = "64", relinquish_first: bool = False, dealloc: bool = True,
                 dealloc_twice: bool = False, alloc_guard: str = "@%p1") -> str:
    rel = "@%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"
    return HEAD + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  mov.u32 %r12, {ncols};
  {rel if relinquish_first else ""}
  {alloc_guard} tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %r12;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r2, [slot];
  shr.u32 %r3, %r1, 5;
  {lane_shift}
  add.u32 %r5, %r2, %r4;
  mul.lo.u32 %r6, %r1, 10;
  add.u32 %r7, %r6, 1;
  add.u32 %r8, %r6, 2;
  add.u32 %r9, %r6, 3;
  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r5], {{%r6, %r7, %r8, %r9}};
  {"tcgen05.wait::st.sync.aligned;" if wait_st else ""}
  mov.u32 %r10, 7;
  mov.u32 %r11, 7;
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {{%r10, %r11}}, [%r5+{ld_col}];
  {"tcgen05.wait::ld.sync.aligned;" if wait_ld else ""}
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v2.b32 [%rd3], {{%r10, %r11}};
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  {"@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, %r12;" if dealloc else ""}
  {"@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, %r12;" if dealloc_twice else ""}
  {"" if relinquish_first else rel}
  ret;
}}
"""


def _ldst(**kw) -> np.ndarray:
    out = np.zeros(256, np.uint32)
    glob = _run(_ldst_kernel(**kw), {"out": out}, ["out"])
    return glob.by_name("out").data.view(np.uint32).reshape(128, 2)


def test_st_then_ld_round_trip(tmp_path):
    _ptxas_ok(_ldst_kernel(), tmp_path)
    r = _ldst()
    t = np.arange(128)
    assert (r[:, 0] == 10 * t + 2).all() and (r[:, 1] == 10 * t + 3).all()


def test_ld_register_read_before_wait_ld_is_a_true_dependency():
    # 9.7.16.6.4.5: a true register dependency on tcgen05.ld is respected without wait::ld (Triton
    # converts loaded accumulators before its wait::ld): the store sees the loaded values
    r = _ldst(wait_ld=False)
    t = np.arange(128)
    assert (r[:, 0] == 10 * t + 2).all() and (r[:, 1] == 10 * t + 3).all()


def test_ld_destination_written_before_wait_ld_is_undefined():
    # anti-dependency hazard: only wait::ld orders a later write of a destination register
    src = _ldst_kernel(wait_ld=False).replace("  ld.param.u64 %rd1, [out];", "  mov.u32 %r11, 5;\n  ld.param.u64 %rd1, [out];")
    with pytest.raises(UndefinedBehavior, match="anti-dependency"):
        _run(src, {"out": np.zeros(256, np.uint32)}, ["out"])


def test_st_without_wait_st_has_not_landed():
    # the ld's own wait::ld does not complete the earlier st: tensor memory still holds zeros
    r = _ldst(wait_st=False)
    assert (r == 0).all()


def test_lane_quarter_violation():
    # every warp addresses lanes 0..31: warp 1 may only touch lanes 32..63
    with pytest.raises(UndefinedBehavior, match="warp 1 accesses tensor memory lane"):
        _ldst(lane_shift="mov.u32 %r4, 0;")


def test_column_outside_allocation():
    with pytest.raises(UndefinedBehavior, match="not allocated"):
        _ldst(ld_col=63)  # columns 63 and 64 of a 64-column allocation


def test_alloc_lifecycle_errors():
    with pytest.raises(UndefinedBehavior, match="relinquish"):
        _ldst(relinquish_first=True)
    with pytest.raises(UndefinedBehavior, match="double free"):
        _ldst(dealloc_twice=True)
    with pytest.raises(UndefinedBehavior, match="missing tcgen05.dealloc"):
        _ldst(dealloc=False)
    with pytest.raises(UndefinedBehavior, match="power of two"):
        _ldst(ncols="48")


def test_partial_warp_alloc_is_undefined():
    src = _ldst_kernel().replace("setp.lt.u32 %p1, %r1, 32;", "setp.lt.u32 %p1, %r1, 16;")
    with pytest.raises(UndefinedBehavior, match="needs the whole warp"):
        _run(src, {"out": np.zeros(256, np.uint32)}, ["out"])


def test_growing_allocation_is_undefined():
    src = _ldst_kernel().replace(
        "tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n  ld.shared",
        "@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 128;\n"
        "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n  ld.shared", 1)
    with pytest.raises(UndefinedBehavior, match="must not increase"):
        _run(src, {"out": np.zeros(256, np.uint32)}, ["out"])


# ---------------------------------------------------------------------- MMA kernels


def _mma_kernel(smem_bytes: int, ncols: int, kind: str = "f16", wait_bar: bool = True, accumulate: bool = False,
                a_in_tmem: bool = False, bar_count: int = 1, a_rows_at: int = 0) -> str:
    """One thread issues D = A x B (twice with `accumulate`), commits to an mbarrier; all four warps wait,
    tcgen05.ld their 32 lanes x ncols columns and store them row-major to `out`."""
    stores = "\n".join(f"  st.global.v4.b32 [%rd6+{16 * j}], {{%r{40 + 4 * j}, %r{41 + 4 * j}, %r{42 + 4 * j}, "
                       f"%r{43 + 4 * j}}};" for j in range(ncols // 4))
    regs = ", ".join(f"%r{40 + j}" for j in range(ncols))
    second = ("  @%p2 tcgen05.mma.cta_group::1.kind::" + kind + " [%r20], %rd11, %rd12, %r21, %p4;\n") if accumulate else ""
    return HEAD + f"""
.visible .entry k(.param .u64 src, .param .u64 adesc, .param .u64 bdesc, .param .u32 idesc, .param .u64 out)
{{
  .reg .b32 %r<{40 + ncols + 4}>;
  .reg .b64 %rd<16>;
  .reg .pred %p<6>;
  .shared .align 1024 .b8 smem[{smem_bytes}];
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  setp.eq.u32 %p2, %r1, 0;
{copy_to_smem(smem_bytes)}  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 256;
  @%p2 mbarrier.init.shared::cta.b64 [bar], {bar_count};
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r20, [slot];
  ld.param.u32 %r21, [idesc];
  ld.param.u64 %rd11, [adesc];
  ld.param.u64 %rd12, [bdesc];
  shr.u32 %r22, %r2, 4;
  cvt.u64.u32 %rd13, %r22;
  add.u64 %rd11, %rd11, %rd13;
  add.u64 %rd12, %rd12, %rd13;
  add.u32 %r23, %r20, 128;
{_a_to_tmem(a_rows_at) if a_in_tmem else ""}  setp.ne.u32 %p4, %r1, 1000;
  setp.eq.u32 %p5, %r1, 1000;
  @%p2 tcgen05.mma.cta_group::1.kind::{kind} [%r20], {"[%r23]" if a_in_tmem else "%rd11"}, %rd12, %r21, %p5;
{second}  @%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
  mov.u32 %r24, 0;
WAIT:
  {"mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r24;" if wait_bar else ""}
  {"@!%p3 bra WAIT;" if wait_bar else ""}
  tcgen05.fence::after_thread_sync;
  shr.u32 %r25, %r1, 5;
  shl.b32 %r26, %r25, 21;
  add.u32 %r27, %r20, %r26;
  tcgen05.ld.sync.aligned.32x32b.x{ncols}.b32 {{{regs}}}, [%r27];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r1, {4 * ncols};
  add.u64 %rd6, %rd4, %rd5;
{stores}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r20, 256;
  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  ret;
}}
"""


def _a_to_tmem(a_rows_at: int) -> str:
    """Each thread copies row tid of A (32 bytes, row-major at smem + a_rows_at) to tensor memory
    columns 128..135 of its lane with tcgen05.st, then the CTA synchronises before the MMA."""
    return f"""  shr.u32 %r25, %r1, 5;
  shl.b32 %r26, %r25, 21;
  add.u32 %r28, %r23, %r26;
  shl.b32 %r29, %r1, 5;
  add.u32 %r29, %r29, %r2;
  ld.shared.v4.b32 {{%r30, %r31, %r32, %r33}}, [%r29+{a_rows_at}];
  ld.shared.v4.b32 {{%r34, %r35, %r36, %r37}}, [%r29+{a_rows_at + 16}];
  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r28], {{%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
"""


def _place_k_major_128b(smem: np.ndarray, base: int, mat: np.ndarray) -> None:
    """Write a rows x 32-byte K-major operand (rows of raw bytes) with the 128B swizzle, SBO 1024."""
    for r in range(mat.shape[0]):
        row = base + (r // 8) * 1024 + (r % 8) * 128
        for c in range(2):
            smem[row + ((c ^ (r % 8)) * 16): row + ((c ^ (r % 8)) * 16) + 16] = mat[r, 16 * c:16 * c + 16]


def _mma_case(kind: str, a_bits: np.ndarray, b_bits: np.ndarray, n: int, idesc: int, **kw) -> np.ndarray:
    """A: 128 x 32 bytes, B: n x 32 bytes (K-major, 128B swizzle) -> D (128, n) raw 32-bit words."""
    b_off = 128 * 128
    smem = np.zeros(b_off + ((n + 7) // 8) * 1024, np.uint8)
    _place_k_major_128b(smem, 0, a_bits)
    _place_k_major_128b(smem, b_off, b_bits)
    adesc = encode_smem_desc(0, 16, 1024, swizzle=2)
    bdesc = encode_smem_desc(b_off, 16, 1024, swizzle=2)
    if kw.get("a_in_tmem"):  # A row-major after B, for the tcgen05.st into tensor memory
        kw["a_rows_at"] = smem.size
        smem = np.concatenate([smem, a_bits.reshape(-1)])
    out = np.zeros(128 * n, np.uint32)
    src = _mma_kernel(smem.size, n, kind, **kw)
    glob = _run(src, {"src": smem, "out": out}, ["src", adesc, bdesc, idesc, "out"])
    return glob.by_name("out").data.view(np.uint32).reshape(128, n)


def _f16(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float16)


def test_mma_f16_matches_numpy(tmp_path):
    _ptxas_ok(_mma_kernel(16384 + 8192, 64), tmp_path)
    rng = np.random.default_rng(1)
    a, b = _f16(rng, (128, 16)), _f16(rng, (64, 16))  # B stored N x K (K-major)
    d = _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(64, 32), 64,
                  encode_instr_desc("f16", 128, 64, "f16", "f16"))
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    assert (d.view(np.float32) == want).all()


def test_mma_a_from_tensor_memory(tmp_path):
    rng = np.random.default_rng(6)
    a, b = _f16(rng, (128, 16)), _f16(rng, (64, 16))
    _ptxas_ok(_mma_kernel(16384 + 8192 + 4096, 64, a_in_tmem=True, a_rows_at=16384 + 8192), tmp_path)
    d = _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(64, 32), 64,
                  encode_instr_desc("f16", 128, 64, "f16", "f16"), a_in_tmem=True)
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    assert (d.view(np.float32) == want).all()


def test_mma_accumulates_with_enable_input_d():
    rng = np.random.default_rng(2)
    a, b = _f16(rng, (128, 16)), _f16(rng, (32, 16))
    d = _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(32, 32), 32,
                  encode_instr_desc("f16", 128, 32, "f16", "f16", negate_a=True), accumulate=True)
    once = (-a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    want = (once.astype(np.float64) + (-a.astype(np.float64) @ b.astype(np.float64).T)).astype(np.float32)
    assert (d.view(np.float32) == want).all()


def test_mma_reserved_descriptor_bit_warns_but_runs():
    from tcgen05.unit import DescriptorWarning

    rng = np.random.default_rng(9)
    a, b = _f16(rng, (128, 16)), _f16(rng, (32, 16))
    with pytest.warns(DescriptorWarning, match="reserved bit 29"):
        d = _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(32, 32), 32,
                      encode_instr_desc("f16", 128, 32, "f16", "f16") | 1 << 29)
    assert (d.view(np.float32) == (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)).all()


def test_mma_i8_exact():
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (128, 32)).astype(np.int8)
    b = rng.integers(0, 256, (32, 32)).astype(np.uint8)
    d = _mma_case("i8", a.view(np.uint8), b, 32, encode_instr_desc("i8", 128, 32, "s8", "u8", "s32"))
    assert (d.view(np.int32) == a.astype(np.int64) @ b.astype(np.int64).T).all()


@pytest.mark.parametrize("bar_count", [1, 2])
def test_mma_not_visible_without_the_mbarrier_wait(bar_count):
    # nobody waits on the commit's mbarrier (with count 2 its phase cannot even complete): the MMA is
    # performed no earlier than the observed phase completion, so the unsynchronised tcgen05.ld reads
    # the accumulator's old contents (zeros)
    rng = np.random.default_rng(4)
    a, b = _f16(rng, (128, 16)), _f16(rng, (32, 16))
    d = _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(32, 32), 32,
                  encode_instr_desc("f16", 128, 32, "f16", "f16"), wait_bar=False, bar_count=bar_count)
    assert (d == 0).all()


def test_mma_unsupported_forms():
    rng = np.random.default_rng(5)
    a, b = _f16(rng, (128, 16)), _f16(rng, (32, 16))
    with pytest.raises(Unsupported, match="f16 accumulator"):
        _mma_case("f16", a.view(np.uint8).reshape(128, 32), b.view(np.uint8).reshape(32, 32), 32,
                  encode_instr_desc("f16", 128, 32, "f16", "f16", "f16"))
    src = _mma_kernel(16384 + 4096, 32).replace(".cta_group::1", ".cta_group::2")
    with pytest.raises(Unsupported, match="cta_group::2"):
        _run(src, {"src": np.zeros(20480, np.uint8), "out": np.zeros(4096, np.uint32)}, ["src", 0, 0, 0, "out"])


# ---------------------------------------------------------------------- Triton GEMMs for sm_100a


def _triton_mm():
    triton = pytest.importorskip("triton")
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    return triton, mm


def _encode_host(x: np.ndarray, dt: str) -> tuple[np.ndarray, np.ndarray]:
    """(device bits, exact float64 values the kernel multiplies)."""
    from semantics.formats import BF16, E4M3, decode, round_f64

    if dt == "fp16":
        v = x.astype(np.float16)
        return v, v.astype(np.float64)
    if dt == "bf16":
        bits = round_f64(x.reshape(-1), BF16, "rn").astype(np.uint16).reshape(x.shape)
        return bits, decode(bits, BF16)
    if dt == "fp8e4nv":
        bits = round_f64(x.reshape(-1), E4M3, "rn", satfinite=True).astype(np.uint8).reshape(x.shape)
        return bits, decode(bits, E4M3)
    v = x.astype(np.float32)  # tf32 dot: the MMA reads the top 19 bits (model)
    return v, (v.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("dt,bm,bn,bk,shape", [
    ("fp16", 128, 128, 64, (256, 128, 192)),
    ("bf16", 128, 64, 64, (128, 128, 128)),
    ("fp8e4nv", 128, 128, 128, (128, 128, 256)),
    ("fp32", 128, 64, 32, (128, 64, 96)),
    ("fp16", 64, 128, 64, (128, 128, 128)),  # M = 64 data path, tcgen05.ld .16x32bx2
])
def test_triton_gemm_sm100(dt, bm, bn, bk, shape):
    triton, mm = _triton_mm()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    k = triton.compile(ASTSource(mm, sig, {"BM": bm, "BN": bn, "BK": bk}, attrs), target=GPUTarget("cuda", 100, 32),
                       options={"ptx_version": 90, "num_warps": 4, "num_stages": 2})
    ptx = k.asm["ptx"]
    assert "tcgen05.mma" in ptx and "tcgen05.commit" in ptx
    M, N, K = shape
    rng = np.random.default_rng(7)
    ad, a64 = _encode_host(rng.standard_normal((M, K)), dt)
    bd, b64 = _encode_host(rng.standard_normal((K, N)), dt)
    prog = load_program(ptx_parser.parse(ptx), None)
    params = ["a", "b", "c", M, N, K] + [0] * (len(prog.params) - 6)  # trailing scratch pointers: null
    launch = Launch((M // bm, N // bn, 1), (128, 1, 1), {"a": ad, "b": bd, "c": np.zeros((M, N), np.float32)},
                    params, dynamic_shared_bytes=k.metadata.shared)
    m = _FinishingMachine(prog, launch)
    got = m.run().by_name("c").data.view(np.float32).reshape(M, N)
    ref = a64 @ b64
    # one f32 rounding per MMA (K/16..K/32 of them) in the model: a few ulps of the row scale
    assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * (K // 8)


def test_suite_gemm_fp16_bench_tiles_sm100_matches_reference():
    """gemm_fp16's sm_100a build at its bench tiles (128x128x64, tcgen05.mma) on one 128^3 CTA: the
    fp16 epilogue converts the tcgen05.ld results before its wait::ld (it used to read zeros)."""
    import dataclasses

    from harness.emulate import emulate
    from harness.suite.kernels import gemm_fp16 as G

    def bench_tiles(d):
        return 128, 128, 64

    c = dataclasses.replace(G.CONTRACT, constexprs=G.tile_constexprs(bench_tiles), grid=G.tile_grid(bench_tiles),
                            instances={"verify": {"M": 128, "N": 128, "K": 128}, "bench": {"M": 128, "N": 128, "K": 128}})
    r = emulate(c, "sm_100a", "verify")
    assert r.ok, [str(x) for x in r.comparisons]
    assert np.abs(r.outputs["c"]).max() > 1


def _shape_kernel(shape: str, num: int, regs: int, pack: bool) -> str:
    """Each warp fills columns 0..31 of its lane quarter with (lane << 16 | column), then loads one
    fragment of `shape` and stores the registers to out[tid * regs + j]."""
    fill = ", ".join(f"%r{40 + c}" for c in range(32))
    movs = "\n".join(f"  or.b32 %r{40 + c}, %r7, {c};" for c in range(32))
    dst = ", ".join(f"%r{80 + j}" for j in range(regs))
    extra = ", 8" if shape == "16x32bx2" else ""
    stores = "\n".join(f"  st.global.b32 [%rd3+{4 * j}], %r{80 + j};" for j in range(regs))
    return HEAD + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<{80 + regs}>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r2, [slot];
  and.b32 %r3, %r1, 0xffffffe0;
  shl.b32 %r4, %r3, 16;
  add.u32 %r5, %r2, %r4;
  shl.b32 %r7, %r1, 16;
{movs}
  tcgen05.st.sync.aligned.32x32b.x32.b32 [%r5], {{{fill}}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.ld.sync.aligned.{shape}.x{num}{".pack::16b" if pack else ""}.b32 {{{dst}}}, [%r5]{extra};
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, {4 * regs};
  add.u64 %rd3, %rd1, %rd2;
{stores}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  ret;
}}
"""


@pytest.mark.parametrize("shape,num,per,pack", [("32x32b", 2, 1, False), ("16x64b", 2, 1, False), ("16x128b", 2, 2, False),
                                                 ("16x256b", 1, 4, False), ("16x32bx2", 4, 1, False),
                                                 ("16x256b", 1, 4, True), ("32x32b", 4, 1, True)])
def test_ld_fragment_shapes(shape, num, per, pack, tmp_path):
    regs = num * per
    src = _shape_kernel(shape, num, regs, pack)
    _ptxas_ok(src, tmp_path)
    out = np.zeros(128 * regs, np.uint32)
    got = _run(src, {"out": out}, ["out"]).by_name("out").data.view(np.uint32).reshape(128, regs)
    fr = fragment(shape, num, split_off=8, pack=pack)
    tid = np.arange(128)
    lane = 32 * (tid // 32)[:, None] + fr.lane[tid % 32]
    col = fr.col[tid % 32]
    want = (col | ((col + 1) << 16)) if pack else (lane << 16 | col)
    assert (got == want).all()
    if shape == "16x256b" and not pack:  # Figure 186: the mma-accumulator-like arrangement
        t = np.arange(32)
        assert (fr.lane[:, 0] == t // 4).all() and (fr.lane[:, 2] == t // 4 + 8).all()
        assert (fr.col[:, 1] == 2 * (t % 4) + 1).all()
    if shape == "16x32bx2":  # the second half of the warp reads immHalfSplitoff columns further
        assert (fr.col[16:, 0] == 8).all() and (fr.lane[16:, 0] == np.arange(16)).all()


def test_triton_warp_specialised_gemm_sm100():
    """Producer/consumer partitions (warp_specialize): TMEM accumulator handed over through mbarriers."""
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def ws_mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in tl.range(0, K, BK, warp_specialize=True, num_stages=3):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
    k = triton.compile(ASTSource(ws_mm, sig, {"BM": 128, "BN": 128, "BK": 64}, attrs),
                       target=GPUTarget("cuda", 100, 32), options={"ptx_version": 90, "num_warps": 4, "num_stages": 3})
    ptx = k.asm["ptx"]
    assert "tcgen05.mma" in ptx
    K = 320
    rng = np.random.default_rng(8)
    a = rng.standard_normal((128, K)).astype(np.float16)
    b = rng.standard_normal((K, 128)).astype(np.float16)
    prog = load_program(ptx_parser.parse(ptx), None)
    params = ["a", "b", "c", K] + [0] * (len(prog.params) - 4)
    launch = Launch((1, 1, 1), (32 * k.metadata.num_warps, 1, 1),
                    {"a": a, "b": b, "c": np.zeros((128, 128), np.float32)}, params,
                    dynamic_shared_bytes=k.metadata.shared)
    got = _FinishingMachine(prog, launch).run().by_name("c").data.view(np.float32).reshape(128, 128)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max() * (K // 8)


def _two_allocs(barrier_before_dealloc: bool) -> str:
    sync = "bar.sync 0;" if barrier_before_dealloc else ""
    return HEAD + f"""
.visible .entry k()
{{
  .reg .b32 %r<8>;
  .reg .pred %p<2>;
  .shared .align 16 .b32 slot[2];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, slot;
  add.u32 %r4, %r4, %r3;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 512;
  ld.shared.b32 %r5, [%r4];
  {sync}
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, 512;
  ret;
}}
"""


def test_alloc_blocks_until_columns_are_freed(tmp_path):
    # two warps each take all 512 columns: the second waits for the first one's dealloc
    _ptxas_ok(_two_allocs(False), tmp_path)
    _run(_two_allocs(False), {}, [], threads=64)


def test_alloc_that_can_never_be_satisfied_is_a_deadlock():
    from symexec.errors import Deadlock

    with pytest.raises(Deadlock, match="tcgen05.alloc"):
        _run(_two_allocs(True), {}, [], threads=64)
