"""Block-scaled tcgen05.mma (PTX 9.7.16.10.7): hand-written kernels on the emulator against numpy.

Each kernel stages A and B (K-major, 128B swizzle) in shared memory and the scale factors in
tensor memory (tcgen05.st from every warp into its own 32 lanes, or tcgen05.cp.32x128b.warpx4
from shared memory as CUTLASS does), issues one or two block-scaled MMAs from thread 0, commits
to an mbarrier and reads D back with tcgen05.ld. The expected D is computed in numpy from the
same bytes with decoders written here from the format definitions, scales that differ per row,
per column and per K block (so a wrong scale layout, byte selection or chunking fails), and
inputs whose float64 sums are exact (so the expected value does not depend on the order of the
float64 additions). Every kernel is assembled by `ptxas -arch=sm_100a` when ptxas is on PATH.
No Blackwell GPU exists here: the layout is the MODEL of tcgen05/scales.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptx_parser
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.mxformats import ScaleType, to_packed4, to_padded16
from symexec import Launch, load_program
from symexec.events import AsyncIssued, MemoryAccess, MemSpace, Observer
from symexec.machine import Machine
from tcgen05 import tmem as T
from tcgen05.descriptors import (ScaleVec, check_scale_ids, decode_instr_desc, decode_smem_desc,
                                 encode_scaled_instr_desc, encode_smem_desc, operand_addresses, scale_vec_of)
from tcgen05.scales import ScaleMatrix
from ptx_kit import assert_assembles, copy_to_smem

HEAD = ".version 8.8\n.target sm_100a\n.address_size 64\n"
A_ROWS = 128
B_OFF = 16384  # A: 128 rows of 128 bytes in 16 groups of 8 (SBO 1024); B follows
SFA_COL, SFB_COL = 128, 160  # tensor memory columns of the scale matrices (D at column 0)


class Recorder(Observer):
    def __init__(self) -> None:
        self.events: list = []

    def on_access(self, ev) -> None:
        self.events.append(ev)

    on_fence = on_async_issued = on_async_completed = on_release = on_acquire = on_access


# ---------------------------------------------------------------------- the kernel




def _scales_by_st(sfb_cols: int) -> str:
    """Thread t writes lane t of its warp's quarter: 4 words of `sfa` (row t of the (128, 4) array)
    to columns SFA_COL.. and `sfb_cols` words of `sfb` to SFB_COL.. (tcgen05.st.32x32b)."""
    b_regs = ", ".join(f"%r{70 + j}" for j in range(sfb_cols))
    loads_b = "\n".join(f"  ld.global.b32 %r{70 + j}, [%rd23+{4 * j}];" for j in range(sfb_cols))
    return f"""  shr.u32 %r25, %r1, 5;
  shl.b32 %r26, %r25, 21;
  add.u32 %r27, %r20, %r26;
  ld.param.u64 %rd20, [sfa];
  cvta.to.global.u64 %rd20, %rd20;
  mul.wide.u32 %rd21, %r1, 16;
  add.u64 %rd21, %rd20, %rd21;
  ld.global.v4.b32 {{%r60, %r61, %r62, %r63}}, [%rd21];
  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r27+{SFA_COL}], {{%r60, %r61, %r62, %r63}};
  ld.param.u64 %rd22, [sfb];
  cvta.to.global.u64 %rd22, %rd22;
  mul.wide.u32 %rd23, %r1, {4 * sfb_cols};
  add.u64 %rd23, %rd22, %rd23;
{loads_b}
  tcgen05.st.sync.aligned.32x32b.x{sfb_cols}.b32 [%r27+{SFB_COL}], {{{b_regs}}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
"""


def _kernel(form: str, n: int, smem_bytes: int, sfb_cols: int, second: bool = False, cp: tuple[int, int] | None = None,
            sfa_lane: int = 0) -> str:
    """D (128 x n) = block-scaled MMA(s) of `form` (the modifiers after .kind::), stored row-major to out."""
    stores = "\n".join(f"  st.global.v4.b32 [%rd6+{16 * j}], {{%r{100 + 4 * j}, %r{101 + 4 * j}, %r{102 + 4 * j}, "
                       f"%r{103 + 4 * j}}};" for j in range(n // 4))
    regs = ", ".join(f"%r{100 + j}" for j in range(n))
    mma2 = ("  @%p2 tcgen05.mma.cta_group::1.kind::" + form + " [%r20], %rd16, %rd17, %r29, [%r23], [%r24], %p4;\n"
            if second else "")
    place = _scales_by_st(sfb_cols) if cp is None else ""
    cp_descs = "" if cp is None else """  ld.param.u64 %rd14, [sfa];
  ld.param.u64 %rd15, [sfb];
  add.u64 %rd14, %rd14, %rd13;
  add.u64 %rd15, %rd15, %rd13;
  @%p2 tcgen05.cp.cta_group::1.32x128b.warpx4 [%r23], %rd14;
  @%p2 tcgen05.cp.cta_group::1.32x128b.warpx4 [%r24], %rd15;
"""
    return HEAD + f"""
.visible .entry k(.param .u64 src, .param .u64 sfa, .param .u64 sfb, .param .u64 adesc, .param .u64 bdesc,
                  .param .u32 idesc, .param .u32 idesc2, .param .u64 out)
{{
  .reg .b32 %r<{100 + n + 4}>;
  .reg .b64 %rd<24>;
  .reg .pred %p<6>;
  .shared .align 1024 .b8 smem[{smem_bytes}];
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  setp.eq.u32 %p2, %r1, 0;
{copy_to_smem(smem_bytes)}  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 256;
  @%p2 mbarrier.init.shared::cta.b64 [bar], 1;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r20, [slot];
{place}  ld.param.u32 %r21, [idesc];
  ld.param.u32 %r29, [idesc2];
  ld.param.u64 %rd11, [adesc];
  ld.param.u64 %rd12, [bdesc];
  shr.u32 %r22, %r2, 4;
  cvt.u64.u32 %rd13, %r22;
  add.u64 %rd11, %rd11, %rd13;
  add.u64 %rd12, %rd12, %rd13;
  add.u64 %rd16, %rd11, 2;
  add.u64 %rd17, %rd12, 2;
  add.u32 %r23, %r20, {(sfa_lane << 16) + SFA_COL};
  add.u32 %r24, %r20, {SFB_COL};
  setp.ne.u32 %p4, %r1, 1000;
  setp.eq.u32 %p5, %r1, 1000;
{cp_descs}  @%p2 tcgen05.mma.cta_group::1.kind::{form} [%r20], %rd11, %rd12, %r21, [%r23], [%r24], %p5;
{mma2}  @%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
  mov.u32 %r28, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r28;
  @!%p3 bra WAIT;
  tcgen05.fence::after_thread_sync;
  shr.u32 %r25, %r1, 5;
  shl.b32 %r26, %r25, 21;
  add.u32 %r27, %r20, %r26;
  tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {{{regs}}}, [%r27];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r1, {4 * n};
  add.u64 %rd6, %rd4, %rd5;
{stores}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r20, 256;
  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  ret;
}}
"""


# ---------------------------------------------------------------------- reference (from the definitions)

# (exponent bits, mantissa bits, bias) of the element formats (PTX 5.2.3; OCP MX v1.0)
_FMT = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15), "e2m3": (2, 3, 1), "e3m2": (3, 2, 3), "e2m1": (2, 1, 1)}


def _ref_value(code: int, fmt: str) -> float:
    ebits, mbits, bias = _FMT[fmt]
    sign = -1.0 if code >> (ebits + mbits) & 1 else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return sign * m / (1 << mbits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _ref_scale(code: int, stype: ScaleType) -> float:
    return 2.0 ** (code - 127) if stype is ScaleType.UE8M0 else _ref_value(code, "e4m3")


def _codes(rng, fmt: str, shape) -> np.ndarray:
    """Finite element codes; 8-bit formats limited to exponents -3..4 so every float64 sum is exact."""
    ebits, mbits, bias = _FMT[fmt]
    if fmt in ("e4m3", "e5m2"):
        e = rng.integers(bias - 3, bias + 5, shape)
        m = rng.integers(0, 1 << mbits, shape)
        s = rng.integers(0, 2, shape)
        return (s << (ebits + mbits) | e << mbits | m).astype(np.int64)
    return rng.integers(0, 1 << (1 + ebits + mbits), shape).astype(np.int64)


def _scale_codes(rng, stype: ScaleType, shape) -> np.ndarray:
    if stype is ScaleType.UE8M0:
        return rng.integers(124, 131, shape).astype(np.int64)  # 2^-3 .. 2^3
    return (rng.integers(5, 10, shape) << 3 | rng.integers(0, 8, shape)).astype(np.int64)  # ue4m3 2^-2 .. 2^2


def _row_bytes(codes: np.ndarray, fmt: str, kind: str) -> np.ndarray:
    """(rows, K) element codes of one MMA -> (rows, 32) shared-memory bytes in the kind's storage."""
    if kind != "mxf8f6f4":
        return to_packed4(codes.reshape(codes.shape[0], -1, 2))
    if fmt in ("e4m3", "e5m2"):
        return codes.astype(np.uint8)
    return to_padded16(codes.reshape(codes.shape[0], -1, 16), fmt).reshape(codes.shape[0], -1)


def _place(smem: np.ndarray, base: int, rows: np.ndarray) -> None:
    """rows x 64 bytes (two K steps of 32 bytes) K-major with the 128B swizzle, SBO 1024."""
    for r in range(rows.shape[0]):
        row = base + (r // 8) * 1024 + (r % 8) * 128
        for c in range(rows.shape[1] // 16):
            at = row + ((c ^ (r % 8)) * 16)
            smem[at:at + 16] = rows[r, 16 * c:16 * c + 16]


def _words(sc: np.ndarray, rows: int) -> np.ndarray:
    """(rows, 4) scale bytes (byte b of row r) -> (128, ncols) tensor-memory words, duplicated in the
    four lane quarters: row r in lane r % 32 (+ 32 q), column r // 32 (the MODEL of tcgen05.scales)."""
    ncols = -(-rows // 32)
    w = np.zeros((128, ncols), np.uint32)
    for r in range(rows):
        word = sum(int(sc[r, b]) << (8 * b) for b in range(4))
        for q in range(4):
            w[32 * q + r % 32, r // 32] = word
    return w


class Case:
    """Random inputs of one block-scaled form and the expected D."""

    def __init__(self, kind: str, vec: ScaleVec, atype: str, btype: str, n: int, stype: ScaleType = ScaleType.UE8M0,
                 ids: tuple[int, int] = (0, 0), ids2: tuple[int, int] | None = None, seed: int = 0,
                 mn_major: bool = False) -> None:
        rng = np.random.default_rng(seed)
        self.kind, self.vec, self.n, self.stype = kind, vec, n, stype
        k = 32 if kind == "mxf8f6f4" else 64
        steps = 1 if ids2 is None else 2
        self.a = _codes(rng, atype, (A_ROWS, steps * k))
        self.b = _codes(rng, btype, (n, steps * k))
        self.sa = _scale_codes(rng, stype, (A_ROWS, 4))  # 4 bytes per row: every ID gets its own scales
        self.sb = _scale_codes(rng, stype, (n, 4))
        a_rows = np.concatenate([_row_bytes(self.a[:, s * k:(s + 1) * k], atype, kind) for s in range(steps)], axis=1)
        b_rows = np.concatenate([_row_bytes(self.b[:, s * k:(s + 1) * k], btype, kind) for s in range(steps)], axis=1)
        if steps == 1:
            a_rows = np.concatenate([a_rows, np.zeros_like(a_rows)], axis=1)
            b_rows = np.concatenate([b_rows, np.zeros_like(b_rows)], axis=1)
        self.smem = np.zeros(B_OFF + 1024 * (-(-n // 8)) + 1024, np.uint8)
        _place(self.smem, 0, a_rows)
        _place(self.smem, B_OFF, b_rows)
        self.adesc = encode_smem_desc(0, 16, 1024, swizzle=2)
        self.bdesc = encode_smem_desc(B_OFF, 16, 1024, swizzle=2)
        if mn_major:  # 8-bit elements MN-major without swizzle: 8 (K) x 16 (MN) byte core matrices, LBO 128 between
            # K groups, SBO 512 between groups of 16 rows; placed by the canonical layout of 9.7.16.3.3
            self.smem[:] = 0
            self.adesc = encode_smem_desc(0, 128, 512)
            self.bdesc = encode_smem_desc(B_OFF, 128, 512)
            for desc, codes in ((self.adesc, self.a), (self.bdesc, self.b)):
                addr = operand_addresses(decode_smem_desc(desc), codes.shape[0], k, 1, k_major=False)
                self.smem[addr] = codes.astype(np.uint8)
        self.idesc = encode_scaled_instr_desc(kind, n, atype, btype, ids[0], ids[1], stype, transpose_a=mn_major,
                                              transpose_b=mn_major)
        self.idesc2 = 0 if ids2 is None else encode_scaled_instr_desc(kind, n, atype, btype, ids2[0], ids2[1], stype)
        av = np.vectorize(lambda c: _ref_value(int(c), atype))(self.a)
        bv = np.vectorize(lambda c: _ref_value(int(c), btype))(self.b)
        sav = np.vectorize(lambda c: _ref_scale(int(c), stype))(self.sa)
        sbv = np.vectorize(lambda c: _ref_scale(int(c), stype))(self.sb)
        chunk = k // vec.value
        d = np.zeros((A_ROWS, n), np.float32)
        for s, (ia, ib) in enumerate([ids] + ([ids2] if ids2 else [])):
            # chunk c of step s is scaled by byte ID + c of the row's / column's word
            ascale = np.repeat(sav[:, ia:ia + vec.value], chunk, axis=1)
            bscale = np.repeat(sbv[:, ib:ib + vec.value], chunk, axis=1)
            part = (av[:, s * k:(s + 1) * k] * ascale) @ (bv[:, s * k:(s + 1) * k] * bscale).T
            d = (d.astype(np.float64) + part).astype(np.float32)
        self.want = d

    def sfa_words(self) -> np.ndarray:
        return _words(self.sa, A_ROWS)

    def sfb_words(self) -> np.ndarray:
        return _words(self.sb, self.n)

    def run(self, form: str, observers=(), cp: bool = False, sfa: np.ndarray | None = None, sfa_lane: int = 0,
            assemble: bool = True):
        sfb_cols = self.sfb_words().shape[1]
        smem = self.smem
        sfa_w = self.sfa_words() if sfa is None else sfa
        if cp:  # 32 rows x 16 bytes per matrix in shared memory: lane r's four columns (ThunderKittens' staging)
            at_a, at_b = smem.size, smem.size + 512
            tiles = np.zeros(1024, np.uint8)
            tiles[:512] = np.ascontiguousarray(sfa_w[:32, :4]).view(np.uint8).reshape(-1)
            wb = np.zeros((32, 4), np.uint32)
            wb[:, :sfb_cols] = self.sfb_words()[:32]
            tiles[512:] = wb.view(np.uint8).reshape(-1)
            smem = np.concatenate([smem, tiles])
            sfa_arg, sfb_arg = encode_smem_desc(at_a, 16, 128), encode_smem_desc(at_b, 16, 128)
            sfb_cols = 4
        src = _kernel(form, self.n, smem.size, sfb_cols, second=self.idesc2 != 0, cp=(0, 0) if cp else None,
                      sfa_lane=sfa_lane)
        if assemble:
            assert_assembles(src, "sm_100a")
        out = np.zeros(A_ROWS * self.n, np.uint32)
        bufs = {"src": smem, "out": out}
        if not cp:
            bufs["sfa"], bufs["sfb"] = sfa_w, self.sfb_words()
            sfa_arg, sfb_arg = "sfa", "sfb"
        prog = load_program(ptx_parser.parse(src), None)
        launch = Launch((1, 1, 1), (128, 1, 1), bufs, ["src", sfa_arg, sfb_arg, self.adesc, self.bdesc, self.idesc,
                                                        self.idesc2, "out"])
        glob = Machine(prog, launch, observers=tuple(observers)).run()
        return glob.by_name("out").data.view(np.float32).reshape(A_ROWS, self.n)


# ---------------------------------------------------------------------- values


@pytest.mark.parametrize("atype,btype", [("e4m3", "e4m3"), ("e5m2", "e4m3"), ("e2m1", "e3m2"), ("e2m3", "e2m1"),
                                         ("e3m2", "e5m2")])
def test_mxf8f6f4_matches_numpy(atype, btype):
    c = Case("mxf8f6f4", ScaleVec.X1, atype, btype, 64, ids=(1, 2), seed=len(atype + btype) + ord(btype[1]))
    assert (c.run("mxf8f6f4.block_scale.block32") == c.want).all()


def test_mxf8f6f4_without_scale_vector_qualifier_and_with_1x():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e5m2", 32, ids=(3, 0), seed=3)
    assert (c.run("mxf8f6f4.block_scale") == c.want).all()
    assert (c.run("mxf8f6f4.block_scale.scale_vec::1X") == c.want).all()


def test_two_k_steps_select_bytes_like_triton():
    """Triton's pattern: consecutive MMAs of one K tile share the scale words and select byte 0, 1, ...
    (the second MMA advances both descriptors by 32 bytes inside the 128B-swizzled rows)."""
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 64, ids=(0, 0), ids2=(1, 1), seed=11)
    assert (c.run("mxf8f6f4.block_scale.block32") == c.want).all()


@pytest.mark.parametrize("form,kind,vec,stype,ids", [
    ("mxf4.block_scale.block32", "mxf4", ScaleVec.X2, ScaleType.UE8M0, (2, 0)),
    ("mxf4.block_scale", "mxf4", ScaleVec.X2, ScaleType.UE8M0, (0, 2)),
    ("mxf4nvf4.block_scale.scale_vec::2X", "mxf4nvf4", ScaleVec.X2, ScaleType.UE8M0, (2, 2)),
    ("mxf4nvf4.block_scale.block16", "mxf4nvf4", ScaleVec.X4, ScaleType.UE4M3, (0, 0)),
    ("mxf4nvf4.block_scale.scale_vec::4X", "mxf4nvf4", ScaleVec.X4, ScaleType.UE8M0, (0, 0)),
])
def test_mxf4_kinds_match_numpy(form, kind, vec, stype, ids):
    c = Case(kind, vec, "e2m1", "e2m1", 32, stype, ids=ids, seed=len(form))
    assert (c.run(form) == c.want).all()


def test_transposed_8bit_operands():
    """MN-major A and B (transpose bits, Table 43; 8-bit types only, Table 52; N a multiple of 16)."""
    c = Case("mxf8f6f4", ScaleVec.X1, "e5m2", "e4m3", 64, ids=(2, 3), seed=13, mn_major=True)
    assert (c.run("mxf8f6f4.block_scale.block32") == c.want).all()


def test_scales_placed_by_tcgen05_cp_warpx4():
    """CUTLASS/ThunderKittens place the scales with tcgen05.cp.32x128b.warpx4 from a 512-byte tile in
    which row r's word is at (r % 32) * 16 + (r / 32) * 4: the same tensor-memory layout."""
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 128, ids=(2, 1), seed=5)
    assert (c.run("mxf8f6f4.block_scale.block32", cp=True) == c.want).all()


def test_each_row_and_column_reads_its_own_scale():
    """Doubling one row's scale (all duplicates) doubles exactly that row of D; one column's, that column."""
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 64, ids=(0, 0), seed=8)
    base = c.run("mxf8f6f4.block_scale.block32")
    c.sa[77, 0] += 1  # row 77: lane 13 (+32 q), column 2
    twice = c.run("mxf8f6f4.block_scale.block32")
    assert (twice[77] == 2 * base[77]).all() and (np.delete(twice, 77, 0) == np.delete(base, 77, 0)).all()
    c.sa[77, 1] += 5  # another ID's byte: no effect
    assert (c.run("mxf8f6f4.block_scale.block32") == twice).all()
    c.sb[41, 0] += 1  # column 41 of D (B's row 41: lane 9 (+32 q), column 1)
    col = c.run("mxf8f6f4.block_scale.block32")
    assert (col[:, 41] == 2 * twice[:, 41]).all() and (np.delete(col, 41, 1) == np.delete(twice, 41, 1)).all()


def test_a_nan_scale_makes_its_row_nan():
    """ue8m0 0xFF is NaN (5.2.3): the model's sums it enters are NaN, the others unchanged."""
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=10)
    c.sa[5, 0] = 0xFF
    got = c.run("mxf8f6f4.block_scale.block32")
    assert np.isnan(got[5]).all() and (np.delete(got, 5, 0) == np.delete(c.want, 5, 0)).all()


# ---------------------------------------------------------------------- events


def test_mma_reports_its_scale_factor_reads():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 64, ids=(1, 3), seed=2)
    rec = Recorder()
    got = c.run("mxf8f6f4.block_scale.block32", observers=(rec,))
    assert (got == c.want).all()
    mma = next(e.op for e in rec.events if isinstance(e, AsyncIssued) and e.op.ins.name.startswith("tcgen05.mma"))
    assert not mma.copy  # a computing operation
    reads = [e for e in rec.events if isinstance(e, MemoryAccess) and e.op is mma and not e.write
             and e.buffer.space is MemSpace.TMEM]
    flat = np.sort(np.concatenate([e.flat.reshape(-1) for e in reads]))
    lanes = np.arange(128)[:, None]
    want_a = T.byte_offsets(0, lanes, SFA_COL + np.arange(4)[None, :], 1, 1)  # byte 1 of 128 lanes x 4 columns
    want_b = T.byte_offsets(0, lanes, SFB_COL + np.arange(2)[None, :], 3, 1)  # byte 3 of 128 lanes x 2 columns
    assert np.array_equal(flat, np.sort(np.concatenate([want_a.reshape(-1), want_b.reshape(-1)])))
    writes = [e for e in rec.events if isinstance(e, MemoryAccess) and e.op is mma and e.write]
    assert sum(e.flat.size for e in writes) == 128 * 64 * 4  # D


def test_scale_cells_of_the_model():
    sm = ScaleMatrix(5 << 0 | 0, 40, ScaleVec.X2, 2, ScaleType.UE8M0)
    lanes, cols = sm.cells()
    assert lanes.shape == (4, 40) and (lanes[:, 33] == [1, 33, 65, 97]).all() and (cols[:, 33] == 6).all()
    assert (sm.first_byte, sm.nbytes, sm.columns) == (2, 2, 2)


# ---------------------------------------------------------------------- what the manual forbids or leaves open


def test_scales_not_duplicated_are_undefined():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=4)
    w = c.sfa_words()
    w[64 + 5, 1] ^= 1  # quarter 2's copy of row 37 differs (byte 0: the selected one)
    with pytest.raises(UndefinedBehavior, match="duplicated"):
        c.run("mxf8f6f4.block_scale.block32", sfa=w)
    w = c.sfa_words()
    w[64 + 5, 1] ^= 1 << 8  # a byte this MMA does not select: fine
    assert (c.run("mxf8f6f4.block_scale.block32", sfa=w) == c.want).all()


def test_scale_address_lane_must_be_zero():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=4)
    with pytest.raises(Unsupported, match="lane 32"):
        c.run("mxf8f6f4.block_scale.block32", sfa_lane=32)


def test_ue4m3_scale_with_bit_7_is_unsupported():
    c = Case("mxf4nvf4", ScaleVec.X4, "e2m1", "e2m1", 32, ScaleType.UE4M3, seed=6)
    c.sb[3, 2] |= 0x80
    with pytest.raises(Unsupported, match="bit 7"):
        c.run("mxf4nvf4.block_scale.block16")


@pytest.mark.parametrize("kind,quals,match", [
    ("mxf8f6f4", [".block16"], "Table 55"),
    ("mxf8f6f4", [".scale_vec::2X"], "Table 55"),
    ("mxf4nvf4", [], "explicitly specified"),
    ("mxf4", [".scale_vec::4X"], "Table 55"),
    ("mxf4", [".block32", ".scale_vec::2X"], "more than one"),
])
def test_scale_vector_sizes_the_manual_does_not_list(kind, quals, match):
    with pytest.raises(UndefinedBehavior, match=match):
        scale_vec_of(kind, quals)


def test_scale_vector_sizes_of_table_55():
    assert [scale_vec_of("mxf8f6f4", q) for q in ([], [".block32"], [".scale_vec::1X"])] == [ScaleVec.X1] * 3
    assert [scale_vec_of("mxf4", q) for q in ([], [".block32"], [".scale_vec::2X"])] == [ScaleVec.X2] * 3
    assert [scale_vec_of("mxf4nvf4", q) for q in ([".block32"], [".scale_vec::2X"], [".block16"],
                                                  [".scale_vec::4X"])] == [ScaleVec.X2] * 2 + [ScaleVec.X4] * 2


def test_an_invalid_form_is_refused_by_the_unit():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=1)
    with pytest.raises(UndefinedBehavior, match="Table 55"):  # ptxas: "cannot be combined with modifier '.block16'"
        c.run("mxf8f6f4.block_scale.block16", assemble=False)


def test_triton_descriptors():
    for raw, ident in ((0x08A00000, 0), (0x28A00010, 1), (0x48A00020, 2), (0x68A00030, 3)):
        d = decode_instr_desc(raw, "mxf8f6f4")
        assert (d.m, d.n, d.k, d.atype, d.btype, d.sfa_id, d.sfb_id, d.notes) == (128, 128, 32, "e4m3", "e4m3", ident,
                                                                                  ident, ())
        assert d.scale_type is ScaleType.UE8M0 and not d.transpose_b and d.block_scaled
        assert encode_scaled_instr_desc("mxf8f6f4", 128, "e4m3", "e4m3", ident, ident) == raw


_OK = encode_scaled_instr_desc("mxf8f6f4", 64, "e4m3", "e4m3")
_OK4 = encode_scaled_instr_desc("mxf4nvf4", 64, "e2m1", "e2m1", scale_type=ScaleType.UE4M3)


@pytest.mark.parametrize("raw,kind,match", [
    (_OK & ~(1 << 23), "mxf8f6f4", "scale type"),
    (_OK & ~(3 << 27) | 2 << 27, "mxf8f6f4", "M = 256"),
    (_OK & ~(0x3F << 17), "mxf8f6f4", "N = 0"),
    (_OK & ~(7 << 7) | 2 << 7, "mxf8f6f4", "type codes"),
    (encode_scaled_instr_desc("mxf8f6f4", 64, "e2m1", "e4m3", transpose_a=True), "mxf8f6f4", "K-major"),
    (encode_scaled_instr_desc("mxf8f6f4", 24, "e4m3", "e4m3", transpose_b=True), "mxf8f6f4", "steps of 16"),
    (_OK4 | 1 << 31, "mxf4nvf4", "K = 96"),
    (_OK4 | 1 << 15, "mxf4nvf4", "transpose"),
    (_OK4 | 1 << 29, "mxf4nvf4", "0 or 2"),
    (encode_scaled_instr_desc("mxf4", 64, "e2m1", "e2m1") & ~(1 << 23), "mxf4", "scale type"),
])
def test_invalid_block_scaled_descriptors(raw, kind, match):
    with pytest.raises(UndefinedBehavior, match=match):
        decode_instr_desc(raw, kind)


def test_reserved_bits_are_notes_and_ids_depend_on_the_vector_size():
    d = decode_instr_desc(_OK | 1 << 31 | 1 << 3, "mxf8f6f4")
    assert len(d.notes) == 2 and "bit 3" in d.notes[0]
    nv = decode_instr_desc(_OK4 | 2 << 29, "mxf4nvf4")
    check_scale_ids(decode_instr_desc(_OK4 | 2 << 29 | 1 << 23, "mxf4nvf4"), ScaleVec.X2)
    with pytest.raises(UndefinedBehavior, match="scale factor A ID 2"):
        check_scale_ids(nv, ScaleVec.X4)
    with pytest.raises(UndefinedBehavior, match="UE4M3"):
        check_scale_ids(decode_instr_desc(_OK4, "mxf4nvf4"), ScaleVec.X2)


def test_unmodelled_block_scaled_forms():
    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=1)
    c.idesc |= 1 << 2  # sparse
    with pytest.raises(Unsupported, match="sparsity"):
        c.run("mxf8f6f4.block_scale.block32")
    src = _kernel("mxf8f6f4.block_scale.block32.collector::a::fill", 32, 20480, 1)
    prog = load_program(ptx_parser.parse(src), None)
    with pytest.raises(Unsupported, match="collector"):
        Machine(prog, Launch((1, 1, 1), (128, 1, 1), {"src": np.zeros(20480, np.uint8), "out": np.zeros(4096, np.uint32),
                                                      "sfa": np.zeros(512, np.uint32), "sfb": np.zeros(128, np.uint32)},
                             ["src", "sfa", "sfb", 0, 0, _OK, 0, "out"])).run()


# ---------------------------------------------------------------------- the checker sees the scale reads


@pytest.mark.parametrize("ordered", [True, False])
def test_checker_orders_scale_stores_before_the_mma(ordered):
    """Without tcgen05.wait::st and the barrier between the warps' tcgen05.st of the scales and the MMA,
    the MMA's reads of the scale cells race with the stores (and only then)."""
    from symexec.check import check_kernel

    c = Case("mxf8f6f4", ScaleVec.X1, "e4m3", "e4m3", 32, seed=1)
    src = _kernel("mxf8f6f4.block_scale.block32", 32, c.smem.size, 1)
    hand_over = "  tcgen05.wait::st.sync.aligned;\n  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n" \
                "  tcgen05.fence::after_thread_sync;\n  ld.param.u32 %r21"
    assert hand_over in src
    if not ordered:
        src = src.replace(hand_over, "  ld.param.u32 %r21")
    assert_assembles(src, "sm_100a")
    prog = load_program(ptx_parser.parse(src), None)
    launch = Launch((1, 1, 1), (128, 1, 1), {"src": c.smem, "sfa": c.sfa_words(), "sfb": c.sfb_words(),
                                             "out": np.zeros(128 * 32, np.uint32)},
                    ["src", "sfa", "sfb", c.adesc, c.bdesc, c.idesc, 0, "out"])
    rep = check_kernel(prog, launch)
    if ordered:
        assert rep.verdict == "race_free", [f.message for f in rep.findings]
    else:
        assert rep.verdict == "race"
        assert any("column 128" in f.message or "column 160" in f.message for f in rep.findings)
