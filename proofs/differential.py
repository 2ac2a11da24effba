"""A concrete differential test before any term is built: both kernels on the emulator, same inputs.

A seeded bug (a dropped normalisation, a wrong index, a wrong constant) shows on the first random
input of the launch; building and normalising both kernels' output terms to find that out costs far
more (dion_update's bug twin, whose q_out is R instead of R / ||R||, ran out of 4 GiB comparing
cross-multiplied rational forms). So the equivalence check first runs both kernels on the emulator
on a few of the contract's draws and compares every output element within the tolerance. Only a
difference can come of it: an element outside the tolerance *is* a replayed witness (it was computed
by the same emulator runs `proofs.witness.replay` makes); agreement proves nothing and the proof
proceeds as before. It runs only when both kernels are race free (their outputs do not depend on
the schedule the emulator picks).

The witness names the candidate's store that last wrote the element (and the reference's), seen by
an observer of the concrete run (symexec.events): the site a person reads in the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from semantics.errors import OutsideFormat
from symexec import Launch
from symexec.events import MemSpace, MemoryAccess, Observer
from symexec.machine import Machine

from .prove import KernelUnderTest
from .witness import Draw, Tolerance, Witness, values

__all__ = ["LastGlobalWriter", "ConcreteOutputs", "run_concrete", "differential"]

#: How many draws the pre-check tries: each costs one emulator run of each kernel. The first draw is
#: the contract's normal distribution (seed 0); a second one (positive inputs, no cancellation)
#: would double the cost of every verified proof for few extra bugs found.
DEFAULT_DRAWS = 1


class LastGlobalWriter(Observer):
    """Which instruction and thread last wrote each byte of the named global buffers:
    `pc << 32 | row` (row = CTA index * lanes per CTA + thread slot, as symexec.check.run._thread_of
    reads it), -1 where nothing wrote."""

    def __init__(self, m: Machine, names: Iterable[str]) -> None:
        self.by_index = {i: a.name for i, a in enumerate(m.glob.allocations) if a.name in set(names)}
        self.writer = {name: np.full(m.launch.buffers[name].nbytes, -1, np.int64) for name in self.by_index.values()}
        self.batch = None
        gx, gy, _ = m.launch.grid
        self.grid_xy = (gx, gy)

    def on_batch(self, batch) -> None:
        self.batch = batch

    def on_access(self, ev: MemoryAccess) -> None:
        if not ev.write or ev.buffer.space is not MemSpace.GLOBAL:
            return
        name = self.by_index.get(ev.buffer.index)
        if name is None or self.batch is None:
            return
        b = self.batch
        lanes = np.asarray(ev.lanes, np.int64).reshape(-1)
        flat = np.asarray(ev.flat, np.int64)
        if lanes.size == 0 or flat.ndim != 2 or flat.shape[0] != lanes.size or lanes.max() >= b.n:
            return  # not one row of bytes per thread slot of this batch: its writer stays unknown (no site)
        gx, gy = self.grid_xy
        x, y, z = (np.asarray(c)[lanes].astype(np.int64) for c in b.ctaid)
        rows = (x + gx * (y + gy * z)) * b.lanes_per_cta + lanes % b.lanes_per_cta
        code = (np.int64(ev.pc) << np.int64(32)) | rows
        w = self.writer[name]
        ok = (flat >= 0) & (flat < w.size)
        w[flat[ok]] = np.broadcast_to(code[:, None], flat.shape)[ok]


@dataclass
class ConcreteOutputs:
    """One kernel's output buffers after an emulator run: values per element, and the last writer."""

    values: dict[str, np.ndarray]  # buffer -> float64 values, flat by element
    writer: dict[str, np.ndarray]  # buffer -> per element: pc << 32 | row of its last store, -1 if none


def run_concrete(k: KernelUnderTest, draw: Draw, outputs: list[str]) -> ConcreteOutputs:
    """Run `k` on the emulator with `draw`'s inputs (its launch's bytes for the other buffers)."""
    launch = Launch(k.launch.grid, k.launch.block,
                    {n: draw.buffers.get(n, b) for n, b in k.launch.buffers.items()}, list(k.launch.params),
                    k.launch.dynamic_shared_bytes, k.launch.kernel, k.launch.cluster)
    m = Machine(k.prog, launch)
    obs = LastGlobalWriter(m, outputs)
    m.observers.append(obs)  # heard by every batch the run makes (Batch takes the list at construction)
    glob = m.run()
    vals, writers = {}, {}
    for name in outputs:
        info = k.buffers[name]
        eb = info.elem_bytes
        raw = np.ascontiguousarray(glob.by_name(name).store[np.arange(launch.buffers[name].nbytes)])
        n = raw.size // eb
        vals[name] = values(info.sort, raw[: n * eb].view(f"<u{eb}").astype(np.uint64))
        writers[name] = obs.writer[name][: n * eb].reshape(n, eb).max(axis=1) if name in obs.writer \
            else np.full(n, -1, np.int64)
    return ConcreteOutputs(vals, writers)


@dataclass
class DifferentialResult:
    witness: Witness | None
    writers: dict[str, int] = field(default_factory=dict)  # label -> pc << 32 | row of the element's store
    draws_tried: int = 0
    #: draws skipped because a kernel read an operand outside its format (semantics.errors.OutsideFormat):
    #: (the draw's label, the reason)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def differential(cand: KernelUnderTest, ref: KernelUnderTest, draws: Iterable[Draw],
                 tolerance: Callable[[str], Tolerance], max_draws: int = DEFAULT_DRAWS) -> DifferentialResult:
    """The first element, over the first `max_draws` draws, whose emulated outputs differ beyond the
    tolerance; a witness with `replayed` set (the emulator runs are the replay)."""
    outputs = sorted(n for n, g in cand.buffers.items()
                     if not g.symbolic and n in ref.buffers and n in cand.launch.buffers and n in ref.launch.buffers)
    tried = 0
    skipped: list[tuple[str, str]] = []
    for draw in draws:
        if tried >= max_draws:
            break
        try:
            c = run_concrete(cand, draw, outputs)
            r = run_concrete(ref, draw, outputs)
        except OutsideFormat as e:  # inputs the proof's format assumption excludes: another draw
            skipped.append((draw.label, str(e)))
            continue
        tried += 1
        for name in outputs:
            cv, rv = c.values[name], r.values[name]
            if cv.size != rv.size:
                continue  # buffers of different sizes: the proof reports that, not this test
            scale = draw.scale.get(name)
            tol = tolerance(name)
            bad = tol.bad(cv, rv, scale)
            if not bad.any():
                continue
            e = int(np.nonzero(bad)[0][0])
            s = None if scale is None else scale[[e]]
            w = Witness(draw.label, name, e, float(cv[e]), float(rv[e]),
                        float(tol.allowed(rv[[e]], s)[0]), True,
                        why="the emulated outputs differ (concrete differential test, before any term was built)",
                        draws_tried=tried)
            return DifferentialResult(w, {"candidate": int(c.writer[name][e]), "reference": int(r.writer[name][e])},
                                      tried, skipped)
    return DifferentialResult(None, {}, tried, skipped)
