"""Loops whose trip count depends on %ctaid, as the symbolic grid (grid.py) meets them.

The symbolic grid needs every CTA to run the instruction sequence of the executed representatives
(grid_shadow.py); a loop that runs %ctaid + 1 times (causal attention's KV loop up to the query
block, a chunked scan's last short chunk) breaks that, and the grid is enumerated. This module
says *which* loop and how the representatives differ, so that the fallback note names the cause a
person can act on (and the bench rows can be sorted by it), instead of a bare guard.

Covering such loops symbolically (the counter symbolic and bounded by a per-CTA trip count that Z3
checks against the runs, cross-CTA disjointness for every count) is not built: see
bench/results/ctaid-loops-2026-12-02/README.md for the argument and what it still needs.
"""

from __future__ import annotations

from ptx_parser import ast as A


def _target(prog, ins: A.Instruction) -> int | None:
    op = ins.operands[0] if ins.operands else None
    return prog.labels.get(op.name) if isinstance(op, A.Sym) else None


def divergence(prog, pc: int, ctas: list[tuple], goes: list[bool]) -> str:
    """Why the executed CTAs `ctas` part at the guarded instruction at `pc`, in words (`goes[i]`: some
    thread of CTA i takes it). A loop's back edge that some CTA takes and another does not: the trip
    count depends on %ctaid; such a forward branch over a loop's header: the loop runs in some CTAs
    only; anything else (threads of one CTA parting too, say): the guard alone."""
    ins = prog.code[pc]
    tgt = _target(prog, ins) if ins.opcode == "bra" else None
    on = [c for c, g in zip(ctas, goes) if g]
    off = [c for c, g in zip(ctas, goes) if not g]
    names = lambda cs: ", ".join(str(tuple(int(x) for x in c)) for c in cs)  # noqa: E731
    if not on or not off:
        tgt = None
    if tgt is not None and tgt <= pc and tgt in prog.loop_headers:
        return (f"the loop at {prog.code[tgt].span} runs a number of iterations that depends on %ctaid (its back "
                f"edge, bra at {ins.span}): CTA {names(off)} leaves it while CTA {names(on)} "
                f"goes on; the symbolic grid does not cover %ctaid-dependent trip counts")
    if tgt is not None and tgt > pc:
        heads = sorted(h for h in prog.loop_headers if pc < h < tgt)
        if heads:
            return (f"the loop at {prog.code[heads[0]].span} runs in some CTAs and not in others (bra at {ins.span} "
                    f"skips it in CTA {names(on)}, not in CTA {names(off)}): its trip count depends on %ctaid; the "
                    "symbolic grid does not cover %ctaid-dependent trip counts")
    return (f"the guard of {ins.name} at {ins.span} depends on %ctaid and the executed CTAs decide it differently: "
            "CTAs follow different paths")
