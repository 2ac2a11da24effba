"""Check-mode state of one CTA batch: the access log, vector clocks and shadow values.

The executor calls `access()` for every memory access (with the buffer and flat byte offsets it
touched), `arrive()`/`complete()` at barriers and other synchronisation, and `begin()` before each
instruction. `races()` then finds conflicting accesses that happens-before does not order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A

from .hb import Clocks
from .shadow import DATA, INPUT_KEY, UNINIT, UNINIT_KEY, Tracker

READ, WRITE, ATOMIC = 0, 1, 2
_SCOPES = {".cta": 1, ".cluster": 2, ".gpu": 3, ".sys": 4}
_STRONG = re.compile(r"^\.(relaxed|acquire|release|acq_rel|volatile|mmio)$")


RELEASE, ACQUIRE = 1, 2


def semantics(ins: A.Instruction | None) -> int:
    """Release/acquire bits of a strong access (PTX 8.4: .release, .acquire, .acq_rel)."""
    if ins is None:
        return 0
    m = ins.modifiers
    return (RELEASE if (".release" in m or ".acq_rel" in m) else 0) | \
        (ACQUIRE if (".acquire" in m or ".acq_rel" in m) else 0)


def strength(ins: A.Instruction) -> int:
    """0 for a weak access; otherwise the scope of a strong one (PTX 8.4: morally strong)."""
    if ins.opcode in ("atom", "red"):
        return max((_SCOPES.get(m, 0) for m in ins.modifiers), default=0) or 3  # default .gpu
    if any(_STRONG.match(m) for m in ins.modifiers):
        if ".volatile" in ins.modifiers:
            return 4
        return max((_SCOPES.get(m, 0) for m in ins.modifiers), default=0) or 4
    return 0


@dataclass
class Event:
    time: int
    pc: int
    kind: int
    strong: int
    buffer: object
    lanes: np.ndarray
    flat: np.ndarray  # (k, nbytes) byte offsets in the buffer
    rows: np.ndarray
    bases: np.ndarray
    epochs: np.ndarray
    hashes: np.ndarray | None = None  # stored values' numbers (writes)
    real: np.ndarray | None = None  # stored values' real-arithmetic numbers (writes)
    sem: int = 0  # RELEASE / ACQUIRE bits


@dataclass
class CheckState:
    """One per run; `new_batch()` before each CTA batch (CTA slots map to global CTA indices)."""

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
    atomic: bool = False
    cta_base: int = 0
    n: int = 0
    both_paths: int = 0  # data-dependent branches explored both ways

    def __post_init__(self) -> None:
        self.mem: dict = {}
        self.tracker = Tracker(1)
        self.clocks = Clocks(self.n_ctas, self.lanes_per_cta)

    def new_batch(self, n_lanes: int, cta_base: int) -> None:
        self.n = n_lanes
        self.cta_base = cta_base
        self.tracker = Tracker(n_lanes)
        self.tracker.mem = self.mem  # memory shadows outlive batches (global memory)

    def rows(self, lanes: np.ndarray) -> np.ndarray:
        return self.clocks.rows_of(lanes + self.cta_base * self.lanes_per_cta, self.lanes_per_cta)

    # -------------------------------------------------------------- per instruction
    def begin(self, ins: A.Instruction, pc: int) -> None:
        self.time += 1
        self.pc = pc
        self.ins = ins
        self.atomic = ins.opcode in ("atom", "red")
        self.tracker.begin(ins)

    def note_dependence(self, what: str, taint: np.ndarray, mask: np.ndarray) -> None:
        """A branch, address or synchronisation operand computed from input data."""
        if (np.broadcast_to(taint, (self.n,)) & DATA & mask.astype(np.uint8)).any():
            if len(self.data_dependent) < 32:
                self.data_dependent.append((what, self.ins))

    # -------------------------------------------------------------- memory
    def shadow_for(self, buffer_key, size: int):
        kind = buffer_key[0]
        if kind == "shared":
            return self.tracker.shadow(buffer_key, size, int(UNINIT), UNINIT_KEY, 1)
        if kind == "global" and buffer_key[1] in self.input_buffers:
            return self.tracker.shadow(buffer_key, size, int(DATA), INPUT_KEY, hash(buffer_key) & 0xFFFFFFFF)
        return self.tracker.shadow(buffer_key, size, 0, INPUT_KEY, hash(buffer_key) & 0xFFFFFFFF)

    def access(self, kind: str, buffer_key, size: int, lanes: np.ndarray, flat: np.ndarray,
               output_buffer: bool = False) -> None:
        shadow = self.shadow_for(buffer_key, size)
        ins = self.ins
        is_write = kind == "write"
        k = ATOMIC if self.atomic else (WRITE if is_write else READ)
        hashes = real = None
        rows = self.rows(lanes)
        ctas = rows // self.lanes_per_cta
        if is_write:
            hashes, real = self.tracker.on_store(shadow, flat, lanes, flat.shape[1], ctas)
            if output_buffer:
                bad = (self.tracker.in_taint[lanes] & UNINIT) != 0
                if bad.any() and len(self.uninit_outputs) < 8:
                    self.uninit_outputs.append((ins, int(lanes[np.argmax(bad)]), self.pc))
        else:
            # the old value an atomic returns depends on the order of the atomics
            self.tracker.on_load(shadow, flat, lanes, flat.shape[1], ctas, volatile=self.atomic)
        bases, epochs = self.clocks.stamp(rows)
        if self.atomic and not is_write:
            return  # an atomic is logged once, as its write
        self.events.append(Event(self.time, self.pc, k, strength(ins) if ins is not None else 0, buffer_key,
                                 lanes, flat, rows, bases, epochs, hashes, real, semantics(ins)))

    # -------------------------------------------------------------- synchronisation
    def arrive(self, lanes: np.ndarray, key: object) -> None:
        self.clocks.release(self.rows(lanes), key)

    def acquire(self, lanes: np.ndarray, key: object, consume: bool = True) -> None:
        self.clocks.acquire(self.rows(lanes), key, consume)
