"""Loops whose trip count depends on %ctaid, as the symbolic grid (grid.py) meets them.

The symbolic grid needs every CTA to run the instruction sequence of the executed representatives
(grid_shadow.py); a loop that runs %ctaid + 1 times (causal attention's KV loop up to the query
block, a chunked scan's last short chunk) breaks that, and the grid is enumerated unless it is
covered as below. This module says *which* loop and how the representatives differ, so that the
fallback note names the cause a person can act on (and the bench rows can be sorted by it),
instead of a bare guard.

Covered (grid.py `check_symbolic`, grid_shadow.py `_ctaid_trip`): the CTA that goes on where the
first and last CTA part is run alone, and
  - each back edge on %ctaid it takes is a reach condition of every later access in the loop (a CTA
    for which it is false left before and makes none of them): the accesses Z3 reasons about for a
    CTA c are a superset of those c makes;
  - the back edge where it leaves is an obligation: every CTA that reached it (the reach condition)
    leaves there too (Z3 over every CTA, `_same_path`), so no CTA runs an iteration it did not;
  - a summarised period (loops.py) at iteration t runs in CTA c only if period t - 1's back edges
    were taken in c (grid.py `_CtaidTrips`);
  - what the loop writes to registers is unknown after it (CTAs leave at different iterations).
A loop that some CTAs skip at an entry guard on %ctaid (a forward branch over it, trip count 0:
forgetting attention's carry loop over the query blocks before its own) is covered the same way
(grid_shadow `_ctaid_entry`), when the branch skips a single-entry, single-exit block
(`skipped_loop`): a CTA that enters is run alone, "the guard is not taken" is a reach condition of
every access in the block (a CTA that skips makes none of them), the block's registers are unknown
at its end, and the code after it is every CTA's, recorded without that condition. A CTA that skips
is a trip pattern of its own (run concretely where the kernel keeps CTA-local state).
Intra-CTA properties: when the kernel keeps no state of its own per CTA (`cta_local_state`: no
shared or local memory, no barrier or other synchronisation, no asynchronous unit), everything a CTA
does is its global accesses, which the proofs above cover for every CTA. Otherwise the back edges
taken are evaluated for every CTA (numpy, grid.py `_trip_patterns`), and one CTA of each distinct
pattern, at most 8, is run concretely: CTAs of one pattern run the same instructions, on the same
shared addresses when none depends on %ctaid beyond those back edges (else: enumerated). A CTA whose
pattern differs from the executed CTA's only in leaving a summarised loop at an earlier period shares
the executed CTA's run (grid.py `_shares_run`), when the period the executed CTA runs after the skipped
ones is its last and differs from period 0 only in leaving, at the m-th of the period's P back edges
(loops.py `_leaves_after`), and the CTA leaves at the m-th back edge of an earlier period: it runs a
prefix of the summarised periods, which start and end in one repeating state, and then what the
executed CTA runs after leaving. Causal attention's query blocks past the first two are such CTAs (3
CTAs run instead of enumerating its 32 patterns, bench/results/ctaid-patterns-2026-12-04; on sm_90a its
pipelined loop has period 2, bench/results/verify-sm90-2026-12-04y); a CTA that leaves a loop of period
P > 1 at another of its back edges (another parity of its trip count, for P = 2) is a pattern of its own.
"""

from __future__ import annotations

from ptx_parser import ast as A
from semantics.ptx.memory import space_of

from ..machine import is_machine_level

#: Data-access opcodes whose state space says whether they touch CTA-local memory.
_ACCESSES = ("ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu")
#: Control flow every CTA runs alike once its guards are proved (grid.py): no CTA-local state.
_CONTROL = ("bra", "exit", "ret")
#: State spaces a data access may name without touching CTA-local state (PTX 5.1).
_GLOBAL_SPACES = (".global", ".param", ".const")


def cta_local_state(prog) -> str:
    """The first instruction that uses state of its own CTA beyond registers and global memory (shared or
    local memory, a generic address that may reach them, a barrier, an mbarrier, an asynchronous copy or
    any other unit operation), in words; "" when none does."""
    for ins in prog.code:
        op = ins.opcode
        if op in _ACCESSES:
            if op in ("ld", "ldu") and space_of(ins) == ".param":
                continue
            if space_of(ins) not in _GLOBAL_SPACES:
                return f"{ins.name} at {ins.span} ({space_of(ins)[1:]} memory)"
        elif op in _CONTROL:
            continue
        elif is_machine_level(op) or any(".shared" in m or ".local" in m for m in ins.modifiers):
            return f"{ins.name} at {ins.span}"
    return ""


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
    if pc in prog.falls_back:  # a latch that falls through into its head: goes on when not taken
        head, goes, stays = (None if pc in prog.back_branches else pc + 1), off, on
    else:
        head, goes, stays = prog.back_branches.get(pc), on, off
    if tgt is not None and head is not None:
        return (f"the loop at {prog.code[head].span} runs a number of iterations that depends on %ctaid (its back "
                f"edge, bra at {ins.span}): CTA {names(stays)} leaves it while CTA {names(goes)} "
                f"goes on; the symbolic grid covers that by running CTA {names(goes[:1])} alone")
    if tgt is not None and tgt > pc:
        heads = sorted(h for h in prog.loop_headers if pc < h < tgt)
        if heads:
            return (f"the loop at {prog.code[heads[0]].span} runs in some CTAs and not in others (bra at {ins.span} "
                    f"skips it in CTA {names(on)}, not in CTA {names(off)}): its trip count depends on %ctaid"
                    + ("; the symbolic grid covers that by running CTA " + names(off[:1]) + " alone"
                       if skipped_loop(prog, pc) is not None else
                       "; the symbolic grid covers a loop that some CTAs skip only when the branch skips a "
                       "single-entry, single-exit block (skipped_loop)"))
    return (f"the guard of {ins.name} at {ins.span} depends on %ctaid and the executed CTAs decide it differently: "
            "CTAs follow different paths")


def skipped_loop(prog, pc: int) -> int | None:
    """The end of the code a forward `bra` at `pc` skips, when that code holds a loop (a loop's entry
    guard, trip count 0 for the CTAs that take it) and is a single-entry, single-exit block: nothing in
    it exits the kernel (exit, ret, trap, call), every branch in it stays in it or jumps to its end, and
    no branch outside it jumps into it. Then a CTA that takes the branch runs none of it and reaches the
    end, as a CTA that runs it does (grid_shadow `_ctaid_entry`); None otherwise."""
    ins = prog.code[pc]
    end = _target(prog, ins) if ins.opcode == "bra" else None
    if end is None or end <= pc + 1 or not any(pc < h < end for h in prog.loop_headers):
        return None
    for i, x in enumerate(prog.code):
        if pc < i < end and x.opcode in ("exit", "ret", "trap", "call", "brx"):
            return None
        if x.opcode != "bra" or i == pc:
            continue
        tgt = _target(prog, x)
        if tgt is None:
            return None
        inside = pc < i < end
        if inside and not pc < tgt <= end:
            return None  # leaves the block elsewhere than at its end
        if not inside and pc < tgt < end:
            return None  # enters the block past the branch
    return end
