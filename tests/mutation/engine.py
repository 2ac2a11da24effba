"""Seeded mutation of PTX synchronisation: every mutant deletes or weakens exactly ONE step.

The engine edits the PTX text in place, at the line of the mutated instruction, so every other
line (and every line number, so the checker's witnesses and the site lines agree) stays as it
was. Each mutant is parsed again with ``ptx_parser`` and compared instruction by instruction with
the original: only the mutated instruction (and, for a deleted wait loop, its back branch) may
differ, as the mutation says. Operands that are registers are changed through a scratch register
declared in a one-line nested block (``{ .reg .b32 %volta_mut; add.s32 %volta_mut, %r5, 1; op
..., %volta_mut; }``), so the register itself keeps its value for every other use.

Catalogue (``KINDS``: name -> what it does; ``mutations(ptx)`` applies every kind to every site):

* barriers ``bar.sync/barrier.sync/bar.arrive/barrier.arrive/bar.warp.sync``: ``delete``; with a
  thread-count operand also ``count-32`` / ``count+32``;
* waits: ``cp.async.wait_group N``, ``cp.async.bulk.wait_group{.read} N``, ``wgmma.wait_group N``:
  ``delete`` and ``N+1``; ``cp.async.wait_all``, ``tcgen05.wait::ld/st``: ``delete``;
  ``mbarrier.try_wait/test_wait``: ``delete_loop`` (the wait and the back branch of its
  ``L: wait P; @!P bra L`` loop; any other shape: the wait becomes ``P = true``) and, for
  ``.parity`` forms, ``flip_parity``;
* fences ``fence.*`` (proxy.async, proxy.tensormap, mbarrier_init, acq_rel, sc, ...), ``membar``,
  ``wgmma.fence``, ``tcgen05.fence::*``: ``delete``; scoped fences wider than the CTA also
  ``scope_cta``;
* commits ``cp.async.commit_group``, ``cp.async.bulk.commit_group``, ``wgmma.commit_group``,
  ``tcgen05.commit``, ``cp.async.mbarrier.arrive``: ``delete``;
* mbarriers: ``mbarrier.init`` count ``count+1`` / ``count-1``; ``mbarrier.arrive{_drop}``:
  ``delete``, count ``count+1`` / ``count-1`` (no count operand: ``count+1`` arrives twice);
  ``.expect_tx`` forms and ``mbarrier.expect_tx``: ``tx+16`` / ``tx-16`` / ``tx*2``;
* tensor memory: ``tcgen05.dealloc``, ``tcgen05.relinquish_alloc_permit``: ``delete``;
  ``tcgen05.alloc`` ``ncols/2`` / ``ncols*2``.

A site is named by its instruction's full name and its ordinal among instructions of that name in
the kernel (``bar.sync#3``), which does not move when unrelated lines are added; the PTX line and
the Triton source line are kept beside it for people.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import ptx_parser
from ptx_parser import ast as A
from ptx_parser import printer

SCRATCH = "%volta_mut"


class MutationError(Exception):
    """The engine produced text that does not say what the mutation says (an engine bug)."""


# ------------------------------------------------------------------------------------------ sites


@dataclass(frozen=True)
class Site:
    """One synchronisation instruction of the kernel."""

    index: int  # position in Function.instructions()
    name: str  # opcode with modifiers as spelled, e.g. "cp.async.bulk.wait_group.read"
    ordinal: int  # 0-based rank among the kernel's instructions of this name
    line: int  # 1-based PTX line
    text: str  # the statement as written (guard included)
    source: str | None  # Triton/CUDA file:line from the last .loc

    @property
    def id(self) -> str:
        return f"{self.name}#{self.ordinal}"


@dataclass(frozen=True)
class Mutant:
    kernel: str
    site: Site
    kind: str
    ptx: str
    description: str

    @property
    def key(self) -> str:
        """Stable name of the mutation: ``<site>:<kind>``, e.g. ``bar.sync#3:delete``."""
        return f"{self.site.id}:{self.kind}"


@dataclass(frozen=True)
class _Edit:
    index: int  # instruction index
    replacement: str  # statement text replacing the instruction ("" deletes it)
    new: tuple[str, ...]  # the printed instructions the replacement must parse to


@dataclass(frozen=True)
class _Plan:
    kind: str
    description: str
    edits: tuple[_Edit, ...]


# ------------------------------------------------------------------------------ operand helpers


def _int(o: A.Operand) -> int | None:
    return o.value if isinstance(o, A.IntLit) else None


def _lit(v: int) -> A.IntLit:
    return A.IntLit(v, False, str(v))


def _print(ins: A.Instruction) -> str:
    return printer.instruction(ins)


def _with_operand(ins: A.Instruction, pos: int, new: A.Operand) -> A.Instruction:
    ops = list(ins.operands)
    ops[pos] = new
    return dataclasses.replace(ins, operands=tuple(ops))


def _with_order(ins: A.Instruction, old: str, new: str | None) -> A.Instruction:
    """Replace (or drop, new=None) one modifier, keeping the spelling order."""
    order = tuple(m for m in (new if m == old else m for m in ins.order) if m is not None)
    mods = (ins.modifiers - {old}) | ({new} if new else set())
    return dataclasses.replace(ins, order=order, modifiers=frozenset(mods))


def _operand_plan(ins: A.Instruction, index: int, pos: int, kind: str, what: str,
                  imm: Callable[[int], int | None], reg_op: tuple[str, str]) -> _Plan | None:
    """Change operand ``pos``: an immediate v becomes imm(v) (None: not applicable); a register r
    becomes a scratch register holding ``reg_op`` applied to r (e.g. ("add.s32", "1"))."""
    op = ins.operands[pos]
    v = _int(op)
    if v is not None:
        nv = imm(v)
        if nv is None or nv == v:
            return None
        new = _print(_with_operand(ins, pos, _lit(nv)))
        return _Plan(kind, f"{what}: {v} -> {nv}", (_Edit(index, new, (new,)),))
    if isinstance(op, A.Sym) and op.name.startswith("%") and op.component is None:
        opcode, arg = reg_op
        calc = f"{opcode} {SCRATCH}, {op.name}, {arg};"
        new = _print(_with_operand(ins, pos, A.Sym(SCRATCH)))
        text = f"{{ .reg .b32 {SCRATCH}; {calc} {new} }}"
        return _Plan(kind, f"{what}: {op.name} -> {op.name} {opcode.split('.')[0]} {arg}",
                     (_Edit(index, text, (calc, new)),))
    return None


def _delete(ins: A.Instruction, index: int) -> _Plan:
    return _Plan("delete", f"delete {ins.name}", (_Edit(index, "", ()),))


# ------------------------------------------------------------------------------------ catalogue

BARRIERS = ("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "bar.warp.sync",
            "barrier.cluster.arrive", "barrier.cluster.wait")
COUNTED_WAITS = ("cp.async.wait_group", "cp.async.bulk.wait_group", "wgmma.wait_group")
COMMITS = ("cp.async.commit_group", "cp.async.bulk.commit_group", "wgmma.commit_group", "tcgen05.commit",
           "cp.async.mbarrier.arrive")
PLAIN_DELETES = ("cp.async.wait_all", "tcgen05.wait::ld", "tcgen05.wait::st", "tcgen05.dealloc",
                 "tcgen05.relinquish_alloc_permit", "wgmma.fence", "tcgen05.fence::before_thread_sync",
                 "tcgen05.fence::after_thread_sync", "membar", "fence")
WIDE_SCOPES = (".gpu", ".sys", ".cluster", ".gl")  # membar.gl is membar at .gpu scope

KINDS: dict[str, str] = {
    "delete": "the instruction is removed",
    "delete_loop": "an mbarrier wait loop is removed (the wait's predicate is taken as true at once)",
    "flip_parity": "the phase parity an mbarrier wait waits for is inverted",
    "wait+1": "a wait_group N waits for N+1 (one more group may still be pending)",
    "count+1": "an mbarrier init/arrive count is one more (no count operand: the thread arrives twice)",
    "count-1": "an mbarrier init/arrive count is one less",
    "count+32": "a named barrier's thread count is 32 more",
    "count-32": "a named barrier's thread count is 32 less",
    "tx+16": "an expect_tx byte count is 16 more",
    "tx-16": "an expect_tx byte count is 16 less",
    "tx*2": "an expect_tx byte count is doubled",
    "ncols/2": "a tcgen05.alloc allocates half the columns",
    "ncols*2": "a tcgen05.alloc allocates twice the columns",
    "scope_cta": "a fence wider than the CTA is weakened to .cta",
}


def _family(name: str) -> str | None:
    """The catalogue entry an instruction name belongs to (longest matching prefix)."""
    for fam in sorted(BARRIERS + COUNTED_WAITS + COMMITS + PLAIN_DELETES
                      + ("mbarrier.try_wait", "mbarrier.test_wait", "mbarrier.init", "mbarrier.arrive",
                         "mbarrier.arrive_drop", "mbarrier.expect_tx", "tcgen05.alloc"), key=len, reverse=True):
        if name == fam or name.startswith(fam + "."):
            return fam
    return None


def _plans(ins: A.Instruction, index: int, wait_loops: dict[int, int]) -> list[_Plan]:
    name = ins.name
    fam = _family(name)
    if fam is None:
        return []
    out: list[_Plan] = []
    if fam in BARRIERS:
        out.append(_delete(ins, index))
        if len(ins.operands) >= 2 and fam not in ("bar.warp.sync",):
            cnt = len(ins.operands) - 1  # bar{.sync} a{, b}: b is the thread count (last operand)
            for kind, d in (("count-32", -32), ("count+32", 32)):
                p = _operand_plan(ins, index, cnt, kind, "barrier thread count",
                                  lambda v, d=d: v + d if v + d > 0 else None, ("add.s32", str(d)))
                if p:
                    out.append(p)
    elif fam in COUNTED_WAITS:
        out.append(_delete(ins, index))
        n = _int(ins.operands[0]) if ins.operands else None
        if n is not None:
            new = _print(_with_operand(ins, 0, _lit(n + 1)))
            out.append(_Plan("wait+1", f"{name} {n} -> {n + 1}", (_Edit(index, new, (new,)),)))
    elif fam in COMMITS or fam in PLAIN_DELETES:
        out.append(_delete(ins, index))
        if fam in ("fence", "membar"):
            wide = [m for m in ins.order if m in WIDE_SCOPES]
            if wide and not any(m.startswith((".proxy", ".mbarrier_init")) for m in ins.order):
                new = _print(_with_order(ins, wide[0], ".cta"))
                out.append(_Plan("scope_cta", f"{name}: {wide[0]} -> .cta", (_Edit(index, new, (new,)),)))
    elif fam in ("mbarrier.try_wait", "mbarrier.test_wait"):
        pred = ins.operands[0]
        if index in wait_loops:
            out.append(_Plan("delete_loop", f"delete the {name} loop (wait and back branch)",
                             (_Edit(index, "", ()), _Edit(wait_loops[index], "", ()))))
        elif isinstance(pred, A.Sym):
            new = f"setp.eq.u32 {pred.name}, 0, 0;"
            out.append(_Plan("delete_loop", f"{name} replaced by {pred.name} = true", (_Edit(index, new, (new,)),)))
        if ".parity" in ins.modifiers and len(ins.operands) >= 3:
            p = _operand_plan(ins, index, 2, "flip_parity", "phase parity", lambda v: v ^ 1, ("xor.b32", "1"))
            if p:
                out.append(p)
    elif fam == "mbarrier.init":
        for kind, d in (("count+1", 1), ("count-1", -1)):
            p = _operand_plan(ins, index, 1, kind, "mbarrier init count", lambda v, d=d: v + d, ("add.s32", str(d)))
            if p:
                out.append(p)
    elif fam in ("mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx"):
        out.append(_delete(ins, index))
        if ".expect_tx" in ins.modifiers or fam == "mbarrier.expect_tx":
            pos = len(ins.operands) - 1
            for kind, f, arg in (("tx+16", lambda v: v + 16, ("add.s32", "16")),
                                 ("tx-16", lambda v: v - 16 if v >= 16 else None, ("add.s32", "-16")),
                                 ("tx*2", lambda v: 2 * v, ("shl.b32", "1"))):
                p = _operand_plan(ins, index, pos, kind, "expect_tx bytes", f, arg)
                if p:
                    out.append(p)
        elif ".noComplete" not in ins.modifiers:
            if len(ins.operands) >= 3:  # explicit count
                for kind, d in (("count+1", 1), ("count-1", -1)):
                    p = _operand_plan(ins, index, 2, kind, "arrival count",
                                      lambda v, d=d: v + d if v + d > 0 else None, ("add.s32", str(d)))
                    if p:
                        out.append(p)
            elif len(ins.operands) == 2:
                new = _print(dataclasses.replace(ins, operands=ins.operands + (_lit(2),)))
                out.append(_Plan("count+1", "arrival count: 1 -> 2", (_Edit(index, new, (new,)),)))
    elif fam == "tcgen05.alloc":
        for kind, f, arg in (("ncols/2", lambda v: v // 2, ("shr.u32", "1")),
                             ("ncols*2", lambda v: v * 2, ("shl.b32", "1"))):
            p = _operand_plan(ins, index, 1, kind, "tcgen05.alloc columns", f, arg)
            if p:
                out.append(p)
    return out


# --------------------------------------------------------------------------------- the walker


def _statements(block: A.Block) -> Iterator[A.Instruction | A.Label]:
    for s in block.statements:
        if isinstance(s, A.Block):
            yield from _statements(s)
        elif isinstance(s, (A.Instruction, A.Label)):
            yield s


def _wait_loops(fn: A.Function) -> dict[int, int]:
    """{wait index: back-branch index} for ``L: [.loc] wait P, ...; @!P bra L;`` loops."""
    out: dict[int, int] = {}
    labels_before: set[str] = set()
    seq = list(_statements(fn.body)) if fn.body is not None else []
    idx = -1
    pending: tuple[int, str, set[str]] | None = None
    for s in seq:
        if isinstance(s, A.Label):
            labels_before.add(s.name)
            pending = None
            continue
        idx += 1
        if pending is not None:
            w, pred, labels = pending
            g = s.guard
            if (s.opcode == "bra" and g is not None and g.negated and g.pred == pred and s.operands
                    and isinstance(s.operands[0], A.Sym) and s.operands[0].name in labels):
                out[w] = idx
        pending = None
        if s.name.startswith(("mbarrier.try_wait", "mbarrier.test_wait")) and s.operands \
                and isinstance(s.operands[0], A.Sym):
            pending = (idx, s.operands[0].name, set(labels_before))
        labels_before = set()
    return out


def _kernel(module: A.Module, entry: str | None) -> A.Function:
    ks = module.kernels
    if entry is not None:
        ks = [k for k in ks if k.name == entry]
    if len(ks) != 1:
        raise ValueError(f"expected one kernel{' named ' + entry if entry else ''}, found {len(ks)}")
    return ks[0]


def sites(ptx: str, entry: str | None = None, filename: str = "kernel.ptx") -> list[tuple[Site, list[_Plan]]]:
    """Every synchronisation site of the kernel with the mutations that apply to it."""
    module = ptx_parser.parse(ptx, filename)
    fn = _kernel(module, entry)
    lines = ptx.splitlines()
    files = module.files
    loops = _wait_loops(fn)
    seen: dict[str, int] = {}
    out = []
    for i, ins in enumerate(fn.instructions()):
        plans = _plans(ins, i, loops)
        if not plans:
            continue
        k = seen.get(ins.name, 0)
        seen[ins.name] = k + 1
        start, end = _statement_range(lines[ins.span.line - 1], ins)
        src = None
        if ins.loc is not None:
            src = f"{files.get(ins.loc.file, '?').rsplit('/', 1)[-1]}:{ins.loc.line}"
        out.append((Site(i, ins.name, k, ins.span.line, lines[ins.span.line - 1][start:end].strip(), src), plans))
    return out


def _statement_range(line: str, ins: A.Instruction) -> tuple[int, int]:
    """[start, end) of the instruction's statement on its line: its guard (if any) to its ';'."""
    col = ins.span.col - 1
    start = col
    if ins.guard is not None:
        start = line.rfind("@", 0, col)
        if start < 0:
            raise MutationError(f"guard of {ins.name} not found on line {ins.span.line}")
    end = line.find(";", col)
    if end < 0:
        raise MutationError(f"{ins.name} at line {ins.span.line} does not end on its line")
    return start, end + 1


def _apply(ptx: str, instrs: list[A.Instruction], plan: _Plan) -> str:
    lines = ptx.splitlines(keepends=True)
    for e in sorted(plan.edits, key=lambda e: (instrs[e.index].span.line, instrs[e.index].span.col), reverse=True):
        ins = instrs[e.index]
        ln = ins.span.line - 1
        line = lines[ln]
        start, end = _statement_range(line, ins)
        old = line[start:end]
        rep = e.replacement or f"// volta-mutant: deleted: {old}"
        if not e.replacement and line[end:].strip():
            rep = f"/* volta-mutant: deleted: {old} */"  # more text follows on the line
        lines[ln] = line[:start] + rep + line[end:]
    return "".join(lines)


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _verify(original: list[A.Instruction], mutant_ptx: str, plan: _Plan, entry: str | None) -> None:
    fn = _kernel(ptx_parser.parse(mutant_ptx, "mutant.ptx"), entry)
    got = fn.instructions()
    want: list[str] = []
    by_index = {e.index: e for e in plan.edits}
    for i, ins in enumerate(original):
        if i in by_index:
            want.extend(by_index[i].new)
        else:
            want.append(_print(ins))
    have = [_print(x) for x in got]
    if [_norm(x) for x in have] != [_norm(x) for x in want]:
        diff = next(i for i, (a, b) in enumerate(zip(have + [""], want + [""])) if _norm(a) != _norm(b))
        raise MutationError(f"{plan.kind}: mutant differs from the plan at instruction {diff}: "
                            f"{have[diff:diff + 1]} vs {want[diff:diff + 1]}")


def mutations(ptx: str, kernel: str = "kernel", entry: str | None = None,
              only: Iterable[Site] | None = None) -> list[Mutant]:
    """Every mutant of every site (or of the sites in ``only``), each checked by reparsing."""
    module = ptx_parser.parse(ptx, f"{kernel}.ptx")
    instrs = _kernel(module, entry).instructions()
    wanted = None if only is None else {s.index for s in only}
    out = []
    for site, plans in sites(ptx, entry, f"{kernel}.ptx"):
        if wanted is not None and site.index not in wanted:
            continue
        for plan in plans:
            text = _apply(ptx, instrs, plan)
            _verify(instrs, text, plan, entry)
            out.append(Mutant(kernel, site, plan.kind, text, plan.description))
    return out


def sample_sites(all_sites: list[Site], per_name: int, seed: int) -> list[Site]:
    """At most ``per_name`` sites of each instruction name, picked by ``seed`` (deterministic:
    the pick depends on the seed and the site ids only, not on the order of the list)."""
    by: dict[str, list[Site]] = {}
    for s in all_sites:
        by.setdefault(s.name, []).append(s)
    out: list[Site] = []
    for name, group in sorted(by.items()):
        group.sort(key=lambda s: s.ordinal)
        if len(group) <= per_name:
            out.extend(group)
            continue
        rng = random.Random(int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:16], 16))
        out.extend(sorted(rng.sample(group, per_name), key=lambda s: s.ordinal))
    return sorted(out, key=lambda s: s.index)
