"""tcgen05 unit: the events observers hear (symexec.events via symexec.asyncops), tcgen05.cp and
tcgen05.shift values, and the lifecycle/layout checks (PTX 9.7.16).

Hand-written kernels run on the emulator with a recording observer; every kernel run here is
first assembled with `ptxas -arch=sm_100a` when ptxas is on PATH (`_run`). No Blackwell GPU exists
here: the layouts of tcgen05.cp and the MMA numerics are the documented models of tcgen05/ops.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptx_parser
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from semantics.errors import UndefinedBehavior, Unsupported
from symexec import Launch, load_program
from symexec.events import (AsyncCompleted, AsyncIssued, Completion, Fence, FenceKind, MemoryAccess, MemSpace,
                            Observer, Proxy, SyncKind)
from symexec.machine import Machine
from tcgen05 import ops
from tcgen05 import tmem as T
from tcgen05.descriptors import decode_smem_desc, encode_instr_desc, encode_smem_desc, operand_addresses
from tcgen05.unit import DescriptorWarning
from ptx_kit import assert_assembles, copy_to_smem

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
SMEM = 16384 + 8192  # A (128 x 32 bytes, 128B swizzle) then B (64 x 32 bytes)
B_OFF = 16384


class Recorder(Observer):
    """Every event in order."""

    def __init__(self) -> None:
        self.events: list = []
        self.batch = None

    def on_batch(self, batch) -> None:
        self.batch = batch

    def on_access(self, ev) -> None:
        self.events.append(ev)

    on_fence = on_async_issued = on_async_completed = on_release = on_acquire = on_access

    # ------------------------------------------------------------------ queries
    def issued(self, name: str | None = None) -> list:
        return [e.op for e in self.events if isinstance(e, AsyncIssued) and (name is None or e.op.ins.name.startswith(name))]

    def accesses(self, op) -> list[MemoryAccess]:
        return [e for e in self.events if isinstance(e, MemoryAccess) and e.op is op]

    def completions(self, op) -> list[AsyncCompleted]:
        return [e for e in self.events if isinstance(e, AsyncCompleted) and e.op is op]

    def index(self, ev) -> int:
        return next(i for i, e in enumerate(self.events) if e is ev)


def _run(src: str, buffers: dict, params: list, threads: int = 128):
    assert_assembles(src, "sm_100a")
    prog = load_program(ptx_parser.parse(src), None)
    rec = Recorder()
    glob = Machine(prog, Launch((1, 1, 1), (threads, 1, 1), buffers, params), observers=(rec,)).run()
    return glob, rec


def _flat_cells(lanes: np.ndarray, cols: np.ndarray, first: int = 0, nbytes: int = 4) -> np.ndarray:
    return np.sort(T.byte_offsets(0, lanes, cols, first, nbytes).reshape(-1))


# ---------------------------------------------------------------------- kernels



def _kernel(body: str, ncols: int = 128, ld_col: int = 0, wait_second: bool = False, smem: int = SMEM,
            pre: str = "", post_dealloc: str = "") -> str:
    """One CTA of 128 threads: smem <- src, warp 0 allocates `ncols` columns, thread 0 runs `body`
    (%r20 the allocation, %rd11/%rd12 descriptors d0/d1 relocated to smem, %r21 idesc, %p4 true,
    %p5 false, commits to [bar] and [bar+8]); everyone waits for phase 0 of bar (and bar+8), then
    every warp loads 8 columns from `ld_col` of its 32 lanes and stores them to out[tid][0..7]."""
    wait2 = """  mov.u32 %r24, 0;
WAIT2:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar+8], %r24;
  @!%p3 bra WAIT2;
""" if wait_second else ""
    regs = ", ".join(f"%r{40 + j}" for j in range(8))
    return HEAD + f"""
.visible .entry k(.param .u64 src, .param .u64 out, .param .u64 d0, .param .u64 d1, .param .u32 idesc)
{{
  .reg .b32 %r<60>;
  .reg .b64 %rd<16>;
  .reg .pred %p<8>;
  .shared .align 1024 .b8 smem[{smem}];
  .shared .align 8 .b64 bar[2];
  .shared .align 4 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  setp.eq.u32 %p2, %r1, 0;
{copy_to_smem(smem)}{pre}  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], {ncols};
  @%p2 mbarrier.init.shared::cta.b64 [bar], 1;
  @%p2 mbarrier.init.shared::cta.b64 [bar+8], 1;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r20, [slot];
  ld.param.u32 %r21, [idesc];
  ld.param.u64 %rd11, [d0];
  ld.param.u64 %rd12, [d1];
  shr.u32 %r22, %r2, 4;
  cvt.u64.u32 %rd13, %r22;
  add.u64 %rd11, %rd11, %rd13;
  add.u64 %rd12, %rd12, %rd13;
  setp.ne.u32 %p4, %r1, 1000;
  setp.eq.u32 %p5, %r1, 1000;
{body}
  mov.u32 %r24, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r24;
  @!%p3 bra WAIT;
{wait2}  tcgen05.fence::after_thread_sync;
  shr.u32 %r25, %r1, 5;
  shl.b32 %r26, %r25, 21;
  add.u32 %r27, %r20, %r26;
  tcgen05.ld.sync.aligned.32x32b.x8.b32 {{{regs}}}, [%r27+{ld_col}];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd5, %r1, 32;
  add.u64 %rd6, %rd4, %rd5;
  st.global.v4.b32 [%rd6], {{%r40, %r41, %r42, %r43}};
  st.global.v4.b32 [%rd6+16], {{%r44, %r45, %r46, %r47}};
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r20, {ncols};
{post_dealloc}  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  ret;
}}
"""


MMA = "  @%p2 tcgen05.mma.cta_group::1.kind::f16 [%r20], %rd11, %rd12, %r21, {pred};\n"
COMMIT = "  @%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar{off}];\n"


def _place_k_major_128b(smem: np.ndarray, base: int, mat: np.ndarray) -> None:
    """rows x 32-byte K-major operand with the 128B swizzle, SBO 1024."""
    for r in range(mat.shape[0]):
        row = base + (r // 8) * 1024 + (r % 8) * 128
        for c in range(2):
            smem[row + ((c ^ (r % 8)) * 16): row + ((c ^ (r % 8)) * 16) + 16] = mat[r, 16 * c:16 * c + 16]


def _mma_inputs(n: int = 32, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 16)).astype(np.float16)
    b = rng.standard_normal((n, 16)).astype(np.float16)
    smem = np.zeros(SMEM, np.uint8)
    _place_k_major_128b(smem, 0, a.view(np.uint8).reshape(128, 32))
    _place_k_major_128b(smem, B_OFF, b.view(np.uint8).reshape(n, 32))
    adesc = encode_smem_desc(0, 16, 1024, swizzle=2)
    bdesc = encode_smem_desc(B_OFF, 16, 1024, swizzle=2)
    return a, b, smem, adesc, bdesc, encode_instr_desc("f16", 128, n, "f16", "f16")


def _run_mma(body: str, n: int = 32, **kw):
    a, b, smem, adesc, bdesc, idesc = _mma_inputs(n)
    out = np.zeros((128, 8), np.uint32)
    glob, rec = _run(_kernel(body, **kw), {"src": smem, "out": out}, ["src", "out", adesc, bdesc, idesc])
    return a, b, glob.by_name("out").data.view(np.uint32).reshape(128, 8), rec


# ---------------------------------------------------------------------- tcgen05.mma / commit


def _swizzled_bytes(start: int, rows: int) -> np.ndarray:
    d = decode_smem_desc(encode_smem_desc(start, 16, 1024, swizzle=2))
    addr = operand_addresses(d, rows, 16, 2, k_major=True)
    return np.sort((addr[..., None] + np.arange(2)).reshape(-1))


def test_mma_events_exact_footprint_and_commit_completion():
    a, b, got, rec = _run_mma(MMA.format(pred="%p5") + COMMIT.format(off=""))
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    assert (got.view(np.float32) == want[:, :8]).all()  # values unchanged by observing
    (mma,) = rec.issued("tcgen05.mma")
    assert mma.unit == "tcgen05" and mma.tensor_core and mma.completion is Completion.TCGEN05_COMMIT
    assert mma.proxy is Proxy.ASYNC and mma.lanes.tolist() == [0] and mma.after == ()
    acc = rec.accesses(mma)
    smem_reads = [e for e in acc if e.buffer.space is MemSpace.SHARED]
    assert [e.write for e in smem_reads] == [False, False] and all(e.proxy is Proxy.ASYNC for e in smem_reads)
    assert smem_reads[0].size == rec.batch.memory.shared.size and smem_reads[0].lanes.tolist() == [0]
    # exact bytes through the 128B swizzle: A = 128 x 16 f16, B = 32 x 16 f16 (CTA slot 0: offset = address)
    at = rec.batch.var_addr["smem"][1]
    assert at % 1024 == 0
    assert (np.sort(smem_reads[0].flat.reshape(-1)) == _swizzled_bytes(at, 128)).all()
    assert (np.sort(smem_reads[1].flat.reshape(-1)) == _swizzled_bytes(at + B_OFF, 32)).all()
    tm = [e for e in acc if e.buffer.space is MemSpace.TMEM]
    assert [e.write for e in tm] == [True]  # enable-input-d false: D written, not read
    assert tm[0].buffer.index == rec.batch.batch_id and tm[0].size == T.CTA_BYTES
    lanes, cols = np.meshgrid(np.arange(128), np.arange(32), indexing="ij")
    assert (np.sort(tm[0].flat.reshape(-1)) == _flat_cells(lanes, cols)).all()
    (done,) = rec.completions(mma)
    assert done.point.kind is SyncKind.MBARRIER and done.point.ident[2] == 0 and done.observers is None
    assert done.implies_proxy_fence is False  # 9.7.16.6.5: no implicit proxy fence for tcgen05
    assert max(rec.index(e) for e in acc) < rec.index(done)
    # the commit implies tcgen05.fence::before_thread_sync for the committing thread
    fences = [e for e in rec.events if isinstance(e, Fence) and e.ins.name.startswith("tcgen05.commit")]
    assert len(fences) == 1 and fences[0].kind is FenceKind.TCGEN05_BEFORE and fences[0].lanes.tolist() == [0]


def test_mma_accumulate_reads_d_and_is_pipelined_behind_the_first():
    _, _, _, rec = _run_mma(MMA.format(pred="%p5") + MMA.format(pred="%p4") + COMMIT.format(off=""))
    m1, m2 = rec.issued("tcgen05.mma")
    assert m1.after == () and m2.after == (m1,)  # same accumulator, shape and kind (9.7.16.6.2)
    tm2 = [e for e in rec.accesses(m2) if e.buffer.space is MemSpace.TMEM]
    assert [e.write for e in tm2] == [False, True]  # enable-input-d: D read, then written
    assert all(len(rec.completions(m)) == 1 for m in (m1, m2))


def test_every_later_commit_tracks_earlier_mmas_too():
    body = (MMA.format(pred="%p5") + COMMIT.format(off="")
            + MMA.format(pred="%p4") + COMMIT.format(off="+8"))
    _, _, _, rec = _run_mma(body, wait_second=True)
    m1, m2 = rec.issued("tcgen05.mma")
    bar0 = {c.point.ident[0] for c in rec.completions(m2)}
    assert len(bar0) == 1
    points1 = sorted(c.point.ident[0] for c in rec.completions(m1))
    assert len(points1) == 2 and points1[1] == next(iter(bar0)) == points1[0] + 8


def test_uncommitted_mma_accesses_are_reported_at_the_end():
    body = MMA.format(pred="%p5") + COMMIT.format(off="") + MMA.format(pred="%p4").replace("[%r20]", "[%r28]")
    body = "  add.u32 %r28, %r20, 64;\n" + body
    _, _, _, rec = _run_mma(body)
    m1, m2 = rec.issued("tcgen05.mma")
    assert rec.completions(m2) == [] and {e.buffer.space for e in rec.accesses(m2)} == {MemSpace.SHARED, MemSpace.TMEM}
    assert m2.after == ()  # another accumulator: not pipelined behind m1


# ---------------------------------------------------------------------- tcgen05.cp


def _cp_smem(rows: int, row_bytes: int, sbo: int, lbo: int) -> tuple[np.ndarray, np.ndarray]:
    """Source bytes in the no-swizzle K-major layout of 16-byte units, and the rows they form."""
    rng = np.random.default_rng(rows * 7 + row_bytes)
    mat = rng.integers(0, 256, (rows, row_bytes)).astype(np.uint8)
    smem = np.zeros(SMEM, np.uint8)
    for r in range(rows):
        for c in range(row_bytes // 16):
            at = (r // 8) * sbo + (r % 8) * 16 + c * lbo
            smem[at:at + 16] = mat[r, 16 * c:16 * c + 16]
    return smem, mat


CP_FORMS = [("128x256b", "", 256, 128), ("128x128b", "", 128, 0), ("4x256b", "", 0, 128),
            ("64x128b", ".warpx2::02_13", 128, 0), ("64x128b", ".warpx2::01_23", 128, 0),
            ("32x128b", ".warpx4", 128, 0)]


def _cp_body(shape: str, cast: str) -> str:
    return (f"  @%p2 tcgen05.cp.cta_group::1.{shape}{cast} [%r20], %rd11;\n" + COMMIT.format(off=""))


@pytest.mark.parametrize("shape,cast,sbo,lbo", CP_FORMS)
def test_cp_values_and_events(shape, cast, sbo, lbo):
    layout = ops.cp_layout(shape, cast, None)
    smem, mat = _cp_smem(layout.rows, layout.row_bytes, sbo, lbo)
    out = np.zeros((128, 8), np.uint32)
    desc = encode_smem_desc(0, lbo, sbo)
    glob, rec = _run(_kernel(_cp_body(shape, cast)), {"src": smem, "out": out}, ["src", "out", desc, 0, 0])
    got = glob.by_name("out").data.view(np.uint32).reshape(128, 8)
    want = np.zeros((128, 8), np.uint32)
    words = mat.view("<u4")
    dest = layout.lanes()
    for j in range(dest.shape[1]):
        want[dest[:, j], :layout.columns] = words
    assert (got == want).all()
    (cp,) = rec.issued("tcgen05.cp")
    assert cp.tensor_core and cp.proxy is Proxy.ASYNC and cp.completion is Completion.TCGEN05_COMMIT
    rd, wr = rec.accesses(cp)
    assert rd.buffer.space is MemSpace.SHARED and not rd.write and rd.proxy is Proxy.ASYNC
    assert rd.flat.size == layout.rows * layout.row_bytes == np.unique(rd.flat).size
    assert wr.buffer.space is MemSpace.TMEM and wr.write
    lanes = np.broadcast_to(dest[:, :, None], dest.shape + (layout.columns,))
    cols = np.broadcast_to(np.arange(layout.columns), lanes.shape)
    assert (np.sort(wr.flat.reshape(-1)) == _flat_cells(lanes, cols)).all()
    (done,) = rec.completions(cp)
    assert done.point.kind is SyncKind.MBARRIER and done.implies_proxy_fence is False


def test_cp_forms_the_manual_does_not_list():
    for shape, cast in (("64x128b", ""), ("32x128b", ".warpx2::02_13"), ("128x256b", ".warpx4")):
        with pytest.raises(UndefinedBehavior, match="9.7.16.9.2"):
            ops.cp_layout(shape, cast, None)


def test_cp_decompression_and_lane_multicast_are_unsupported():
    smem = np.zeros(SMEM, np.uint8)
    args = ({"src": smem, "out": np.zeros(1024, np.uint32)}, ["src", "out", encode_smem_desc(0, 128, 256), 0, 0])
    src = _kernel("  @%p2 tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r20], %rd11;\n" + COMMIT.format(off=""))
    with pytest.raises(Unsupported, match="decompression .b6x16_p32.b8x16"):
        _run(src, *args)
    src = _kernel("  add.u32 %r28, %r20, 0x200000;\n  @%p2 tcgen05.cp.cta_group::1.32x128b.warpx4 [%r28], %rd11;\n"
                  + COMMIT.format(off=""))
    with pytest.raises(Unsupported, match="multicast .warpx4 to tensor memory lane 32"):
        _run(src, *args)


def test_cp_source_beyond_shared_memory():
    args = ({"src": np.zeros(SMEM, np.uint8), "out": np.zeros(1024, np.uint32)},
            ["src", "out", encode_smem_desc(SMEM - 256, 128, 256), 0, 0])
    with pytest.raises(UndefinedBehavior, match="tcgen05.cp source"):
        _run(_kernel(_cp_body("128x256b", "")), *args)


# ---------------------------------------------------------------------- tcgen05.shift and pipelining

FILL = """  shr.u32 %r30, %r1, 5;
  shl.b32 %r31, %r30, 21;
  add.u32 %r32, %r20, %r31;
  shl.b32 %r33, %r1, 16;
""" + "".join(f"  or.b32 %r{34 + c}, %r33, {c};\n" for c in range(8)) + """  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r32], {%r34, %r35, %r36, %r37, %r38, %r39, %r40, %r41};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
"""


def test_shift_moves_rows_down_and_reports_its_cells():
    body = FILL + "  add.u32 %r28, %r20, 0x200000;\n  @%p2 tcgen05.shift.cta_group::1.down [%r28];\n" + COMMIT.format(off="")
    glob, rec = _run(_kernel(body), {"src": np.zeros(SMEM, np.uint8), "out": np.zeros(1024, np.uint32)},
                     ["src", "out", 0, 0, 0])
    got = glob.by_name("out").data.view(np.uint32).reshape(128, 8)
    lane = np.arange(128)[:, None]
    col = np.arange(8)[None, :]
    src_lane = np.where((lane > 32) & (lane < 64), lane - 1, lane)  # rows 1..31 of warp 1's block move down
    assert (got == (src_lane << 16 | col)).all()
    (sh,) = rec.issued("tcgen05.shift")
    rd, wr = rec.accesses(sh)
    assert (not rd.write) and wr.write and rd.flat.size == wr.flat.size == 31 * 8 * 4
    assert (np.sort(wr.flat.reshape(-1)) == _flat_cells(np.arange(33, 64)[:, None], col)).all()
    assert len(rec.completions(sh)) == 1


def test_shift_lane_must_be_aligned_to_32():
    body = "  add.u32 %r28, %r20, 0x100000;\n  @%p2 tcgen05.shift.cta_group::1.down [%r28];\n" + COMMIT.format(off="")
    with pytest.raises(UndefinedBehavior, match="aligned to 32"):
        _run(_kernel(body), {"src": np.zeros(SMEM, np.uint8), "out": np.zeros(1024, np.uint32)},
             ["src", "out", 0, 0, 0])


PIPE = """  add.u32 %r28, %r20, 64;
  @%p2 tcgen05.cp.cta_group::1.128x256b [%r28], %rd11;
  @%p2 tcgen05.shift.cta_group::1.down [%r28];
  @%p2 tcgen05.mma.cta_group::1.kind::f16 [%r20], %rd11, %rd12, %r21, %p5;
  @%p2 tcgen05.mma.cta_group::1.kind::f16 [%r20], %rd11, %rd12, %r21, %p4;
  @%p2 tcgen05.shift.cta_group::1.down [%r28];
  @%p2 tcgen05.cp.cta_group::1.4x256b [%r28], %rd11;
  @%p2 tcgen05.cp.cta_group::1.128x128b [%r28], %rd11;
""" + COMMIT.format(off="")


def test_pipelined_pairs_name_what_they_follow():
    _, _, _, rec = _run_mma(PIPE)
    cp1, cp2, cp3 = rec.issued("tcgen05.cp")
    sh1, sh2 = rec.issued("tcgen05.shift")
    m1, m2 = rec.issued("tcgen05.mma")
    assert cp1.after == () and sh1.after == ()
    assert m1.after == (cp1, sh1)  # cp -> mma, shift -> mma
    assert m2.after == (m1,)  # mma -> mma (the cp and shift are behind m1 already)
    assert sh2.after == (m2,)  # mma -> shift
    assert cp2.after == (sh1, sh2)  # shift -> cp.4x256b
    assert cp3.after == ()  # shift -> cp pipelines only the .4x256b shape
    for op in (cp1, cp2, cp3, sh1, sh2, m1, m2):
        assert len(rec.completions(op)) == 1


# ---------------------------------------------------------------------- ld / st / alloc / fences


def _ldst_kernel(wait_ld: bool = True, use_before_wait: bool = False, after_dealloc: bool = False) -> str:
    use = "  add.u32 %r12, %r10, 1;\n" if use_before_wait else ""
    ld = "  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r5];\n"
    return HEAD + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r2, [slot];
  shr.u32 %r3, %r1, 5;
  shl.b32 %r4, %r3, 21;
  add.u32 %r5, %r2, %r4;
  mul.lo.u32 %r6, %r1, 10;
  add.u32 %r7, %r6, 1;
  add.u32 %r8, %r6, 2;
  add.u32 %r9, %r6, 3;
  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r5], {{%r6, %r7, %r8, %r9}};
  tcgen05.wait::st.sync.aligned;
{"" if after_dealloc else ld}{use}{"  tcgen05.wait::ld.sync.aligned;" if wait_ld else ""}
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v2.b32 [%rd3], {{%r10, %r11}};
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
{ld if after_dealloc else ""}  @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  ret;
}}
"""


def test_ld_st_events_per_warp():
    glob, rec = _run(_ldst_kernel(), {"out": np.zeros(256, np.uint32)}, ["out"])
    r = glob.by_name("out").data.view(np.uint32).reshape(128, 2)
    assert (r[:, 0] == 10 * np.arange(128)).all()
    sts, lds = rec.issued("tcgen05.st"), rec.issued("tcgen05.ld")
    assert len(sts) == len(lds) == 4  # one operation per warp
    for w, (st, ld) in enumerate(zip(sts, lds)):
        lanes = np.arange(32 * w, 32 * w + 32)
        assert st.lanes.tolist() == ld.lanes.tolist() == lanes.tolist()
        assert st.completion is Completion.TCGEN05_WAIT_ST and ld.completion is Completion.TCGEN05_WAIT_LD
        assert st.tensor_core and ld.tensor_core
        (wr,) = rec.accesses(st)
        assert wr.write and wr.buffer.space is MemSpace.TMEM and wr.flat.shape == (32, 16)
        assert (wr.flat[:, ::4] == T.byte_offsets(0, lanes[:, None], np.arange(4)[None, :])[..., 0]).all()
        (rd,) = rec.accesses(ld)
        assert not rd.write and rd.flat.shape == (32, 8) and rd.proxy is Proxy.GENERIC
        (cs,) = rec.completions(st)
        (cl,) = rec.completions(ld)
        assert cs.observers.tolist() == cl.observers.tolist() == lanes.tolist() and cl.point is None
        assert rec.index(rd) < rec.index(cl)
    # tcgen05.alloc writes the address with a weak generic store (9.7.16.7.1)
    (alloc,) = [e for e in rec.events if isinstance(e, MemoryAccess) and e.ins is not None
                and e.ins.name.startswith("tcgen05.alloc")]
    assert alloc.write and alloc.buffer.space is MemSpace.SHARED and alloc.op is None and alloc.lanes.tolist() == [0]
    fences = [e for e in rec.events if isinstance(e, Fence) and e.ins.name.startswith("tcgen05.fence")]
    kinds = [f.kind for f in fences]
    assert kinds == [FenceKind.TCGEN05_BEFORE, FenceKind.TCGEN05_AFTER, FenceKind.TCGEN05_BEFORE]
    assert all(f.lanes.tolist() == list(range(128)) for f in fences)


def test_ld_register_dependency_performs_but_wait_ld_observes():
    # 9.7.16.6.4.5: the true dependency gives the value; memory ordering needs the wait::ld
    glob, rec = _run(_ldst_kernel(use_before_wait=True), {"out": np.zeros(256, np.uint32)}, ["out"])
    lds = rec.issued("tcgen05.ld")
    for ld in lds:
        (rd,) = rec.accesses(ld)
        (cl,) = rec.completions(ld)
        assert rd.ins.name.startswith("tcgen05.ld") and rec.index(rd) < rec.index(cl)
        waits = [i for i, e in enumerate(rec.events) if isinstance(e, AsyncCompleted) and e.op is ld]
        assert waits == [rec.index(cl)]
    # the dependent add ran before the wait: the read was reported before any completion
    first_completion = min(rec.index(c) for ld in lds for c in rec.completions(ld))
    assert all(rec.index(rec.accesses(ld)[0]) < first_completion for ld in lds)


def test_ld_never_waited_is_performed_for_its_use_and_never_completes():
    glob, rec = _run(_ldst_kernel(wait_ld=False), {"out": np.zeros(256, np.uint32)}, ["out"])
    for ld in rec.issued("tcgen05.ld"):
        assert len(rec.accesses(ld)) == 1 and rec.completions(ld) == []


def test_ld_after_dealloc_is_undefined():
    with pytest.raises(UndefinedBehavior, match="freed by tcgen05.dealloc"):
        _run(_ldst_kernel(after_dealloc=True), {"out": np.zeros(256, np.uint32)}, ["out"])


def test_st_never_waited_is_reported_at_the_end():
    src = _ldst_kernel().replace("  tcgen05.wait::st.sync.aligned;\n", "")
    _, rec = _run(src, {"out": np.zeros(256, np.uint32)}, ["out"])
    for st in rec.issued("tcgen05.st"):
        (wr,) = rec.accesses(st)
        assert wr.write and rec.completions(st) == []


# ---------------------------------------------------------------------- allocator checks


def _alloc_kernel(body: str) -> str:
    return HEAD + f"""
.visible .entry k()
{{
  .reg .b32 %r<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 slot;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
{body}
  ret;
}}
"""


ALLOC64 = """  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 64;
  ld.shared.b32 %r2, [slot];
"""
ALLOC_KERNELS = {
    "wrong_start": ALLOC64 + "  add.u32 %r3, %r2, 32;\n  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;",
    "partial": ALLOC64 + "  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;",
    "exited": "  setp.ge.u32 %p2, %r1, 16;\n  @%p2 exit;\n" + ALLOC64
              + "  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;",
    "ok": ALLOC64 + "  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;",
}


def test_dealloc_must_name_a_live_allocation():
    with pytest.raises(UndefinedBehavior, match="does not point to a live tensor memory allocation"):
        _run(_alloc_kernel(ALLOC_KERNELS["wrong_start"]), {}, [], threads=32)


def test_partial_dealloc_is_undefined():
    """Freeing 32 of 64 allocated columns: no partial deallocation is defined, and otherwise the
    other 32 columns would stay allocated at exit (9.7.16.7.1): a bug either way."""
    with pytest.raises(UndefinedBehavior, match="the other 32 columns stay allocated"):
        _run(_alloc_kernel(ALLOC_KERNELS["partial"]), {}, [], threads=32)


def test_alloc_by_a_warp_with_exited_threads_is_undefined():
    with pytest.raises(UndefinedBehavior, match="after some of its threads exited"):
        _run(_alloc_kernel(ALLOC_KERNELS["exited"]), {}, [], threads=32)


def test_alloc_and_dealloc_emit_no_async_operation():
    _, rec = _run(_alloc_kernel(ALLOC_KERNELS["ok"]), {}, [], threads=32)
    assert rec.issued() == []


# ---------------------------------------------------------------------- mma checks at issue


def test_mma_outside_the_allocation_is_undefined_at_issue():
    # D at columns 48..79 with N = 32 in a 64-column allocation, never committed: checked at issue
    body = "  add.u32 %r28, %r20, 48;\n" + COMMIT.format(off="") + MMA.format(pred="%p5").replace("[%r20]", "[%r28]")
    with pytest.raises(UndefinedBehavior, match="not allocated"):
        _run_mma(body, ncols=64)


def test_reserved_smem_descriptor_bits_warn():
    a, b, smem, adesc, bdesc, idesc = _mma_inputs()
    src = _kernel(MMA.format(pred="%p5") + COMMIT.format(off=""))
    with pytest.warns(DescriptorWarning, match="reserved bits 14-15/30-31"):
        _run(src, {"src": smem, "out": np.zeros(1024, np.uint32)}, ["src", "out", adesc | 1 << 30, bdesc, idesc])


# ---------------------------------------------------------------------- Triton sm_100a GEMM under observation


class Consistency(Observer):
    """Every access names an issued operation and comes before the operation's first completion;
    `after` names issued operations; nothing is accessed in tensor memory outside the buffer."""

    def __init__(self) -> None:
        self.issued: dict[int, object] = {}
        self.completed: set[int] = set()
        self.counts = {"issued": 0, "accesses": 0, "completions": 0}

    def on_async_issued(self, ev) -> None:
        assert all(a.ident in self.issued for a in ev.op.after)
        self.issued[ev.op.ident] = ev.op
        self.counts["issued"] += 1

    def on_access(self, ev) -> None:
        if ev.op is not None and ev.op.unit == "tcgen05":
            assert ev.op.ident in self.issued and ev.op.ident not in self.completed, ev.op.ins.name
            assert ev.flat.shape[0] == ev.lanes.size and 0 <= ev.flat.min() and ev.flat.max() < ev.size
            self.counts["accesses"] += 1

    def on_async_completed(self, ev) -> None:
        if ev.op.unit == "tcgen05":
            self.completed.add(ev.op.ident)
            self.counts["completions"] += 1


def test_triton_gemm_sm100_under_observation_is_unchanged():
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
    k = triton.compile(ASTSource(mm, sig, {"BM": 128, "BN": 128, "BK": 64}, attrs), target=GPUTarget("cuda", 100, 32),
                       options={"ptx_version": 90, "num_warps": 4, "num_stages": 2})
    prog = load_program(ptx_parser.parse(k.asm["ptx"]), None)
    K = 192
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, K)).astype(np.float16)
    b = rng.standard_normal((K, 128)).astype(np.float16)

    def run(observers):
        launch = Launch((1, 1, 1), (128, 1, 1), {"a": a, "b": b, "c": np.zeros((128, 128), np.float16)},
                        ["a", "b", "c", K] + [0] * (len(prog.params) - 4), dynamic_shared_bytes=k.metadata.shared)
        return Machine(prog, launch, observers=observers).run().by_name("c").data.copy()

    plain = run(())
    obs = Consistency()
    seen = run((obs,))
    assert (plain == seen).all()
    assert obs.counts["issued"] > 0 and obs.counts["accesses"] > 0 and obs.counts["completions"] > 0
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    assert np.abs(plain.view(np.float16).reshape(128, 128).astype(np.float64) - ref).max() < 0.1


# ---------------------------------------------------------------------- descriptor and data-path checks


def test_sparsity_selector_without_sparsity_is_a_note():
    from tcgen05.descriptors import decode_instr_desc

    d = decode_instr_desc(encode_instr_desc("f16", 128, 64, "f16", "f16") | 0b01, "f16")
    assert any("sparsity selector" in n for n in d.notes)


def test_m64_data_path_lane_alignment():
    # Layout F (M = 64, 9.7.16.10.5): lane alignment 0 or 16, A in tensor memory at D's alignment
    from tcgen05.descriptors import decode_instr_desc

    idesc = decode_instr_desc(encode_instr_desc("f16", 64, 32, "f16", "f16"), "f16")
    bdesc = encode_smem_desc(0, 16, 1024, swizzle=2)
    fp = ops.mma_footprint(idesc, 16 << 16, ops.AOperand(True, 16 << 16 | 64), bdesc, False, 8192, None)
    rows = np.arange(64)
    assert (fp.d[0][:, 0] == 16 + 32 * (rows // 16) + rows % 16).all()
    assert (fp.a_tmem[0][:, 0] == fp.d[0][:, 0]).all()
    with pytest.raises(UndefinedBehavior, match="same tensor memory lane alignment"):
        ops.mma_footprint(idesc, 16 << 16, ops.AOperand(True, 64), bdesc, False, 8192, None)
    with pytest.raises(UndefinedBehavior, match="not a data-path lane alignment"):
        ops.mma_footprint(idesc, 8 << 16, ops.AOperand(True, 8 << 16), bdesc, False, 8192, None)
    m128 = decode_instr_desc(encode_instr_desc("f16", 128, 32, "f16", "f16"), "f16")
    with pytest.raises(UndefinedBehavior, match="not a data-path lane alignment"):
        ops.mma_footprint(m128, 16 << 16, ops.AOperand(False, bdesc), bdesc, False, 8192, None)


def test_mma_footprint_operand_bytes_kept_by_descriptor():
    # the shared-memory bytes of an operand are kept by what they are a function of (ops._SMEM_BYTES): a second
    # footprint of the same descriptors is the same bytes, read-only; another descriptor, CTA size or K gets its own;
    # a descriptor that reaches past the CTA's shared memory is refused on every call, whatever was kept before
    from tcgen05.descriptors import decode_instr_desc

    ops._SMEM_BYTES.clear()
    idesc = decode_instr_desc(encode_instr_desc("f16", 128, 64, "f16", "f16"), "f16")
    adesc, bdesc = encode_smem_desc(0, 16, 1024, swizzle=2), encode_smem_desc(16384, 16, 1024, swizzle=2)

    def fresh(raw: int, rows: int, size: int, k: int = 16) -> np.ndarray:
        return np.unique(ops.operand_addresses_checked(size, decode_smem_desc(raw), rows, k, "f16", True, None))

    fp = ops.mma_footprint(idesc, 0, ops.AOperand(False, adesc), bdesc, False, 32768, None)
    again = ops.mma_footprint(idesc, 0, ops.AOperand(False, adesc), bdesc, False, 32768, None)
    assert again.a_smem is fp.a_smem and again.b_smem is fp.b_smem
    assert not fp.a_smem.flags.writeable and not fp.b_smem.flags.writeable
    assert (fp.a_smem == fresh(adesc, 128, 32768)).all() and (fp.b_smem == fresh(bdesc, 64, 32768)).all()
    other = encode_smem_desc(8192, 16, 1024, swizzle=2)
    fo = ops.mma_footprint(idesc, 0, ops.AOperand(False, other), bdesc, False, 32768, None)
    assert (fo.a_smem == fresh(other, 128, 32768)).all() and not np.array_equal(fo.a_smem, fp.a_smem)
    for _ in range(2):  # B at 16384.. is outside a 16 KiB CTA: refused each time, after the 32 KiB footprint was kept
        with pytest.raises(UndefinedBehavior, match="beyond the"):
            ops.mma_footprint(idesc, 0, ops.AOperand(False, adesc), bdesc, False, 16384, None)
    assert (ops.mma_footprint(idesc, 0, ops.AOperand(False, adesc), bdesc, False, 24576, None).b_smem
            == fresh(bdesc, 64, 24576)).all()
