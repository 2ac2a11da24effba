"""`volta check` with two counters: instructions the symbolic grid's shadow sees per PTX line (all, and those
inside a loop proof period), and a log of every back edge (head, arrival, the open proof's head, proof open
after it, summaries it added). Prints the totals; writes steps.json next to the working directory.

    PYTHONPATH=<tree> python count_steps.py check D.ptx --contract dion_update --arch sm_80 --instance bench
"""

from __future__ import annotations

import collections
import json
import sys
import time

from symexec.check import grid_shadow, loops
from volta.cli import main

counts: collections.Counter = collections.Counter()
in_proof: collections.Counter = collections.Counter()
log: list[tuple] = []

_before = grid_shadow.Shadow.before_instruction
_back_edge = loops.LoopSummariser.on_back_edge


def _counted_before(self, b, g, ins, mask):
    line = ins.span.line if ins.span is not None else -1
    counts[line] += 1
    if self.loop is not None:
        in_proof[line] += 1
    return _before(self, b, g, ins, mask)


def _logged_back_edge(self, b, g, ins, pc) -> None:
    head, proof, held = g.pc, self._proof, len(self.summaries)
    _back_edge(self, b, g, ins, pc)
    log.append((str(b.prog.code[head].span), self._arrivals.get(head),
                None if proof is None else str(b.prog.code[proof.head].span), self._proof is not None,
                len(self.summaries) - held))


grid_shadow.Shadow.before_instruction = _counted_before
loops.LoopSummariser.on_back_edge = _logged_back_edge
t0 = time.process_time()
try:
    main()
except SystemExit:
    pass
print(f"CPU {time.process_time() - t0:.2f} s; stepped {sum(counts.values())}, in a proof period "
      f"{sum(in_proof.values())}", file=sys.stderr)
with open("steps.json", "w") as f:
    json.dump({"counts": counts, "in_proof": in_proof, "log": log}, f)
