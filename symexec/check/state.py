"""Check-mode state of a run: the access log, vector clocks and shadow values.

`CheckState` is an observer of the machine (symexec.events): every memory access event updates
the memory shadows and is logged with its thread's clock stamp; release/acquire events advance the
vector clocks (hb.py); reconvergence after a both-ways exploration marks the registers the two
paths wrote as data-dependent. The instruction context (symexec.check.exec.CheckedExec) feeds
the register shadows. `races.find_races` then finds conflicting accesses that happens-before does
not order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A

from ..events import Acquire, Buffer, MemoryAccess, MemSpace, Observer, Reconverged, Release
from ..opcodes import Order
from .hb import Clocks
from .shadow import DATA, INPUT_KEY, UNINIT, UNINIT_KEY, Tracker

READ, WRITE, ATOMIC = 0, 1, 2
RELEASE, ACQUIRE = int(Order.RELEASE), int(Order.ACQUIRE)


@dataclass
class Event:
    time: int
    pc: int
    kind: int
    strong: int
    buffer: Buffer
    lanes: np.ndarray
    flat: np.ndarray  # (k, nbytes) byte offsets in the buffer
    rows: np.ndarray
    bases: np.ndarray
    epochs: np.ndarray
    hashes: np.ndarray | None = None  # stored values' numbers (writes)
    real: np.ndarray | None = None  # stored values' real-arithmetic numbers (writes)
    sem: int = 0  # RELEASE / ACQUIRE bits


@dataclass
class CheckState(Observer):
    """One per run; each CTA batch starts with `on_batch` (CTA slots map to global CTA indices)."""

    lanes_per_cta: int
    n_ctas: int
    tracker: Tracker = field(init=False)
    clocks: Clocks = field(init=False)
    events: list[Event] = field(default_factory=list)
    data_dependent: list[tuple[str, A.Instruction]] = field(default_factory=list)
    uninit_outputs: list[tuple[A.Instruction, int, int]] = field(default_factory=list)
    input_buffers: set = field(default_factory=set)
    time: int = 0
    pc: int = -1
    ins: A.Instruction | None = None
    cta_base: int = 0
    n: int = 0
    both_paths: int = 0  # data-dependent branches explored both ways

    def __post_init__(self) -> None:
        self.mem: dict = {}
        self.tracker = Tracker(1)
        self.clocks = Clocks(self.n_ctas, self.lanes_per_cta)

    # -------------------------------------------------------------- observer
    def on_batch(self, batch) -> None:
        self.n = batch.n
        self.cta_base = batch.cta_base
        self.tracker = Tracker(batch.n)
        self.tracker.mem = self.mem  # memory shadows outlive batches (global memory)

    def on_access(self, ev: MemoryAccess) -> None:
        self.access(ev)

    def on_release(self, ev: Release) -> None:
        self.clocks.release(self.rows(ev.lanes), ev.point)

    def on_acquire(self, ev: Acquire) -> None:
        self.clocks.acquire(self.rows(ev.lanes), ev.point, ev.consume)

    def on_reconverge(self, ev: Reconverged) -> None:
        if ev.data_registers:
            self.tracker.taint_registers(ev.data_registers)

    def rows(self, lanes: np.ndarray) -> np.ndarray:
        return self.clocks.rows_of(lanes + self.cta_base * self.lanes_per_cta, self.lanes_per_cta)

    # -------------------------------------------------------------- per instruction
    def begin(self, ins: A.Instruction, pc: int) -> None:
        self.time += 1
        self.pc = pc
        self.ins = ins
        self.tracker.begin(ins)

    def note_dependence(self, what: str, taint: np.ndarray, mask: np.ndarray) -> None:
        """A branch, address or synchronisation operand computed from input data."""
        if (np.broadcast_to(taint, (self.n,)) & DATA & mask.astype(np.uint8)).any():
            if len(self.data_dependent) < 32:
                self.data_dependent.append((what, self.ins))

    # -------------------------------------------------------------- memory
    def shadow_for(self, buffer: Buffer, size: int):
        if buffer.space is MemSpace.SHARED:
            return self.tracker.shadow(buffer, size, int(UNINIT), UNINIT_KEY, 1)
        if buffer.space is MemSpace.GLOBAL and buffer.index in self.input_buffers:
            return self.tracker.shadow(buffer, size, int(DATA), INPUT_KEY, hash(buffer) & 0xFFFFFFFF)
        return self.tracker.shadow(buffer, size, 0, INPUT_KEY, hash(buffer) & 0xFFFFFFFF)

    def access(self, ev: MemoryAccess) -> None:
        lanes, flat = ev.lanes, ev.flat
        shadow = self.shadow_for(ev.buffer, ev.size)
        is_write = ev.write
        k = ATOMIC if ev.atomic else (WRITE if is_write else READ)
        hashes = real = None
        rows = self.rows(lanes)
        ctas = rows // self.lanes_per_cta
        if is_write:
            hashes, real = self.tracker.on_store(shadow, flat, lanes, flat.shape[1], ctas)
            if ev.buffer.space is MemSpace.GLOBAL:  # an output: uninitialised shared data must not reach it
                bad = (self.tracker.in_taint[lanes] & UNINIT) != 0
                if bad.any() and len(self.uninit_outputs) < 8:
                    self.uninit_outputs.append((ev.ins, int(lanes[np.argmax(bad)]), ev.pc))
        else:
            # the old value an atomic returns depends on the order of the atomics
            self.tracker.on_load(shadow, flat, lanes, flat.shape[1], ctas, volatile=ev.atomic)
        bases, epochs = self.clocks.stamp(rows)
        if ev.atomic and not is_write:
            return  # an atomic is logged once, as its write
        self.events.append(Event(self.time, ev.pc, k, int(ev.scope), ev.buffer, lanes, flat, rows, bases, epochs,
                                 hashes, real, int(ev.order)))
