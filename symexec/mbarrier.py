"""mbarrier objects (PTX 9.7.13.15) as a per-batch unit of the machine.

An mbarrier is an opaque 8-byte object in shared memory (9.7.13.15.1). Its state lives here, keyed
by (CTA slot, shared-window offset), not in the shared bytes: phase, pending arrivals, expected
arrivals and tx-count (9.7.13.15.2). A phase completes when pending arrivals and tx-count are both
zero; then the phase advances and pending resets to expected (9.7.13.15.6).

Asynchronous work tracked by a phase completes at the latest legal point. A phase whose
arrivals are all in is completed lazily, when the next operation on that barrier observes it
(an arrive, expect/complete-tx, a wait, inval); only then do the bytes of the `cp.async.bulk ...
mbarrier::complete_tx::bytes` copies it needs land (earliest issued first, their complete-tx
counted) and the `cp.async` copies handed to it by `cp.async.mbarrier.arrive` get written. A
thread that reads the destination without waiting on the barrier therefore sees stale bytes.

`test_wait`/`try_wait` that return False on every executing lane block their group (status
"wait") until some mbarrier of the batch changes; when nothing else can run, the group is let go
once with False (legal for both instructions), so a kernel that does other work between polls
still progresses, while a pure spin loop with no possible arrival is reported as a deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported

from . import asyncops
from .errors import MemoryFault
from .events import Acquire, Buffer, MemoryAccess, MemSpace, Release, SyncKind, SyncPoint
from .opcodes import Scope
from .machine import Group
from .memory import SHARED_BASE, WINDOW
from .units import Unit, UnitState

if TYPE_CHECKING:  # pragma: no cover
    from .events import AsyncOp
    from .machine import Batch, Machine

MAX_COUNT = (1 << 20) - 1  # range of expected/pending arrivals and |tx-count| (9.7.13.15.2)

# The opaque 64-bit `state` of mbarrier.arrive (contents are implementation specific, 9.7.13.15.13):
# bits 0-31 phase, 32-51 pending arrivals before the arrive, bit 52 set by .noComplete, 53-63 a tag.
_TAG = 0x4D5
_TAG_SHIFT = 53
_NOCOMPLETE = 1 << 52

_SEM = {".release", ".relaxed", ".acquire"}
_SCOPE = {".cta", ".cluster"}
_SPACES = {".shared", ".shared::cta", ".shared::cluster"}


class Landing(NamedTuple):
    """A bulk copy in flight on a barrier: its complete-tx of `nbytes` happens when `land()` writes
    its bytes; `op` is the asynchronous operation (for observers); `dest` names the shared bytes it
    writes (issuing lanes and offsets, as bytes), so that two states with copies in flight can be
    compared (check/loops.py)."""

    nbytes: int
    land: Callable[[], None]
    op: "AsyncOp | None"
    dest: bytes = b""


@dataclass(eq=False)
class Barrier:
    key: tuple[int, int]  # (CTA slot, shared offset)
    expected: int
    pending: int
    phase: int = 0
    tx: int = 0  # expected minus completed transaction bytes
    generation: int = 0  # how many objects were initialised at this address before (check-mode keys)
    observed: bool = True  # a wait returned True for the last completed phase (9.7.13.15.4)
    landing: list[Landing] = field(default_factory=list)  # deferred bulk copies, in issue order
    on_complete: list[Callable[[], None]] = field(default_factory=list)  # cp.async handed over


class MbarrierUnit(UnitState):
    """All mbarrier objects of one batch. The batch's observers hear of the synchronisation:
    release arrivals publish into the phase, acquiring waits that return True join it."""

    def __init__(self, batch: "Batch") -> None:
        self.batch = batch
        self.bars: dict[tuple[int, int], Barrier] = {}
        self.inits: dict[tuple[int, int], int] = {}
        # (instruction, barrier key, phase) of arrive-ons made before any wait observed the previous
        # phase complete: the manual requires such a wait (9.7.13.15.4); kept for the checker
        self.unobserved: list[tuple[A.Instruction, tuple[int, int], int]] = []
        self.stamp = 0  # bumped by every state change: waiting groups re-check then
        self.forced: dict[tuple, int] = {}  # wait site -> stamp at which it was let go with False
        self.tokens: set[tuple] = set()
        self.completed_phases = 0
        self.settling: Barrier | None = None  # the barrier whose phase is completing, while it does

    # ------------------------------------------------------------------ lookup
    def get(self, key: tuple[int, int], ins: A.Instruction) -> Barrier:
        """The barrier an operation acts on, its completable phase completed first (so whatever the
        operation adds, e.g. an `on_complete` callback, belongs to the phase now current)."""
        bar = self.bars.get(key)
        if bar is None:
            raise UndefinedBehavior(f"{ins.name} on shared address 0x{key[1]:x} (CTA slot {key[0]}), "
                                    "which holds no initialised mbarrier object (9.7.13.15)", ins)
        self.settle(bar)
        return bar

    # ------------------------------------------------------------------ operations (9.7.13.15.5-7)
    def init(self, key: tuple[int, int], count: int, ins: A.Instruction) -> None:
        if key in self.bars:
            raise UndefinedBehavior(f"{ins.name} on shared address 0x{key[1]:x} (CTA slot {key[0]}), which "
                                    "already holds a valid mbarrier object (inval it first, 9.7.13.15.9)", ins)
        if not 1 <= count <= MAX_COUNT:
            raise UndefinedBehavior(f"{ins.name}: count {count} outside [1, 2^20-1] (9.7.13.15.9)", ins)
        gen = self.inits[key] = self.inits.get(key, -1) + 1
        self.bars[key] = Barrier(key, count, count, generation=gen)
        self.stamp += 1

    def inval(self, key: tuple[int, int], ins: A.Instruction) -> None:
        bar = self.get(key, ins)
        for copy in bar.landing:  # copies still in flight land before the memory is reused
            copy.land()
        for fn in bar.on_complete:
            fn()
        del self.bars[key]
        self.stamp += 1

    def expect_tx(self, key: tuple[int, int], n: int, ins: A.Instruction) -> None:
        bar = self.get(key, ins)
        bar.tx += n
        self._check_tx(bar, ins)
        self.stamp += 1

    def complete_tx(self, key: tuple[int, int], n: int, ins: A.Instruction) -> None:
        bar = self.get(key, ins)
        bar.tx -= n
        self._check_tx(bar, ins)
        self.stamp += 1

    def arrive(self, key: tuple[int, int], count: int, ins: A.Instruction, no_complete: bool = False,
               drop: bool = False) -> int:
        """One thread's arrive-on (arrive_drop: first lower the expected count); returns its state."""
        bar = self.get(key, ins)
        if not 1 <= count <= MAX_COUNT:
            raise UndefinedBehavior(f"{ins.name}: count {count} outside [1, 2^20-1] (9.7.13.15.13)", ins)
        if drop:
            if count > bar.expected:
                raise UndefinedBehavior(f"{ins.name}: drops {count} arrivals but only {bar.expected} are "
                                        "expected (9.7.13.15.14)", ins)
            bar.expected -= count
        if count > bar.pending:
            raise UndefinedBehavior(f"{ins.name}: {count} arrival(s) on an mbarrier with {bar.pending} pending "
                                    "(pending count would fall below 0, 9.7.13.15.2)", ins)
        self.note_arrival(bar, ins)
        state = (_TAG << _TAG_SHIFT) | ((bar.pending & MAX_COUNT) << 32) | (bar.phase & 0xFFFFFFFF)
        if no_complete:
            state |= _NOCOMPLETE
        bar.pending -= count
        self.stamp += 1
        if no_complete and bar.pending == 0 and bar.tx == 0:
            raise UndefinedBehavior(f"{ins.name}: .noComplete arrive completes the current phase "
                                    "(9.7.13.15.13)", ins)
        return state

    def add_pending(self, key: tuple[int, int], ins: A.Instruction) -> Barrier:
        """cp.async.mbarrier.arrive without .noinc: pending + 1 before the asynchronous arrive."""
        bar = self.get(key, ins)
        if bar.pending + 1 > MAX_COUNT:
            raise UndefinedBehavior(f"{ins.name}: pending count would exceed 2^20-1 (9.7.13.15.15)", ins)
        return bar

    def track(self, key: tuple[int, int], nbytes: int, land: Callable[[], None], ins: A.Instruction,
              op: "AsyncOp | None", dest: bytes = b"") -> None:
        """An asynchronous copy (`op`, for observers) that performs complete-tx(nbytes) on this barrier
        once its bytes land; `land()` writes them. Its completion releases into the phase it
        completes: the complete-tx is ordered only after the copy's own accesses, not after the
        issuing thread's earlier instructions (PTX 8.9.1.1)."""
        bar = self.get(key, ins)
        bar.landing.append(Landing(nbytes, land, op, dest))
        self.stamp += 1

    # ------------------------------------------------------------------ phases (9.7.13.15.6)
    @staticmethod
    def _completable(bar: Barrier) -> int | None:
        """How many deferred copies must land for the phase to complete now (None: it cannot)."""
        if bar.pending != 0:
            return None
        if bar.tx == 0:
            return 0
        total = 0
        for i, (nbytes, *_) in enumerate(bar.landing):  # the earliest-issued copies land first
            total += nbytes
            if total == bar.tx:
                return i + 1
            if total > bar.tx:
                return None
        return None

    def settle(self, bar: Barrier) -> None:
        """Complete the current phase if it can complete (landing the copies it needs)."""
        k = self._completable(bar)
        if k is None:
            return
        landed, bar.landing = bar.landing[:k], bar.landing[k:]
        self.settling = bar  # writes made now belong to this phase (for a happens-before checker)
        try:
            for nbytes, land, op, _ in landed:
                land()
                bar.tx -= nbytes
                asyncops.complete(self.batch, op, self.point(bar, bar.phase))  # landed before the phase completes
            done, bar.on_complete = bar.on_complete, []
            for fn in done:
                fn()
        finally:
            self.settling = None
        bar.phase += 1
        bar.observed = False
        bar.pending = bar.expected
        self.completed_phases += 1
        self.stamp += 1

    def note_arrival(self, bar: Barrier, ins: A.Instruction) -> None:
        if not bar.observed and len(self.unobserved) < 64:
            self.unobserved.append((ins, bar.key, bar.phase - 1))
            bar.observed = True  # once per phase

    # ------------------------------------------------------------------ happens-before (check mode)
    @property
    def observed(self) -> bool:
        """Someone listens for synchronisation (check mode)."""
        return bool(self.batch.observers)

    @staticmethod
    def point(bar: Barrier, phase: int) -> SyncPoint:
        return SyncPoint(SyncKind.MBARRIER, (bar.key[1], bar.generation, phase & 0xFFFFFFFF))

    def release(self, lanes: np.ndarray, bar: Barrier, phase: int, ins: A.Instruction | None = None,
                relaxed: bool = False) -> None:
        """`lanes` publish what they did so far into `phase` of `bar` (an arrive-on; `relaxed`: without
        release semantics)."""
        if self.batch.observers and lanes.size:
            self.batch.emit(Release(lanes, self.point(bar, phase), ins, relaxed))

    def acquire(self, lanes: np.ndarray, bar: Barrier, phase: int, ins: A.Instruction | None = None,
                relaxed: bool = False) -> None:
        """`lanes` observed `phase` of `bar` complete (with acquire semantics unless `relaxed`,
        9.7.13.15.16)."""
        if self.batch.observers and lanes.size:
            self.batch.emit(Acquire(lanes, self.point(bar, phase), ins, relaxed=relaxed))

    @staticmethod
    def _check_tx(bar: Barrier, ins: A.Instruction) -> None:
        if abs(bar.tx) > MAX_COUNT:
            raise UndefinedBehavior(f"{ins.name}: tx-count {bar.tx} outside [-(2^20-1), 2^20-1] "
                                    "(9.7.13.15.2)", ins)


def unit(batch: "Batch") -> MbarrierUnit:
    return batch.unit("mbarrier", lambda: MbarrierUnit(batch))


# ---------------------------------------------------------------------- addressing


def shared_keys(machine: "Machine", batch: "Batch", ins: A.Instruction, op: A.Operand,
                lanes: np.ndarray) -> np.ndarray:
    """(CTA slot, shared offset) of an mbarrier address operand per lane: (k, 2) int64.

    With `.shared{::cta}` the address is a shared-window offset; with no state space it is generic
    and must fall in the shared window (9.7.13.15.9). `.shared::cluster` addresses are accepted only
    for a cluster of one CTA, where they name the executing CTA's own shared memory.
    """
    space = next((m for m in ins.positional if m in _SPACES), None)
    if space == ".shared::cluster" and tuple(machine.launch.cluster) != (1, 1, 1):
        raise Unsupported(f"{ins.name}: .shared::cluster addressing in a cluster of several CTAs", ins)
    hint, addrs = batch.ctx.address(op)
    a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (batch.n,))[lanes]
    if space is None and hint != ".shared":
        inside = (a >= np.uint64(SHARED_BASE)) & (a < np.uint64(SHARED_BASE + WINDOW))
        if not inside.all():
            bad = np.nonzero(~inside)[0][:4]
            raise UndefinedBehavior(f"{ins.name}: generic address 0x{int(a[bad[0]]):x} (thread slot "
                                    f"{int(lanes[bad[0]])}) is not in the .shared::cta window", ins)
        a = a - np.uint64(SHARED_BASE)
    off = a.astype(np.int64)
    bad = (off < 0) | (off + 8 > batch.memory.shared_bytes)
    if bad.any():
        sel = np.nonzero(bad)[0][:8]
        raise MemoryFault(f"{ins.name}: mbarrier object outside shared memory", ins,
                          [int(lanes[i]) for i in sel], [int(a[i]) for i in sel], ".shared")
    if (off % 8).any():
        i = int(np.nonzero(off % 8)[0][0])
        raise UndefinedBehavior(f"{ins.name}: mbarrier address 0x{int(off[i]):x} is not 8-byte aligned "
                                "(9.7.13.15.1)", ins)
    return np.stack([batch.cta_of_lane[lanes].astype(np.int64), off], axis=1)


def by_barrier(keys: np.ndarray) -> list[tuple[tuple[int, int], np.ndarray]]:
    """Group lane indices (into `keys`) by barrier, in order of each barrier's first lane."""
    if keys.shape[0] == 0:
        return []
    uniq, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    out = []
    for u in np.argsort(first):
        out.append(((int(uniq[u, 0]), int(uniq[u, 1])), np.nonzero(inv == u)[0]))
    return out


def _lane_values(batch: "Batch", op: A.Operand, ty: str, lanes: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(batch.ctx.read(op, ty)), (batch.n,))[lanes].astype(np.int64)


# ---------------------------------------------------------------------- handlers


_OPS = (".init", ".inval", ".test_wait", ".try_wait", ".pending_count", ".arrive_drop", ".arrive",
        ".expect_tx", ".complete_tx")


def mbarrier(machine: "Machine", batch: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    op = next((o for o in _OPS if o in ins.modifiers), None)
    allowed = _SEM | _SCOPE | _SPACES | {".b64", op or ""}
    if op in (".arrive", ".arrive_drop"):
        allowed |= {".expect_tx", ".noComplete"}
    if op in (".test_wait", ".try_wait"):
        allowed |= {".parity"}
    if op in (".init", ".inval", ".test_wait", ".try_wait", ".pending_count"):
        allowed -= {".shared::cluster"}  # only arrive, arrive_drop and expect/complete_tx (9.7.13.15.8)
    extra = ins.modifiers - allowed
    if op is None or extra:
        raise Unsupported(f"{ins.name}" + (f": modifier(s) {' '.join(sorted(extra))}" if extra else ""), ins)
    copies = batch.units.get("async_copy")
    if copies is not None:  # cp.async of threads that exited meanwhile complete (symexec.async_copy)
        copies.reap(batch)
    if op in (".test_wait", ".try_wait"):
        return _wait(machine, batch, g, ins, mask)
    if mask.any():
        lanes = np.nonzero(mask)[0]
        batch.ctx.begin(mask, ins)
        u = unit(batch)
        if op == ".pending_count":
            _pending_count(batch, ins, lanes, mask)
        else:
            addr_op = ins.operands[0 if op in (".init", ".inval", ".expect_tx", ".complete_tx") else 1]
            keys = shared_keys(machine, batch, ins, addr_op, lanes)
            _touch(batch, lanes, keys, ins, plain=op in (".init", ".inval"))
            if op == ".init":
                _opaque(batch, keys)
                counts = _lane_values(batch, ins.operands[1], ".u32", lanes)
                for i in range(lanes.size):
                    u.init((int(keys[i, 0]), int(keys[i, 1])), int(counts[i]), ins)
            elif op == ".inval":
                for key, _ in by_barrier(keys):
                    u.inval(key, ins)
            elif op in (".expect_tx", ".complete_tx"):
                n = _lane_values(batch, ins.operands[1], ".u32", lanes)
                for i in range(lanes.size):
                    key = (int(keys[i, 0]), int(keys[i, 1]))
                    (u.expect_tx if op == ".expect_tx" else u.complete_tx)(key, int(n[i]), ins)
            else:
                _arrive(machine, batch, ins, lanes, mask, keys, op == ".arrive_drop")
    g.pc += 1
    return True


def _opaque(batch: "Batch", keys: np.ndarray) -> None:
    """mbarrier.init makes the 8 bytes an opaque object (9.7.13.15.1: any non-mbarrier operation on an
    initialised object is undefined; its state lives in `MbarrierUnit`): the model's bytes of it become zero,
    the same for every input, so that what the location held before (a staged tile or scale, data) does not
    stay there as bits the shadow's taint (that of init's operands: none) calls a constant."""
    sb = batch.memory.shared_bytes
    flat = (keys[:, 0].astype(np.int64) * sb + keys[:, 1].astype(np.int64))[:, None] + np.arange(8)
    batch.memory.shared[flat.reshape(-1)] = 0


def _touch(batch: "Batch", lanes: np.ndarray, keys: np.ndarray, ins: A.Instruction, plain: bool) -> None:
    """For observers: an mbarrier operation accesses the 8-byte object in shared memory (9.7.13.15.1).
    init and inval write it like a plain store; arrive, expect/complete_tx and the waits are atomic
    read-modify-writes of it (they do not race with each other, but every one must be ordered with
    the init before it and the inval after it, whose memory may then be reused)."""
    if not batch.observers or not lanes.size:
        return
    sb = batch.memory.shared_bytes
    flat = (keys[:, 0].astype(np.int64) * sb + keys[:, 1].astype(np.int64))[:, None] + np.arange(8)
    ev = MemoryAccess(True, Buffer(MemSpace.SHARED, batch.batch_id), batch.memory.shared.size, lanes, flat, ins,
                      batch.ctx.pc, scope=Scope.NONE if plain else Scope.CTA, atomic=not plain)
    batch.emit(ev)


def _arrive(machine: "Machine", batch: "Batch", ins: A.Instruction, lanes: np.ndarray, mask: np.ndarray,
            keys: np.ndarray, drop: bool) -> None:
    """arrive / arrive_drop {.expect_tx} {.noComplete} (9.7.13.15.13-14), lane by lane in lane order."""
    u = unit(batch)
    ops = ins.operands
    dest = ops[0]
    if ".shared::cluster" in ins.positional and not isinstance(dest, A.Sink):
        raise UndefinedBehavior(f"{ins.name}: an arrive on a .shared::cluster mbarrier cannot return a state; "
                                "the destination must be '_' (9.7.13.15.13)", ins)
    expect = ".expect_tx" in ins.modifiers
    no_complete = ".noComplete" in ins.modifiers
    if no_complete and len(ops) < 3:
        raise Unsupported(f"{ins.name}: .noComplete without a count operand", ins)
    tx = _lane_values(batch, ops[2], ".u32", lanes) if expect else None
    counts = (_lane_values(batch, ops[2], ".u32", lanes) if len(ops) > 2 and not expect
              else np.ones(lanes.size, dtype=np.int64))
    states = np.zeros(lanes.size, dtype=np.uint64)
    for key, idx in by_barrier(keys):
        c = counts[idx]
        bar = u.get(key, ins)
        total = int(c.sum())
        if (tx is None and not drop and c.min() >= 1 and c.max() <= MAX_COUNT
                and (total < bar.pending or (total == bar.pending and not no_complete))):
            # the common case, vectorised: every arrival lands in the current phase
            before = (bar.pending - (np.cumsum(c) - c)).astype(np.uint64)
            states[idx] = (np.uint64(_TAG << _TAG_SHIFT) | ((before & np.uint64(MAX_COUNT)) << np.uint64(32))
                           | np.uint64(bar.phase & 0xFFFFFFFF) | np.uint64(_NOCOMPLETE if no_complete else 0))
            u.note_arrival(bar, ins)
            bar.pending -= total
            u.stamp += 1
            continue
        for i in idx:  # lane by lane, in lane order (a phase may complete in between)
            if tx is not None:
                u.expect_tx(key, int(tx[i]), ins)
            states[i] = u.arrive(key, int(counts[i]), ins, no_complete, drop)
    if u.observed:  # .release is the default (9.7.13.15.13); a .relaxed arrive orders only through
        # tcgen05 fences (9.7.16.6.3), which the observer decides
        phases = (states & np.uint64(0xFFFFFFFF)).astype(np.int64)
        for key, idx in by_barrier(keys):
            for ph in np.unique(phases[idx]):
                u.release(lanes[idx[phases[idx] == ph]], u.bars[key], int(ph), ins, ".relaxed" in ins.modifiers)
    if not isinstance(dest, A.Sink):
        full = np.zeros(batch.n, dtype=np.uint64)
        full[lanes] = states
        batch.ctx.write(dest, full, ".b64")


def _pending_count(batch: "Batch", ins: A.Instruction, lanes: np.ndarray, mask: np.ndarray) -> None:
    """mbarrier.pending_count.b64 count, state (9.7.13.15.17)."""
    st = np.broadcast_to(np.asarray(batch.ctx.read(ins.operands[1], ".b64")), (batch.n,))[lanes].astype(np.uint64)
    ok = ((st >> np.uint64(_TAG_SHIFT)) == np.uint64(_TAG)) & ((st & np.uint64(_NOCOMPLETE)) != 0)
    if not ok.all():
        raise UndefinedBehavior(f"{ins.name}: state operand is not the result of an mbarrier.arrive{{_drop}}"
                                ".noComplete (9.7.13.15.17)", ins)
    out = np.zeros(batch.n, dtype=np.uint32)
    out[lanes] = ((st >> np.uint64(32)) & np.uint64(MAX_COUNT)).astype(np.uint32)
    batch.ctx.write(ins.operands[0], out, ".u32")


def _wait(machine: "Machine", batch: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    """test_wait / try_wait {.parity} (9.7.13.15.16): valid for the current phase (False) or the
    immediately preceding one (True); anything else is undefined."""
    if not mask.any():
        g.pc += 1
        return True
    u = unit(batch)
    lanes = np.nonzero(mask)[0]
    keys = shared_keys(machine, batch, ins, ins.operands[1], lanes)
    _touch(batch, lanes, keys, ins, plain=False)
    parity = ".parity" in ins.modifiers
    arg = np.broadcast_to(np.asarray(batch.ctx.read(ins.operands[2], ".u32" if parity else ".b64")),
                          (batch.n,))[lanes].astype(np.uint64)
    done = np.zeros(lanes.size, dtype=bool)
    for key, idx in by_barrier(keys):
        bar = u.get(key, ins)
        a = arg[idx]
        if parity:
            if (a > 1).any():
                raise UndefinedBehavior(f"{ins.name}: phaseParity {int(a[a > 1][0])} is neither 0 nor 1", ins)
            done[idx] = a != np.uint64(bar.phase & 1)
            continue
        if ((a >> np.uint64(_TAG_SHIFT)) != np.uint64(_TAG)).any():
            raise UndefinedBehavior(f"{ins.name}: state operand was not returned by an mbarrier.arrive", ins)
        ph = a & np.uint64(0xFFFFFFFF)
        cur, prev = np.uint64(bar.phase & 0xFFFFFFFF), np.uint64((bar.phase - 1) & 0xFFFFFFFF)
        if ((ph != cur) & (ph != prev)).any() or (bar.phase == 0 and (ph == prev).any()):
            raise UndefinedBehavior(f"{ins.name}: waits on a phase that is neither the current phase "
                                    f"({bar.phase}) nor the immediately preceding one of mbarrier 0x{key[1]:x}", ins)
        done[idx] = ph == prev
    for key, idx in by_barrier(keys):
        if done[idx].any():
            u.bars[key].observed = True
    if done.any() and u.observed:  # .acquire is the default; .relaxed: see _arrive
        for key, idx in by_barrier(keys):
            hit = idx[done[idx]]
            if hit.size:
                bar = u.bars[key]
                u.acquire(lanes[hit], bar, bar.phase - 1, ins, ".relaxed" in ins.modifiers)
    if not done.any():
        site = (g.pc, mask.tobytes())
        if site in u.tokens:  # let go once with False: nothing else could run
            u.tokens.discard(site)
        else:
            _block(batch, g, ins, mask, u, site, keys)
            return False
    out = np.zeros(batch.n, dtype=bool)
    out[lanes] = done
    batch.ctx.begin(mask, ins)
    batch.ctx.write(ins.operands[0], out, ".pred")
    g.pc += 1
    return True


def _block(batch: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray, u: MbarrierUnit, site: tuple,
           keys: np.ndarray) -> None:
    rest = g.mask & ~mask
    if rest.any():  # lanes whose guard was false go on
        batch.split(g, rest, g.pc + 1, ins)
        site = (g.pc, g.mask.tobytes())
    stamp = u.stamp
    slot, off = int(keys[0, 0]), int(keys[0, 1])

    def describe() -> str:
        bar = u.bars.get((slot, off))
        if bar is None:
            return f"mbarrier at shared 0x{off:x} (CTA slot {slot}), since invalidated"
        return (f"mbarrier at shared 0x{off:x} (CTA slot {slot}) to complete phase {bar.phase}: "
                f"{bar.pending} arrival(s) pending, tx-count {bar.tx - sum(c.nbytes for c in bar.landing)}")

    def wake() -> bool:
        if u.stamp != stamp:
            return True
        if u.forced.get(site) != stamp:  # nothing else can run: let it go once with False
            u.forced[site] = stamp
            u.tokens.add(site)
            return True
        g.waiting_for = describe()  # the scheduler is about to report a deadlock
        return False

    g.status = "wait"
    g.wake = wake
    g.waiting_for = describe()


UNIT = Unit("mbarrier", {"mbarrier": mbarrier}, "mbarrier objects (PTX 9.7.13.15)")
