"""A kernel made ready to run: flat code, resolved labels, registers, variables, reconvergence.

Nested `{ }` blocks are flattened; a name a nested block declares again (shadowing) gets a unique
spelling (`%x` -> `%x#2`), as do labels local to a block. Reconvergence points of divergent
branches are immediate post-dominators of the control-flow graph (computed with networkx).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

import networkx as nx

from ptx_parser import ast as A

from .calls import CallSite, indirect_targets, library_function, parse_call
from .errors import Unsupported
from .opcodes import CONVERGENT, EXITS, region_neutral

EXIT = -1  # virtual exit node of the CFG

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


@functools.lru_cache(maxsize=1 << 16)
def _numbered(name: str) -> tuple[str, int] | None:
    """(prefix, number) of a register name of a numbered range (%f<300>: %f12 -> ('%f', 12)), None if it is
    not one; memoised (the machine asks for every operand of every instruction it runs)."""
    m = _NUMBERED.match(name)
    return (m.group(1), int(m.group(2))) if m is not None else None


_TYPE_WIDTH = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16,
               "bf16": 16, "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32,
               "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128}


def type_width(ty: str) -> int:
    return _TYPE_WIDTH[ty.lstrip(".")]


@dataclass(frozen=True)
class RegDecl:
    type: str  # ".b32" ...
    width: int
    vector: int | None = None


@dataclass
class Variable:
    """A declared variable in .shared/.local/.global/.const with its layout."""

    name: str
    space: str
    size: int
    align: int
    decl: A.VarDecl
    item: A.VarItem
    offset: int = 0  # within its window (shared/local) or absolute address (global/const)
    extern: bool = False


@dataclass
class Program:
    module: A.Module
    function: A.Function
    code: list[A.Instruction]
    labels: dict[str, int]
    regs: dict[str, RegDecl]
    reg_ranges: dict[str, tuple[RegDecl, int]]
    variables: dict[str, Variable]
    reconverge: dict[int, int | None] = field(default_factory=dict)
    # per conditional branch: True when no instruction between it and its reconvergence point has
    # an effect beyond registers (no memory access, synchronisation, exit): a data-dependent
    # choice there can change values but not which memory is touched
    region_pure: dict[int, bool] = field(default_factory=dict)
    region_exits: dict[int, bool] = field(default_factory=dict)  # the region can leave the kernel
    # the region holds a barrier or a warp collective (opcodes.CONVERGENT)
    region_convergent: dict[int, bool] = field(default_factory=dict)
    # conditional branches whose fall-through is a back edge (pc + 1 dominates pc: the loop's latch
    # falls into its header, as LLVM lays out some loops); the machine tells its policy of them too
    falls_back: set[int] = field(default_factory=set)
    # `bra` instructions that jump back to a loop header which dominates them (pc -> the header): the loop's
    # back edges taken by jumping; a backward jump to a block that does not dominate it (a latch block laid out
    # before its loop's header, as LLVM lays out rotated loops) is a forward edge of the control flow
    back_branches: dict[int, int] = field(default_factory=dict)
    loop_headers: set[int] = field(default_factory=set)  # targets of back edges (they dominate the source)
    # control-flow predecessors of each instruction (EXIT excluded), for loop bodies (`loop_body`)
    preds: dict[int, tuple[int, ...]] = field(default_factory=dict)
    _bodies: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict, repr=False)
    # numbered register name -> its range's declaration (`reg`: a range's declaration never changes once made;
    # an inner scope's own range gets a new name, _Flattener.unique)
    _reg_memo: dict[str, RegDecl] = field(default_factory=dict, repr=False, compare=False)

    @functools.cached_property
    def bulk_wait_horizon(self) -> int | None:
        """1 + the largest N of the program's `cp.async.bulk.wait_group N` without .read (0 where it has none): a
        bulk group at least this many commits old is selected by every such wait (loops `Canon._bulk_key`); None
        where some N is not an integer constant."""
        most = 0
        for ins in self.code:
            if ins.opcode == "cp" and {".async", ".bulk", ".wait_group"} <= ins.modifiers and ".read" not in ins.modifiers:
                n = ins.operands[0] if ins.operands else None
                if not isinstance(n, A.IntLit):
                    return None
                most = max(most, int(n.value))
        return most + 1

    def loop_body(self, head: int, latch: int) -> tuple[int, ...]:
        """The instructions of the loop closed by the back edge latch -> head, in code order: head and
        every instruction from which the latch is reached without passing head (the natural loop of
        the edge). A body may lie anywhere in the code (a block laid out after the kernel's `ret` that
        the loop jumps to and back from), not only between head and latch."""
        got = self._bodies.get((head, latch))
        if got is None:
            body, todo = {head}, [latch]
            while todo:
                n = todo.pop()
                if n in body or n < 0:
                    continue
                body.add(n)
                todo.extend(self.preds.get(n, ()))
            got = self._bodies[(head, latch)] = tuple(sorted(body))
        return got

    def region_pcs(self, pc: int) -> set[int]:
        """The instructions between branch `pc` and its reconvergence point, on either path."""
        stop = self.reconverge.get(pc)
        seen = {pc}
        target = self.code[pc].operands[0]
        todo = [pc + 1] + ([self.labels[target.name]] if isinstance(target, A.Sym) and target.name in self.labels else [])
        while todo:
            n = todo.pop()
            if n == stop or n in seen or n >= len(self.code) or n < 0:
                continue
            seen.add(n)
            ins = self.code[n]
            if ins.opcode == "bra":
                t = ins.operands[0]
                if isinstance(t, A.Sym) and t.name in self.labels:
                    todo.append(self.labels[t.name])
                if ins.guard is None:
                    continue
            todo.append(n + 1)
        seen.discard(pc)
        return seen

    def region_writes(self, pc: int) -> set[str]:
        """Registers that instructions between branch `pc` and its reconvergence point write."""
        return set().union(*(written_registers(self.code[n]) for n in self.region_pcs(pc)))

    def mentioned(self, ins: A.Instruction) -> tuple[set[str], bool]:
        """The registers `ins` names (operands, address bases, guard) and whether it also reads a
        special register (%tid, %laneid, %clock...: a value that differs between lanes or runs)."""
        regs: set[str] = set()
        special = False
        todo = list(ins.operands) + ([A.Sym(ins.guard.pred)] if ins.guard is not None else [])
        while todo:
            op = todo.pop()
            if isinstance(op, A.Sym):
                if self.reg(op.name) is not None:
                    regs.add(op.name)
                elif op.name.startswith("%"):
                    special = True
            elif isinstance(op, A.Negated):
                todo.append(op.operand)
            elif isinstance(op, A.Vector):
                todo.extend(op.elements)
            elif isinstance(op, A.Pair):
                todo.extend((op.first, op.second))
            elif isinstance(op, A.Address) and op.base is not None:
                todo.append(op.base)
        return regs, special

    branch_targets: dict[str, list[str]] = field(default_factory=dict)

    def reg(self, name: str) -> RegDecl | None:
        d = self.regs.get(name)
        if d is not None:
            return d
        d = self._reg_memo.get(name)
        if d is not None:
            return d
        m = _numbered(name)
        if m is not None:
            r = self.reg_ranges.get(m[0])
            if r is not None and m[1] < r[1]:
                self._reg_memo[name] = r[0]
                return r[0]
        return None

    @property
    def params(self) -> tuple[A.Param, ...]:
        return self.function.params or ()

    @property
    def specials(self) -> frozenset[str]:
        """The special registers (PTX 10) and predefined constants the code reads."""
        got = getattr(self, "_specials", None)
        if got is None:
            got = frozenset(name for ins in self.code for name in _operand_names(ins.operands)
                            if name == "WARP_SZ" or (name.startswith("%") and self.reg(name) is None))
            self._specials = got
        return got

    def shared_size(self) -> int:
        return max((v.offset + v.size for v in self.variables.values() if v.space == ".shared"), default=0)

    def local_size(self) -> int:
        return max((v.offset + v.size for v in self.variables.values() if v.space == ".local"), default=0)


def _elem_size(decl: A.VarDecl) -> int:
    ty = decl.type
    if ty is None:  # .texref/.samplerref/.surfref (PTX 5.3): opaque handles, not modelled
        names = ", ".join(i.name for i in decl.items)
        where = f" at {decl.span}" if decl.span is not None else ""
        raise Unsupported(f"{' '.join(decl.attrs) or 'untyped'} variable {names} (textures, samplers and "
                          f"surfaces are not modelled){where}")
    w = max(8, type_width(ty))
    return (w // 8) * (decl.vector or 1)


def _const_int(e) -> int:
    from semantics.constexpr import evaluate

    return int(evaluate(e))


def _var_size(decl: A.VarDecl, item: A.VarItem) -> tuple[int, bool]:
    size = _elem_size(decl)
    extern = False
    for d in item.dims:
        if d is None:
            extern = True
            continue
        size *= _const_int(d)
    return size, extern


_RANGE = "<range>"  # key prefix in a renaming map for a respelled register range prefix


def _rename_operand(op, names: dict[str, str]):
    if not names:
        return op
    if isinstance(op, A.Sym):
        new = names.get(op.name)
        if new is None:
            m = _NUMBERED.match(op.name)
            if m is not None and _RANGE + m.group(1) in names:  # %r5 of a respelled %r<N>
                new = names[_RANGE + m.group(1)] + m.group(2)
        return A.Sym(new, op.component) if new else op
    if isinstance(op, A.Address):
        return A.Address(_rename_operand(op.base, names) if op.base else None, op.offset)
    if isinstance(op, A.Vector):
        return A.Vector(tuple(_rename_operand(x, names) for x in op.elements))
    if isinstance(op, A.Negated):
        return A.Negated(_rename_operand(op.operand, names))
    if isinstance(op, A.Pair):
        return A.Pair(_rename_operand(op.first, names), _rename_operand(op.second, names))
    if isinstance(op, A.ParenList):
        return A.ParenList(tuple(_rename_operand(x, names) for x in op.elements))
    if isinstance(op, A.TensorAddress):
        return A.TensorAddress(_rename_operand(op.tensor, names),
                               tuple(_rename_operand(x, names) for x in op.rest))
    if isinstance(op, A.Indexed):
        return A.Indexed(names.get(op.base, op.base), op.index)
    if isinstance(op, A.Binary):
        return A.Binary(op.op, _rename_operand(op.lhs, names), _rename_operand(op.rhs, names))
    if isinstance(op, A.Unary):
        return A.Unary(op.op, _rename_operand(op.operand, names))
    return op


class _Flattener:
    def __init__(self, prog: Program) -> None:
        self.p = prog
        self.counter = 0
        self.inlining: list[str] = []  # functions being inlined (recursion is left as a call)

    def inline_call(self, ins: A.Instruction) -> bool:
        """Replace a `call` of a defined .func by its body (PTX 9.7.12.5): the callee's parameters
        are renamed to the caller's argument .param variables, its registers and labels are
        respelled, and `ret` jumps to the end. A guarded call branches around the body; an indirect
        call (a function address in a register) becomes a comparison of the address with each
        possible target and that target's body (`calls.indirect_targets`). Recursive or extern
        calls, and functions with .reg parameters, stay calls (symexec.calls runs them)."""
        call = parse_call(ins)
        if call is None:
            return False
        if call.indirect:
            return self._inline_indirect(ins, call)
        fn = self._callee(call.callee, call)
        if fn is None:
            return False
        self._guarded(ins, lambda: self._inline_body(fn, call, ins))
        return True

    def _callee(self, name: str, call: "CallSite") -> A.Function | None:
        """The defined function `name` if a call to it can be inlined here."""
        try:
            fn = self.p.module.function(name)
        except KeyError:
            return None
        if fn.body is None:  # an external function Volta supplies in PTX (memcpy, memset)
            fn = library_function(name) or fn
        if fn.kind != ".func" or fn.body is None or name in self.inlining or len(self.inlining) >= 8:
            return None
        params, returns = fn.params or (), fn.returns or ()
        if any(p.space != ".param" for p in params + returns) or len(params) != len(call.args) \
                or len(returns) != len(call.rets):
            return None
        if not all(isinstance(a, A.Sym) for a in call.args + call.rets):
            return None
        return fn

    def _inline_body(self, fn: A.Function, call: "CallSite", at: A.Instruction) -> None:
        params, returns = fn.params or (), fn.returns or ()
        names = {p.name: a.name for p, a in zip(params + returns, call.args + call.rets)}
        self.counter += 1
        end = f"$ret#{fn.name}#{self.counter}"
        body = A.Block(tuple(_ret_to_branch(st, end) for st in fn.body.statements))
        first = len(self.p.code)
        self.inlining.append(fn.name)
        try:
            self.block(body, names, False)
        finally:
            self.inlining.pop()
        if fn is library_function(fn.name):  # Volta's own body: witnesses point at the call
            self.p.code[first:] = [replace(i, span=at.span, loc=at.loc) for i in self.p.code[first:]]
        self.p.labels[end] = len(self.p.code)

    def _guarded(self, ins: A.Instruction, emit) -> None:
        """emit() the code of `ins`; a guarded `@p call` skips it where p is false."""
        if ins.guard is None:
            emit()
            return
        self.counter += 1
        skip = f"$call_skip#{self.counter}"
        self.p.code.append(_branch(skip, A.Guard(ins.guard.pred, not ins.guard.negated), ins))
        emit()
        self.p.labels[skip] = len(self.p.code)

    def _inline_indirect(self, ins: A.Instruction, call: "CallSite") -> bool:
        """`call (r), %fptr, (args), flist|fproto`: for every function the pointer can hold (the
        call table or .calltargets list, else every function whose address the module takes and
        whose signature fits the prototype), `setp.eq %p, %fptr, f; @%p bra L_f`; an address that
        is none of them falls through to the original call, which reports it when executed."""
        targets = [f for f in indirect_targets(self.p.module, call, self.p.branch_targets)
                   if self._callee(f, call) is not None]
        if not targets:
            return False
        reg = self.p.reg(call.callee)
        width = reg.width if reg is not None else 64
        self.counter += 1
        k = self.counter
        pred, done = f"%icall#{k}_", f"$icall_end#{k}"
        self.p.regs[pred] = RegDecl(".pred", 1)

        def emit() -> None:
            for i, name in enumerate(targets):
                ty = f".u{width}"
                self.p.code.append(A.Instruction("setp", frozenset({".eq", ty}), (ty,), (),
                                                 (A.Sym(pred), A.Sym(call.callee), A.Sym(name)), None,
                                                 (".eq", ty), ins.span, ins.loc))
                self.p.code.append(_branch(f"$icall#{k}_{i}", A.Guard(pred), ins))
            self.p.code.append(replace(ins, guard=None))  # no target matched: symexec.calls reports it
            self.p.code.append(_branch(done, None, ins))
            for i, name in enumerate(targets):
                self.p.labels[f"$icall#{k}_{i}"] = len(self.p.code)
                fn = self._callee(name, call)
                assert fn is not None
                self._inline_body(fn, call, ins)
                self.p.code.append(_branch(done, None, ins))
            self.p.labels[done] = len(self.p.code)

        self._guarded(ins, emit)
        return True

    def unique(self, name: str) -> str:
        if name not in self.p.regs and name not in self.p.variables and name not in self.p.labels \
                and name not in self.p.reg_ranges:
            return name
        self.counter += 1
        return f"{name}#{self.counter}_"  # no trailing digit: %r<N> respelled keeps %rI parseable

    def block(self, block: A.Block, outer: dict[str, str], top: bool) -> None:
        """Flatten one scope. `names` maps only the names this scope (or an outer one) respelled."""
        names = dict(outer)
        for s in block.statements:  # labels first: branches may go forward
            if isinstance(s, A.Label):
                self.bind(names, s.name, s.name if top else self.unique(s.name))
        pending_label: str | None = None
        for s in block.statements:
            if isinstance(s, A.VarDecl):
                self.declare(s, names, top)
            elif isinstance(s, A.Label):
                label = names.get(s.name, s.name)
                self.p.labels[label] = len(self.p.code)
                pending_label = label
            elif isinstance(s, A.Instruction):
                ins = self.rename(s, names) if names else s
                if ins.opcode == "call" and self.inline_call(ins):
                    continue
                self.p.code.append(ins)
            elif isinstance(s, A.Block):
                self.block(s, names, False)
            elif isinstance(s, A.TargetList):
                if pending_label is not None:
                    self.p.branch_targets[pending_label] = [names.get(n, n) for n in s.names]
            # .loc / .pragma / .callprototype carry no run-time meaning here

    @staticmethod
    def bind(names: dict[str, str], name: str, spelled: str) -> None:
        if spelled != name:
            names[name] = spelled
        else:
            names.pop(name, None)

    def rename(self, ins: A.Instruction, names: dict[str, str]) -> A.Instruction:
        guard = ins.guard
        if guard is not None:
            renamed = _rename_operand(A.Sym(guard.pred), names)
            if renamed.name != guard.pred:
                guard = A.Guard(renamed.name, guard.negated)
        ops = tuple(_rename_operand(o, names) for o in ins.operands)
        return replace(ins, operands=ops, guard=guard)

    def declare(self, decl: A.VarDecl, names: dict[str, str], top: bool) -> None:
        for item in decl.items:
            name = item.name if top else self.unique(item.name)
            self.bind(names, item.name, name)
            if decl.space == ".reg":
                ty = decl.type or ".b32"
                rd = RegDecl(ty, type_width(ty), decl.vector)
                if item.range is not None:
                    self.p.reg_ranges[name] = (rd, item.range)
                    if name != item.name:
                        names[_RANGE + item.name] = name
                    else:
                        names.pop(_RANGE + item.name, None)
                else:
                    self.p.regs[name] = rd
            elif decl.space in (".shared", ".local", ".global", ".const"):
                size, extern = _var_size(decl, item)
                align = decl.align or _elem_size(decl)
                self.p.variables[name] = Variable(name, decl.space, size, align, decl, item,
                                                  extern=extern or ".extern" in decl.linkage)
            elif decl.space == ".param":
                # .param variables declared in a body are the call-argument area of each thread
                # (PTX 5.1.6.2): local memory
                self.p.variables[name] = Variable(name, ".local", _var_size(decl, item)[0],
                                                  decl.align or _elem_size(decl), decl, item)


#: The shared memory reserved for system software (PTX 10.29, %reserved_smem_offset_*): the manual gives
#: no size; CUDA reserves 1 KiB per CTA on sm_80 and later. Modelled as a variable of that size.
RESERVED_SHARED = "%reserved_smem"
RESERVED_SHARED_BYTES = 1024


def _reserve_shared(prog: Program) -> None:
    """Code that reads %reserved_smem_offset_* (cooperative groups under nvcc -G) gets the reserved
    region as shared memory of its own, after the kernel's variables."""
    if not any(n.startswith("%reserved_smem_offset") for n in prog.specials):
        return
    decl = A.VarDecl(".shared", (".b8",), 16, (A.VarItem(RESERVED_SHARED, None, (A.IntLit(RESERVED_SHARED_BYTES),)),))
    prog.variables[RESERVED_SHARED] = Variable(RESERVED_SHARED, ".shared", RESERVED_SHARED_BYTES, 16, decl,
                                               decl.items[0])


def _layout(prog: Program) -> None:
    """Offsets of .shared and .local variables in their windows; extern shared arrays last."""
    for space in (".shared", ".local"):
        off = 0
        vars_ = [v for v in prog.variables.values() if v.space == space]
        for v in sorted(vars_, key=lambda v: v.extern):
            off = -(-off // v.align) * v.align
            v.offset = off
            off += v.size


def _back_edges(prog: Program, g: "nx.DiGraph") -> None:
    """Loop headers (targets of edges u -> v where v dominates u) and the conditional branches that
    fall through into one (`Program.falls_back`)."""
    if 0 not in g:
        return
    idom = nx.immediate_dominators(g, 0)

    def dominates(v: int, u: int) -> bool:
        while True:
            if u == v:
                return True
            up = idom.get(u)
            if up is None or up == u:
                return False
            u = up

    for u, v in g.edges():
        if v != EXIT and u in idom and v <= u and dominates(v, u):
            prog.loop_headers.add(v)
            if prog.code[u].opcode == "bra":
                prog.back_branches[u] = v
    for pc, ins in enumerate(prog.code):
        if ins.opcode == "bra" and ins.guard is not None and pc + 1 < len(prog.code) and pc in idom \
                and dominates(pc + 1, pc):
            prog.falls_back.add(pc)
            prog.loop_headers.add(pc + 1)


def _cfg(prog: Program) -> None:
    """Immediate post-dominators of each conditional branch: where divergent threads reconverge."""
    code = prog.code
    n = len(code)
    g = nx.DiGraph()
    g.add_node(EXIT)
    for pc, ins in enumerate(code):
        g.add_node(pc)
        op = ins.opcode
        if op in ("exit", "ret", "trap"):
            g.add_edge(pc, EXIT)
            if ins.guard is not None:
                g.add_edge(pc, pc + 1 if pc + 1 < n else EXIT)
            continue
        if op == "bra":
            target = ins.operands[0]
            if isinstance(target, A.Sym) and target.name in prog.labels:
                g.add_edge(pc, prog.labels[target.name] if prog.labels[target.name] < n else EXIT)
            if ins.guard is not None:
                g.add_edge(pc, pc + 1 if pc + 1 < n else EXIT)
            continue
        if op == "brx":
            table = ins.operands[1] if len(ins.operands) > 1 else None
            if isinstance(table, A.Sym):
                for lab in prog.branch_targets.get(table.name, []):
                    if lab in prog.labels:
                        g.add_edge(pc, prog.labels[lab] if prog.labels[lab] < n else EXIT)
            continue
        g.add_edge(pc, pc + 1 if pc + 1 < n else EXIT)
    prog.preds = {pc: tuple(u for u in g.predecessors(pc) if u != EXIT) for pc in range(n)}
    rev = g.reverse(copy=False)
    try:
        ipdom = nx.immediate_dominators(rev, EXIT)
    except nx.NetworkXError:  # pragma: no cover - EXIT always present
        ipdom = {}
    _back_edges(prog, g)
    effectful = {ins.opcode for ins in code if not region_neutral(ins.opcode)}
    for pc, ins in enumerate(code):
        if ins.opcode in ("bra", "brx") and (ins.guard is not None or ins.opcode == "brx"):
            d = ipdom.get(pc)
            prog.reconverge[pc] = None if d is None or d == EXIT else d
            prog.region_pure[pc] = _pure_region(g, code, pc, prog.reconverge[pc], effectful)
            prog.region_exits[pc] = _region_has(g, code, pc, prog.reconverge[pc], EXITS)
            prog.region_convergent[pc] = _region_has(g, code, pc, prog.reconverge[pc], CONVERGENT)


def _branch(label: str, guard: A.Guard | None, at: A.Instruction) -> A.Instruction:
    """`{@guard} bra label` placed at instruction `at`'s source position."""
    return A.Instruction("bra", frozenset(), (), (), (A.Sym(label),), guard, (), at.span, at.loc)


def _ret_to_branch(st, end: str):
    """`ret` of an inlined function continues after the call site."""
    if isinstance(st, A.Instruction) and st.opcode == "ret":
        return A.Instruction("bra", frozenset({".uni"}) if ".uni" in st.modifiers else frozenset(), (), (),
                             (A.Sym(end),), st.guard, (".uni",) if ".uni" in st.modifiers else (), st.span, st.loc)
    if isinstance(st, A.Block):
        return A.Block(tuple(_ret_to_branch(x, end) for x in st.statements), st.span)
    return st


def _operand_names(ops):
    for o in ops:
        if isinstance(o, A.Sym):
            yield o.name
        elif isinstance(o, A.Vector) or isinstance(o, A.ParenList):
            yield from _operand_names(o.elements)
        elif isinstance(o, A.Negated):
            yield from _operand_names((o.operand,))
        elif isinstance(o, A.Address) and o.base is not None:
            yield o.base.name


def written_registers(ins: A.Instruction) -> set[str]:
    """Registers `ins` writes (its first operand, for the opcodes that have a destination)."""
    if ins.operands and ins.opcode not in ("st", "red", "bra", "bar", "barrier"):
        return _dest_names(ins.operands[0])
    return set()


def _dest_names(op) -> set[str]:
    if isinstance(op, A.Sym):
        return {op.name}
    if isinstance(op, A.Vector):
        return set().union(*(_dest_names(e) for e in op.elements)) if op.elements else set()
    if isinstance(op, A.Pair):
        return _dest_names(op.first) | _dest_names(op.second)
    return set()


def _region_has(g: nx.DiGraph, code: list[A.Instruction], pc: int, stop: int | None, ops: set[str]) -> bool:
    seen = {pc}
    todo = list(g.successors(pc))
    while todo:
        n = todo.pop()
        if n == stop or n in seen:
            continue
        if n == EXIT:
            return True
        seen.add(n)
        if code[n].opcode in ops:
            return True
        todo.extend(g.successors(n))
    return False


def _pure_region(g: nx.DiGraph, code: list[A.Instruction], pc: int, stop: int | None,
                 effectful: set[str]) -> bool:
    """Do the instructions reachable from branch `pc` before `stop` only compute registers?

    Warp-collective instructions count as effects too: with divergent lanes they change meaning
    (symexec.opcodes.region_neutral; an opcode the table does not know is an effect)."""
    return stop is not None and not _region_has(g, code, pc, stop, effectful)



def load_program(module: A.Module, kernel: str | None = None) -> Program:
    """Prepare `kernel` (default: the only kernel) of a parsed module for execution."""
    kernels = module.kernels
    if kernel is None:
        if len(kernels) != 1:
            names = ", ".join(k.name for k in kernels) or "none"
            raise ValueError(f"the module has {len(kernels)} kernels ({names}); name one")
        fn = kernels[0]
    else:
        fn = module.function(kernel)
    prog = Program(module, fn, [], {}, {}, {}, {})
    # Module-scope variables (.global/.const/.shared) are visible in the kernel.
    flat = _Flattener(prog)
    for item in module.items:
        if isinstance(item, A.VarDecl):
            flat.declare(item, {}, True)
    for p in fn.params or ():
        decl = A.VarDecl(".param", p.attrs, p.align, (A.VarItem(p.name, None, p.dims),))
        prog.variables[p.name] = Variable(p.name, ".param", _var_size(decl, decl.items[0])[0],
                                          p.align or _elem_size(decl), decl, decl.items[0])
    assert fn.body is not None
    flat.block(fn.body, {}, True)
    _reserve_shared(prog)
    _layout(prog)
    _cfg(prog)
    return prog
