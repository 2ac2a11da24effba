"""The same-value rule: when several lanes storing one address in one instruction are not a race.

PTX gives no order to the lanes of one warp that store the same bytes in one instruction (8.x: they
are distinct threads); which lane's value lands is unspecified. When every such lane stores the
same bits, the outcome does not depend on it: Triton stores a reduction's result this way, from
every lane of the warp that computed it. The rule accepts exactly that case:

- lanes of one dynamic warp instruction: one access event, one warp of one CTA (stores of equal
  values by different warps, or by different instructions, are races like any other: nothing
  orders them, and the memory model does not look at the values);
- equal values, proved by their term numbers (shadow.py: equal numbers, one expression);
- defined values: a value read from memory no thread wrote (shared memory, a thread's local
  memory) is whatever the bytes hold, not a value the lanes agree on.

A verdict that relied on the rule says so (run.py adds an assumption line).
"""

from __future__ import annotations

import numpy as np

WARP = 32


def equal_defined_values(c, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair of entries (a[i], b[i]) of one access event at one byte (races.Columns): may the
    two lanes' stores go unordered? Rows are CTA slot * lanes per CTA + thread slot, and lanes per
    CTA is a multiple of 32, so row // 32 names one warp of one CTA."""
    same_warp = (c["row"][a] // WARP) == (c["row"][b] // WARP)
    defined = ~c["undef"][a] & ~c["undef"][b]
    return same_warp & defined & (c["hash"][a] == c["hash"][b])


ASSUMPTION = ("same-value rule used: several lanes of one warp store the same bytes in one instruction with equal "
              "values (a replicated store, as Triton emits after a reduction); which lane's store lands does not "
              "change the outcome. Equal values from different warps or instructions are still races")

__all__ = ["equal_defined_values", "ASSUMPTION"]
