"""Symbol tables per scope, with ptxas-like errors (PTX 5.4 declarations, 11.1 scoping).

Scopes: the module (variables, functions), a function (parameters), and every `{ }` block
(registers, local variables, labels; labels may be used before their definition within the block
and its parents). `.reg .b32 %r<N>` declares `%r0 .. %r{N-1}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import ast as A
from .errors import ParseError, source_line

# PTX 4.4 Table 3 (names without the `.x` component).
SPECIAL_REGISTERS = frozenset({
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid",
    "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
    "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
    "%total_smem_size", "%aggr_smem_size", "%dynamic_smem_size", "%is_explicit_cluster",
    "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
    "%cluster_nctarank", "%reserved_smem_offset_begin", "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap", "%reserved_smem_offset_0", "%reserved_smem_offset_1",
    "%current_graph_exec", "WARP_SZ",
} | {f"%pm{i}" for i in range(8)} | {f"%pm{i}_64" for i in range(8)} | {f"%envreg{i}" for i in range(32)})

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


@dataclass
class Scope:
    parent: "Scope | None"
    names: dict[str, str] = field(default_factory=dict)  # name -> kind
    ranges: dict[str, int] = field(default_factory=dict)  # %r<N>: prefix -> N

    def declare(self, name: str, kind: str) -> bool:
        if name in self.names:
            return False
        self.names[name] = kind
        return True

    def lookup(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            kind = scope.names.get(name)
            if kind is not None:
                return kind
            m = _NUMBERED.match(name)
            if m and m.group(1) in scope.ranges:
                if int(m.group(2)) < scope.ranges[m.group(1)] and not (m.group(2).startswith("0") and m.group(2) != "0"):
                    return "reg"
            scope = scope.parent
        return None

    def range_hint(self, name: str) -> str | None:
        """If `name` is `%rN` outside a declared `%r<M>`, say so."""
        m = _NUMBERED.match(name)
        scope: Scope | None = self
        while m and scope is not None:
            if m.group(1) in scope.ranges:
                return f"{m.group(1)}<{scope.ranges[m.group(1)]}>"
            scope = scope.parent
        return None


class _Checker:
    def __init__(self, module: A.Module, text: str) -> None:
        self.module = module
        self.text = text
        self.filename = module.filename

    def error(self, message: str, span: A.Span | None, name: str | None = None) -> ParseError:
        line = span.line if span else 1
        col = span.col if span else 1
        src = source_line(self.text, line)
        if name and src is not None:
            pos = src.find(name, col - 1)
            if pos >= 0:
                col = pos + 1
        return ParseError(message, self.filename, line, col, src)

    def run(self) -> None:
        top = Scope(None)
        defined_funcs: set[str] = set()
        for item in self.module.items:
            if isinstance(item, A.VarDecl):
                self.declare_vars(top, item)
            elif isinstance(item, A.Function):
                kind = top.names.get(item.name)
                if kind is not None and kind != "func":
                    raise self.error(f"duplicate declaration of '{item.name}'", item.span, item.name)
                if item.body is not None:
                    if item.name in defined_funcs:
                        raise self.error(f"duplicate definition of function '{item.name}'", item.span, item.name)
                    defined_funcs.add(item.name)
                top.names[item.name] = "func"
            elif isinstance(item, A.Alias):
                top.names.setdefault(item.alias, "func")
        # Variable initializers may name functions and variables declared anywhere at module scope.
        for item in self.module.items:
            if isinstance(item, A.VarDecl):
                for v in item.items:
                    if v.init is not None:
                        self.check_init(top, v.init, item.span)
            elif isinstance(item, A.Function) and item.body is not None:
                self.check_function(top, item)

    def declare_vars(self, scope: Scope, decl: A.VarDecl) -> None:
        for v in decl.items:
            if v.range is not None:
                if v.name in scope.ranges or v.name in scope.names:
                    raise self.error(f"duplicate declaration of '{v.name}<{v.range}>'", decl.span, v.name)
                scope.ranges[v.name] = v.range
                scope.names[v.name + "<>"] = "range"
            elif not scope.declare(v.name, decl.space):
                raise self.error(f"duplicate declaration of '{v.name}'", decl.span, v.name)

    def check_init(self, scope: Scope, init, span) -> None:
        if isinstance(init, A.NamedInit):  # sampler fields name modes, not symbols
            return
        if isinstance(init, tuple):
            for x in init:
                self.check_init(scope, x, span)
            return
        for name in _names(init):
            if scope.lookup(name) is None and name not in SPECIAL_REGISTERS:
                raise self.error(f"undeclared symbol '{name}'", span, name)

    def check_function(self, top: Scope, fn: A.Function) -> None:
        scope = Scope(top)
        for p in (fn.returns or ()) + (fn.params or ()):
            if not scope.declare(p.name, p.space):
                raise self.error(f"duplicate parameter '{p.name}'", fn.span, p.name)
        assert fn.body is not None
        self.check_block(scope, fn.body)

    def check_block(self, parent: Scope, block: A.Block) -> None:
        scope = Scope(parent)
        # Labels are visible in the whole block (forward branches).
        for s in block.statements:
            if isinstance(s, A.Label) and not scope.declare(s.name, "label"):
                raise self.error(f"duplicate label '{s.name}'", s.span, s.name)
        for s in block.statements:
            if isinstance(s, A.VarDecl):
                self.declare_vars(scope, s)
                for v in s.items:
                    if v.init is not None:
                        self.check_init(scope, v.init, s.span)
            elif isinstance(s, A.Instruction):
                self.check_instruction(scope, s)
            elif isinstance(s, A.Block):
                self.check_block(scope, s)
            elif isinstance(s, A.TargetList):
                for n in s.names:
                    if scope.lookup(n) is None:
                        raise self.error(f"undeclared symbol '{n}'", s.span, n)

    def check_instruction(self, scope: Scope, ins: A.Instruction) -> None:
        if ins.guard is not None:
            self.require(scope, ins.guard.pred, ins)
        for op in ins.operands:
            for name in _names(op):
                self.require(scope, name, ins)

    def require(self, scope: Scope, name: str, ins: A.Instruction) -> None:
        if name in SPECIAL_REGISTERS or scope.lookup(name) is not None:
            return
        hint = scope.range_hint(name)
        if hint is not None:
            raise self.error(f"register '{name}' is outside the declared range '{hint}'", ins.span, name)
        raise self.error(f"undeclared symbol '{name}'", ins.span, name)


def _names(node) -> list[str]:
    """Every name an operand or expression refers to."""
    out: list[str] = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Sym):
            out.append(x.name)
        elif isinstance(x, (A.IntLit, A.FloatLit, A.Sink)) or x is None:
            continue
        elif isinstance(x, A.Address):
            stack.append(x.base)
            stack.append(x.offset)
        elif isinstance(x, A.Indexed):
            out.append(x.base)
            stack.append(x.index)
        elif isinstance(x, (A.Vector, A.ParenList)):
            stack.extend(x.elements)
        elif isinstance(x, A.TensorAddress):
            stack.append(x.tensor)
            stack.extend(x.rest)
        elif isinstance(x, A.Negated):
            stack.append(x.operand)
        elif isinstance(x, A.Pair):
            stack.extend((x.first, x.second))
        elif isinstance(x, A.Unary) or isinstance(x, A.Cast):
            stack.append(x.operand)
        elif isinstance(x, A.Binary):
            stack.extend((x.lhs, x.rhs))
        elif isinstance(x, A.Cond):
            stack.extend((x.cond, x.then, x.other))
        elif isinstance(x, A.Paren):
            stack.append(x.inner)
        elif isinstance(x, A.FuncExpr):
            out.append(x.arg)
    return out


def check_symbols(module: A.Module, text: str) -> None:
    """Raise ParseError for undeclared names, out-of-range registers and duplicates."""
    _Checker(module, text).run()
