"""The expressions behind data-dependent values, recorded while a check run executes.

The shadows number every value by the expression that computed it (shadow.py: equal numbers,
equal expressions). A `TermLog` keeps, for each number of a data-dependent value, how it was
computed: the instruction (its pc) and its operands (numbers of data-dependent ones, the bits of
the others), or the bytes a load read; input bytes the run read are the leaves. symexec.check.paths
turns these back into Z3 terms to decide whether any input takes an explored path. Only a run that
needs it records (a replay of the explored run, reach.py): the log costs a few numpy copies per
data-dependent instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class OpRecord:
    """Destination `k` (of `width` bits) of the instruction at `pc`, for the lanes shown."""

    pc: int
    k: int
    width: int
    result: np.ndarray  # (m,) numbers of the results
    hashes: tuple[np.ndarray, ...]  # per operand (m,): its number
    taints: tuple[np.ndarray, ...]  # per operand (m,): its taint (0: a fixed value, see values)
    values: tuple[np.ndarray, ...]  # per operand (m,): its bits on that lane
    widths: tuple[int, ...]  # per operand: its width in bits


@dataclass(frozen=True)
class LoadRecord:
    """A value of `width` bits assembled from loaded bytes: per byte, the number of the value it
    came from and its position code (byte index | log2(width in bytes) << 4, 0xFF: unknown)."""

    result: np.ndarray  # (m,)
    bytes_: np.ndarray  # (m, nb) numbers
    pos: np.ndarray  # (m, nb)
    width: int


@dataclass
class TermLog:
    ops: list[OpRecord] = field(default_factory=list)
    loads: list[LoadRecord] = field(default_factory=list)
    leaves: dict[int, tuple[object, int]] = field(default_factory=dict)  # input byte number -> (buffer, offset)
    _index: dict[int, tuple[str, int, int]] | None = None

    def op(self, rec: OpRecord) -> None:
        self.ops.append(rec)
        self._index = None

    def load(self, rec: LoadRecord) -> None:
        self.loads.append(rec)
        self._index = None

    def leaf(self, numbers: np.ndarray, buffer: object, offsets: np.ndarray) -> None:
        for h, off in zip(numbers.reshape(-1).tolist(), offsets.reshape(-1).tolist()):
            self.leaves.setdefault(int(h), (buffer, int(off)))

    def find(self, number: int) -> tuple[str, object, int] | None:
        """("op", OpRecord, row) / ("load", LoadRecord, row) / ("leaf", (buffer, offset), 0) of a
        number; None when the run did not record how it was computed."""
        if number in self.leaves:
            return "leaf", self.leaves[number], 0
        if self._index is None:
            idx: dict[int, tuple[str, int, int]] = {}
            for kind, recs in (("op", self.ops), ("load", self.loads)):
                for i, r in enumerate(recs):
                    for row, h in enumerate(r.result.tolist()):
                        idx.setdefault(int(h), (kind, i, row))
            self._index = idx
        got = self._index.get(number)
        if got is None:
            return None
        kind, i, row = got
        return kind, (self.ops if kind == "op" else self.loads)[i], row


__all__ = ["TermLog", "OpRecord", "LoadRecord"]
