"""Loop summaries: the later iterations of a loop proved to add nothing new, and not run.

A GEMM's K loop or an attention kernel's KV loop repeats the same work at shifted global addresses:
after the pipeline fills, the state at the head of the loop repeats with a period of P iterations
(a cp.async pipeline of S stages: P = S), up to registers that advance by a fixed amount per
period (pointers, counters) and to values that depend on data. Running every iteration costs time
proportional to the problem size; this module proves, during the run of the representative CTAs
of the symbolic grid (grid.py), that the iterations it skips would find nothing the run does not
already cover, then jumps over them.

The proof (`LoopSummariser.on_back_edge`, at the loop head, when one group holds every live thread):

1. Period: the canonical state (`Canon`) at iteration boundaries k-P and k is equal, and every
   live register (one read before it is written on some path from the head, `live_in`) that does
   not depend on data advanced by the same amount D per lane from k-2P to k-P as from k-P to k.
   D is a guess that 3 proves (by induction over the periods), so it may come from less history: for P >= 3
   from the boundary P back (`_deltas_early`), for P = 1 from the loop's first two boundaries
   (`_deltas_first`, the proof then started at the second without comparing states: 3 compares them), or at
   the loop's first boundary from its code (`_deltas_static`: each such register's one write in the loop adds a
   constant or a register the loop does not write). Such
   a guess that fails is not final, keeps the history and costs no attempt. With P >= 3 guessed from one
   period of history, the proof also starts, speculatively, at the first boundary where P is guessed, before
   any repetition is seen; one that does not hold there leaves no trace.
2. One period run as a function of the period index t (grid_shadow.LoopProof): each such register
   starts as its value at k plus t*D, every other one as its value; the shadow follows the exact
   bit-vector expressions of t (and of %ctaid). It records every guard that depends on t (branches,
   exits, barriers, memory accesses: "decisions") and fails if a shared-memory address or a divisor
   depends on t, or if the loop writes global memory at an address that depends on t.
3. At boundary k+P the proof holds if: the canonical state equals the one at k (so the clocks,
   the race detector's bytes, the units and the shadows repeat, relative to the epochs and the
   value numbers, which are renamed); every live register that changed is, as an expression, its
   value at k plus (t+1)*D (the structure is unchanged and its per-lane offset grew by D: closure
   under one period); every other register's expression does not involve t and its value repeats.
4. Decisions: the first period index T >= 1 at which some decision differs (on any lane) from
   period 0 is found by evaluating the decisions exactly (`grid_expr.evaluate`) for t = 1, 2, ...
   Periods 0..T-1 then run the same instructions with the same masks, synchronise the same way and
   access the same shared bytes; their global accesses are the recorded expressions at t in [0, T).
5. Skip: registers that depend on t are set to their value at the end of period T-1 (t = T-1
   substituted, evaluated per lane), and the run goes on at period T. Nothing else changes: by 3
   the state at the start of period T is the state now, with every epoch shifted by the same amount
   per column and the value numbers renamed, which no later decision can tell apart.

What the skipped periods would have checked is covered as follows: races within a CTA on shared
memory and tensor memory, barrier use, deadlocks and undefined behaviour repeat period after period
(the same state and the same decisions), so period 0 checked them; global accesses of periods
0..T-1 are access classes with t in [0, T) in the symbolic grid's Z3 queries (bounds, races between
CTAs, and between two threads of one CTA, the executed CTAs included). The verdict prints which
loops were summarised and over which iterations (an assumption-free argument, not an assumption).

Asynchronous state counts as state (`Canon`): cp.async groups and bulk copies in flight, wgmma
groups pending at the head (a wait_group 1 pipeline keeps one), mbarrier objects (the phase by its
parity when every wait names a parity, 9.7.13.15.16; the copies in flight on them with their
destination bytes and clocks) and the clocks' pending phases relative to each object's phase. A
pipeline of S stages whose barrier parities flip every S iterations repeats with a period of 2S or
less (PERIOD_MAX). Units of higher layers give their own canonical state (`UnitState.loop_state`,
with `Canon.op_label`/`memory`/`op_live` as helpers): the tcgen05 unit's is tcgen05/loopstate.py
(tensor-memory cells by value number, allocation, queued and pending operations); what a barrier's
phase completion will run is compared by its `loop_key` (tcgen05.commit's pending completion).

A finding (a race in every iteration, say) does not keep a loop from being summarised: the race
detector's found sites are part of the canonical state, so the skipped periods would find those
sites again and nothing new (each is reported once, its byte-pair count covering the iterations
run), and what comes after the loop (a later deadlock, 582ee26) is still run. The symbolic grid's
proof, though, does not run once a representative CTA has a finding, so the skipped periods' global
accesses are checked here (`_reads_checked`): the loop must not write global memory, its reads at
every skipped t stay in their buffers and apart from the run's global writes before it, and a write
after it to the bytes they read voids the summary (`CheckState.read_footprints`, run again in full).

Global writes of the skipped periods are not made: the run keeps them per byte (`_skipped_writes`,
state.SkippedWrites: the writing thread and its epoch), and their bytes' shadows get fresh numbers carrying
STALE (shadow.py). A later plain ld or st of those bytes by a thread of the writer's CTA ordered after the
writer keeps the summary (the race detector never saw the writes: hb.py orders the access after them, PTX
8.9.4); the value a read gives is the run's, not the kernel's, so from then on every read of global, local
or tensor memory carries STALE (`CheckState.stale_reads`), and exec.py's audit voids the run's summaries
when a STALE value reaches anything but lane-local arithmetic, a plain store's data or the value shfl.sync
moves (an address, a guard, a divisor, a barrier or mbarrier operand...). Any other access of the bytes
(another CTA, a thread not ordered after the writer, an atomic, an asynchronous copy, ld.global.nc, ldu)
voids them too. Void: the run is made again without summaries (grid.py `_represent`). A later summarised
loop's skipped reads of such bytes are checked at its proof (`_skipped_reads`): plain ld of a thread ordered
after the writer now (clocks only grow), and bytes the loop itself writes in skipped periods read back only
by their writer, with STALE already on every read (so period 0 audited what the skipped ones do).

Nested loops: the back edge of an inner loop inside the period followed does not end the proof when it is
decided alike in every CTA and period (unguarded, or a guard independent of %ctaid, the sizes, t and data:
`_inner_differs`), while the shadow keeps no trip counts. The inner loop is then summarised inside the period
(`_nested`, period P <= PERIOD_MAX: 1 guessed from its first two boundaries, or P and D from the loop's last
summary, an earlier outer iteration's): its proof is made at t = 0 with its own iteration u (a second leaf; u
counts inner periods of P iterations, each followed one as recorded in the checked one), every inner
decision, held register and global access at each inner period u < U it skips is handed to the outer proof
(`Shadow.end_inner`), whose decision scan bounds T over all of them, and the skipped inner accesses keep both
leaves, each over its own range, in the symbolic grid's queries. Where that proof does not hold (or the inner
loop writes global memory, decides on %ctaid, the run has a finding, the sizes are symbolic) the inner loop
runs in full inside the period, as before. A back edge whose loop holds the proof's head (the same loop's latch block laid out before its
header) is a branch of the period like any other; an exit on %ctaid there (the latch falling through into
the header) is the loop's back edge for the CTAs that leave earlier and share the run (`_leaves_after`).

Anything outside this (a loop with several groups, a unit whose state is not canonicalised, a finding with
global writes or reads these checks refuse) is not summarised: the loop runs iteration by iteration, as
without this module, and the report says why in a note.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.bitops import PRMT_MODES, prmt_source_bytes

from ..events import Buffer, MemSpace, SyncKind
from ..paged import PAGE
from ..wgmma import parse_spec
from .grid_expr import TOP, K, Sv, evaluate, leaf_keys, leaves, replace_leaf, simplify, substitute
from .grid_shadow import Decision, Shadow, step_key, uses_t
from .hb import SLOTS, Kind
from .shadow import DATA, STALE, key_of, mix
from .state import READ, CheckState, SkippedWrites, plain_access

PERIOD_MAX = 12  # longest period of iterations looked for (3 stages x 2 barriers of alternating parity: 12)
# shortest period guessed from one period of history (`_deltas_early`); for p <= 2 the full history costs at most
# 4 boundaries more, and starting such loops earlier changed which CTAs leave before the summary (grid.py
# `_trip_patterns`): a period-2 case of tests/check/test_grid.py fell back to enumeration (not investigated)
EARLY_PERIOD_MIN = 3
MAX_ATTEMPTS = 4  # proofs per loop head that fail (one that holds does not count: an outer loop's next
# iteration enters the inner loop afresh, and its proof is as likely to hold as the last one)
SCAN_LIMIT = 1 << 20  # periods searched for the first one whose decisions differ
FIRST_SCAN = 1 << 12  # how far every decision is scanned before any is scanned further (`_first_change`)
NEST_FLAT_MAX = 1 << 14  # inner decisions and reads x inner periods handed to the outer proof (`Shadow.end_inner`)
NONE = np.int64(-(1 << 62))  # a clock entry that knows nothing of its column


@dataclass
class Summary:
    """A loop summarised: `skipped` iterations (of period `period`) not run, from iteration `first`."""

    head_pc: int
    period: int
    first: int
    skipped: int
    ident: int
    with_finding: bool = False  # summarised although the run already had a finding (`_reads_checked`)
    inside: int = -1  # a nested summary (`_nested`): the head of the outer loop whose proof period held it


@dataclass
class _Boundary:
    arrival: int
    regs: dict[str, np.ndarray]
    canon: tuple | None  # None: not taken (no period's registers advanced evenly there, or `early` matched none)
    early: tuple  # Canon.early_key: a cheap part of the canonical state, compared first


@dataclass
class _Attempt:
    head: int
    start: int  # arrival index of the proof's first boundary
    period: int
    ident: int
    base: dict[str, np.ndarray]  # live registers' values at the start
    deltas: dict[str, np.ndarray]
    begun: dict[str, object]  # the shadow's state of the changing registers at the start (with t)
    canon: tuple
    async_ops: int
    early: bool = False  # D guessed by `_deltas_early`
    held: dict[str, object] = field(default_factory=dict)
    latch: int = -1  # the back edge whose arrival started it  # the shadow's state of the other live registers at the start
    speculative: bool = False  # started at an anchor, no repetition seen yet (`on_back_edge`): if it does not hold,
    # the run goes on as if it had not been tried
    first: bool = False  # D guessed by `_deltas_first` (period 1, from the loop's first two boundaries)
    static: bool = False  # D read from the loop's code at its first boundary (`_deltas_static`; `first` is set too)
    recomputed: frozenset[str] = frozenset()  # of `deltas`: begun as recomputed every period (`_recomputed`)
    retry: bool = False  # a nested proof guessed from an earlier summary (`_nested`), made once more where it fails
    late: int = 0  # a nested proof: the periods after its entry's first boundary at which it began (`_Steps.late`)


@dataclass(frozen=True)
class _Steps:
    """A loop's last summary (`_finish`, `_finish_inner`): its period and each stepped register's change D per period,
    the guess a nested proof of the same loop starts from (`_nested`)."""

    period: int
    deltas: dict[str, np.ndarray]
    late: int = 0  # of a nested summary: the periods after its entry's first boundary at which its proof began


@dataclass(frozen=True)
class _Held:
    """A live register whose value at the loop head is a function of t (`expr`, the shadow's, after the period)
    that must keep its value at t = 0 (`value`, per lane; `lanes`: the live ones) over the summarised periods:
    scanned with the loop's decisions (`_first_change`)."""

    pc: int
    expr: tuple
    lanes: np.ndarray
    value: np.ndarray


@dataclass
class LoopSummariser:
    """Proves and skips loop periods in one check run (the symbolic grid's representative batch)."""

    prog: object
    state: CheckState
    shadow: Shadow
    summaries: list[Summary] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._history: dict[int, list[_Boundary]] = {}
        self._arrivals: dict[int, int] = {}
        self._attempts: dict[int, int] = {}
        self._live: dict[int, set[str]] = {}
        self._proof: _Attempt | None = None
        self._ident = 0
        self._early_tried: set[int] = set()  # heads where a proof from `_deltas_early` failed
        self._first_tried: set[int] = set()  # heads where a proof from `_deltas_first` failed
        self._static_tried: set[int] = set()  # heads where a proof from `_deltas_static` failed
        self._first_notes: dict[int, str] = {}  # why it failed, per head (a note only if never summarised)
        self._resume = False  # a proof from `_deltas_first` failed at this boundary: it is recorded as any other
        self._inner: _Attempt | None = None  # an inner loop's period followed inside the proof's (`_nested`)
        self._nest_hist: dict[int, list[_Boundary]] = {}  # inner loops' boundaries inside the proof's period
        self._nest_failed: dict[int, int] = {}  # nested proofs per inner head that did not hold
        # inner heads summarised in the outer period followed: the iterations after the skipped ones decide otherwise
        # (the loop ends in the next period), so no proof is tried there again (each such proof failed and counted
        # against MAX_ATTEMPTS); a second entry of the same loop in one outer period runs in full
        self._nest_done: set[int] = set()
        self._inner_pre: dict[str, object] = {}  # the shadow's state of the inner loop's stepped registers before it
        self._held_steps: dict[int, _Steps] = {}  # per head: the period and D of its last summary (`_nested`)
        self._steps_cache: dict[tuple[int, int], dict[str, tuple | None]] = {}  # `_steps` per back edge
        self._free: dict[tuple[int, int], frozenset[str]] = {}  # per back edge: its loop's `_recomputed` live registers

    # ------------------------------------------------------------------ the machine's hook
    def on_back_edge(self, b, g, ins: A.Instruction, pc: int) -> None:
        head = g.pc
        # A register-only region (a data-dependent choice between paths with no memory or synchronisation
        # effect, __nv_logf's slow path say) whose paths both jump to the head reconverges there: the machine
        # ends it when it next steps the group (machine.py `_step_group`), the shadow when it next sees the
        # head; nothing runs in between, so it ends here already (else such a loop is never summarised)
        while g.ctl and g.ctl[-1] == head:
            g.ctl = g.ctl[:-1]
        self.shadow.reconverge_at(head, g.mask)
        k = self._arrivals[head] = self._arrivals.get(head, 0) + 1
        proof = self._proof
        if proof is not None and head != proof.head and proof.latch >= 0 \
                and pc not in b.prog.loop_body(proof.head, proof.latch):
            # the back edge of a loop after the proof's (outside its natural loop): the proof's loop ended within
            # the period followed, which ran concretely, as t = 0 (as `finish` at the end of the run), and this back
            # edge is recorded as any other (a loop of up to 4 iterations, whose proof started at its third with a
            # guess from its first two boundaries, kept the K loop after it from being summarised at all)
            self._abandon("the loop ended within the period followed")
            self._resume = False
            proof = None
        if self._inner is not None and head != self._inner.head:
            self._abandon_inner("the loop ended within the period followed")
        if proof is not None:
            if head != proof.head:
                # a back edge whose loop holds the proof's head (a second head of the same loop: a latch block laid
                # out before the header, as Triton's outer loops are) is one of this loop's branches, recorded by
                # the shadow like any other; one of an inner loop must be decided alike in every CTA and period
                if self._inner is not None:  # the inner period's own back edge (a decision of it: `_nested`)
                    self._nested(b, g, ins, pc, head, k)
                    return
                why = self._inner_differs(b, ins) if head in b.prog.loop_headers \
                    and not self._same_loop(b.prog, proof, head, pc) else None
                if why is None and head in b.prog.loop_headers and not self._same_loop(b.prog, proof, head, pc):
                    self._nested(b, g, ins, pc, head, k)
                    return
                if why is not None:
                    # final: that loop's own head is where a proof can hold (forgetting_attention: the latch block
                    # of its loops is jumped back to, the head is fallen into after it; four attempts there cost 16
                    # iterations run in full); the proof attempts at that head go on
                    self._abandon(f"another loop (head at {self._where(head)}) runs inside the period ({why})",
                                  final=True)
                    self._resume = False
                # else: a backward jump that closes no loop (code laid out after its join): a branch
                # like any other, its guard recorded by the shadow
                return
            if k != proof.start + proof.period:
                if proof.speculative:  # its boundaries are kept as without it, should it not hold
                    if self._ineligible(b, g, proving=True) is not None:
                        self._history.pop(head, None)
                    else:
                        self._snapshot(b, head, k)
                return
            self._resume = False
            held = len(self.summaries)
            self._finish(b, g, k)
            if self._resume:  # a failed first-boundaries guess: this boundary is recorded as any other, below
                self._resume = False
            elif not proof.speculative or len(self.summaries) > held:
                return
            # a speculative proof that did not hold: this boundary is taken as without it, below
        why = self._ineligible(b, g)
        if why is not None:
            self._history.pop(head, None)
            return
        if self._attempts.get(head, 0) >= MAX_ATTEMPTS:
            return
        live = self._live_in(b.prog, head)
        needed = self._wgmma_needed(b.prog, head)
        snap, hist = self._snapshot(b, head, k)
        # the registers first: the canonical state costs far more. A period p's change per period D is taken
        # from the boundaries p and 2p back where they advance evenly (`_deltas`); while the history is
        # shorter than 2p (a period of 12, lcm of a 3-stage ring and barriers of alternating parity: 24
        # iterations), from the boundary p back alone where each register repeats or moves linearly
        # (`_deltas_early`). D is a guess either way: the proof (closure, 3 above) decides, and an early guess
        # that failed is not made again at this head (it would cost attempts, MAX_ATTEMPTS)
        even = {}
        early_ok = head not in self._early_tried
        # a period-1 loop proved from its second or third boundary (below) only where its back edge is taken alike in
        # every CTA: one on %ctaid, the sizes or data starts as on main (`_trip_patterns` in grid.py reads which
        # CTAs leave before the summary: starting earlier made period-2 early leavers fall back to enumeration)
        soon = self._uniform_back_edge(b, ins)
        free = self._free.get((head, pc))
        if free is None:
            free = self._free[(head, pc)] = _recomputed(b.prog, head, pc) & frozenset(live)
        for p in range(1, PERIOD_MAX + 1):
            if len(hist) <= p:
                break
            if snap.arrival - hist[-1 - p].arrival != p:
                continue
            if len(hist) > 2 * p:
                a, m = hist[-1 - 2 * p], hist[-1 - p]
                deltas = self._deltas(b, a, m, snap, free) if snap.arrival - a.arrival == 2 * p else None
            elif p == 1 and len(hist) == 2:
                deltas = self._deltas_first(b, hist[-2], snap) if soon and head not in self._first_tried else None
            else:
                deltas = self._deltas_early(b, hist, p, free) if early_ok and p >= EARLY_PERIOD_MIN else None
            if deltas is not None:
                even[p] = self._with_free(b, snap, deltas, free)
        if len(hist) == 1 and soon and head not in self._static_tried:
            # the loop's first boundary: a period-1 D read from its code (`_deltas_static`), the proof started here,
            # one boundary before `_deltas_first` can guess (dion_update: its outer loops' latch block is the head,
            # first reached after outer iteration 0, so their proofs followed outer iteration 2; now 1, with the
            # inner loop in it summarised). A guess like the others: the closure and the state one period on
            # decide, and one that fails leaves the history and the next boundary's guesses as without it
            deltas = self._deltas_static(b, head, pc, snap)
            if deltas is not None:
                snap.canon = Canon(b, self.state, live, needed).key
                self._start(b, head, k, 1, snap, deltas, first=True, static=True, latch=pc)
                return
        # then the parts of the canonical state that need no ranking (Canon.early_key, taken at every
        # boundary): the full state (ranking every epoch and race-detector record, ~0.4-1.5 s a boundary
        # for attention_tma on sm_90a, where it never repeats) is taken only where they equal those of
        # some boundary up to PERIOD_MAX back. Full states can be equal only where early parts are
        if not any(h.early == snap.early for h in hist[-1 - PERIOD_MAX:-1]):
            return
        # and only where it can be compared now (some period's registers advance evenly and the boundary p back
        # has a full state), or as an anchor for a later comparison: where some period is even and no boundary up
        # to the shortest even period back has one (a period-1 loop: every boundary, as before; gemm_fp16
        # sm_100a, period 12: an anchor at 13, compared at 25). No full state is taken between an anchor and its
        # comparison (each was ~0.15 s there, 13 of them before the proof on main)
        # A period-1 loop is guessed from its first two boundaries (`_deltas_first`) and its proof started at the
        # second without a full state at the first (one more per loop entered; attention_tma's cost ~0.4-1.5 s on
        # sm_90a): whether the state repeats is the proof's own test (3 in the module docstring, at its end), the
        # comparison before it only saves proofs bound to fail. Its proof then follows its third iteration, not its
        # fifth (dion_update: every run iteration of an inner loop of 1360 instructions, and of the outer loop
        # around it, ~1/3 of its check). Where that guess failed at this head, its registers can first be compared
        # at its third boundary (`_deltas`: 2 periods back), and its second is the anchor
        guess = 1 in even and len(hist) == 2
        second = soon and not even and len(hist) == 2 and hist[0].arrival == snap.arrival - 1
        partner = any(hist[-1 - p].canon is not None for p in even)
        window = min(even) if even else PERIOD_MAX  # a period-1 loop: every boundary, as a comparison one later
        anchor = (bool(even) or second) and not any(h.canon is not None for h in hist[-1 - window:-1])
        if not (partner or anchor or guess):
            return
        snap.canon = Canon(b, self.state, live, needed).key
        for p, deltas in even.items():
            if hist[-1 - p].canon == snap.canon or (p == 1 and guess):
                guess = len(hist) <= 2 * p
                self._start(b, head, k, p, snap, deltas, early=guess and p > 1, first=guess and p == 1, latch=pc,
                            recomputed=free)
                return
        # An anchor of a period guessed from one period of history (`_deltas_early`, p >= EARLY_PERIOD_MIN): the
        # proof starts here, before its state is seen to repeat (its first comparison, p boundaries on, is the
        # proof's own: 3 above, at the end of the period followed, against this state). The repetition p back is
        # only what picks the moment and the period, not part of the argument: the proof (closure, the state one
        # period on, decisions) is the same. One that does not hold leaves no trace (no note, no attempt counted,
        # no failed early guess, the history kept): the boundaries go on as without it, this one the anchor.
        # gemm_accumulate sm_100a (period 12, state repeating from iteration 7): from iteration 13 (25 before).
        # Only where that period is the shortest even one: a shorter one (a period-2 loop, which is also even over
        # 4) is compared as before (attention_tma on sm_120: period 2, not a speculative 4)
        p = min(even) if anchor and even else 0  # an anchor may be a period-1 loop's second boundary alone
        if p >= EARLY_PERIOD_MIN and len(hist) <= 2 * p and hist[-1 - p].canon is None:
            self._start(b, head, k, p, snap, even[p], early=True, latch=pc, speculative=True, recomputed=free)

    def _snapshot(self, b, head: int, k: int) -> tuple[_Boundary, list[_Boundary]]:
        """Boundary k of the loop at `head` (its live registers and `Canon.early_key`), added to its history."""
        live = self._live_in(b.prog, head)
        needed = self._wgmma_needed(b.prog, head)
        snap = _Boundary(k, {r: np.array(b.regs[r]) for r in sorted(live) if r in b.regs}, None,
                         Canon.early_key(b, self.state, needed))
        hist = self._history.setdefault(head, [])
        hist.append(snap)
        del hist[:-(2 * PERIOD_MAX + 1)]
        for h in hist[:-(PERIOD_MAX + 1)]:
            # kept for their registers (`_deltas` looks 2 periods back); a canonical state is compared only up to
            # PERIOD_MAX boundaries back, below, and is the bulk of a boundary's memory (gemm_fp8 sm_90a: ~20 MiB)
            h.canon = None
        return snap, hist

    @staticmethod
    def _same_loop(prog, proof: _Attempt, head: int, latch: int) -> bool:
        """Is the back edge latch -> head one of the proof's own loop (each head in the other's natural loop)?"""
        return proof.latch >= 0 and proof.head in prog.loop_body(head, latch) \
            and head in prog.loop_body(proof.head, proof.latch)

    def _inner_differs(self, b, ins: A.Instruction) -> str | None:
        """A back edge `ins` of another loop (an inner loop, or a second head of this one) taken inside the period
        followed: None when it is decided alike in every CTA and every period, so that the period runs the same
        iterations of that loop whatever t and whichever CTA (unguarded, or its guard the same bits in every CTA
        and period: the shadow follows it as independent of %ctaid, the sizes and t, and it carries no data);
        else why not. Only while the shadow keeps no trip counts of loops on the sizes (they count the back edges
        they take, which skipped periods would take again). In a CTA run alone for its trips of loops on %ctaid
        (`ctaid_trips`, grid_loops.py) such a back edge counts nothing either: only back edges whose guard
        depends on %ctaid are trips (`Shadow._ctaid_trip`; `taken` then holds those of the loops around it,
        passed before the period), and this one's guard depends on neither %ctaid nor the sizes (below)."""
        sh = self.shadow
        if sh.size_params or sh.trips:
            return "the symbolic grid counts the trips of loops in this run"
        if ins.guard is None:
            return None
        pred = A.Sym(ins.guard.pred)
        st = sh.state(pred)
        if st is TOP:
            return "its back edge depends on values the symbolic grid does not follow"
        if st is not None:
            e = st.expr if isinstance(st, Sv) else st
            if leaves(e, ("c", "s", "g", "d", "t", "q")):
                return "its back edge depends on %ctaid, the sizes or the iteration"
        t = self.state.tracker.reg_taint.get(ins.guard.pred)
        if t is not None and (np.broadcast_to(t, b.alive.shape)[b.alive] != 0).any():
            return "its back edge depends on data"
        return None

    def _uniform_back_edge(self, b, ins: A.Instruction) -> bool:
        """Is the back edge `ins` unguarded, or its guard followed by the shadow as independent of %ctaid, the
        sizes and data?"""
        if ins.guard is None:
            return True
        st = self.shadow.state(A.Sym(ins.guard.pred))
        if st is TOP:
            return False
        if st is not None and leaves(st.expr if isinstance(st, Sv) else st, ("c", "s", "g", "d", "q")):
            return False
        t = self.state.tracker.reg_taint.get(ins.guard.pred)
        return t is None or not (np.broadcast_to(t, b.alive.shape)[b.alive] != 0).any()

    # ------------------------------------------------------------------ a nested summary
    def _nested(self, b, g, ins: A.Instruction, pc: int, head: int, k: int) -> None:
        """The back edge of an inner loop decided alike in every CTA and period (`_inner_differs`), inside the
        period of the proof followed: that loop's periods (of P iterations) are summarised there as well, as
        functions of their own iteration u and of the outer t (grid_shadow `begin_inner`). The run is the outer period
        t = 0, so the inner proof (closure, state, decisions: 1-4 in the module docstring) is made at t = 0 and
        says which inner periods u in [0, U) repeat the checked one there; `Shadow.end_inner` hands every inner
        decision, held register and global access at each such u to the outer proof, whose decision scan then
        finds its T with all of them the same for every t < T (every inner period of every outer period
        summarised decides as the checked one), and whose checks of the skipped periods' global bytes see them.
        The skipped inner periods' global accesses keep both leaves, each over its own range (grid.py `_Class`:
        t in [0, T), u in [0, U)). Only where the inner loop writes no global memory, decides nothing on %ctaid,
        the run has no finding and the sizes are fixed; anything else runs the inner loop in full, as before."""
        inner = self._inner
        again = None
        if inner is not None:
            if k == inner.start + inner.period:
                again = self._finish_inner(b, g)
            if again is None:
                return
        sh = self.shadow
        if sh.size_params or self._nest_failed.get(head, 0) >= MAX_ATTEMPTS or head in self._nest_done \
                or self._ineligible(b, g, proving=True) is not None or not self._uniform_back_edge(b, ins):
            self._nest_hist.pop(head, None)
            return
        live = self._live_in(b.prog, head)
        snap = _Boundary(k, {r: np.array(b.regs[r]) for r in sorted(live) if r in b.regs}, None, ())
        hist = self._nest_hist.setdefault(head, [])
        if hist and hist[-1].arrival != k - 1:
            hist.clear()
        hist.append(snap)
        known = self._held_steps.get(head)
        at = 1 + known.late * known.period if known is not None else 1  # the entry's boundary a guess is made at
        del hist[:-max(2, at)]
        # The period and D guessed from the loop's last summary (the same loop entered in an earlier outer iteration:
        # outer iteration 1 for dion_update; gemm_tma_persistent's K loop, period 4 (a 2-stage ring whose mbarrier
        # parity flips every 2 iterations), summarised in the tiles before the followed one): the proof starts at its
        # first boundary here; else, period 1, from its first two boundaries (`_deltas_first`). A guess either way:
        # the closure and the state one period on prove it (3 in the module docstring, for any period P <=
        # PERIOD_MAX), and one that fails is dropped. One from a summary is made once more at the end of the period
        # it failed in (`again`): the loop's first iterations may fill its pipeline, its state repeating only from a
        # later boundary, as in the summary the guess came from (gemm_tma_persistent: its 5th). A nested summary so
        # begun a period late is guessed a period late in the next entry (`_Steps.late`: its first boundary not tried)
        held = again if again is not None else known if len(hist) == at else None
        period, deltas = (held.period, held.deltas) if held is not None else (1, None)
        if deltas is None and known is None and len(hist) == 2:
            deltas = self._deltas_first(b, hist[0], snap)
        if deltas is None:
            return
        hist.clear()
        self._ident += 1
        canon = Canon(b, self.state, live, self._wgmma_needed(b.prog, head)).key
        self._inner_pre = {r: sh.regs.get(r) for r in deltas}
        sh.begin_inner(self._ident, deltas)
        self._inner = _Attempt(head, k, period, self._ident, dict(snap.regs), deltas,
                               {r: sh.regs.get(r) for r in deltas}, canon, self.state.async_ops, False,
                               {r: sh.regs.get(r) for r in live if r not in deltas}, pc, False, held is None,
                               retry=held is not None and again is None, late=held.late if held is not None else 0)

    def _finish_inner(self, b, g) -> _Steps | None:
        """The inner period followed inside the outer one is over (`_nested`): skip the inner periods that
        repeat it, or run on as u = 0. The guess to make once more from this boundary (`_Attempt.retry`), if any."""
        inner, sh = self._inner, self.shadow
        lp = sh.loop
        why = lp.failed or self._ineligible(b, g, proving=True)
        if why is None and lp.writes:
            why = "the inner loop writes global memory"
        if why is None and any(leaves(d.expr, ("c",)) for d in lp.decisions):
            why = "a decision of the inner loop depends on %ctaid"
        if why is None and (b.reports or self.state.uninit_outputs or self.state.detector.races()):
            why = "the run has a finding"
        held: list[_Held] = []
        if why is None:
            why = self._closure(b, inner, held)
        if why is None and Canon(b, self.state, self._live_in(b.prog, inner.head),
                                 self._wgmma_needed(b.prog, inner.head)).key != inner.canon:
            why = "the state at the head does not repeat after one period"
        periods = None
        if why is None:
            periods = self._first_change([*lp.decisions, *held])
            if periods is None or periods < 2:
                why = "the loop ends within the next period"
        if why is None:
            why = self._skipped_reads(b, lp, periods, {})
        if why is None and periods * (len(lp.decisions) + len(held) + len(lp.reads)) > NEST_FLAT_MAX:
            why = "too many inner periods to hand to the outer proof"
        if why is not None:
            self._abandon_inner(why)
            return _Steps(inner.period, inner.deltas, inner.late + 1) if inner.retry else None
        skip = periods - 1
        self._skip(b, skip)  # registers of u at u = skip (and of the outer t at t = 0: their values now)
        self.state.async_ops += skip * (self.state.async_ops - inner.async_ops)
        sh.loop_ranges[inner.ident] = periods
        self._inner = None
        sh.end_inner(skip, periods, [Decision(h.pc, h.expr, h.lanes, h.value) for h in held])
        self._restate(b, inner, skip)
        self._held_steps[inner.head] = _Steps(inner.period, inner.deltas, inner.late)
        self._arrivals[inner.head] += skip * inner.period
        self._nest_done.add(inner.head)
        self.summaries.append(Summary(inner.head, inner.period, inner.start, skip * inner.period, inner.ident,
                                      inside=self._proof.head))
        return None

    def _restate(self, b, inner: _Attempt, skip: int) -> None:
        """After a nested summary, each register the inner loop steps by D per period is its value before the loop
        (the shadow's E + o, E of the outer t) plus (skip + 1) D: by the closure (3 in the module docstring) it
        was E + o + u D + D at the period's end, u = skip now. Written back as E with offset o + (skip + 1) D
        (the same value modulo 2^w), not as the folded expression at u = skip, so that the outer proof's closure
        finds the register in the form it started its period with (a pointer both loops advance)."""
        sh, alive = self.shadow, b.alive
        env = sh.lane_env(0)
        for r, pre in self._inner_pre.items():
            if not isinstance(pre, Sv) or r not in inner.deltas:
                continue
            w = b.prog.reg(r).width
            mask = np.uint64(_width_mask(w))
            off = (np.asarray(0 if pre.off is None else pre.off, np.uint64)
                   + np.asarray(inner.deltas[r], np.uint64) * np.uint64(skip + 1)) & mask
            now = np.broadcast_to(np.asarray(b.regs[r]).astype(np.uint64) & mask, alive.shape)
            got = np.broadcast_to((np.asarray(evaluate(pre.expr, env), dtype=object) + off.astype(object))
                                  & int(mask), alive.shape)
            if (got[alive].astype(np.uint64) != now[alive]).any():  # never expected: the outer proof fails
                sh.loop_fail(f"internal: register {r} after a nested summary disagrees with the run")
                continue
            sh.regs[r] = Sv(pre.expr, off)
        self._inner_pre = {}

    def _abandon_inner(self, why: str) -> None:
        """The inner period followed did not repeat (`why`, not a note: the inner loop runs on, as without a
        nested summary): it ran as u = 0, and its decisions and accesses are the outer period's."""
        inner, self._inner = self._inner, None
        self.shadow.end_inner(0, None)
        self._nest_hist.pop(inner.head, None)
        got = self._held_steps.get(inner.head)
        if got is not None and got.deltas is inner.deltas:  # a guess from an earlier summary that failed here
            del self._held_steps[inner.head]
        self._nest_failed[inner.head] = self._nest_failed.get(inner.head, 0) + 1

    def finish(self) -> None:
        """The run is over: a period still being followed ran as t = 0 (the loop ended inside it)."""
        if self._proof is not None:
            self._abandon("the loop ended within the period followed")
            self._resume = False
        held = {s.head_pc for s in self.summaries}
        for head, note in self._first_notes.items():
            if head not in held and note not in self.notes:
                self.notes.append(note)
        self._first_notes.clear()

    # ------------------------------------------------------------------ the proof
    def _ineligible(self, b, g, proving: bool = False) -> str | None:
        sh = self.shadow
        if sh.failed is not None or (sh.loop is not None) != proving or sh.poison:
            return "the symbolic grid's shadow does not follow this run"
        if g.joins or g.ctl or g.explore or len([x for x in b.groups if x.status != "done"]) != 1:
            return "threads of the batch are not all in the loop together"
        if not (g.mask == b.alive).all():
            return "threads of the batch are not all in the loop together"
        if set(b.reg_watch) - _canonical_watches(b):
            return "a register is watched by a unit whose pending state is not canonicalised"
        return None

    def _followed(self, b, z: _Boundary, earlier: tuple[_Boundary, ...]) -> list[tuple[str, int, list]] | None:
        """Per live register at boundary z whose bits are followed (not data): (name, width, its values at
        `earlier` and then at z); None where some register is missing at one of them. The common part of the
        three guesses of D below."""
        out = []
        tr = self.state.tracker
        for r, vz in z.regs.items():
            vs = [x.regs.get(r) for x in earlier]
            if any(v is None for v in vs):
                return None
            w = _followed_width(b, tr, r, b.alive)
            if w is not None:  # else data: its bits are not followed
                out.append((r, w, vs + [vz]))
        return out

    def _with_free(self, b, z: _Boundary, deltas: dict[str, np.ndarray], free: frozenset[str]) -> dict[str, np.ndarray]:
        """`deltas` and every register of `free` (recomputed every period) that holds no data, also one that did not
        change over the boundaries read (a tile coordinate that repeats for a few tiles) where the shadow follows it
        as an expression (one the same in every CTA, a shared address, stays the run's value: a unit reading it
        asks for that): each is begun as recomputed (`_start`), its change here unused."""
        sh = self.shadow
        more = {r: np.zeros(b.alive.shape, np.uint64) for r in sorted(free) if r not in deltas and r in z.regs
                and _followed_width(b, self.state.tracker, r, b.alive) is not None
                and sh.state(A.Sym(r)) not in (None, TOP)}
        return {**deltas, **more} if more else deltas

    def _deltas(self, b, a: _Boundary, m: _Boundary, z: _Boundary,
                free: frozenset[str] = frozenset()) -> dict[str, np.ndarray] | None:
        """Per live register that does not depend on data: its change per period, the same from a to
        m as from m to z (None when some register does not advance evenly, except one of `free`: recomputed
        every period, `_recomputed`, its last change kept)."""
        regs = self._followed(b, z, (a, m))
        if regs is None:
            return None
        out = {}
        for r, w, (va, vm, vz) in regs:
            if w == 1:
                if not (np.array_equal(va, vm) and np.array_equal(vm, vz)):
                    return None
                continue
            d1, d2 = _advance(va, vm, w, b.alive), _advance(vm, vz, w, b.alive)
            if (d1 != d2)[b.alive].any() and r not in free:
                return None
            _keep_step(out, r, d2, b.alive)
        return out

    def _deltas_first(self, b, m: _Boundary, z: _Boundary) -> dict[str, np.ndarray] | None:
        """Per live register that does not depend on data: its change D over the one iteration from m to z (the
        loop's first two boundaries), for a period of 1; None where a predicate changed. A guess like
        `_deltas_early`'s: the closure (3 in the module docstring) proves D by induction over the periods,
        whatever boundaries it was read from."""
        regs = self._followed(b, z, (m,))
        if regs is None:
            return None
        out = {}
        for r, w, (vm, vz) in regs:
            if w == 1:
                if not np.array_equal(vm, vz):
                    return None
                continue
            _keep_step(out, r, _advance(vm, vz, w, b.alive), b.alive)
        return out

    def _deltas_static(self, b, head: int, latch: int, z: _Boundary) -> dict[str, np.ndarray] | None:
        """Per live register that does not depend on data: its change D over one iteration as the loop's code
        reads (`_steps`: its one write in the natural loop of latch -> head adds a constant or a register the
        loop does not write), for a period of 1 at the loop's first boundary z; None where some such register
        is written otherwise or nothing steps. A guess like `_deltas_first`'s: the closure (3 in the module
        docstring) proves D by induction over the periods, whatever it was read from, and the state one period
        on is compared with z's."""
        key = (head, latch)
        steps = self._steps_cache.get(key)
        if steps is None:
            steps = self._steps_cache[key] = _steps(b.prog, _cycle(b.prog, head, latch))
        out: dict[str, np.ndarray] = {}
        alive = b.alive
        tr = self.state.tracker
        for r in z.regs:
            w = _followed_width(b, tr, r, alive)
            if w is None or w == 1 or r not in steps:  # data, a predicate, or not written in the loop
                continue
            step = steps[r]
            if step is None:
                return None
            src, neg = step
            if isinstance(src, int):
                d = np.full(alive.shape, src, dtype=object)
            elif src in b.regs:
                d = np.broadcast_to(b.regs[src], alive.shape).astype(np.int64).astype(object)
            else:
                return None
            d = ((-d if neg else d) & ((1 << w) - 1)).astype(np.uint64)
            _keep_step(out, r, d, alive)
        return out or None

    def _deltas_early(self, b, hist: list[_Boundary], p: int,
                      free: frozenset[str] = frozenset()) -> dict[str, np.ndarray] | None:
        """Per live register that does not depend on data: its change D from the boundary p back to now, where
        on every live lane it is 0 (the register repeats: a stage index, a barrier's parity) or p times the
        change over each of the last two iterations (it moves linearly); None otherwise. A guess from fewer
        boundaries than `_deltas` needs (p + 1 and the last 3), checked by the proof like any other."""
        if len(hist) < 3 or hist[-1].arrival - hist[-3].arrival != 2:
            return None
        regs = self._followed(b, hist[-1], (hist[-1 - p], hist[-2], hist[-3]))
        if regs is None:
            return None
        out = {}
        alive = b.alive
        for r, w, (vm, vy, vx, vz) in regs:
            if w == 1:
                if not np.array_equal(vm, vz):
                    return None
                continue
            d, d1, d2 = _advance(vm, vz, w, alive), _advance(vx, vy, w, alive), _advance(vy, vz, w, alive)
            linear = (d1 == d2) & (d == ((d2 * np.uint64(p)) & _width_mask(w)))
            if not ((d == 0) | linear)[alive].all() and r not in free:
                return None
            _keep_step(out, r, d, alive)
        return out

    def _start(self, b, head: int, k: int, p: int, z: _Boundary, deltas: dict[str, np.ndarray],
               early: bool = False, first: bool = False, latch: int = -1, speculative: bool = False,
               static: bool = False, recomputed: frozenset[str] = frozenset()) -> None:
        recomputed = recomputed & frozenset(deltas)
        if not first:  # a first-boundaries guess that fails costs no attempt (`_abandon`)
            self._attempts[head] = self._attempts.get(head, 0) + 1
        self._ident += 1
        sh = self.shadow
        sh.begin_loop(self._ident, deltas, recomputed)
        self._nest_hist.clear()
        self._nest_done.clear()
        self._proof = _Attempt(head, k, p, self._ident, {r: v for r, v in z.regs.items()}, deltas,
                               {r: sh.regs.get(r) for r in deltas}, z.canon, self.state.async_ops, early,
                               {r: sh.regs.get(r) for r in self._live_in(b.prog, head) if r not in deltas}, latch,
                               speculative, first, static, recomputed)

    def _abandon(self, why: str, final: bool = False) -> None:
        """The proof does not hold: the period ran concretely, as t = 0; nothing is skipped. `final`:
        the loop cannot be summarised at all (it writes global memory, say): no more attempts."""
        if self._inner is not None:
            self._abandon_inner(why)
        self._nest_hist.clear()
        self._nest_done.clear()
        proof, self._proof = self._proof, None
        self.shadow.end_loop(0, accesses=True)
        if proof is not None:
            for s in self.summaries:  # nested in this period, which ran concretely: an ordinary summary in it
                if s.inside == proof.head and s.ident > proof.ident:
                    s.inside = -1
        if proof is not None and proof.speculative:  # as if not tried (`on_back_edge`)
            self._attempts[proof.head] -= 1
            return
        if proof is not None and proof.first:
            # a period-1 guess from the first two boundaries: what failed may be the guess itself (a stage index
            # of a longer period taken to move by D, a shared address then depending on t): never final
            final = False
        if proof is not None:
            if proof.first and not final:
                # a failed guess from the first two boundaries keeps the history (the period ran concretely, as
                # any iteration; its end is recorded as the next boundary: `on_back_edge`) and costs no attempt, so
                # the loop's other periods are found as before it was made (attention_tma's period 2, say)
                if proof.static:  # the next boundary's guess from the first two is still made
                    self._static_tried.add(proof.head)
                else:
                    self._first_tried.add(proof.head)
                self._resume = True
                hist = self._history.get(proof.head)
                if hist and hist[-1].arrival == proof.start:
                    # and its full state (taken without a partner) is dropped: the history is then what it was
                    # without the guess (attention_tma sm_120's period 2 was found as 4, against that state)
                    hist[-1].canon = None
            else:
                self._history.pop(proof.head, None)
            if proof.early:  # a failed early guess is not made again at this head (it costs attempts)
                self._early_tried.add(proof.head)
            if final:
                self._attempts[proof.head] = MAX_ATTEMPTS
            note = f"loop at {self._where(proof.head)} not summarised: {why}"
            if proof.first:  # said at the end of the run only where the loop was never summarised (`finish`)
                self._first_notes.setdefault(proof.head, note)
            elif note not in self.notes:
                self.notes.append(note)

    def _finish(self, b, g, k: int) -> None:
        proof = self._proof
        sh = self.shadow
        lp = sh.loop
        why = lp.failed if lp is not None else "the shadow left loop mode"
        if why is not None:  # what the loop does, not where it is: later periods would not do better
            self._abandon(why, final=True)
            return
        if why is None:
            why = self._ineligible(b, g, proving=True)
        # a finding so far (in the loop or before it): the loop may still be summarised, but the symbolic grid's
        # proof, which covers the skipped periods' global accesses, does not run once a representative CTA has
        # a finding (grid.py check_symbolic); `_reads_checked` covers them here instead
        found = bool(b.reports or self.state.uninit_outputs or self.state.detector.races())
        held: list[_Held] = []
        if why is None:
            why = self._closure(b, proof, held)
        if why is None and Canon(b, self.state, self._live_in(b.prog, proof.head),
                                 self._wgmma_needed(b.prog, proof.head)).key != proof.canon:
            why = "the state at the head does not repeat after one period"
        if why is not None:
            self._abandon(why)
            return
        periods = self._first_change([*lp.decisions, *held])
        if periods is None:
            self._abandon(f"no decision of the loop changes within {SCAN_LIMIT} periods")
            return
        if periods < 2:
            self._abandon("the loop ends within the next period")
            return
        skip = periods - 1  # periods 1 .. periods-1 are not run
        written = self._skipped_writes(b, lp, periods)
        if isinstance(written, str):
            self._abandon(written)
            return
        why = self._skipped_reads(b, lp, periods, written)
        if why is not None:
            self._abandon(why)
            return
        read = None
        if found:
            why = self._reads_checked(b, lp, periods)
            if isinstance(why, str):
                self._abandon(f"the run has a finding and {why} (its iterations are all run)")
                return
            read = why
        self._skip(b, skip)
        for buf, lo, hi in read or ():
            self.state.read_footprints.setdefault(buf, []).append((lo, hi))
        self._keep_skipped(b, written, proof.ident)
        sh.loop_ranges[proof.ident] = periods
        latch_head = self._leaves_after(b, lp, proof, periods) if sh.ctaid_trips else None
        if latch_head is not None:
            sh.exits_after_summary.add(proof.ident)
            # the back edges the final period (t = periods) takes before it leaves, as grid.py reads them (keyed
            # by the head the shadow gives that back edge: grid_shadow `_ctaid_trip`)
            sh.final_period[latch_head] = proof.ident
            sh.final_rows[proof.ident] = []
        sh.loop_proofs[proof.ident] = (lp, proof.head)  # symbolic sizes: its decisions bound t (grid.py)
        per_period_ops = self.state.async_ops - proof.async_ops
        self.state.async_ops += skip * per_period_ops
        self._proof = None
        self._nest_hist.clear()
        self._nest_done.clear()
        sh.end_loop(skip, accesses=False)  # registers at the end of period `skip`; accesses keep t
        self._arrivals[proof.head] += skip * proof.period
        self._history.pop(proof.head, None)
        if not proof.first:
            self._attempts[proof.head] -= 1  # it held: only failed proofs count against MAX_ATTEMPTS
        old = self._held_steps.get(proof.head)  # a nested summary's `late` kept: learnt inside followed periods only
        self._held_steps[proof.head] = _Steps(proof.period, proof.deltas,
                                              old.late if old is not None and old.period == proof.period else 0)
        self.summaries.append(Summary(proof.head, proof.period, proof.start, skip * proof.period, proof.ident,
                                      with_finding=found))

    def _closure(self, b, proof: _Attempt, held: list[_Held]) -> str | None:
        """Every live register is its start value plus (t+1)*D (D its change per period), or repeats
        and does not depend on t, or repeats and is a function of t and the thread only that `held` gets
        (`_held`: the periods summarised end before its value first changes), or is recomputed every period
        (`_recomputed_end`)."""
        sh = self.shadow
        tr = self.state.tracker
        alive = b.alive
        steps: dict[str, tuple] = {}
        again: list[str] = []
        for r in sorted(self._live_in(b.prog, proof.head)):  # sorted: the same register named first on every run
            st = sh.regs.get(r)
            start = proof.begun.get(r)
            if r in proof.recomputed:
                why = self._recomputed_end(b, r)
                if why is not None:
                    return f"loop-carried register {r} {why}"
                again.append(r)
                continue
            if r in proof.deltas and isinstance(start, Sv) and leaves(start.expr, ("d",)):
                step = _step(st, start, b.prog.reg(r).width, alive)
                if step is None:
                    return f"loop-carried register {r} is not its start value plus a step per period"
                got = np.broadcast_to(evaluate(step, sh.lane_env(0)), alive.shape)
                want = np.broadcast_to(proof.deltas[r], alive.shape)
                if (got[alive] != want[alive].astype(object)).any():  # the shadow disagrees with the run
                    return f"internal: the step of loop-carried register {r} disagrees with the run"
                steps[r] = step
                continue
            if r in proof.deltas:
                if not isinstance(st, Sv) or not isinstance(start, Sv) or st.expr != start.expr:
                    return f"loop-carried register {r} is not its start value plus a fixed amount per period"
                grew = np.asarray(st.off if st.off is not None else np.zeros((), np.uint64), np.uint64)
                w = b.prog.reg(r).width
                mask = _width_mask(w)
                d = np.broadcast_to((grew - proof.deltas[r]) & mask, alive.shape)
                if (d[alive] != 0).any():
                    return f"loop-carried register {r} does not advance by the same amount every period"
                continue
            if st is not None and st is not TOP and uses_t(st.expr if isinstance(st, Sv) else st, proof.ident):
                why = self._held(b, proof, r, st, held)
                if why is not None:
                    return f"register {r} is live at the loop head and depends on the iteration ({why})"
                continue
            t = tr.reg_taint.get(r)
            if t is not None and (np.broadcast_to(t, alive.shape)[alive] != 0).any():
                continue
            before = proof.base.get(r)
            now = b.regs.get(r)
            if before is None or now is None or not np.array_equal(np.broadcast_to(before, alive.shape)[alive],
                                                                    np.broadcast_to(now, alive.shape)[alive]):
                return f"register {r} is live at the loop head and does not repeat"
        if steps:
            sh.resolve_steps(proof.ident, steps)
        if again:
            starts = self._recomputed_starts(b, proof, again)
            if isinstance(starts, str):
                return starts
            why = sh.resolve_starts(proof.ident, starts)
            if why is not None:
                return f"a loop-carried register {why}"
            for i, h in enumerate(held):  # a held register read one of them (scanned by `_first_change`)
                for r, by in starts.items():
                    h = dataclasses.replace(h, expr=replace_leaf(h.expr, "v", step_key(proof.ident, r), by))
                held[i] = h
        return None

    def _recomputed_starts(self, b, proof: _Attempt, again: list[str]) -> dict[str, tuple] | str:
        """The value at the start of period t >= 1 of each register begun as recomputed (the leaf v it stands for),
        or why there is none. One whose end value E does not depend on t and repeats its start value in the run
        (what `_closure` asks of any other register that does not depend on t) is its start value (ite(t == 0, x,
        x) folds to x), and so is its v in the others' E. Every other one: by induction over t, period 0 began with
        it at its start value (the run's), period t + 1 begins with what period t ended with, E(t), where E reads
        no v left (no start value of a register recomputed), so ite(t == 0, start, E(t - 1)) is its value at the
        start of every period t (t + 1 < 2^64: no wrap)."""
        sh, alive, ident = self.shadow, b.alive, proof.ident
        ends = {r: sh.expr(A.Sym(r), f".b{b.prog.reg(r).width}") for r in again}

        def known(e, done: dict[str, tuple]):
            for x, by in done.items():
                e = replace_leaf(e, "v", step_key(ident, x), by)
            return e

        same: dict[str, tuple] = {}
        grew = True
        while grew:
            grew = False
            for r in again:
                if r in same:
                    continue
                e = known(ends[r], same)
                before, now = proof.base.get(r), b.regs.get(r)
                if not leaves(e, ("v",)) and not uses_t(e, ident) and before is not None and now is not None \
                        and np.array_equal(np.broadcast_to(before, alive.shape)[alive],
                                           np.broadcast_to(now, alive.shape)[alive]):
                    same[r] = sh.starts[step_key(ident, r)][0]
                    grew = True
        earlier = ("sub", 64, ("t", 64, ident), K(1, 64))
        out = dict(same)
        for r in again:
            if r in same:
                continue
            e = known(ends[r], same)
            if leaves(e, ("v",)):
                return (f"loop-carried register {r} is neither its start value plus a fixed amount per period nor "
                        "recomputed without its start value")
            if leaves(e, ("q",)):
                return f"loop-carried register {r} is recomputed from values the symbolic grid does not follow"
            out[r] = replace_leaf(e, "t", ident, earlier)
        return out

    def _recomputed_end(self, b, r: str) -> str | None:
        """Register `r`, begun as recomputed (grid_shadow `begin_loop`: ite(t == 0, start, v)): None where its value
        at the end of the period, E(t), is followed by the shadow, holds no data and agrees with the run; else why not
        (whether E reads a start value, a leaf v: `_recomputed_starts`)."""
        sh = self.shadow
        w = b.prog.reg(r).width
        e = sh.expr(A.Sym(r), f".b{w}")
        if e is TOP or w > 64:
            return "is recomputed from values the symbolic grid does not follow"
        alive = b.alive
        taint = self.state.tracker.reg_taint.get(r)
        if taint is not None and (np.broadcast_to(taint, alive.shape)[alive] != 0).any():
            return "is recomputed from data"
        got = np.broadcast_to(evaluate(e, sh.lane_env(0)), alive.shape)[alive]
        run = np.broadcast_to(np.asarray(b.regs.get(r, np.zeros((), np.uint64))).astype(np.uint64)
                              & _width_mask(w), alive.shape)[alive]
        if (got != run.astype(object)).any():  # the shadow disagrees with the run
            return "internal: is recomputed to a value the run does not have"
        return None

    def _held(self, b, proof: _Attempt, r: str, st, held: list[_Held]) -> str | None:
        """Register `r`, live at the loop head, is a function `e` of t after the period (the shadow's `st`); None
        when it is taken as a decision (appended to `held`), else why not.

        Every period summarised (t = 0 .. periods - 1) ran as period 0 did, so with `r` at its start value v
        (the run's, the same in every CTA: `proof.held`); the value it carries into period t + 1 is e(t), and
        after the skipped periods the run goes on with e(0), its concrete value. Both hold when e(t) = e(0) = v
        on every live lane for t < periods: `_first_change` ends the summary before the first t at which e
        differs from e(0), exactly as for a decision (the register acts as one: where it would change, the
        loop is run on). Only for e a function of t and the thread (no %ctaid, size or step leaf) and a start
        state that is the same in every CTA, so that the executed lanes' values are every CTA's."""
        e = st.expr if isinstance(st, Sv) else st
        if leaves(e, ("c", "s", "g", "d")):
            return "and on %ctaid or the sizes"
        start = proof.held.get(r)
        if start is TOP or (start is not None and leaves(start.expr if isinstance(start, Sv) else start,
                                                         ("c", "s", "g", "d", "t"))):
            return "and its start value differs between CTAs"
        w = b.prog.reg(r).width if b.prog.reg(r) is not None else None
        if w is None or w > 64:
            return "and is wider than 64 bits"
        alive = b.alive
        t = self.state.tracker.reg_taint.get(r)
        if t is not None and (np.broadcast_to(t, alive.shape)[alive] != 0).any():
            return "and on data"
        before, now = proof.base.get(r), b.regs.get(r)
        if before is None or now is None or not np.array_equal(np.broadcast_to(before, alive.shape)[alive],
                                                                np.broadcast_to(now, alive.shape)[alive]):
            return "and does not repeat"
        value = np.broadcast_to(evaluate(e, self.shadow.lane_env(0)), alive.shape)
        mask = np.uint64(_width_mask(w))
        run = np.broadcast_to(np.asarray(now).astype(np.uint64) & mask, alive.shape)
        if (value[alive].astype(np.uint64) & mask != run[alive]).any():  # the shadow disagrees with the run
            return "internal: the shadow's value disagrees with the run"
        held.append(_Held(proof.head, e, alive.copy(), np.asarray(value).copy()))
        return None

    def _first_change(self, decisions) -> int | None:
        """The smallest t >= 1 at which a decision (or a live register held, `_Held`) differs from t = 0 on
        some lane (exact evaluation). Scanned in rounds of growing reach, every decision to the first cap before
        any goes further, so that a decision which changes late (a tensor store's box leaving the tensor) is
        scanned only up to the first change of another (the back edge): the same minimum."""
        if not decisions:
            return None
        sh = self.shadow
        first = None
        todo = []
        for d in decisions:
            lanes = np.nonzero(d.lanes)[0]
            if lanes.size == 0:
                continue
            used = leaf_keys(d.expr)  # its leaves only: the run may hold thousands of placeholders
            env = {k: (v[lanes] if np.ndim(v) else v) for k, v in sh.lane_env(0).items() if k in used}
            todo.append([d, lanes, env, 1, max(1, 4096 // lanes.size)])
        for cap in (FIRST_SCAN, SCAN_LIMIT):
            for item in todo:
                d, lanes, env, t0, chunk = item
                want = d.value[lanes]
                limit = min(cap, first) if first is not None else cap
                while t0 < limit:
                    ts = np.arange(t0, min(t0 + chunk, limit), dtype=np.uint64)
                    env[("t", sh.loop.ident)] = ts[:, None]
                    got = np.broadcast_to(evaluate(d.expr, env), (ts.size, lanes.size))
                    diff = (got != want[None, :]).any(axis=1)
                    if diff.any():
                        first = int(ts[np.argmax(diff)])
                        break
                    t0 += ts.size
                    chunk = min(chunk * 2, 1 << 16)
                item[3], item[4] = t0, chunk
        return first

    def _leaves_after(self, b, lp, proof: _Attempt, periods: int) -> int | None:
        """The head the shadow gives the loop's back edge (`Shadow._head_of`) where the period run after the
        skipped ones (t = `periods`) is the loop's last and differs from period 0 only in leaving, else None: the
        loop has one back edge (its latch), taken once per iteration, so P times per period (P = `proof.period`),
        each time a decision on %ctaid taken on every lane in period 0; at t = `periods` one of them, the m-th, is
        left on every lane, and every decision the period makes before it (the m back edges before it among them)
        takes its period-0 value on its lanes. The latch closes a back edge to the proof's head, or to a second
        head of the same loop (`_same_loop`: a proof at a latch block laid out before its header, whose exit falls
        through into the header, Program.falls_back; the period then starts with that exit).
        Then a CTA that leaves this loop at the m-th back edge of any period t < `periods` (false there, every
        back edge before it true) runs the instructions the executed CTA runs from there on, from the same
        repeating state (the summary's, 3 above: the state at the head repeats every period, and so, with the
        same decisions, at each point of a period): grid.py `_trip_patterns` lets such CTAs share the executed
        CTA's run. One that leaves at another back edge of a period (P > 1) leaves from another state (another
        stage of a pipeline, say): a pattern of its own."""
        prog = b.prog
        heads = {pc: self.shadow._head_of(pc) for pc in range(len(prog.code))}
        latches = [pc for pc, h in heads.items() if h is not None
                   and (h == proof.head or self._same_loop(prog, proof, h, pc))]
        if len(latches) != 1:
            return None
        at_latch = [d for d in lp.decisions if d.pc == latches[0]]
        if len(at_latch) != proof.period or not all(leaves(d.expr, ("c",)) for d in at_latch):
            return None
        sh = self.shadow
        for d in lp.decisions:  # in the order the period made them
            lanes = np.nonzero(d.lanes)[0]
            env = {k: (v[lanes] if np.ndim(v) else v) for k, v in sh.lane_env(periods).items()}
            try:
                got = np.broadcast_to(evaluate(d.expr, env), lanes.shape).astype(bool)
            except (KeyError, TypeError, ValueError):  # not evaluated: no sharing
                return None
            want = d.value[lanes].astype(bool)
            if any(d is x for x in at_latch):  # as "goes on" (a latch that falls through into the head: not taken)
                got, want = sh._goes(d.pc, got), sh._goes(d.pc, want)
                if not want.all():  # period 0 took each of its back edges on every lane
                    return None
                if not got.any():  # left here on every lane: what the period would do after it is not run
                    return heads[latches[0]]
            if (got != want).any():
                return None
        return None

    def _offsets(self, b, lp, entry: tuple, periods: int):
        """Per chunk of skipped periods t in [1, periods): (t (ts,), byte offsets in the entry's buffer (ts, lanes,
        bytes)) of a recorded access `entry` of the period (`LoopProof.writes`/`reads`), each lane's address
        evaluated exactly at t. Raises ValueError when an address is not known."""
        addr_e, offs, lanes, size, buf = entry
        sh = self.shadow
        env = {k: (v[lanes] if np.ndim(v) else v) for k, v in sh.lane_env(0).items()}
        base = np.uint64(b.memory.glob.allocations[buf].base)
        t0 = 1
        while t0 < periods:
            ts = np.arange(t0, min(periods, t0 + max(1, 65536 // max(1, lanes.size * size))), dtype=np.uint64)
            env[("t", lp.ident)] = ts[:, None]
            try:
                addr = (np.asarray(evaluate(addr_e, env), dtype=object) + offs.astype(object)) & (2**64 - 1)
            except (KeyError, TypeError) as e:
                raise ValueError(str(e)) from e
            rel = (np.broadcast_to(addr, (ts.size, lanes.size)).astype(np.uint64) - base).astype(np.int64)
            yield ts, rel[:, :, None] + np.arange(size, dtype=np.int64)
            t0 += ts.size

    def _skipped_writes(self, b, lp, periods: int) -> dict | str:
        """The global bytes the skipped periods would write: per buffer, (offsets ascending, writer row, when the
        skipped periods first write the byte: `_when`), the row -1 where several threads or an instruction other than a
        plain st would write the byte (`SkippedWrites`). They are not written: the run keeps them per byte
        (`_keep_skipped`). A string: why not (an address not known, or bytes an earlier summary's skipped writes
        left that these would overwrite without being ordered after them: a race the detector cannot see)."""
        parts: dict[int, list] = {}
        code = b.prog.code
        for entry, (pc, seq) in zip(lp.writes, lp.write_sites):
            lanes, size, buf = entry[2], entry[3], entry[4]
            if lanes.size == 0:
                continue
            plain = plain_access(code[pc], True)
            rows = self.state.rows(lanes)
            if not plain:
                rows = np.full(rows.shape, -1, np.int64)
            limit = b.memory.glob.allocations[buf].size
            had = self.state.mem.get(Buffer(MemSpace.GLOBAL, buf))
            try:
                for ts, byte in self._offsets(b, lp, entry, periods):
                    inside = (byte >= 0) & (byte < limit)  # bytes outside: the bounds proof's (grid.py)
                    if not plain and had is not None and (had.taint[byte[inside]] & STALE).any():
                        # an atomic of a skipped period on bytes holding a STALE value (CheckState.access)
                        return f"{code[pc].name} at {code[pc].span} would update bytes holding a STALE value"
                    parts.setdefault(buf, []).append((byte[inside],
                                                      np.broadcast_to(rows[None, :, None], byte.shape)[inside],
                                                      np.broadcast_to(_when(ts, seq)[:, None, None],
                                                                      byte.shape)[inside]))
            except ValueError:
                return "the global bytes the loop writes are not known"
        out = {}
        c = self.state.clocks
        for buf, got in parts.items():
            byte = np.concatenate([x[0] for x in got])
            row = np.concatenate([x[1] for x in got]).astype(np.int64)
            first = np.concatenate([x[2] for x in got])
            if byte.size == 0:
                continue
            o = np.lexsort((row, byte))
            byte, row, first = byte[o], row[o], first[o]
            starts = np.nonzero(np.r_[True, byte[1:] != byte[:-1]])[0]
            lo, hi = np.minimum.reduceat(row, starts), np.maximum.reduceat(row, starts)
            key = Buffer(MemSpace.GLOBAL, buf)
            offsets, wrow, wfirst = byte[starts], np.where(lo == hi, lo, -1), np.minimum.reduceat(first, starts)
            old = self.state.skipped.get(key)
            if old is not None:  # overwriting an earlier summary's skipped bytes: only after their writer
                at = old.find(offsets)
                hit = at >= 0
                if hit.any():
                    o_rows, o_epochs, n_rows = old.row[at[hit]], old.epoch[at[hit]], wrow[hit]
                    if (o_rows < 0).any() or (n_rows < 0).any() or (c.cta_of(o_rows) != c.cta_of(n_rows)).any() \
                            or not c.ordered(o_rows, o_epochs, n_rows, c.base[Kind.C, n_rows], None).all():
                        return ("the iterations it would skip write global bytes that an earlier loop summary's skipped "
                                "iterations would have written, not ordered after those writes")
            out[key] = (offsets, wrow, wfirst)
        return out

    def _skipped_reads(self, b, lp, periods: int, written: dict) -> str | None:
        """Why the skipped periods' global reads are not covered, or None. A read of bytes that an earlier
        summary's skipped writes left (`SkippedWrites`) must be a plain ld of a thread of the writer's CTA ordered
        after the writer now (its clock only grows); one of bytes this loop's skipped periods write before it
        (an earlier period, or earlier in the same period: `_when`) must be the writer's own (program order orders it) and the
        run must already give every global read STALE (`CheckState.stale_reads`), so that period 0's reads
        carried it: what the skipped periods do with the stale values was audited in period 0 (exec.py), which
        runs the same instructions with the same masks."""
        st = self.state
        c = st.clocks
        code = b.prog.code
        for entry, (pc, seq) in zip(lp.reads, lp.read_sites):
            lanes, buf = entry[2], entry[4]
            key = Buffer(MemSpace.GLOBAL, buf)
            old, mine = st.skipped.get(key), written.get(key)
            if lanes.size == 0 or (old is None and mine is None):
                continue
            ins = code[pc]
            rows = st.rows(lanes)
            try:
                for ts, byte in self._offsets(b, lp, entry, periods):
                    rrows = np.broadcast_to(rows[None, :, None], byte.shape)
                    if old is not None:
                        at = old.find(byte)
                        hit = at >= 0
                        if hit.any():
                            w, e, r = old.row[at[hit]], old.epoch[at[hit]], rrows[hit]
                            if not plain_access(ins, False) or (w < 0).any() or (c.cta_of(w) != c.cta_of(r)).any() \
                                    or not c.ordered(w, e, r, c.base[Kind.C, r], None).all():
                                return (f"{ins.name} at {ins.span} would read, in the iterations it skips, global bytes "
                                        "an earlier loop summary's skipped iterations would have written, and is not a "
                                        "plain ld of a thread ordered after their writer")
                    if mine is not None:
                        offsets, wrow, wfirst = mine
                        i = np.minimum(np.searchsorted(offsets, byte), offsets.size - 1)
                        back = (offsets[i] == byte) & (wfirst[i] < _when(ts, seq)[:, None, None])
                        if back.any() and (not st.stale_reads or not plain_access(ins, False)
                                           or (wrow[i][back] != rrows[back]).any()):
                            return (f"{ins.name} at {ins.span} would read back, in the iterations it skips, global "
                                    "bytes those iterations write")
            except ValueError:
                return "the global bytes the loop reads are not known"
        return None

    def _keep_skipped(self, b, written: dict, ident: int) -> None:
        """The skipped periods' global writes, kept per byte (`SkippedWrites`, with each writer's epoch now), and
        their bytes' shadows fresh numbers carrying STALE: the run's memory does not hold those values."""
        st = self.state
        c = st.clocks
        allocs = b.memory.glob.allocations
        for key, (offsets, wrow, _first) in written.items():
            epoch = np.where(wrow >= 0, c.owns[Kind.C, 0, np.maximum(wrow, 0)], 0).astype(np.int64)
            old = st.skipped.get(key)
            st.skipped[key] = old.merged(offsets, wrow, epoch) if old is not None else \
                SkippedWrites(offsets, wrow, epoch, np.ones(offsets.size, bool))
            sh = st.mem.get(key) or st.shadow_for(key, allocs[key.index].size)
            sh.hash[offsets] = mix(key_of("stale"), np.uint64(ident), np.uint64(key.index), offsets.astype(np.uint64))
            sh.pos[offsets] = 0xFF
            sh.taint[offsets] = STALE | DATA
            sh.cta[offsets] = np.where(wrow >= 0, wrow // st.lanes_per_cta, -1).astype(np.int32)
            st.stale_reads = True

    def _reads_checked(self, b, lp, periods: int) -> list[tuple] | str:
        """The skipped periods' global accesses, checked here because the run already has a finding, so
        the symbolic grid's proof that covers them otherwise (bounds, races on global memory: grid.py 2-4)
        will not run (a representative CTA's finding is the verdict). Held: the global bytes they read, per
        buffer and CTA as [lo, hi) (to watch: `CheckState.read_footprints`). Otherwise why not (a string):
        - the period writes global memory (a race among skipped writes is a question for that proof);
        - a read of some skipped period leaves the buffer its period-0 access used (evaluated per lane at
          every t in [1, periods), as `_written` does: the full run would fault there);
        - bytes a skipped period reads were written earlier in the run (a race with that write would be
          the full run's question; a write after the loop voids the summary through the read footprint).
        Shared memory, barriers and the other CTA-local findings repeat period after period (the state
        at the head repeats, the decisions are the same): period 0 found each of them once, as the
        full run would find it again in every period."""
        if lp.writes:
            return "the loop writes global memory"
        sh = self.shadow
        allocs = b.memory.glob.allocations
        out = []
        for addr_e, offs, lanes, size, buf in lp.reads:
            if lanes.size == 0:
                continue
            env = {k: (v[lanes] if np.ndim(v) else v) for k, v in sh.lane_env(0).items()}
            ctas = b.cta_of_lane[lanes]
            lo = np.full(b.n_ctas, np.iinfo(np.int64).max, np.int64)
            hi = np.full(b.n_ctas, -1, np.int64)
            base, end = allocs[buf].base, allocs[buf].size - size
            t0 = 1
            while t0 < periods:
                ts = np.arange(t0, min(periods, t0 + max(1, 65536 // lanes.size)), dtype=np.uint64)
                env[("t", lp.ident)] = ts[:, None]
                try:
                    addr = (np.asarray(evaluate(addr_e, env), dtype=object) + offs.astype(object)) & (2**64 - 1)
                except (KeyError, TypeError, ValueError):
                    return "the global bytes the loop reads are not known"
                rel = np.broadcast_to(addr, (ts.size, lanes.size)).astype(object) - base
                if (rel < 0).any() or (rel > end).any():
                    return (f"a read of the iterations it would skip leaves buffer {allocs[buf].name} (the run "
                            "faults there)")
                rel = rel.astype(np.int64)
                np.minimum.at(lo, ctas, rel.min(axis=0))
                np.maximum.at(hi, ctas, rel.max(axis=0) + size)
                t0 += ts.size
            for c in np.nonzero(hi >= 0)[0].tolist():
                out.append((Buffer(MemSpace.GLOBAL, buf), int(lo[c]), int(hi[c])))
        for key, r_lo, r_hi in out:
            w = self.state.global_written.get(key)
            if w is not None and r_lo < w[1] and w[0] < r_hi:
                return f"global bytes the skipped iterations read ({allocs[key.index].name}) were written before"
        return out

    def _skip(self, b, skip: int) -> None:
        """Registers that depend on t: their values at the end of period `skip` (t = skip)."""
        sh = self.shadow
        env = sh.lane_env(skip)
        alive = b.alive
        for r, st in list(sh.regs.items()):
            if st is None or st is TOP:
                continue
            e = st.expr if isinstance(st, Sv) else st
            if not leaves(e, ("t",)):
                continue
            w = b.prog.reg(r).width
            v = evaluate(e, env)
            if isinstance(st, Sv) and st.off is not None:
                v = (v + np.asarray(st.off, np.uint64).astype(object)) & ((1 << w) - 1)
            v = np.broadcast_to(v, alive.shape)
            dtype = b.regs[r].dtype if r in b.regs else np.uint64
            old = np.broadcast_to(b.regs.get(r, np.zeros((), dtype)), alive.shape)
            new = v.astype(bool) if w == 1 else (v.astype(object) & ((1 << w) - 1)).astype(np.uint64).astype(dtype)
            b.regs[r] = np.where(alive, new, old)

    # ------------------------------------------------------------------ liveness
    def _live_in(self, prog, head: int) -> set[str]:
        got = self._live.get(head)
        if got is None:
            # the whole program's fixpoint once, kept at the loop heads only (every pc's set is tens of MiB)
            # kept at every head a back edge can reach (the machine calls `on_back_edge` on any backward jump,
            # also one whose target is no loop header, as Triton's outer loops' latch blocks laid out before their
            # headers are: dion_update computed the fixpoint 3 times, ~0.4 s each)
            live = live_in(prog)
            for h in prog.loop_headers | _backward_targets(prog):
                self._live.setdefault(h, live[h])
            got = self._live[head] = live[head]
        return got

    def _wgmma_needed(self, prog, head: int) -> frozenset[str]:
        got = self.__dict__.get("_flags_needed")
        if got is None:
            got = self._flags_needed = wgmma_flags_needed(prog)
        return got[head]

    def _where(self, pc: int) -> str:
        code = self.prog.code
        ins = code[pc] if pc < len(code) else None
        return f"{ins.span}" if ins is not None and ins.span is not None else f"pc {pc}"

    def describe(self) -> list[str]:
        """One line per summarised loop, for the report."""
        out = []
        for s in self.summaries:
            ins = self.prog.code[s.head_pc]
            where = "" if s.inside < 0 else (f" in the checked period of the loop at {self.prog.code[s.inside].span}, "
                                             "and in each period of it summarised,")
            out.append(f"loop at {ins.span}: {s.skipped} iterations (from iteration {s.first}, period {s.period}){where} "
                       "not run: proved to repeat the checked period (same state at the loop head up to "
                       "shifted epochs and renamed value numbers, the same decisions, the same shared "
                       "addresses); "
                       + ("their global reads checked per lane to stay in their buffers and apart from the "
                          "run's global writes, since the run had a finding (findings within the loop repeat "
                          "every period: each is reported once, with the witness of the iterations run, and its "
                          "count of conflicting byte pairs covers those)"
                          if s.with_finding else "their global accesses covered symbolically, their global writes "
                          "kept per byte (a later read gives values whose uses are audited)"))
        return out


def _when(ts: np.ndarray, seq: int) -> np.ndarray:
    """When the access made `seq`-th in the followed period (grid_shadow.LoopProof sites) runs in periods `ts`: a
    key ordered as the skipped periods run their accesses (each period makes them in the same order)."""
    return ts.astype(np.int64) * (1 << 32) + seq


def _recomputed(prog, head: int, latch: int) -> frozenset[str]:
    """Registers (wider than a predicate) the loop closed by latch -> head recomputes: some unguarded write of the
    body computes it from registers that do not depend on it (through the body's writes, in any order). A tile's
    coordinates in a persistent loop, recomputed from the tile counter each period (a later write that reads the
    fresh value, `pn - (tile == X)`, is allowed; a counter `add r, r, c` is not one). Only which registers the proof
    begins as recomputed (grid_shadow `begin_loop`): the closure decides (`_recomputed_end`). The body's
    instructions reached from the head only: a latch block laid out before the header makes the natural loop of
    its edge hold the code before the loop (gemm_tma_persistent's tensor-map address, written once there)."""
    body = set(prog.loop_body(head, latch))
    succ = _successors(prog)
    reached, todo = {head}, [head]
    while todo:
        for s in succ[todo.pop()]:
            if s in body and s not in reached:
                reached.add(s)
                todo.append(s)
    deps: dict[str, set[str]] = {}
    writes: list[tuple[str, set[str]]] = []
    for pc in sorted(reached):
        ins = prog.code[pc]
        if not ins.operands or ins.opcode in _NO_DEST:
            continue
        reads = set().union(*(_regs_in(o, prog) for o in _read_operands(ins)[1:])) if len(ins.operands) > 1 else set()
        for r in _regs_in(ins.operands[0], prog):
            deps.setdefault(r, set()).update(reads | ({r, ins.guard.pred} if ins.guard is not None else set()))
            if ins.guard is None:
                writes.append((r, reads))
    out = set()
    for r, reads in writes:
        reg = prog.reg(r)
        if r in out or reg is None or reg.width <= 1:
            continue
        seen, todo = set(), list(reads)
        while todo and r not in seen:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo.extend(deps.get(x, ()))
        if r not in seen:
            out.add(r)
    return frozenset(out)


def _followed_width(b, tracker, r: str, alive: np.ndarray) -> int | None:
    """Register r's width where its bits are followed, None where it holds data on some live lane."""
    t = tracker.reg_taint.get(r)
    if t is not None and (np.broadcast_to(t, alive.shape)[alive] != 0).any():
        return None
    return b.prog.reg(r).width


def _width_mask(w: int) -> np.uint64:
    return np.uint64((1 << w) - 1) if w < 64 else np.uint64(2**64 - 1)


def _advance(u: np.ndarray, v: np.ndarray, w: int, alive: np.ndarray) -> np.ndarray:
    """v - u per lane, modulo 2^w (PTX 9.7.1), as uint64 over the batch's lanes."""
    return np.broadcast_to((v.astype(np.uint64) - u.astype(np.uint64)) & _width_mask(w), alive.shape)


def _keep_step(out: dict[str, np.ndarray], r: str, d: np.ndarray, alive: np.ndarray) -> None:
    """Register r's step D (0 on lanes not alive) into `out`, where it moves on some live lane."""
    if d[alive].any():
        out[r] = np.where(alive, d, 0).astype(np.uint64)


def _step(st, start: Sv, w: int, alive: np.ndarray) -> tuple | None:
    """What a period added to a register that began it as `start` (base + t * step leaf): `st` is
    `start` plus terms (a sum at width w, PTX 9.7.1 modulo 2^w) that depend on neither t, the step
    leaves nor per-lane values: their sum (a constant, or a function of the sizes such as
    `BLOCK_K * stride`, or of %ctaid). None when `st` is not of that form."""
    if not isinstance(st, Sv):
        return None
    terms, found = [], 0
    stack = [st.expr]
    while stack:
        e = stack.pop()
        if e == start.expr and not found:
            found = 1
        elif isinstance(e, tuple) and e[0] == "add" and e[1] == w:
            stack += [x for x in e[2:]]
        else:
            terms.append(e)
    if not found:
        return None
    if st.off is not None:
        off = np.broadcast_to(np.asarray(st.off, np.uint64), alive.shape)[alive]
        if off.size and (off != off[0]).any():
            return None
        terms.append(K(int(off[0]) if off.size else 0, w))
    if any(leaves(x, ("t", "d", "p")) for x in terms):
        return None
    step = K(0, w)
    for x in terms:
        step = simplify(("add", w, step, x))
    return step


def _cycle(prog, head: int, latch: int) -> tuple[int, ...]:
    """The instructions on some path head -> ... -> latch -> head: the natural loop of the back edge (`loop_body`)
    less what head does not reach. They differ where head is a latch block laid out before the loop's header
    (Triton's outer loops): that edge's natural loop then holds the code before the loop too, whose writes are
    made once, not every iteration."""
    succ = _successors(prog)
    body = set(prog.loop_body(head, latch))
    seen, todo = {head}, [head]
    while todo:
        for n in succ[todo.pop()]:
            if n in body and n not in seen:
                seen.add(n)
                todo.append(n)
    return tuple(sorted(seen))


#: Integer types of an `add`/`sub` whose step `_steps` reads (9.7.1.1, 9.7.1.2: modulo 2^w, no saturation or carry).
_STEP_TYPES = frozenset({".s16", ".u16", ".s32", ".u32", ".s64", ".u64"})


def _steps(prog, body: tuple[int, ...]) -> dict[str, tuple | None]:
    """Per register the loop's code writes (its instructions `body`): (src, neg) where its one write there is
    `add r, r, src` or `add r, src, r` (neg False) or `sub r, r, src` (neg True), src an integer literal or a
    register the loop does not write; None for any other write (several, guarded by anything, another opcode).
    A register's change per iteration where the write runs once an iteration: a guess (`_deltas_static`)."""
    writes: dict[str, list[A.Instruction]] = {}
    code = prog.code
    for pc in body:
        ins = code[pc]
        if not ins.operands or ins.opcode in ("st", "red", "bra", "brx", "bar", "barrier", "exit", "ret", "trap"):
            continue
        for r in _regs_in(ins.operands[0], prog):  # the first operand's registers of any other opcode: written
            writes.setdefault(r, []).append(ins)
    out: dict[str, tuple | None] = {}
    for r, ws in writes.items():
        out[r] = None
        if len(ws) != 1:
            continue
        ins = ws[0]
        if ins.opcode not in ("add", "sub") or ins.guard is not None or len(ins.operands) != 3 \
                or not ins.modifiers or not ins.modifiers <= _STEP_TYPES:
            continue
        d, a, c = ins.operands
        if ins.opcode == "add" and isinstance(c, A.Sym) and c.name == r:
            a, c = c, a
        if not (isinstance(d, A.Sym) and d.name == r and isinstance(a, A.Sym) and a.name == r):
            continue
        if isinstance(c, A.IntLit):
            out[r] = (int(c.value), ins.opcode == "sub")
        elif isinstance(c, A.Sym) and c.component is None and prog.reg(c.name) is not None \
                and not writes.get(c.name):
            out[r] = (c.name, ins.opcode == "sub")
    return out


# ---------------------------------------------------------------------------------- liveness

_NO_DEST = {"st", "red", "bra", "brx", "bar", "barrier", "exit", "ret", "trap", "membar", "fence", "cp",
            "prefetch", "prefetchu", "wgmma", "tcgen05", "stmatrix", "cp.async", "griddepcontrol", "nanosleep"}


def _regs_in(op, prog) -> set[str]:
    """The registers operand `op` names, wherever in it: a vector's elements, an address's base, a tensor address's
    map and coordinates (`[tmap, {c0, c1}]`: a TMA store's coordinates were left out, so registers read only
    there looked dead at a loop head and the loop proof never checked them), an expression's leaves."""
    if isinstance(op, A.Sym):
        return {op.name} if prog.reg(op.name) is not None else set()
    if isinstance(op, (tuple, list)):
        return set().union(*(_regs_in(e, prog) for e in op)) if op else set()
    if dataclasses.is_dataclass(op) and not isinstance(op, (type, A.Span)):
        return set().union(*(_regs_in(getattr(op, f.name), prog) for f in dataclasses.fields(op)))
    return set()


_PRMT_MODES = {"." + m for m in PRMT_MODES if m}


def _read_operands(ins: A.Instruction) -> list:
    """The instruction's operands, less a prmt source none of whose bytes the selector picks.

    prmt.b32{.mode} d, a, b, c (9.7.9.7) picks bytes of {b, a} (0-3 from a, 4-7 from b) by c; when c
    is a literal, a source whose bytes it never picks cannot change d and is not read (a compiler's
    `prmt d, x, %undef, 0x0` extracts a byte of x and names a register that is never written). Any
    other selector (a register, an expression, a modifier not in the manual) reads both."""
    ops = list(ins.operands)
    if ins.opcode != "prmt" or len(ops) != 4 or not isinstance(ops[3], A.IntLit):
        return ops
    if ins.modifiers - _PRMT_MODES - {".b32"}:
        return ops
    mode = next((m for m in ins.modifiers if m in _PRMT_MODES), "")
    picked = prmt_source_bytes(ops[3].value, mode)
    return [ops[0]] + [src for src, bytes_ in ((ops[1], range(4)), (ops[2], range(4, 8)))
                       if picked.intersection(bytes_)] + [ops[3]]


def _use_def(ins: A.Instruction, prog) -> tuple[set[str], set[str]]:
    """Registers an instruction may read, and those it surely overwrites (an unguarded plain result)."""
    operands = _read_operands(ins)
    uses: set[str] = set()
    for op in operands:
        uses |= _regs_in(op, prog)
    if ins.guard is not None:
        uses.add(ins.guard.pred)
    if ins.opcode == "tcgen05" and ".ld" in ins.modifiers and ins.guard is None and ins.operands:
        # tcgen05.ld's destinations are written by the load (at wait::ld, or earlier for a register
        # dependency; a write before then is undefined, 9.7.16.6.4.5): their earlier values are dead
        kills = _regs_in(ins.operands[0], prog)
        return uses - kills, kills
    if not ins.operands or ins.opcode in _NO_DEST or ins.guard is not None:
        return uses, set()
    d = ins.operands[0]
    kills = _regs_in(d, prog) if isinstance(d, (A.Sym, A.Vector, A.Pair)) else set()
    rest = set().union(*(_regs_in(o, prog) for o in operands[1:])) if len(operands) > 1 else set()
    return (uses - kills) | rest, kills


def _successors(prog) -> list[list[int]]:
    """Each pc's successors in the control-flow graph (both ways of a guarded branch or exit)."""
    code = prog.code
    n = len(code)
    succ: list[list[int]] = []
    for pc, ins in enumerate(code):
        op = ins.opcode
        nxt = [pc + 1] if pc + 1 < n else []
        if op in ("exit", "ret", "trap"):
            succ.append(nxt if ins.guard is not None else [])
        elif op == "bra":
            t = ins.operands[0]
            dest = [prog.labels[t.name]] if isinstance(t, A.Sym) and t.name in prog.labels else []
            succ.append([d for d in dest if d < n] + (nxt if ins.guard is not None else []))
        elif op == "brx":
            table = ins.operands[1] if len(ins.operands) > 1 else None
            labs = prog.branch_targets.get(table.name, []) if isinstance(table, A.Sym) else []
            succ.append([prog.labels[x] for x in labs if x in prog.labels and prog.labels[x] < n])
        else:
            succ.append(nxt)
    return succ


def _backward_targets(prog) -> set[int]:
    """The pcs a backward jump goes to (the heads `on_back_edge` is called with: machine.py)."""
    return {d for pc, out in enumerate(_successors(prog)) for d in out if d <= pc}


def live_in(prog) -> list[set[str]]:
    """Registers live at each pc (may be read before being overwritten on some path)."""
    code = prog.code
    n = len(code)
    succ = _successors(prog)
    ud = [_use_def(ins, prog) for ins in code]
    live: list[set[str]] = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            out = set().union(*(live[s] for s in succ[pc])) if succ[pc] else set()
            uses, kills = ud[pc]
            new = uses | (out - kills)
            if new != live[pc]:
                live[pc] = new
                changed = True
    return live


def wgmma_flags_needed(prog) -> list[frozenset[str]]:
    """Per pc: the wgmma registers (`_wgmma_registers`) whose fence and written flags as of that pc
    (`Canon._wgmma_same`: equal to the last wgmma.fence's snapshot, to the last performed mma's result)
    some path from there may consult.

    A wgmma.mma_async accepts a D or A register not pending for an earlier operation if it holds the
    value of the last wgmma.fence or of the last mma that wrote it (9.7.15.7.1; symexec/wgmma.py
    `_issue`); nothing else reads those flags (the pending operations' registers are compared at issue
    and at the covering wgmma.wait_group, 9.7.15.7.3: their own flags, always kept). Along a path a
    register is in state 0 (no wgmma.fence since the pc: the pc's flags decide), 1 (a fence since, the
    register not written after it: the issue passes by the fence's snapshot, whatever the pc's flags
    were) or 2 (written after the latest fence: the issue compares with stored values, conservatively
    the pc's). A register is needed at a pc when some path reaches an mma naming it in state 0 or 2.
    Conservative: any instruction may write every register it names, a wgmma.wait_group every wgmma
    register (it performs operations, writing their D registers), a guarded fence may not run, and a
    call or an instruction this does not know keeps every register needed."""
    regs = _wgmma_registers(prog)
    if not regs:
        return [frozenset()] * len(prog.code)
    bit = {r: 1 << i for i, r in enumerate(regs)}
    every = (1 << len(regs)) - 1
    code = prog.code
    succ = _successors(prog)

    def named(ins: A.Instruction) -> int:
        m = 0
        for op in ins.operands:
            for r in _regs_in(op, prog):
                m |= bit.get(r, 0)
        return m

    # per pc: (uses, fence kind, writes): uses = registers an mma names; fence: 0 none, 1 sure, 2 guarded
    facts = []
    for ins in code:
        if ins.opcode == "wgmma":
            mods = ins.modifiers
            if ".mma_async" in mods:
                facts.append((named(ins), 0, 0))
            elif ".fence" in mods:
                facts.append((0, 2 if ins.guard is not None else 1, 0))
            elif ".wait_group" in mods:
                facts.append((0, 0, every))
            else:  # commit_group
                facts.append((0, 0, 0))
        elif ins.opcode == "call":
            facts.append((every, 0, every))
        else:
            facts.append((0, 0, named(ins)))
    n = len(code)
    bad = [[0, 0, 0] for _ in range(n)]  # per pc and state: the registers some path makes consult flags
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            o0 = o1 = o2 = 0
            for s_ in succ[pc]:
                x = bad[s_]
                o0, o1, o2 = o0 | x[0], o1 | x[1], o2 | x[2]
            uses, fence, writes = facts[pc]
            if fence == 1:
                i0 = i1 = i2 = o1
            elif fence == 2:
                i0, i1, i2 = o0 | o1, o1, o2 | o1
            else:
                # a write moves state 1 to 2 (a may-write: both); an mma in state 0 or 2 consults the flags
                i0, i1, i2 = o0 | uses, o1 | (o2 & writes), o2 | uses
            cur = bad[pc]
            if cur[0] != i0 or cur[1] != i1 or cur[2] != i2:
                bad[pc] = [i0, i1, i2]
                changed = True
    out = []
    memo: dict[int, frozenset[str]] = {}
    for pc in range(n):
        m = bad[pc][0]
        got = memo.get(m)
        if got is None:
            got = memo[m] = frozenset(r for r in regs if m & bit[r])
        out.append(got)
    return out


# ---------------------------------------------------------------------------------- canonical state

class Canon:
    """The state a loop's future depends on, besides the registers' bits, in a form that two
    boundaries of a periodic loop share (compared by `key`):

    - epochs (vector-clock entries, own entries, records of the race detector, stamps of operations
      in flight) are replaced by their rank among the values of their column (per CTA): later runs
      only compare them (>=), join them (max) and count on from the newest, so states whose columns
      have the same order structure behave alike;
    - value numbers are renamed in order of first appearance (equal numbers stay equal);
    - barrier instances, async-group indices and the like are taken relative to their current counts;
    - only registers live at the loop head count; global memory's detector state does not (the loop
      only reads global memory, covered symbolically by grid.py).
    Whatever is not canonicalised is compared as it is; a unit this class does not know makes the key
    unique (such a loop is never summarised)."""

    def __init__(self, b, state: CheckState, live: set[str], wgmma_needed: frozenset[str] | None = None) -> None:
        self.b, self.state, self.live = b, state, live
        self.wgmma_needed = wgmma_needed  # `wgmma_flags_needed` at the loop head (None: every flag)
        self.clocks = state.clocks
        state.detector.flush()
        self.parts: list = []
        self._hashes: list[np.ndarray] = []
        self._gather()
        self._batch()
        self._clocks()
        self._detector()
        self._shadows()
        self.key = tuple(self.parts)

    def _add(self, name: str, value) -> None:
        if isinstance(value, np.ndarray):
            value = _packed(value)
        self.parts.append((name, value))

    # ---- epochs, ranked per column
    def _gather(self) -> None:
        """Collect every epoch the canonical state holds, as (cta, column, value), and rank them."""
        c = self.clocks
        T = c.T
        self.W = W = c._table.shape[1]
        self._agent_columns()
        rows = np.arange(c.n_threads)
        ctas = rows // T
        # the table's vectors in use, each with its CTA: threads' clocks, pending snapshots, agents,
        # stamps of operations in flight
        vec_ids, vec_ctas = [c.base.reshape(-1)], [np.tile(ctas, len(Kind))]
        self._pending_vecs = []
        # what was released into a retired mbarrier object is never acquired again (`_live_pending`): left out
        self._pending = [(ck, snaps) for ck, snaps in c.pending.items() if self._live_pending(*ck)]
        for (cta, key), snaps in self._pending:
            for k, v in snaps.items():
                self._pending_vecs.append(np.asarray(c._full(v), np.int64))
        for a in c.agents:
            ids = np.array(list(a.bases.values()), np.int64)
            vec_ids.append(ids)
            vec_ctas.append(np.full(ids.size, a.cta))
        self._stamps = []
        cp = self.b.units.get("async_copy")
        inflight = {r.op.ident for r in (cp.records if cp is not None else []) if r.op is not None}
        for ident in sorted(inflight):
            got = self.state._ops.get(ident)
            if got is not None and len(got) == 3:
                issued, rrows, stamp = got
                vec_ids.append(stamp.bases.reshape(-1).astype(np.int64))
                vec_ctas.append(np.tile(rrows // T, stamp.bases.shape[0]))
                self._stamps.append((ident, issued, rrows, stamp))
        vec_ids = np.concatenate(vec_ids).astype(np.int64)
        vec_ctas = np.concatenate(vec_ctas).astype(np.int64)
        # distinct (vector, CTA) pairs: threads of a CTA mostly share their vectors
        self.uniq_vec, self.vec_index = np.unique(vec_ids * c.n_ctas + vec_ctas, return_inverse=True)
        self.vec_index = self.vec_index.reshape(-1)
        self.vec_ctas = self.uniq_vec % c.n_ctas
        pend_ctas = [cta for (cta, key), snaps in self._pending for _ in snaps]
        ctab = c._table[self.uniq_vec // c.n_ctas].astype(np.int64)
        pv = np.stack(self._pending_vecs) if self._pending_vecs else np.zeros((0, W), np.int64)
        allvec = np.concatenate([ctab, pv])
        allcta = np.concatenate([self.vec_ctas, np.array(pend_ctas, np.int64)])
        cols = np.broadcast_to(np.arange(W), allvec.shape)
        parts_cta, parts_col, parts_val = [np.broadcast_to(allcta[:, None], allvec.shape).reshape(-1)], \
            [cols.reshape(-1)], [allvec.reshape(-1)]
        # own entries: slot 0 at the thread's column, slot s at its stream's column
        scol = np.zeros(SLOTS, np.int64)
        for s_, col in c._stream_col.items():
            scol[int(s_)] = col
        own_cols = np.stack([(rows % T) + scol[sl] for sl in range(SLOTS)])  # (SLOTS, rows)
        self.own_cols = own_cols
        for kind in Kind:
            parts_cta.append(np.tile(ctas, SLOTS))
            parts_col.append(own_cols.reshape(-1))
            parts_val.append(c.owns[kind].reshape(-1).astype(np.int64))
        parts_cta.append(np.tile(ctas, SLOTS))
        parts_col.append(own_cols.reshape(-1))
        parts_val.append(c.next_op.reshape(-1).astype(np.int64))
        for a in c.agents:
            parts_cta.append(np.array([a.cta]))
            parts_col.append(np.array([a.col]))
            parts_val.append(np.array([a.epoch]))
        for _, issued, rrows, stamp in self._stamps:
            parts_cta.append(rrows // T)
            parts_col.append(np.full(rrows.size, -1))  # stream columns: the op's own index (ranked apart)
            parts_val.append(stamp.epochs.astype(np.int64))
        self._records = self._kept_records()
        R = self.state.detector.R
        if self._records.size:
            r = self._records
            parts_cta.append(self.clocks.cta_of(R["hbrow"][r]))
            parts_col.append(R["col"][r].astype(np.int64))
            parts_val.append(R["epoch"][r].astype(np.int64))
        cta_a = np.concatenate(parts_cta).astype(np.int64)
        col_a = np.concatenate(parts_col).astype(np.int64)
        val_a = np.concatenate(parts_val).astype(np.int64)
        key = ((cta_a * (W + 1) + (col_a + 1)) << 40) + val_a
        self._uniq = np.unique(key)
        self._group_first = np.searchsorted(self._uniq, (self._uniq >> 40) << 40)

    def rank(self, cta, col, value) -> np.ndarray:
        """Rank of `value` among the collected values of (cta, col) (all three broadcast)."""
        cta, col, value = np.broadcast_arrays(np.asarray(cta, np.int64), np.asarray(col, np.int64),
                                              np.asarray(value, np.int64))
        key = ((cta * (self.W + 1) + (col + 1)) << 40) + value
        i = np.searchsorted(self._uniq, key)
        return i - self._group_first[np.minimum(i, self._uniq.size - 1)]

    def rank_vec(self, v: np.ndarray, cta) -> np.ndarray:
        """A clock vector (or an array of them, last axis the columns) ranked per column, its columns in
        canonical order (`_agent_columns`)."""
        v = np.asarray(v, np.int64)
        out = self.rank(np.asarray(cta)[..., None] if np.ndim(cta) else cta, np.arange(v.shape[-1]), v)
        return out[..., self._src] if v.shape[-1] == self.W else out

    def _col(self, col):
        """Column(s) `col` renamed (`_agent_columns`); one beyond the table as it is."""
        if np.ndim(col) == 0:
            return int(self.colmap[col]) if 0 <= col < self.W else int(col)
        col = np.asarray(col, np.int64)
        inside = (col >= 0) & (col < self.W)
        return np.where(inside, self.colmap[np.clip(col, 0, self.W - 1)], col)

    def _agent_columns(self) -> None:
        """A renaming of the agents' clock columns (`colmap`: column -> canonical column, `_src` its inverse),
        within the columns of each (CTA, unit) pool: the free agents in the pool's order (the order
        hb.Clocks._reusable takes them in), then the agents of operations in flight in the order this state
        lists those (wgmma groups per warpgroup, bulk copies, mbarrier landings), then the rest by column.

        Agents are interchangeable up to their column: nothing reads a column's number, only which entries
        are the same column (hb.py; races.ordered), and an agent is reused by its place in its pool. Two
        states equal up to a bijection of agent columns within each pool, applied to every place a column
        appears (clock vectors' entries, the agents, the pools, operations' agents, the race detector's
        records and atomic bytes' agent rows), have the same future up to that bijection; any bijection is
        sound, the order above lets a pipeline whose agents rotate through their pool (gemm_fp8's wgmma
        agents, 16 per CTA, in a different order every iteration) repeat."""
        c = self.clocks
        W = self.W
        self.colmap = np.arange(W, dtype=np.int64)
        order: dict[tuple[int, str], list] = {}
        seen: set[int] = set()

        def note(agent) -> None:
            if agent is not None and id(agent) not in seen:
                seen.add(id(agent))
                order.setdefault((agent.cta, agent.unit), []).append(agent)

        for key in sorted(c._free, key=repr):
            for a in c._free[key]:
                note(a)
        ops = []
        u = self.b.units.get("wgmma")
        if u is not None:
            for wg in sorted(u.wgs):
                st = u.wgs[wg]
                ops += [o.async_op for o in st.uncommitted] + [o.async_op for grp in st.groups for o in grp]
        cp = self.b.units.get("async_copy")
        if cp is not None:
            ops += [r.op for r in cp.records]
        mb = self.b.units.get("mbarrier")
        if mb is not None:
            for _, bar in sorted(mb.bars.items()):
                ops += [x.op for x in bar.landing]
        for op in ops:
            got = self.state._ops.get(op.ident) if op is not None and op.stream is None else None
            if got is not None:
                note(got[0])
        for a in sorted(c.agents, key=lambda a: a.col):
            note(a)
        for agents in order.values():
            cols = np.array([a.col for a in agents], np.int64)
            if cols.size and cols.max() < W:
                self.colmap[cols] = np.sort(cols)
        self._src = np.empty(W, np.int64)
        self._src[self.colmap] = np.arange(W)
        self._agent_rows = {a.row: int(self.colmap[a.col]) if a.col < W else a.col for a in c.agents}

    # ---- the machine
    def _batch(self) -> None:
        b = self.b
        self._add("alive", b.alive)
        self._add("groups", tuple((g.pc, g.status, g.mask.tobytes(), len(g.joins), g.ctl, g.explore, g.barrier,
                                   tuple(sorted(g.pending))) for g in b.groups if g.status != "done"))
        self._add("bar_arrived", b.bar_arrived)
        self._add("bar_count_of", tuple(sorted(b.bar_count_of.items())))
        self._add("bar_red", tuple(sorted(b.bar_red)))
        self._add("early", Canon.early_key(b, self.state, self.wgmma_needed))
        for name in sorted(b.units):
            u = b.units[name]
            if name == "async_copy":
                self._async_copy(u)
            elif name == "mbarrier":
                self._mbarrier(u)
            elif name == "wgmma":
                self._wgmma(u)
            else:  # a unit of a higher layer (tcgen05) gives its own canonical state, or none: never equal
                got = u.loop_state(self)
                self._add(name, object() if got is None else got)
        if b.memory.local.size > 1:
            self._add("local", b.memory.local)
        if self.state.st_taint:  # a tcgen05.st of data pending at the head (state.py `_st_issued`): never equal
            self._add("st_taint", object())

    def _async_copy(self, u) -> None:
        recs = []
        for r in u.records:
            rel_group = r.group - u.committed[r.lanes]
            recs.append((id(r.ins), r.lanes.tobytes(), rel_group.tobytes(), r.dst.tobytes(), r.done.tobytes(), r.pc,
                         self.op_label(r.op)))
        self._add("cp.async", (tuple(recs), self._bulk_key(u), len(u.exited_pending), len(u.unwaited_bulk)))

    def _bulk_key(self, u) -> object:
        """The bulk operations in flight (async_copy.BulkOp), relative to each thread's committed bulk groups.
        One whose source reads were performed (`performed`: a `.read` wait covered it) only waits for a wait
        without .read to let its issuing thread observe its writes (9.7.9.25.6.2), which moves that thread's
        stream entry to the op's epoch (hb.stream_observe: a maximum). An older such op of a thread is left out
        when a newer performed op of the same thread is selected by every such wait that selects it, now and
        after any further commits: one in a group no wait of the program leaves pending (relative group
        <= -(N + 1) for every N of a `cp.async.bulk.wait_group` without .read; a wait selects group g iff
        g < committed - N: `bulk_kept`). Observing it then never adds to what observing the newer one gives (its
        epoch is lower: one stream per thread, issued in order), and its bytes' detector state is global memory,
        which the canonical state leaves out. Else each tile of a persistent kernel's bulk store, kept until
        the final wait, made the key grow forever (bench/results/i10tma-2026-12-06s39, blocker 2a)."""
        horizon = self.b.prog.bulk_wait_horizon
        if horizon is None:
            return len(u.bulk_ops)
        out = []
        for op in bulk_kept(u.bulk_ops, u.bulk_committed, horizon):
            rel = op.group - int(u.bulk_committed[op.lane])
            # a performed op only meets waits without .read: past the horizon each selects it, whatever its age
            out.append((id(op.ins), op.pc, op.lane, max(rel, -horizon) if op.performed else rel, op.performed))
        return tuple(out)

    def _mbarrier(self, u) -> None:
        """mbarrier objects (symexec/mbarrier.py): counts, tx-count, the copies in flight (their bytes,
        destination and clocks) and the phase's parity, which is all a try_wait.parity reads
        (9.7.13.15.16). Waits on an arrive's state compare whole phase numbers: a program with one
        keeps the absolute phase in the key (its loops are not summarised). Wait sites let go once
        (`forced`) are compared relative to the state-change counter; what a completion will run
        (`on_complete`) by its `loop_key` (tcgen05.commit's); a barrier with cp.async arrivals handed
        over (no key) or a copy whose destination is not named is never equal."""
        parity_only = _parity_waits_only(self.b.prog)
        # generations relative to the address's latest init: only compared for equality (hb.py, `_sync_key`)
        bars = tuple((key, bar.expected, bar.pending, bar.phase & 1 if parity_only else bar.phase, bar.tx,
                      bar.generation - u.inits.get(key, -1), bar.observed,
                      tuple(self._on_complete(fn, bar) for fn in bar.on_complete),
                      tuple((c.nbytes, c.dest or object(), self.op_label(c.op)) for c in bar.landing))
                     for key, bar in sorted(u.bars.items()))
        unobserved = tuple((id(ins), key, phase - u.bars[key].phase if key in u.bars else object())
                           for ins, key, phase in u.unobserved)
        self._add("mbarrier", (bars, tuple(sorted(u.inits)), unobserved, u.settling is None,
                               tuple(sorted((site, u.stamp - v) for site, v in u.forced.items())),
                               tuple(sorted(u.tokens))))

    def _on_complete(self, fn, bar) -> object:
        """What a barrier's phase completion will run: a unit's callback in canonical form when it gives
        one (`loop_key`, e.g. tcgen05.commit's), else never equal (cp.async arrivals handed over)."""
        key = getattr(fn, "loop_key", None)
        return object() if key is None else key(self, bar.phase)

    def _wgmma(self, u) -> None:
        """Warpgroup MMA state (symexec/wgmma.py): per warpgroup, the operations not committed and the
        committed groups still pending, oldest first (wait_group N completes all but the newest N,
        9.7.15.7.3), each with its decoded descriptors and clocks. The registers' flags (what the
        9.7.15.7.1/.3 rules compare at the next issue or wait) are in `early_key` (`_wgmma_same`)."""

        def op_key(o) -> tuple:
            return (id(o.ins), o.lanes.tobytes(), o.desc_a, o.desc_b, o.scale_d, self.op_label(o.async_op))

        wgs = []
        for wg in sorted(u.wgs):
            st = u.wgs[wg]
            # the registers' `same` flags are part of `early_key` (compared there)
            wgs.append((wg, tuple(op_key(o) for o in st.uncommitted), tuple(tuple(op_key(o) for o in grp)
                                                                              for grp in st.groups),
                        tuple(sorted(st.reported))))
        self._add("wgmma", tuple(wgs))

    @staticmethod
    def _wgmma_same(b, u, needed: frozenset[str] | None) -> tuple:
        """Per warpgroup and wgmma register: on which lanes it holds the value of the last wgmma.fence,
        of the pending operations' snapshot, of the last performed mma; whether it is watched. The
        fence and written flags of a register not in `needed` (`wgmma_flags_needed` at the loop head:
        no path from there consults them) are left out: they follow data (an accumulator rescaled
        after its mma equals the mma's result on the lanes whose scale is 1), and every later issue
        passes by a fresh fence's snapshot instead. None: all kept."""
        regs = _wgmma_registers(b.prog)
        out = []
        for wg in sorted(u.wgs):
            st = u.wgs[wg]
            flags = []
            for r in regs:
                kept = needed is None or r in needed
                flags.append((r, None if st.fence_regs is None or not kept else
                              _lanes_equal(b.regs.get(r), st.fence_regs.get(r), b.n),
                              _lanes_equal(b.regs.get(r), st.pending_regs[r], b.n) if r in st.pending_regs else None,
                              _lanes_equal(b.regs.get(r), st.wgmma_written[r], b.n)
                              if r in st.wgmma_written and kept else None,
                              r in st.watchers))
            out.append((wg, st.fence_regs is None, tuple(flags)))
        return tuple(out)

    @staticmethod
    def early_key(b, state: CheckState, needed: frozenset[str] | None = None) -> tuple:
        """The parts of the canonical state that need no epoch ranking and no renaming, cheap to take:
        the wgmma registers' equality flags (`_wgmma_same`: they follow the registers' values, which
        data decide once landed tiles carry DATA taint; those of `needed`, None: all) and shared
        memory's bytes that do not depend on data. Part of `key` (so two boundaries whose early keys
        differ never have equal keys); LoopSummariser compares it before taking the full state."""
        u = b.units.get("wgmma")
        parts: list = [("wgmma.same", None if u is None else Canon._wgmma_same(b, u, needed))]
        sh = state.tracker.mem.get(b.memory._buffers[MemSpace.SHARED])
        if sh is not None and b.memory.shared.size > 1:
            taint = sh.taint[np.arange(b.memory.shared.size)]
            parts.append(("shared_plain_bytes", np.where(taint == 0, b.memory.shared, 0).tobytes()))
        return tuple(parts)

    def op_live(self, op) -> bool:
        """Can completing `op` still change a clock? (False once its agent was retired or reused.)"""
        got = self.state._ops.get(op.ident) if op is not None else None
        if got is None:
            return False
        return op.stream is not None or got[0].epoch == got[1]

    def memory(self, buffer: Buffer, raw: np.ndarray) -> tuple:
        """Buffer `buffer` (contents `raw`, one byte per element) in canonical form, for units'
        `loop_state`: the bytes that do not depend on data, and the shadow of the bytes touched (their
        taint, position codes and writer CTAs; their value numbers join the renamed numbers)."""
        sh = self.state.tracker.mem.get(buffer)
        if sh is None:
            return (np.asarray(raw).tobytes(),)
        idx, taint = _touched(sh.taint)
        plain = np.array(raw, np.uint8)
        plain[idx[taint != 0]] = 0
        self._hashes.append(sh.hash[idx])
        return (plain.tobytes(), idx.tobytes(), taint.tobytes(), sh.pos[idx].tobytes(), sh.cta[idx].tobytes())

    def op_label(self, op) -> object:
        """An operation in flight: its kind, its clocks (ranked) and what it read (live rows); units'
        `loop_state` use it too."""
        if op is None:
            return None
        st = self.state
        got = st._ops.get(op.ident)
        reads = []
        for r in st._read_bytes.get(op.ident, []):
            live = r.live[r.order]
            if live.any():
                rows = r.order[live]
                reads.append((r.lanes[live].tobytes(), r.t[rows].tobytes(), r.p[rows].tobytes()))
                self._hashes.append(r.h[rows].reshape(-1))
        if got is None:
            return (id(op.ins), op.completion, tuple(reads))
        if op.stream is None:
            agent, epoch = got
            return (id(op.ins), "agent", self._col(agent.col), int(self.rank(agent.cta, agent.col, epoch)),
                    tuple(reads))
        issued, rows, stamp = got
        cta = rows // self.clocks.T
        ids = stamp.bases.astype(np.int64) * self.clocks.n_ctas + cta[None, :]
        u, inv = np.unique(ids, return_inverse=True)
        vecs = tuple(self._ranked_id(int(x)) for x in u.tolist())
        epochs = self.rank(cta, -1, stamp.epochs)
        return (id(op.ins), "stream", issued.tobytes(), vecs, inv.reshape(-1).tobytes(), epochs.tobytes(),
                tuple(reads))

    def _ranked_id(self, pair: int) -> bytes:
        """The ranked form of table vector pair // n_ctas in CTA pair % n_ctas (memoised)."""
        memo = self.__dict__.setdefault("_memo", {})
        got = memo.get(pair)
        if got is None:
            c = self.clocks
            got = memo[pair] = self.rank_vec(c._table[pair // c.n_ctas], pair % c.n_ctas).tobytes()
        return got

    # ---- clocks
    def _clocks(self) -> None:
        c = self.clocks
        T = c.T
        n = c.n_threads
        ctas = np.arange(n) // T
        # every distinct (vector, CTA) in threads' clocks: its ranked form, numbered in first-seen order
        used = self.vec_index[:len(Kind) * n]
        # one ranked row per (vector, CTA): rank_vec adds the column axis to a 1-D array of CTAs (a (U, 1) one
        # broadcast to (U, U, W): every vector ranked in every CTA's columns, which is U times the work and
        # loses which thread holds which vector)
        ranked = self.rank_vec(c._table[self.uniq_vec // c.n_ctas].astype(np.int64), self.vec_ctas)
        first, inv = _row_classes(ranked)
        canon_of = inv[used]  # per (kind, row): its vector's class
        seen = np.unique(canon_of, return_index=True)[1]
        order = np.empty(first.size, np.int64)
        order[canon_of[np.sort(seen)]] = np.arange(seen.size)
        self._add("thread_clocks", order[canon_of])
        self._add("thread_clock_values", ranked[first[canon_of[np.sort(seen)]]])
        for kind in Kind:
            self._add(f"owns.{kind.name}", self.rank(np.tile(ctas, SLOTS), self.own_cols.reshape(-1),
                                                     c.owns[kind].reshape(-1)))
        self._add("next_op", self.rank(np.tile(ctas, SLOTS), self.own_cols.reshape(-1), c.next_op.reshape(-1)))
        pend = []
        i = 0
        for (cta, key), snaps in self._pending:
            items = []
            for k in snaps:
                items.append((str(k), self.rank_vec(self._pending_vecs[i], cta).tobytes()))
                i += 1
            pend.append((cta, self._sync_key(cta, key), tuple(sorted(items))))
        self._add("pending", tuple(sorted(pend, key=repr)))
        agents = sorted(c.agents, key=lambda a: (a.cta, a.unit, self._col(a.col)))
        self._add("agents", tuple((a.cta, self._col(a.col), a.unit, a.completed, int(self.rank(a.cta, a.col, a.epoch)),
                                   tuple((str(k), self.rank_vec(c._table[v], a.cta).tobytes())
                                         for k, v in sorted(a.bases.items(), key=lambda x: str(x[0]))))
                                  for a in agents))
        self._add("free", tuple(sorted((k, tuple(self._col(a.col) for a in v)) for k, v in c._free.items())))
        self._add("streams", tuple(sorted((int(s), col) for s, col in c._stream_col.items())))

    def _live_pending(self, cta: int, key) -> bool:
        """Whether a release into sync point `key` of CTA `cta` can still be acquired: always, except a phase of
        an mbarrier object no longer at its address (invalidated, 9.7.13.15.10, and maybe initialised again):
        every later wait or arrive names the live object, whose generation (`MbarrierUnit.inits`) is newer, so
        nothing acquires the old one's phases (hb.py compares sync points for equality only). Leaving such
        snapshots out of the canonical state is exact: they have no future (sage_attention on sm_100a retires
        two objects per iteration of its KV loop, whose state otherwise grows every iteration)."""
        if getattr(key, "kind", None) is not SyncKind.MBARRIER:
            return True
        off, gen, _ = key.ident
        u = self.b.units.get("mbarrier")
        bar = u.bars.get((cta, off)) if u is not None else None
        return bar is not None and bar.generation == gen

    def _sync_key(self, cta: int, key) -> object:
        b = self.b
        if isinstance(key, tuple) and key and key[0] == "observed":
            return ("observed", object())  # consumed at once: never left at a boundary
        kind = getattr(key, "kind", None)
        if kind is SyncKind.BARRIER:
            bar_id, inst = key.ident
            return ("bar", bar_id, inst - int(b.bar_instance[cta, bar_id]))
        if kind is SyncKind.WARP_SYNC:
            warp, occ = key.ident
            return ("warpsync", warp, occ - b.warp_syncs)
        if kind is SyncKind.MBARRIER:  # (offset, generation, phase): relative to the object's phase now
            off, gen, phase = key.ident
            u = b.units.get("mbarrier")
            bar = u.bars.get((cta, off)) if u is not None else None
            if bar is not None and bar.generation == gen:
                return ("mbar", off, phase - (bar.phase & 0xFFFFFFFF))
            inits = u.inits.get((cta, off), -1) if u is not None else -1
            if gen <= inits and (bar is None or bar.generation > gen):
                # an object invalidated since (mbarrier.inval, 9.7.13.15.10): every later wait names the
                # live object's generation, so this is never acquired again; compared as it is, by its
                # generation relative to the address's latest init (the clocks' pending releases into
                # such objects are left out before, `_live_pending`)
                return ("mbar-retired", off, gen - inits, phase)
        return ("other", object())  # not canonicalised: never equal

    # ---- the race detector
    def _kept_records(self) -> np.ndarray:
        """The records the non-global bytes keep (their latest writes and the reads since), by byte."""
        det = self.state.detector
        self._bytes = []
        ids = []
        for st in sorted(det._buffers.values(), key=lambda s: s.order):
            if st.buffer.space in (MemSpace.GLOBAL, MemSpace.PARAM):
                continue  # global bytes: the loop only reads them, covered symbolically (grid.py)
            keys, w = _touched(st.lastw)
            hk, h = _touched(st.rhead)
            has_r = hk[h >= 0]
            rb, rr, _ = det._reads(has_r, h[h >= 0]) if has_r.size else (np.zeros(0, np.int64),) * 3
            if rr.size:  # a thread's earlier read of a byte is ordered before its later one (program order):
                # whatever a later write is ordered after, or races with, the latest read of that thread
                # and instruction decides; only those count (a read each iteration of a tile loaded once)
                R = det.R
                sig = _group_ids([rb] + [R[f][rr] for f in
                                         ("hbrow", "pc", "kind", "strong", "proxy", "start", "size", "op", "sem")])
                thread = R["slot"][rr] == 0
                o = np.lexsort((R["epoch"][rr], sig))
                so = sig[o]
                last = np.r_[so[1:] != so[:-1], True]
                keep = np.zeros(rr.size, bool)
                keep[o[last]] = True
                keep |= ~thread
                if st.buffer.space is MemSpace.SHARED:
                    keep &= ~_dominated_agent_reads(self.clocks, R, rb, rr)
                rb, rr = rb[keep], rr[keep]
            for _, ab in sorted(st.atomic.items()):  # bytes of atomics (mbarrier objects): their plain
                # accesses and each thread's latest atomic (races.RaceDetector._atomics)
                ids.append(np.array(ab.plain + [r for r, _ in ab.last.values()], np.int64))
            wk = keys[w >= 0]
            entry_key = np.concatenate([wk, rb])
            role = np.concatenate([np.zeros(wk.size, np.int64), np.arange(1, rb.size + 1)])
            rec = np.concatenate([w[w >= 0], rr])
            o = np.lexsort((role, entry_key))
            self._bytes.append((st, entry_key[o], (role[o] > 0).astype(np.int64), rec[o]))
            ids.append(rec[o])
        return np.concatenate(ids).astype(np.int64) if ids else np.zeros(0, np.int64)

    def _detector(self) -> None:
        det = self.state.detector
        if det.edges or det._release_seen:
            self._add("detector", object())
            return
        R = det.R
        for st, keys, is_read, rec in self._bytes:
            # Races found so far, by what the report shows of them: the pair of instructions (and whether of one
            # CTA), a same-instruction finding's instruction and reason, the atomics' pairs. They change only
            # what is reported (witnesses, counts), never which accesses the detector tests or how, so two
            # boundaries with the same sites found agree on every later finding's site; a period that finds a
            # new site does not repeat. Skipped periods would find these sites again, with other epochs: each
            # is reported once, with the witness of the iterations run (their byte-pair counts cover those).
            found = (tuple(sorted(st.found)),
                     tuple(sorted({(p.a.pc, p.b.pc, code) for (_ev, code), p in st.same.items()})),
                     tuple(x for x, ab in sorted(st.atomic.items()) if ab.best is not None))
            table = self._record_key(rec, [keys, is_read])
            atomic = []
            for x, ab in sorted(st.atomic.items()):
                plain = np.array(ab.plain, np.int64)
                rows = sorted(ab.last)
                last = np.array([ab.last[r][0] for r in rows], np.int64)
                since = np.array([ab.last[r][1] for r in rows], np.int64)
                # which plain accesses came after each thread's latest atomic (the next pairs it makes)
                after = R["time"][plain][None, :] > since[:, None]
                # an agent's row by its canonical column (a thread's row as it is)
                atomic.append((x, self._record_key(plain, []),
                               tuple(("agent", self._agent_rows[r]) if r in self._agent_rows else r for r in rows),
                               self._record_key(last, []), after.tobytes()))
            self._add(f"detector.{st.buffer}", (table, st.pad, st.cells, st.fine, tuple(atomic),
                                                found))

    def _record_key(self, rec: np.ndarray, lead: list) -> tuple:
        """The race detector's records `rec` as a table of their fields, epochs ranked, after `lead` columns,
        `_packed` (an int64 table; built row by row, `_packed_rows`: gemm_fp8 sm_90a's table of 16 rows of 560
        thousand records, stacked, was ~100 MiB of its peak)."""
        R = self.state.detector.R
        if rec.size == 0:
            return _packed(np.zeros(0, np.int64))
        cta = self.clocks.cta_of(R["hbrow"][rec])
        fields = lead + [R[f][rec] for f in
                         ("pc", "lane", "kind", "strong", "proxy", "slot", "start", "size", "op", "sem", "row")]
        fields.append(self._col(R["col"][rec].astype(np.int64)))
        hb = R["hbrow"][rec].astype(np.int64)
        agent = R["slot"][rec] < 0
        fields.append(np.where(agent, -1, hb))  # an agent by its column (reused), a thread by its row
        fields.append(self.rank(cta, R["col"][rec], R["epoch"][rec]))
        return _packed_rows(fields)

    # ---- value shadows
    def _shadows(self) -> None:
        tr = self.state.tracker
        b = self.b
        reals = []
        live = sorted(self.live)
        for name in live:
            t = tr.reg_taint.get(name)
            self._add(f"taint.{name}", np.broadcast_to(t, (b.n,)) if t is not None else None)
            h = tr.reg_hash.get(name)
            if h is not None:
                self._hashes.append(np.broadcast_to(h, (b.n,)))
                reals.append(np.broadcast_to(tr.reg_real.get(name, h), (b.n,)))
            p = tr.reg_parts.get(name)
            if p is not None:
                self._hashes.append(p[0].reshape(-1))
                reals.append(p[2].reshape(-1))
                self._add(f"parts.{name}", p[1])
        sh = tr.mem.get(b.memory._buffers[MemSpace.SHARED])
        if sh is not None:
            idx = np.arange(b.memory.shared.size)
            self._add("shared.pos", sh.pos[idx])
            self._add("shared.taint", sh.taint[idx])
            self._add("shared.cta", sh.cta[idx])
            self._hashes.append(sh.hash[idx])
        self._add("numbers", _first_seen(np.concatenate(self._hashes) if self._hashes else np.zeros(0, np.uint64)))
        self._add("reals", _first_seen(np.concatenate(reals) if reals else np.zeros(0, np.uint64)))


def _dominated_agent_reads(clocks, R, rb: np.ndarray, rr: np.ndarray) -> np.ndarray:
    """Per kept read (bytes `rb`, records `rr`) of a shared-memory buffer: True for a read by an
    asynchronous agent (a wgmma's operand read, say) that a later read of the same byte, by the same
    instruction and CTA with the same kind, strength, proxy, extent and semantics, is ordered after in
    every clock a later access tests it with: the base clock and the proxy-fenced one (races.ordered
    for the pair, and the proxy-fenced entry besides). Every later access ordered after that later
    read is then ordered after this one too (hb.py: a clock learns an agent's epoch only by joining a
    snapshot of that agent's clocks at completion, or a copy of a clock that did, and the later read's
    clocks cover this read's epoch, or it is the same agent's later operation, in the same column at a
    later epoch; happens-before is transitive, PTX 8.9.4); one not ordered after it
    races with it at the same pair of instructions. So this read decides no later finding's site.
    Without this, an operand loaded once and read by a wgmma every iteration (attention's Q tile)
    keeps one record per iteration and the loop's state never repeats."""
    out = np.zeros(rr.size, bool)
    agent = np.nonzero(R["slot"][rr] < 0)[0]
    if agent.size < 2:
        return out
    ar = rr[agent]
    sig = _group_ids([rb[agent], clocks.cta_of(R["hbrow"][ar])]
                     + [R[f][ar] for f in ("pc", "kind", "strong", "proxy", "start", "size", "op", "sem")])
    time_ = R["time"][ar]
    o = np.lexsort((time_, sig))
    s = sig[o]
    new_group = np.r_[True, s[1:] != s[:-1]]
    gid = np.cumsum(new_group) - 1
    ends = np.r_[np.nonzero(new_group)[0][1:], o.size] - 1  # per group: its latest read (by time)
    r1 = ar[o]
    r2 = ar[o[ends[gid]]]
    cand = r1 != r2
    if not cand.any():
        return out
    table = clocks.table
    col = R["col"][r1].astype(np.int64)
    ep = R["epoch"][r1]
    inside = col < table.shape[1]
    colc = np.minimum(col, table.shape[1] - 1)
    # r2's clocks cover r1's epoch (any later access's clock that covers r2 covers r1), or r2 is the same
    # agent, reused (races.ordered: one agent's accesses are in order): r1's column, an epoch no later
    ok = inside & (table[R["base"][r2], colc] >= ep) & (table[R["pbase"][r2], colc] >= ep)
    ok |= (R["hbrow"][r1] == R["hbrow"][r2]) & (R["col"][r1] == R["col"][r2]) & (ep <= R["epoch"][r2])
    out[agent[o[cand & ok]]] = True
    # the same rule with r2 the latest read of r1's own agent (its row and column) in the group: agents of a pool
    # taking turns (attention's tcgen05.mma of Q by two alternating agents: the latest read's proxy-fenced clock
    # covers neither the other agent's epochs) keep one read per agent, not one per iteration
    sig2 = _group_ids([sig, R["hbrow"][ar], R["col"][ar]])
    o2 = np.lexsort((time_, sig2))
    s2 = sig2[o2]
    new2 = np.r_[True, s2[1:] != s2[:-1]]
    last2 = ar[o2[(np.r_[np.nonzero(new2)[0][1:], o2.size] - 1)[np.cumsum(new2) - 1]]]
    q1 = ar[o2]
    out[agent[o2[(q1 != last2) & (R["epoch"][q1] <= R["epoch"][last2])]]] = True
    return out


def _canonical_watches(b) -> set[str]:
    """Registers of `b.reg_watch` whose watcher belongs to unit state that `Canon` compares (the
    pending D/A registers of wgmma operations, a unit's `loop_watches`)."""
    out: set[str] = set()
    for name, u in b.units.items():
        if name == "wgmma":
            out |= {r for st in u.wgs.values() for r, fn in st.watchers.items() if b.reg_watch.get(r) is fn}
        elif name not in ("async_copy", "mbarrier"):
            out |= u.loop_watches(b)
    return out


def bulk_kept(ops: list, committed: np.ndarray, horizon: int) -> list:
    """The bulk operations (`.lane`, `.group`, `.performed`, in issue order) that `Canon._bulk_key` keeps: all but
    the performed ones older than a performed op of the same thread whose group is at least `horizon` commits old
    (selected by every wait without .read that selects the older one, now and after any further commits)."""
    newest: dict[int, int] = {}  # per thread: the group of its newest performed op past the horizon
    for op in ops:
        if op.performed and op.group - int(committed[op.lane]) <= -horizon:
            newest[op.lane] = max(newest.get(op.lane, op.group), op.group)
    return [op for op in ops if not (op.performed and op.group < newest.get(op.lane, op.group))]




def _parity_waits_only(prog) -> bool:
    """Every mbarrier wait of the program names a phase by its parity (none takes an arrive's state,
    which holds the whole phase number, 9.7.13.15.13) and none reads a pending count."""
    for ins in prog.code:
        if ins.opcode != "mbarrier":
            continue
        mods = ins.modifiers
        if ((".test_wait" in mods or ".try_wait" in mods) and ".parity" not in mods) or ".pending_count" in mods:
            return False
    return True


def _wgmma_registers(prog) -> tuple[str, ...]:
    """The D and A registers of every wgmma.mma_async of the program."""
    names: set[str] = set()
    for ins in prog.code:
        if ins.opcode == "wgmma" and ".mma_async" in ins.modifiers:
            spec = parse_spec(ins)
            names.update(r.name for r in spec.d_regs + (spec.a_regs or ()))
    return tuple(sorted(names))


def _lanes_equal(x, y, n: int) -> bytes:
    """Per lane: register value x equals y (either may be missing: zero), as bytes."""
    xv = np.broadcast_to(np.zeros((), np.uint64) if x is None else np.asarray(x).astype(np.uint64), (n,))
    yv = np.broadcast_to(np.zeros((), np.uint64) if y is None else np.asarray(y).astype(np.uint64), (n,))
    return (xv == yv).tobytes()


def _row_classes(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of a 2-D array: (index of each class's first row, each row's class), classes numbered
    in order of first appearance. Exact (rows compared as bytes) and, for the few thousand wide rows of
    a clock table, far cheaper than np.unique(axis=0), which sorts them as opaque records."""
    a = np.ascontiguousarray(a)
    classes: dict[bytes, int] = {}
    inv = np.empty(a.shape[0], np.int64)
    for i in range(a.shape[0]):
        inv[i] = classes.setdefault(a[i].tobytes(), len(classes))
    first = np.full(len(classes), -1, np.int64)
    first[inv[::-1]] = np.arange(a.shape[0] - 1, -1, -1)
    return first, inv


_NARROW = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64))


def _packed(a: np.ndarray) -> tuple:
    """An array as exact, compact key material: its shape and dtype, then each row (along axis 0 of a table of 2
    or more dimensions and at most 64 rows; else the whole array) as the bytes of the narrowest integer type holding
    that row's values. Two arrays get equal packings iff they have the same shape, dtype and values: equal rows pick
    the same type, and a type that holds a row's values converts them exactly. The race detector's record tables keep
    one int64 per field (`_record_key`), most of which fit a byte or two: the canonical states kept per loop
    boundary are the largest part of the peak memory (gemm_fp8 sm_90a: 400 of 910 traced MiB)."""
    head = (a.shape, str(a.dtype))
    if a.dtype.kind not in "iu" or a.size == 0:
        return head + (a.tobytes(),)
    # per row only for a table of few rows (the record tables: one per field); the split follows the shape alone
    rows = a.reshape(a.shape[0], -1) if a.ndim >= 2 and a.shape[0] <= 64 else a.reshape(1, -1)
    out = []
    for row in rows:
        lo, hi = int(row.min()), int(row.max())
        t = next(t for t in _NARROW if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
        out.append((t.char, row.astype(t).tobytes()))
    return head + (tuple(out),)


def _packed_rows(rows: list[np.ndarray]) -> tuple:
    """`_packed(np.stack([r.astype(np.int64) for r in rows]))` for integer rows of one length (at most 64 of them),
    without the stacked table: a row's values, and so its narrowest type and bytes, are the same in any integer
    type that holds them."""
    assert 1 <= len(rows) <= 64
    n = np.size(rows[0])
    head = ((len(rows), n), str(np.dtype(np.int64)))
    if n == 0:
        return head + (b"",)
    out = []
    for row in rows:
        row = np.asarray(row)
        assert row.dtype.kind in "iub" and row.shape == (n,)
        lo, hi = int(row.min()), int(row.max())
        t = next(t for t in _NARROW if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
        out.append((t.char, row.astype(t).tobytes()))
    return head + (tuple(out),)


def _unpacked(p: tuple) -> np.ndarray:
    """The array `_packed` packed (for tests and debugging)."""
    shape, dtype, body = p
    if isinstance(body, bytes):
        return np.frombuffer(body, dtype).reshape(shape)
    return np.concatenate([np.frombuffer(raw, np.dtype(t)).astype(dtype) for t, raw in body]).reshape(shape)


def _group_ids(fields: list[np.ndarray]) -> np.ndarray:
    """Per element of equally long integer arrays `fields`, a non-negative int64 that two elements share
    iff they agree in every field: the fields packed into one int64 as digits (field - its least value, in base
    its span), the key so far renumbered densely (np.unique) before a field whose span would overflow it. Grouping by
    it, then sorting by one more key, is a lexsort by the fields without a stacked table of them (_kept_records:
    a table of 11 rows of 300 thousand reads, and its sorted copy, were ~170 MiB of gemm_fp8 sm_90a's peak, each
    boundary's first touch of those pages most of its ~1 s)."""
    n = np.size(fields[0]) if fields else 0
    key = np.zeros(n, np.int64)
    if n == 0:
        return key
    span = 1
    for f in fields:
        f = np.asarray(f)
        lo, hi = int(f.min()), int(f.max())
        r = hi - lo + 1
        if r > 1 << 31:  # a wide field (epochs, stamps): its distinct values renumbered
            u, f = np.unique(f, return_inverse=True)
            f, lo, r = f.reshape(-1).astype(np.int64), 0, int(u.size)
        if span * r >= 1 << 62:
            u, key = np.unique(key, return_inverse=True)
            key, span = key.reshape(-1).astype(np.int64), int(u.size)
        if r > 1:
            key = key * r + (f.astype(np.int64) - lo)
            span *= r
    return key


def _first_seen(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values in order of first appearance (a canonical renaming)."""
    if values.size == 0:
        return values.astype(np.int64)
    _, first, inv = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.reshape(-1)]


def _touched(p) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the elements of a paged array made so far, in index order."""
    pages = p.made_pages()
    if pages.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, p.dtype)
    idx = (pages[:, None] * PAGE + np.arange(PAGE)).reshape(-1)
    idx = idx[idx < p.size]
    return idx, p[idx]


__all__ = ["LoopSummariser", "Summary", "Canon", "live_in"]
