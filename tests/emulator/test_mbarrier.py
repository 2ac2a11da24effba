"""mbarrier objects on the emulator (PTX 9.7.13.15) with hand-written PTX.

Phases and parity, tx-count completion by bulk copies, producer/consumer warps, waits that block
instead of spinning, deadlocks, and the uses the manual leaves undefined.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptx_parser import parse
from symexec import Deadlock, Launch, UndefinedBehavior, Unsupported, load_program, run_kernel

HEADER = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 pn)
{
.reg .b64 %rd<32>; .reg .b32 %r<64>; .reg .pred %p<8>;
.shared .align 16 .b8 sm[1024];
.shared .align 8 .b64 bar;
.shared .align 8 .b64 bar2;
ld.param.u64 %rd1, [pin];
ld.param.u64 %rd2, [pout];
ld.param.u32 %r60, [pn];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.u64 %rd4, %rd1, %rd3;       // &in[tid]
mov.u32 %r61, %ctaid.x;
mov.u32 %r62, %ntid.x;
mad.lo.u32 %r63, %r61, %r62, %r1;
mul.wide.u32 %rd6, %r63, 4;
add.u64 %rd5, %rd2, %rd6;       // &out[ctaid * ntid + tid]
mov.u32 %r2, sm;
shl.b32 %r3, %r1, 2;
add.u32 %r4, %r2, %r3;          // &sm[4*tid]
shr.u32 %r5, %r1, 5;            // warp
setp.eq.u32 %p7, %r1, 0;        // thread 0
"""

X = (np.arange(512, dtype=np.uint32) * 5 + 1).astype(np.uint32)


def run(body: str, threads: int = 32, n: int = 0, out_words: int = 128, grid: int = 1) -> np.ndarray:
    prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
    launch = Launch((grid,), (threads,), {"inp": X.copy(), "out": np.zeros(out_words * grid, dtype=np.uint32)},
                    ["inp", "out", n])
    glob, _, _ = run_kernel(prog, launch)
    return glob.by_name("out").data.view(np.uint32).copy()


def test_phases_and_parity():
    """One warp, count 32: each round completes one phase; test_wait.parity of the current phase is
    False before the arrivals and True for it afterwards; arrive's state works with test_wait."""
    body = """
    @%p7 mbarrier.init.shared::cta.b64 [bar], 32;
    bar.sync 0;
    mov.u32 %r20, 0;                          // round
    mov.u32 %r21, 0;                          // bits of results
LOOP:
    and.b32 %r22, %r20, 1;                    // parity of the phase of this round
    mbarrier.test_wait.parity.shared::cta.b64 %p1, [bar], %r22;
    selp.u32 %r23, 1, 0, %p1;                 // expect 0
    mbarrier.arrive.shared::cta.b64 %rd10, [bar];
    mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd10;
    selp.u32 %r24, 2, 0, %p2;                 // expect 2
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r22;
    selp.u32 %r25, 4, 0, %p3;                 // expect 4
    or.b32 %r23, %r23, %r24;
    or.b32 %r23, %r23, %r25;
    shl.b32 %r26, %r20, 3;
    shl.b32 %r23, %r23, %r26;
    or.b32 %r21, %r21, %r23;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p4, %r20, 3;
    @%p4 bra LOOP;
    st.global.u32 [%rd5], %r21;
    """
    out = run(body)[:32]
    assert (out == 0x060606).all()


def test_pending_count_and_no_complete():
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 100;
    bar.sync 0;
    mbarrier.arrive.noComplete.shared.b64 %rd10, [bar], 2;   // lanes in order: 100, 98, ...
    mbarrier.pending_count.b64 %r10, %rd10;
    st.global.u32 [%rd5], %r10;
    """
    out = run(body)[:32]
    np.testing.assert_array_equal(out, 100 - 2 * np.arange(32))


def test_arrivals_beyond_a_phase_go_to_the_next_one():
    """count 8 and 32 arriving lanes: four phases complete within one instruction."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 8;
    bar.sync 0;
    mbarrier.arrive.shared.b64 %rd10, [bar];
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd10;    // every state names a completed phase...
    selp.u32 %r10, 1, 0, %p1;
    mov.u32 %r11, 0;
    mbarrier.test_wait.parity.shared.b64 %p2, [bar], %r11;   // phase 4 is current: parity 0 incomplete
    selp.u32 %r12, 2, 0, %p2;
    or.b32 %r10, %r10, %r12;
    st.global.u32 [%rd5], %r10;
    """
    with pytest.raises(UndefinedBehavior, match="neither the current"):
        run(body)  # ...but only the last one is the immediately preceding phase
    out = run(body.replace("mbarrier.test_wait.shared.b64 %p1, [bar], %rd10;", "setp.eq.u32 %p1, %r1, 99;"))
    assert (out[:32] == 0).all()


PRODUCER_CONSUMER = """
    @%p7 mbarrier.init.shared::cta.b64 [bar], 32;
    @%p7 mbarrier.init.shared::cta.b64 [bar2], 96;
    bar.sync 0;
    mov.u32 %r20, 0;                          // round
    mov.u32 %r30, 0;                          // consumer sum
ROUND:
    and.b32 %r22, %r20, 1;
    setp.eq.u32 %p1, %r5, 0;
    @%p1 bra PRODUCER;
    // warps 1..3 consume (they run first: the fall-through path is scheduled first)
FULL:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r22, 1000;
    @!%p3 bra FULL;
    and.b32 %r26, %r1, 31;
    shl.b32 %r27, %r26, 2;
    add.u32 %r28, %r2, %r27;
    ld.shared.u32 %r29, [%r28];
    add.u32 %r30, %r30, %r29;
    mbarrier.arrive.shared::cta.b64 _, [bar2];
    bra.uni NEXT;
PRODUCER:
    // warp 0 produces sm[0..31] for this round, then arrives on bar
    shl.b32 %r23, %r20, 5;
    add.u32 %r24, %r23, %r1;
    mul.wide.u32 %rd11, %r24, 4;
    add.u64 %rd12, %rd1, %rd11;
    ld.global.u32 %r25, [%rd12];
    st.shared.u32 [%r4], %r25;
    mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];
    // and waits until the consumers have read it (bar2) before overwriting
EMPTY:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar2], %r22;
    @!%p2 bra EMPTY;
NEXT:
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p4, %r20, %r60;
    @%p4 bra ROUND;
    st.global.u32 [%rd5], %r30;
"""


@pytest.mark.parametrize("grid", [1, 3])
def test_producer_consumer_across_warps(grid):
    rounds = 4
    out = run(PRODUCER_CONSUMER, threads=128, n=rounds, grid=grid).reshape(grid, 128)
    want = X[:32 * rounds].reshape(rounds, 32).sum(axis=0)
    for c in range(grid):
        assert (out[c, :32] == 0).all()
        for w in (1, 2, 3):
            np.testing.assert_array_equal(out[c, 32 * w:32 * (w + 1)], want)


def test_consumer_without_the_wait_reads_stale_data():
    """Same kernel, but the consumers skip their wait: they read before the producer wrote."""
    body = PRODUCER_CONSUMER.replace("@!%p3 bra FULL;", "").replace(
        "mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r22, 1000;", "")
    out = run(body, threads=128, n=1).reshape(128)
    assert (out[32:] == 0).all()


def test_a_wait_that_can_never_complete_is_a_deadlock():
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 33;   // one arrival more than there are threads
    bar.sync 0;
    mbarrier.arrive.shared.b64 %rd10, [bar];
WAIT:
    mbarrier.try_wait.shared.b64 %p1, [bar], %rd10;
    @!%p1 bra WAIT;
    """
    with pytest.raises(Deadlock, match=r"mbarrier at shared 0x[0-9a-f]+ .*1 arrival\(s\) pending"):
        run(body)


def test_a_poll_that_is_not_a_spin_lets_the_thread_go_on():
    """test_wait False, then the thread itself arrives: blocking it forever would be wrong."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 32;
    bar.sync 0;
    mov.u32 %r20, 0;
    mbarrier.test_wait.parity.shared.b64 %p1, [bar], %r20;
    selp.u32 %r10, 1, 0, %p1;
    mbarrier.arrive.shared.b64 _, [bar];
WAIT:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], %r20;
    @!%p2 bra WAIT;
    selp.u32 %r11, 2, 0, %p2;
    or.b32 %r10, %r10, %r11;
    st.global.u32 [%rd5], %r10;
    """
    assert (run(body)[:32] == 2).all()


def test_arrive_drop_lowers_the_expected_count():
    """Warp 1 drops out after phase 0; warp 0 alone completes phases 1 and 2."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 64;
    bar.sync 0;
    setp.eq.u32 %p1, %r5, 1;
    @%p1 mbarrier.arrive_drop.shared.b64 _, [bar];
    @%p1 exit;
    mov.u32 %r20, 0;
LOOP:
    and.b32 %r22, %r20, 1;
    mbarrier.arrive.shared.b64 _, [bar];
WAIT:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], %r22;
    @!%p2 bra WAIT;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p3, %r20, 3;
    @%p3 bra LOOP;
    st.global.u32 [%rd5], %r20;
    """
    out = run(body, threads=64)
    assert (out[:32] == 3).all()


def test_tx_count_completion_by_explicit_complete_tx():
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 1;
    bar.sync 0;
    @%p7 mbarrier.expect_tx.relaxed.cta.shared.b64 [bar], 64;
    @%p7 mbarrier.arrive.shared.b64 _, [bar];
    mov.u32 %r20, 0;
    mbarrier.test_wait.parity.shared.b64 %p1, [bar], %r20;   // arrivals done, 64 bytes outstanding
    selp.u32 %r10, 1, 0, %p1;
    @%p7 mbarrier.complete_tx.shared.b64 [bar], 48;
    @%p7 mbarrier.complete_tx.shared.b64 [bar], 16;
    bar.sync 0;
    mbarrier.test_wait.parity.shared.b64 %p2, [bar], %r20;
    selp.u32 %r11, 2, 0, %p2;
    or.b32 %r10, %r10, %r11;
    st.global.u32 [%rd5], %r10;
    """
    assert (run(body)[:32] == 2).all()


def test_bulk_copy_bytes_land_at_phase_completion():
    """Two bulk copies of 64 bytes complete the 128 expected bytes; a third copy issued in the same
    phase belongs to the next one (its bytes land only when phase 1 completes)."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 1;
    bar.sync 0;
    add.u64 %rd13, %rd1, 64;
    add.u64 %rd14, %rd1, 128;
    mov.u32 %r30, sm;
    @%p7 mbarrier.arrive.expect_tx.shared.b64 _, [bar], 128;
    @%p7 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r30], [%rd1], 64, [bar];
    @%p7 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r30+64], [%rd13], 64, [bar];
    @%p7 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r30+128], [%rd14], 64, [bar];
    mov.u32 %r20, 0;
W0:
    mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r20;
    @!%p1 bra W0;
    ld.shared.u32 %r10, [%r4];                 // sm[tid]: bytes 0..127 landed, 128..191 not yet
    st.global.u32 [%rd5], %r10;
    bar.sync 0;
    @%p7 mbarrier.arrive.expect_tx.shared.b64 _, [bar], 64;
    mov.u32 %r20, 1;
W1:
    mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r20;
    @!%p1 bra W1;
    ld.shared.u32 %r11, [%r4];
    st.global.u32 [%rd5+128], %r11;
    """
    out = run(body).reshape(-1)
    np.testing.assert_array_equal(out[:32], np.where(np.arange(32) < 32, X[:32], 0))
    np.testing.assert_array_equal(out[32:64], X[:32])
    # before phase 1 completed, bytes 128..191 (words 32..47) were still the old zeros
    body2 = body.replace("ld.shared.u32 %r10, [%r4];", "ld.shared.u32 %r10, [%r4+128];")
    out2 = run(body2).reshape(-1)
    assert (out2[:16] == 0).all()


def test_cp_async_mbarrier_arrive_noinc():
    """init 64 = 32 thread arrivals + 32 .noinc asynchronous arrivals from cp.async completion."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 64;
    bar.sync 0;
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.mbarrier.arrive.noinc.shared.b64 [bar];
    ld.shared.u32 %r10, [%r4];                 // not waited for: stale
    mbarrier.arrive.shared.b64 %rd10, [bar];
WAIT:
    mbarrier.try_wait.shared.b64 %p1, [bar], %rd10;
    @!%p1 bra WAIT;
    ld.shared.u32 %r11, [%r4];
    st.global.u32 [%rd5], %r10;
    st.global.u32 [%rd5+128], %r11;
    """
    out = run(body)
    assert (out[:32] == 0).all()
    np.testing.assert_array_equal(out[32:64], X[:32])


def test_cp_async_mbarrier_arrive_counts_only_earlier_copies():
    """Without .noinc (net zero arrivals); a copy issued after the arrive is not covered."""
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 32;
    bar.sync 0;
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.mbarrier.arrive.shared.b64 [bar];
    add.u64 %rd6, %rd4, 128;
    add.u32 %r6, %r4, 128;
    cp.async.ca.shared.global [%r6], [%rd6], 4;
    mbarrier.arrive.shared.b64 %rd10, [bar];
WAIT:
    mbarrier.try_wait.shared.b64 %p1, [bar], %rd10;
    @!%p1 bra WAIT;
    ld.shared.u32 %r10, [%r4];
    ld.shared.u32 %r11, [%r6];
    st.global.u32 [%rd5], %r10;
    st.global.u32 [%rd5+128], %r11;
    cp.async.wait_all;
    """
    out = run(body)
    np.testing.assert_array_equal(out[:32], X[:32])
    assert (out[32:64] == 0).all()


def test_inval_then_init_again():
    body = """
    @%p7 mbarrier.init.shared.b64 [bar], 1;
    @%p7 mbarrier.inval.shared.b64 [bar];
    @%p7 mbarrier.init.shared.b64 [bar], 2;
    @%p7 mbarrier.arrive.noComplete.shared.b64 %rd10, [bar], 1;
    @%p7 mbarrier.pending_count.b64 %r10, %rd10;
    @%p7 st.global.u32 [%rd5], %r10;
    """
    assert run(body)[0] == 2


@pytest.mark.parametrize("body, match", [
    ("@%p7 mbarrier.init.shared.b64 [bar], 1;\n@%p7 mbarrier.init.shared.b64 [bar], 1;", "already holds"),
    ("mbarrier.init.shared.b64 [bar], 1;", "already holds"),              # every lane inits the same object
    ("mbarrier.arrive.shared.b64 _, [bar];", "no initialised mbarrier"),
    ("mov.u32 %r9, 0;\nmbarrier.try_wait.parity.shared.b64 %p1, [bar], %r9;", "no initialised mbarrier"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 0;", r"outside \[1"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 1;\nmov.u32 %r9, 2;\n"
     "@%p7 mbarrier.test_wait.parity.shared.b64 %p1, [bar], %r9;", "neither 0 nor 1"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 1;\n@%p7 mbarrier.arrive.shared.b64 %rd10, [bar];\n"
     "@%p7 mbarrier.arrive.shared.b64 %rd11, [bar];\n@%p7 mbarrier.arrive.shared.b64 %rd12, [bar];\n"
     "@%p7 mbarrier.test_wait.shared.b64 %p1, [bar], %rd10;", "neither the current"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 2;\n@%p7 mbarrier.arrive.noComplete.shared.b64 %rd10, [bar], 2;",
     "noComplete"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 2;\n@%p7 mbarrier.arrive.shared.b64 %rd10, [bar], 3;", "pending"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 2;\n@%p7 mbarrier.arrive.shared.b64 %rd10, [bar];\n"
     "@%p7 mbarrier.pending_count.b64 %r10, %rd10;", "noComplete"),
    ("@%p7 mbarrier.init.shared.b64 [bar], 1;\nmov.u64 %rd10, 77;\n"
     "@%p7 mbarrier.test_wait.shared.b64 %p1, [bar], %rd10;", "not returned by an mbarrier.arrive"),
    ("mov.u32 %r9, sm;\nadd.u32 %r9, %r9, 4;\n@%p7 mbarrier.init.shared.b64 [%r9], 1;", "8-byte aligned"),
    ("mov.u64 %rd9, 4096;\n@%p7 mbarrier.init.b64 [%rd9], 1;", "not in the .shared::cta window"),
])
def test_undefined_uses(body, match):
    with pytest.raises(UndefinedBehavior, match=match):
        run(body)


def test_generic_address_form():
    body = """
    cvta.shared.u64 %rd20, bar;
    @%p7 mbarrier.init.b64 [%rd20], 32;
    bar.sync 0;
    mbarrier.arrive.b64 %rd10, [%rd20];
    mbarrier.test_wait.b64 %p1, [%rd20], %rd10;
    selp.u32 %r10, 1, 0, %p1;
    st.global.u32 [%rd5], %r10;
    """
    assert (run(body)[:32] == 1).all()


def test_unknown_modifier_is_unsupported():
    with pytest.raises(Unsupported):
        run("@%p7 mbarrier.init.shared.b64.weird [bar], 1;")


def test_waits_on_a_cluster_address_are_not_a_form():
    with pytest.raises(Unsupported, match="shared::cluster"):
        run("mov.u32 %r9, 0;\nmbarrier.try_wait.parity.shared::cluster.b64 %p1, [bar], %r9;")


# ---------------------------------------------------------------------- check mode (happens-before)


def _verdict(body: str, threads: int, n: int = 2) -> str:
    from symexec.check import check_kernel

    prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
    launch = Launch((1,), (threads,), {"inp": X.copy(), "out": np.zeros(128, dtype=np.uint32)}, ["inp", "out", n])
    return check_kernel(prog, launch).verdict


def test_check_mode_orders_producer_and_consumers_through_the_phases():
    assert _verdict(PRODUCER_CONSUMER, 128) == "race_free"
    no_wait = PRODUCER_CONSUMER.replace("@!%p3 bra FULL;", "").replace(
        "mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r22, 1000;", "")
    assert _verdict(no_wait, 128) == "race"


def test_check_mode_relaxed_arrive_does_not_order():
    relaxed = PRODUCER_CONSUMER.replace("mbarrier.arrive.release.cta.shared::cta.b64 _, [bar];",
                                        "mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [bar];")
    assert _verdict(relaxed, 128) == "race"


BULK_CONSUMERS = """
    @%p7 mbarrier.init.shared.b64 [bar], 1;
    bar.sync 0;
    mov.u32 %r30, sm;
    @%p7 mbarrier.arrive.expect_tx.shared.b64 _, [bar], 128;
    @%p7 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r30], [%rd1], 128, [bar];
    mov.u32 %r20, 0;
W0:
    mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r20;
    @!%p1 bra W0;
    and.b32 %r8, %r1, 31;
    shl.b32 %r8, %r8, 2;
    add.u32 %r8, %r8, %r30;
    ld.shared.u32 %r10, [%r8];
    st.global.u32 [%rd5], %r10;
"""


def test_check_mode_bulk_copy_bytes_are_ordered_before_the_waiters():
    assert _verdict(BULK_CONSUMERS, 64) == "race_free"
    assert _verdict(BULK_CONSUMERS.replace("@!%p1 bra W0;", "").replace(
        "mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r20;", ""), 64) != "race_free"


def test_arrivals_into_a_phase_nobody_saw_complete_are_recorded():
    """9.7.13.15.4: some wait must observe each completed phase before the next phase's arrive-ons."""
    from symexec.machine import Machine

    class Capture(Machine):
        def _run_batch(self, b):  # type: ignore[override]
            self.last = b
            return super()._run_batch(b)

    def unobserved(body: str) -> list:
        prog = load_program(parse(HEADER + body + "\nret;\n}\n"))
        m = Capture(prog, Launch((1,), (32,), {"inp": X.copy(), "out": np.zeros(32, np.uint32)}, ["inp", "out", 0]))
        m.run()
        return [(ins.opcode, phase) for ins, _, phase in m.last.units["mbarrier"].unobserved]

    waited = """
    @%p7 mbarrier.init.shared.b64 [bar], 32;
    bar.sync 0;
    mov.u32 %r20, 0;
LOOP:
    and.b32 %r22, %r20, 1;
    mbarrier.arrive.shared.b64 _, [bar];
W:
    mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r22;
    @!%p1 bra W;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p2, %r20, 3;
    @%p2 bra LOOP;
    """
    assert unobserved(waited) == []
    assert unobserved(waited.replace("@!%p1 bra W;", "").replace(
        "mbarrier.try_wait.parity.shared.b64 %p1, [bar], %r22;", "")) == [("mbarrier", 0), ("mbarrier", 1)]
