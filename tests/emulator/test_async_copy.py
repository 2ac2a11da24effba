"""cp.async and bulk copies on the emulator (PTX 9.7.9.25) with hand-written PTX and numpy oracles.

The emulator completes a cp.async at the latest legal point, so a read of the destination before
the covering wait must see the old bytes; these tests check both the right numbers after correct
waits and the stale numbers after missing ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptx_parser import parse
from symexec import Launch, MemoryFault, UndefinedBehavior, Unsupported, load_program
from symexec.machine import Machine

HEADER = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 pn)
{
.reg .b64 %rd<32>; .reg .b32 %r<64>; .reg .pred %p<8>;
.shared .align 16 .b8 sm[1024];
.shared .align 8 .b64 bar;
ld.param.u64 %rd1, [pin];
ld.param.u64 %rd2, [pout];
ld.param.u32 %r60, [pn];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.u64 %rd4, %rd1, %rd3;       // &in[tid]  (4-byte elements)
add.u64 %rd5, %rd2, %rd3;       // &out[tid]
mov.u32 %r2, sm;
shl.b32 %r3, %r1, 2;
add.u32 %r4, %r2, %r3;          // &sm[4*tid]
"""


class _Capture(Machine):
    """A machine that keeps its last batch (to look at unit state after the run)."""

    def _run_batch(self, b):  # type: ignore[override]
        self.last = b
        return super()._run_batch(b)


def run(body: str, inp: np.ndarray, out_words: int, threads: int = 32, n: int = 0,
        machine: bool = False):
    prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
    launch = Launch((1,), (threads,), {"inp": inp, "out": np.zeros(out_words, dtype=np.uint32)},
                    ["inp", "out", n])
    m = _Capture(prog, launch)
    glob = m.run()
    out = glob.by_name("out").data.view(np.uint32).copy()
    return (out, m) if machine else out


X = (np.arange(256, dtype=np.uint32) * 7 + 3).astype(np.uint32)


def test_wait_group_completes_all_but_the_newest_groups():
    body = """
    add.u64 %rd6, %rd4, 128;                 // &in[32 + tid]
    add.u32 %r5, %r4, 128;                   // &sm[32*4 + 4*tid]
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.commit_group;                   // group 0
    cp.async.ca.shared.global [%r5], [%rd6], 4;
    cp.async.commit_group;                   // group 1
    ld.shared.u32 %r10, [%r4];               // no wait yet: stale
    cp.async.wait_group 1;                   // group 0 only
    ld.shared.u32 %r11, [%r4];
    ld.shared.u32 %r12, [%r5];               // group 1 still pending: stale
    cp.async.wait_group 0;
    ld.shared.u32 %r13, [%r5];
    st.global.u32 [%rd5], %r10;
    st.global.u32 [%rd5+128], %r11;
    st.global.u32 [%rd5+256], %r12;
    st.global.u32 [%rd5+384], %r13;
    """
    out = run(body, X, 128).reshape(4, 32)
    assert (out[0] == 0).all() and (out[2] == 0).all()
    np.testing.assert_array_equal(out[1], X[:32])
    np.testing.assert_array_equal(out[3], X[32:64])


def test_wait_all_commits_the_open_group():
    body = """
    shl.b32 %r5, %r1, 4;
    add.u32 %r6, %r2, %r5;                   // &sm[16*tid]
    mul.wide.u32 %rd7, %r1, 16;
    add.u64 %rd8, %rd1, %rd7;                // &in[4*tid]
    cp.async.cg.shared.global [%r6], [%rd8], 16;
    cp.async.wait_all;
    ld.shared.u32 %r10, [%r6+12];
    st.global.u32 [%rd5], %r10;
    """
    out = run(body, X, 32)
    np.testing.assert_array_equal(out, X[3:128:4])


def test_groups_are_per_thread():
    """Lanes < 16 commit one more group than the others: wait_group 1 then covers different copies."""
    body = """
    add.u64 %rd6, %rd4, 128;
    add.u32 %r5, %r4, 128;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 cp.async.ca.shared.global [%r4], [%rd4], 4;
    @%p1 cp.async.commit_group;
    cp.async.ca.shared.global [%r5], [%rd6], 4;
    cp.async.commit_group;
    cp.async.wait_group 1;
    ld.shared.u32 %r10, [%r4];
    ld.shared.u32 %r11, [%r5];
    st.global.u32 [%rd5], %r10;
    st.global.u32 [%rd5+128], %r11;
    """
    out = run(body, X, 64).reshape(2, 32)
    np.testing.assert_array_equal(out[0, :16], X[:16])
    assert (out[0, 16:] == 0).all()
    assert (out[1] == 0).all()  # the newest group of every thread is still pending


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 16), min_size=32, max_size=32))
def test_src_size_zero_fills(sizes):
    # src-size per lane comes from in[128 + tid]
    body = """
    shl.b32 %r5, %r1, 4;
    add.u32 %r6, %r2, %r5;                   // &sm[16*tid]
    mul.wide.u32 %rd7, %r1, 16;
    add.u64 %rd8, %rd1, %rd7;                // &in[4*tid]
    add.u64 %rd9, %rd4, 512;
    ld.global.u32 %r7, [%rd9];               // src-size = in[128 + tid]
    cp.async.cg.shared.global.L2::128B [%r6], [%rd8], 16, %r7;
    cp.async.commit_group;
    cp.async.wait_group 0;
    mul.wide.u32 %rd10, %r1, 16;
    add.u64 %rd11, %rd2, %rd10;
    ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r6];
    st.global.v4.u32 [%rd11], {%r10, %r11, %r12, %r13};
    """
    inp = X.copy()
    inp[128:160] = sizes
    out = run(body, inp, 128).view(np.uint8).reshape(32, 16)
    src = inp[:128].view(np.uint8).reshape(32, 16)
    want = np.where(np.arange(16)[None, :] < np.array(sizes)[:, None], src, 0)
    np.testing.assert_array_equal(out, want)


def test_src_size_zero_does_not_read_the_source():
    """Lanes with src-size 0 may name any source address (Triton's masked loads do)."""
    body = """
    mov.u64 %rd9, 16;                        // not a global allocation
    setp.lt.u32 %p1, %r1, 8;
    selp.u64 %rd10, %rd4, %rd9, %p1;
    selp.u32 %r7, 4, 0, %p1;
    mov.u32 %r8, 0x5a5a5a5a;
    st.shared.u32 [%r4], %r8;
    cp.async.ca.shared.global [%r4], [%rd10], 4, %r7;
    cp.async.wait_all;
    ld.shared.u32 %r10, [%r4];
    st.global.u32 [%rd5], %r10;
    """
    out = run(body, X, 32)
    np.testing.assert_array_equal(out[:8], X[:8])
    assert (out[8:] == 0).all()  # zero-filled, the old 0x5a5a5a5a is overwritten


def test_ignore_src_predicate_and_cache_policy():
    body = """
    and.b32 %r7, %r1, 1;
    setp.eq.u32 %p1, %r7, 1;                 // odd lanes ignore the source
    createpolicy.fractional.L2::evict_last.b64 %rd12, 1.0;
    cp.async.ca.shared.global.L2::cache_hint [%r4], [%rd4], 4, %p1, %rd12;
    cp.async.commit_group;
    cp.async.wait_group 0;
    ld.shared.u32 %r10, [%r4];
    st.global.u32 [%rd5], %r10;
    """
    out = run(body, X, 32)
    want = np.where(np.arange(32) % 2 == 1, 0, X[:32])
    np.testing.assert_array_equal(out, want)


PIPELINE = """
    // out[tid] = sum over s of in[32*s + tid], loads double-buffered with cp.async
    mov.u32 %r20, 0;                          // stage
    mov.u32 %r21, 0;                          // sum
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.commit_group;
LOOP:
    add.u32 %r22, %r20, 1;
    setp.lt.u32 %p2, %r22, %r60;
    and.b32 %r23, %r22, 1;
    shl.b32 %r24, %r23, 7;
    add.u32 %r25, %r4, %r24;                  // buffer (s+1)%2
    mul.wide.u32 %rd13, %r22, 128;
    add.u64 %rd14, %rd4, %rd13;
    @%p2 cp.async.ca.shared.global [%r25], [%rd14], 4;
    cp.async.commit_group;
    cp.async.wait_group WAITN;                // the group of stage s
    and.b32 %r26, %r20, 1;
    shl.b32 %r27, %r26, 7;
    add.u32 %r28, %r4, %r27;
    ld.shared.u32 %r29, [%r28];
    add.u32 %r21, %r21, %r29;
    mov.u32 %r20, %r22;
    @%p2 bra LOOP;
    st.global.u32 [%rd5], %r21;
"""


@pytest.mark.parametrize("stages", [1, 2, 5])
def test_double_buffered_pipeline(stages):
    out = run(PIPELINE.replace("WAITN", "1"), X, 32, n=stages)
    want = X[:32 * stages].reshape(stages, 32).sum(axis=0)
    np.testing.assert_array_equal(out, want)


def test_pipeline_with_a_missing_wait_reads_stale_data():
    """wait_group 2 leaves the current stage's group pending: the sum misses data."""
    out = run(PIPELINE.replace("WAITN", "2"), X, 32, n=4)
    want = X[:128].reshape(4, 32).sum(axis=0)
    assert (out != want).all()


def test_exit_with_pending_copies_is_recorded_and_completed():
    body = """
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    setp.ge.u32 %p1, %r1, 16;
    @%p1 exit;                               // upper half leaves with its copy pending
    cp.async.wait_all;
    add.u32 %r5, %r4, 64;
    ld.shared.u32 %r10, [%r5];               // the neighbour's (exited lane's) slot
    st.global.u32 [%rd5], %r10;
    """
    out, m = run(body, X, 32, machine=True)
    u = m.last.units["async_copy"]
    lanes = np.concatenate([lanes for _, lanes in u.exited_pending])
    np.testing.assert_array_equal(np.sort(lanes), np.arange(16, 32))
    assert all(ins.opcode == "cp" for ins, _ in u.exited_pending)
    np.testing.assert_array_equal(out[:16], X[16:32])


@pytest.mark.parametrize("line, err", [
    ("cp.async.ca.shared.global [%r4], [%rd4], 4, 8;", UndefinedBehavior),      # src-size > cp-size
    ("cp.async.ca.shared.global [%r4+2], [%rd4], 4;", UndefinedBehavior),      # misaligned destination
    ("cp.async.cg.shared.global [%r4], [%rd4], 8;", Unsupported),              # .cg is 16 bytes only
    ("cp.async.ca.shared.global [%r4+4096], [%rd4], 4;", MemoryFault),         # outside shared memory
    ("cp.async.ca.shared.global [%r4], [%rd4+4096], 4;", MemoryFault),         # outside the input buffer
    ("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sm], [%rd1, {%r1}], [bar];",
     Unsupported),
])
def test_rejections(line, err):
    with pytest.raises(err) as e:
        run(line, X, 32)
    if "tensor" in line:
        assert "CUtensorMap" in str(e.value)


# ---------------------------------------------------------------------- bulk copies (sm_90)

BULK_LOAD = """
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [bar], 1;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 256;
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [sm], [%rd1], 128, [bar];
    add.u64 %rd15, %rd1, 128;
    mov.u32 %r30, sm;
    add.u32 %r30, %r30, 128;
    @%p1 cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r30], [%rd15], 128, [bar];
    ld.shared.u32 %r10, [%r4];               // before the wait: stale
    mov.u32 %r31, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], %r31;
    @!%p2 bra WAIT;
    ld.shared.u32 %r11, [%r4];
    add.u32 %r12, %r4, 128;
    ld.shared.u32 %r13, [%r12];
    st.global.u32 [%rd5], %r10;
    st.global.u32 [%rd5+128], %r11;
    st.global.u32 [%rd5+256], %r13;
"""


def test_bulk_load_completes_tx_bytes():
    out = run(BULK_LOAD, X, 96).reshape(3, 32)
    assert (out[0] == 0).all()
    np.testing.assert_array_equal(out[1], X[:32])
    np.testing.assert_array_equal(out[2], X[32:64])


def test_bulk_store_and_reduce_to_global():
    body = """
    st.shared.u32 [%r4], %r1;                // sm[tid] = tid
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [sm], 128;
    add.u64 %rd16, %rd2, 128;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd16], [sm], 64, %rd12;
    @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd16], [sm], 128;
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    """
    out = run(body, X, 96).reshape(3, 32)
    np.testing.assert_array_equal(out[0], np.arange(32))
    want = np.arange(32) + np.where(np.arange(32) < 16, np.arange(32), 0)
    np.testing.assert_array_equal(out[1], want)


def test_bulk_size_must_be_a_multiple_of_16():
    body = BULK_LOAD.replace("[%rd1], 128, [bar]", "[%rd1], 120, [bar]")
    with pytest.raises(UndefinedBehavior, match="multiple of 16"):
        run(body, X, 96)


# ---------------------------------------------------------------------- random programs vs a queue model

_OP = st.one_of(
    st.tuples(st.just("cp"), st.integers(0, 3), st.integers(0, 7)),   # copy in[32*src + tid] -> slot
    st.tuples(st.just("commit")),
    st.tuples(st.just("wait"), st.integers(0, 3)),
    st.tuples(st.just("wait_all")),
    st.tuples(st.just("read"), st.integers(0, 3)),
)


def _model(ops) -> list[np.ndarray] | None:
    """Latest-completion oracle: a copy is written when a wait covers its group (None: undefined)."""
    smem = [np.zeros(32, dtype=np.uint32) for _ in range(4)]
    open_group: list[tuple[int, int]] = []
    groups: list[list[tuple[int, int]]] = []
    reads = []

    def finish(keep: int) -> None:
        while len(groups) > keep:
            for slot, src in groups.pop(0):
                smem[slot] = X[32 * src:32 * src + 32].copy()

    for op in ops:
        if op[0] == "cp":
            if any(slot == op[1] for slot, _ in open_group):
                return None  # two copies of one group to the same bytes: undefined
            open_group.append((op[1], op[2]))
        elif op[0] == "commit":
            groups.append(open_group)
            open_group = []
        elif op[0] == "wait":
            finish(op[1])
        elif op[0] == "wait_all":
            groups.append(open_group)
            open_group = []
            finish(0)
        else:
            reads.append(smem[op[1]].copy())
    return reads


@settings(max_examples=40, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=14))
def test_random_group_programs_match_the_queue_model(ops):
    lines, n_reads = [], 0
    for op in ops:
        if op[0] == "cp":
            lines.append(f"add.u32 %r40, %r4, {128 * op[1]};\nadd.u64 %rd20, %rd4, {128 * op[2]};\n"
                         "cp.async.ca.shared.global [%r40], [%rd20], 4;")
        elif op[0] == "commit":
            lines.append("cp.async.commit_group;")
        elif op[0] == "wait":
            lines.append(f"cp.async.wait_group {op[1]};")
        elif op[0] == "wait_all":
            lines.append("cp.async.wait_all;")
        else:
            lines.append(f"ld.shared.u32 %r41, [%r4+{128 * op[1]}];\nst.global.u32 [%rd5+{128 * n_reads}], %r41;")
            n_reads += 1
    want = _model(ops)
    if want is None:
        with pytest.raises(UndefinedBehavior, match="same group"):
            run("\n".join(lines), X, 32 * max(1, n_reads))
        return
    out = run("\n".join(lines) + "\ncp.async.wait_all;", X, 32 * max(1, n_reads)).reshape(-1, 32)
    for i, w in enumerate(want):
        np.testing.assert_array_equal(out[i], w)


@pytest.mark.parametrize("ty, np_ty", [(".f32", np.float32), (".f64", np.float64), (".noftz.f16", np.float16)])
def test_bulk_reduce_float_add(ty, np_ty):
    """cp.reduce.async.bulk .add on floats: one rounding per element, like a numpy add of that type."""
    nbytes = 128
    body = f"""
    ld.global.u32 %r10, [%rd4];
    st.shared.u32 [%r4], %r10;               // sm = in[0..31] (bit patterns)
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.add{ty} [%rd2], [sm], {nbytes};
    """
    rng = np.random.default_rng(1)
    src = rng.standard_normal(nbytes // np.dtype(np_ty).itemsize).astype(np_ty)
    dst0 = rng.standard_normal(src.size).astype(np_ty)
    inp = np.zeros(256, dtype=np.uint32)
    inp[:32] = src.view(np.uint32)
    prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
    m = Machine(prog, Launch((1,), (32,), {"inp": inp, "out": dst0.view(np.uint32).copy()}, ["inp", "out", 0]))
    got = m.run().by_name("out").data.view(np_ty)
    np.testing.assert_array_equal(got.view(np.uint8), (dst0 + src).view(np.uint8))


def test_bulk_reduce_f16_needs_noftz():
    with pytest.raises(Unsupported, match="noftz"):
        run("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%rd2], [sm], 128;", X, 32)


class _ExitHook(_Capture):
    """The exit hook this unit expects from the machine: units with `on_exit` hear of exiting lanes."""

    def _exit(self, b, g, mask):  # type: ignore[override]
        for unit in list(b.units.values()):
            hook = getattr(unit, "on_exit", None)
            if hook is not None:
                hook(b, mask & g.mask)
        return super()._exit(b, g, mask)


def test_on_exit_completes_pending_copies_at_exit():
    """With an exit hook, copies of an exited thread land at its exit even if no cp.async follows."""
    body = """
    setp.ge.u32 %p1, %r1, 16;
    @%p1 cp.async.ca.shared.global [%r4], [%rd4], 4;
    @%p1 exit;                               // lanes 16..31 leave with their copy pending
    add.u32 %r5, %r4, 64;
    ld.shared.u32 %r10, [%r5];               // lanes 0..15 read the exited lanes' slots
    st.global.u32 [%rd5], %r10;
    """
    prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
    m = _ExitHook(prog, Launch((1,), (32,), {"inp": X, "out": np.zeros(32, dtype=np.uint32)}, ["inp", "out", 0]))
    out = m.run().by_name("out").data.view(np.uint32)
    u = m.last.units["async_copy"]
    np.testing.assert_array_equal(np.concatenate([lanes for _, lanes in u.exited_pending]), np.arange(16, 32))
    np.testing.assert_array_equal(out[:16], X[16:32])


def test_unexecuted_tensor_copy_is_not_an_error():
    """A guarded-off instruction has no effect, even one the emulator cannot model."""
    body = """
    setp.eq.u32 %p1, %r1, 99;
    @%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [sm], [%rd1, {%r1}], [bar];
    st.global.u32 [%rd5], %r1;
    """
    np.testing.assert_array_equal(run(body, X, 32), np.arange(32))


def test_suite_gemm_without_its_waits_is_wrong(monkeypatch):
    """Triton's cp.async pipeline (gemm_fp16, sm_80) is right as compiled and wrong without its
    cp.async.wait_group instructions: the emulator surfaces a missing wait as wrong numbers."""
    import dataclasses
    import re

    import harness.emulate as E
    from harness.suite import all_contracts

    contract = next(c for c in all_contracts() if c.name == "gemm_fp16")
    assert E.emulate(contract, "sm_80").ok
    compiled = E.compile_contract(contract, "sm_80")
    assert "cp.async.wait_group" in compiled.ptx
    stripped = dataclasses.replace(compiled, ptx=re.sub(r"cp\.async\.wait_group\s+\d+;", "", compiled.ptx))
    monkeypatch.setattr(E, "compile_contract", lambda *a, **k: stripped)
    assert not E.emulate(contract, "sm_80").ok


BULK_STORE = """
    st.shared.u32 [%r4], %r1;                // sm[tid] = tid
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [sm], 128;
    @%p1 cp.async.bulk.commit_group;
    WAIT
    bar.sync 0;
    add.u32 %r9, %r1, 1000;
    st.shared.u32 [%r4], %r9;                // reuse the staging buffer
"""


def test_bulk_store_reads_its_source_at_the_covering_wait():
    waited = run(BULK_STORE.replace("WAIT", "@%p1 cp.async.bulk.wait_group.read 0;"), X, 32)
    np.testing.assert_array_equal(waited, np.arange(32))
    # without the .read wait the buffer is reused too early: the store sends the new bytes
    unwaited, m = run(BULK_STORE.replace("WAIT", ""), X, 32, machine=True)
    np.testing.assert_array_equal(unwaited, np.arange(32) + 1000)
    u = m.last.units["async_copy"]
    assert [(ins.opcode, lane) for ins, lane in u.unwaited_bulk] == [("cp", 0)]


def test_bulk_groups_complete_oldest_first_per_thread():
    body = """
    st.shared.u32 [%r4], %r1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    add.u64 %rd16, %rd2, 128;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [sm], 64;
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd16], [sm], 64;
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group 1;         // the first group only
    @%p1 ld.global.u32 %r10, [%rd2+4];
    @%p1 ld.global.u32 %r11, [%rd16+4];
    @%p1 cp.async.bulk.wait_group 0;
    @%p1 ld.global.u32 %r12, [%rd16+4];
    @%p1 st.global.u32 [%rd2+256], %r10;
    @%p1 st.global.u32 [%rd2+260], %r11;
    @%p1 st.global.u32 [%rd2+264], %r12;
    """
    out = run(body, X, 96)
    assert out[64:67].tolist() == [1, 0, 1]


def test_check_mode_sees_the_late_source_read_of_an_unwaited_bulk_store():
    from symexec.check import check_kernel

    def verdict(wait: str):
        prog = load_program(parse(HEADER + BULK_STORE.replace("WAIT", wait) + "\nret;\n}\n"))
        return check_kernel(prog, Launch((1,), (32,), {"inp": X.copy(), "out": np.zeros(32, np.uint32)},
                                         ["inp", "out", 0]))

    # The bulk store's source reads are live until cp.async.bulk.wait_group.read covers them
    # (9.7.9.25.6.2): reusing the staging buffer before that wait races with them; after it, and
    # with the fence.proxy.async before the hand-over, the kernel is race-free.
    assert verdict("@%p1 cp.async.bulk.wait_group.read 0;").verdict == "race_free"
    r = verdict("")
    assert r.verdict == "race", r.notes
    sites = {s.access + " " + s.instruction.split(".")[0] for s in r.findings[0].sites}
    assert sites == {"read cp", "write st"}, sites
