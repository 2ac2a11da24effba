"""When a wgmma's register operands may differ between CTAs without changing what the check finds.

The wgmma unit (symexec/wgmma.py) reads an mma_async's D and A registers only as values (products
and sums: data) except in its undefined-behaviour checks, which compare a register's value now with
an earlier snapshot of the same register (PTX 9.7.15.7.1 at issue: written after the last
wgmma.fence, unless chained from a performed mma; 9.7.15.7.3 at the covering wait: written while
the operation is pending). Two CTAs that run the same instructions can differ in those outcomes
only if some instruction wrote the register between the snapshot and the comparison (otherwise both
compare a value with itself): a written value may equal the old one in the executed CTA and not in
another when the register's value depends on %ctaid.

`WgmmaWrites` follows, per register and lane, whether an instruction wrote it since the lane's last
wgmma.fence, and whether it belongs to an operation issued and not yet retired by a wait_group 0.
The symbolic grid's shadow (grid_shadow.py) asks it at each mma_async whether a register operand
whose value depends on %ctaid was written since the fence, and it reports a write to a register of
a pending operation; either makes the instruction one whose CTA-local behaviour may depend on
%ctaid (`Shadow.shared_varies`), as any %ctaid-dependent register operand did before. Otherwise the
register operands' values are data to the check (the D results are unknown to the shadow anyway).
Conservative throughout: writes count on every lane of the group that reaches the instruction
(predicated-off lanes too), a wait_group N > 0 retires nothing here, a fence or wait under a guard
clears nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A


def wgmma_registers(prog) -> frozenset[str]:
    """The D and A registers named by the program's wgmma.mma_async instructions (operand 0, and
    operand 1 when A comes from registers: a vector, 9.7.15.5.2)."""
    names: set[str] = set()
    for ins in prog.code:
        if ins.opcode == "wgmma" and ".mma_async" in ins.modifiers and ins.operands:
            for o in ins.operands[:2]:
                if isinstance(o, A.Vector):
                    names.update(e.name for e in o.elements if isinstance(e, A.Sym))
    return frozenset(names)


@dataclass
class WgmmaWrites:
    """Per wgmma register (names in `regs`) and lane of the batch: written since the lane's last fence,
    in an operation not committed, in a committed one not yet retired."""

    regs: frozenset[str]
    n: int
    written: dict[str, np.ndarray] = field(default_factory=dict)
    uncommitted: dict[str, np.ndarray] = field(default_factory=dict)
    pending: dict[str, np.ndarray] = field(default_factory=dict)

    def _get(self, table: dict[str, np.ndarray], r: str) -> np.ndarray:
        got = table.get(r)
        if got is None:
            got = table[r] = np.zeros(self.n, bool)
        return got

    def wrote(self, names, lanes: np.ndarray) -> str | None:
        """Instructions wrote `names` on `lanes`; the first that is a register of a pending wgmma there
        (its check at the covering wait compares values), else None."""
        hit = None
        for r in names:
            if r not in self.regs:
                continue
            self._get(self.written, r)[lanes] = True
            if hit is None and ((self._get(self.pending, r) | self._get(self.uncommitted, r)) & lanes).any():
                hit = r
        return hit

    def fence(self, lanes: np.ndarray) -> None:
        for a in self.written.values():
            a[lanes] = False

    def commit(self, lanes: np.ndarray) -> None:
        for r, a in self.uncommitted.items():
            self._get(self.pending, r)[lanes & a] = True
            a[lanes] = False

    def wait_all(self, lanes: np.ndarray) -> None:
        for a in self.pending.values():
            a[lanes] = False

    def issue(self, names, lanes: np.ndarray, varies) -> str | None:
        """An mma_async on `lanes` with register operands `names`: the first whose value depends on %ctaid
        (`varies(name)`) and that was written since the fence on some lane, else None; the registers become
        the operation's (not committed)."""
        hit = None
        for r in names:
            if hit is None and varies(r) and (self._get(self.written, r) & lanes).any():
                hit = r
        for r in names:
            self._get(self.uncommitted, r)[lanes] = True
        return hit
