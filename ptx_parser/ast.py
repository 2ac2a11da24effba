"""Typed AST for PTX modules.

Every node is a frozen dataclass. Source spans are carried on statements but excluded from
equality, so `parse(print_module(parse(x))) == parse(x)` compares structure only. Instructions keep
their modifiers as an unordered set plus the ordered lists that carry meaning (types, state
spaces); the original spelling order is kept for printing only (PTX 4.3.2; see modifiers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Span:
    """A source position: 1-based line and column of the first character."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False)  # type: ignore[return-value]


# --------------------------------------------------------------------------- expressions / operands


@dataclass(frozen=True)
class IntLit:
    """Integer literal (PTX 4.5.1). `text` keeps the spelling (hex, octal, binary, U suffix)."""

    value: int
    unsigned: bool = False
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class FloatLit:
    """Floating literal: exact hex form (`0f`/`0d`, PTX 4.5.2) or a decimal double."""

    bits: int | None  # raw IEEE bits for 0f/0d literals
    width: int  # 32 for 0f, 64 for 0d and decimal
    value: float | None = None  # decimal literals
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Sym:
    """A name: register, variable, label, function or special register (`%tid.x`)."""

    name: str
    component: str | None = None  # `.x` in `%tid.x`


@dataclass(frozen=True)
class Sink:
    """The `_` sink operand."""


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Expr"


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: "Expr"
    rhs: "Expr"


@dataclass(frozen=True)
class Cond:
    cond: "Expr"
    then: "Expr"
    other: "Expr"


@dataclass(frozen=True)
class Cast:
    type: str  # ".s64" or ".u64"
    operand: "Expr"


@dataclass(frozen=True)
class Paren:
    """A parenthesised expression, kept so printing reproduces the source."""

    inner: "Expr"


@dataclass(frozen=True)
class FuncExpr:
    """`generic(var)` (and similar) in an initializer (PTX 5.4.4)."""

    func: str
    arg: str


Expr = Union[IntLit, FloatLit, Sym, Sink, Unary, Binary, Cond, Cast, Paren, FuncExpr]


@dataclass(frozen=True)
class Negated:
    """`!p` predicate operand."""

    operand: Sym


@dataclass(frozen=True)
class Pair:
    """`d|p` destination pair (setp, shfl.sync, ...)."""

    first: "Sym | Vector"
    second: Sym


@dataclass(frozen=True)
class Vector:
    """Brace vector `{a, _, 0}` (up to 128 elements for tcgen05)."""

    elements: tuple["Operand", ...]


@dataclass(frozen=True)
class Address:
    """`[base+offset]`, `[imm]`; `base` is a name or None, `offset` a constant expression."""

    base: Sym | None
    offset: Expr | None = None
    suffix: str | None = None  # `.unified`


@dataclass(frozen=True)
class TensorAddress:
    """`[tmap, {c0, c1}]` tensor-coordinate operand, plus any further elements."""

    tensor: Expr
    rest: tuple["Operand", ...]


@dataclass(frozen=True)
class Indexed:
    """`var[expr]` array-element operand (PTX 6.4.2)."""

    base: str
    index: Expr


@dataclass(frozen=True)
class ParenList:
    """Parenthesised operand list of `call` (return values and arguments)."""

    elements: tuple["Operand", ...]


Operand = Union[Expr, Negated, Pair, Vector, Address, TensorAddress, Indexed, ParenList]


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class VarItem:
    """One declared name: `%r<5>`, `smem[1024]`, `x = 3`."""

    name: str
    range: int | None = None  # %r<N>
    dims: tuple[int | None, ...] = ()  # None for `[]`
    init: "Init | None" = None


@dataclass(frozen=True)
class NamedInit:
    """`field = value` inside a `.samplerref`/`.texref` initializer (PTX 5.3)."""

    name: str
    value: Expr


Init = Union[Expr, NamedInit, tuple]  # nested tuples for brace initializers


@dataclass(frozen=True)
class VarDecl:
    """`.space [.align N] [.ptr] [.vN] .type items;` (PTX 5.4)."""

    space: str
    attrs: tuple[str, ...]  # attributes in order (.v4, .b32, .ptr, `.align` marker, ...)
    align: int | None
    items: tuple[VarItem, ...]
    linkage: tuple[str, ...] = ()
    span: Span | None = _span()

    @property
    def type(self) -> str | None:
        from .modifiers import is_type

        types = [a for a in self.attrs if is_type(a)]
        return types[-1] if types else None

    @property
    def vector(self) -> int | None:
        for a in self.attrs:
            if a in (".v2", ".v4", ".v8"):
                return int(a[2:])
        return None


@dataclass(frozen=True)
class Param:
    """A function parameter: `.param .u64 .ptr .global .align 1 name`, `.reg .b32 r`."""

    space: str
    attrs: tuple[str, ...]
    align: int | None
    name: str
    dims: tuple[int | None, ...] = ()


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Guard:
    pred: str
    negated: bool = False


@dataclass(frozen=True)
class Instruction:
    """opcode + modifiers + operands (PTX 4.3.2).

    `modifiers` is the unordered set of all `.xxx` suffixes; `types` the ordered type modifiers
    (`cvt.f32.f16` differs from `cvt.f16.f32`); `positional` the other modifiers whose order
    matters: state spaces (`cp.async.bulk.global.shared::cta` differs from
    `cp.async.bulk.shared::cta.global`) and layouts (`.row.col`). `order` is the spelling order,
    kept for printing only.
    """

    opcode: str
    modifiers: frozenset[str]
    types: tuple[str, ...]
    positional: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None = None
    order: tuple[str, ...] = field(default=(), compare=False)
    span: Span | None = _span()
    loc: "Loc | None" = field(default=None, compare=False, repr=False)  # last `.loc` before it

    @property
    def spaces(self) -> tuple[str, ...]:
        """State-space modifiers in spelling order."""
        from .modifiers import is_space

        return tuple(m for m in self.positional if is_space(m))

    def has(self, *mods: str) -> bool:
        return all(m in self.modifiers for m in mods)

    @property
    def name(self) -> str:
        """Opcode with modifiers in spelling order, e.g. `ld.global.v4.b32`."""
        return self.opcode + "".join(self.order)


@dataclass(frozen=True)
class Label:
    name: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Loc:
    """`.loc file line col [, function_name L, inlined_at f l c]` (PTX 11.2)."""

    file: int
    line: int
    col: int
    extra: tuple[tuple[str, tuple], ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class Pragma:
    strings: tuple[str, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class CallPrototype:
    """`.callprototype (ret) _ (params);` — named by the label before it."""

    returns: tuple[Param, ...] | None  # None: no return list (`_` form)
    params: tuple[Param, ...] | None
    has_ret_parens: bool = True
    span: Span | None = _span()


@dataclass(frozen=True)
class TargetList:
    """`.branchtargets L1, L2;` or `.calltargets f1, f2;`."""

    kind: str
    names: tuple[str, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class Block:
    statements: tuple["Statement", ...]
    span: Span | None = _span()


Statement = Union[Instruction, Label, VarDecl, Loc, Pragma, Block, CallPrototype, TargetList]


@dataclass(frozen=True)
class Directive:
    """Performance directive or other `.name v1, v2` after a function header (PTX 11.4)."""

    name: str
    values: tuple[int, ...] = ()
    strings: tuple[str, ...] = ()  # for `.pragma`


@dataclass(frozen=True)
class Function:
    kind: str  # ".entry" or ".func"
    name: str
    linkage: tuple[str, ...]
    params: tuple[Param, ...] | None  # None when the header has no parameter list
    returns: tuple[Param, ...] | None
    directives: tuple[Directive, ...]
    body: Block | None  # None for a prototype `;`
    span: Span | None = _span()

    @property
    def is_kernel(self) -> bool:
        return self.kind == ".entry"

    def instructions(self) -> list[Instruction]:
        """All instructions in source order, nested blocks flattened."""
        out: list[Instruction] = []
        if self.body is not None:
            _collect(self.body, out)
        return out

    def directive(self, name: str) -> Directive | None:
        for d in self.directives:
            if d.name == name:
                return d
        return None


def _collect(block: Block, out: list[Instruction]) -> None:
    for s in block.statements:
        if isinstance(s, Instruction):
            out.append(s)
        elif isinstance(s, Block):
            _collect(s, out)


@dataclass(frozen=True)
class FileEntry:
    """`.file N "name" [, timestamp, size]`."""

    index: int
    name: str
    extra: tuple[Expr, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class SectionEntry:
    """One line of a `.section` block: a label, or a data directive with its values as text."""

    label: str | None = None
    directive: str | None = None  # `.b8`, `.b32`, `.b64`
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A `.section` (DWARF) block, parsed apart from the code (PTX 11.5)."""

    name: str
    entries: tuple[SectionEntry, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class Alias:
    alias: str
    target: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Version:
    version: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Target:
    targets: tuple[str, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class AddressSize:
    size: int
    span: Span | None = _span()


TopLevel = Union[Version, Target, AddressSize, FileEntry, Loc, Pragma, VarDecl, Function, Alias, Section]


@dataclass(frozen=True)
class SourceLoc:
    """A resolved `.loc`: the source file name, line and column an instruction comes from."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.col else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Module:
    items: tuple[TopLevel, ...]
    filename: str = field(default="<input>", compare=False)

    # -- convenience views ------------------------------------------------------------------
    @property
    def version(self) -> str | None:
        return next((i.version for i in self.items if isinstance(i, Version)), None)

    @property
    def target(self) -> tuple[str, ...]:
        return next((i.targets for i in self.items if isinstance(i, Target)), ())

    @property
    def arch(self) -> str | None:
        """The `sm_XX` target, if any."""
        return next((t for t in self.target if t.startswith("sm_")), None)

    @property
    def address_size(self) -> int | None:
        return next((i.size for i in self.items if isinstance(i, AddressSize)), None)

    @property
    def functions(self) -> list[Function]:
        return [i for i in self.items if isinstance(i, Function)]

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel and f.body is not None]

    @property
    def files(self) -> dict[int, str]:
        return {i.index: i.name for i in self.items if isinstance(i, FileEntry)}

    @property
    def sections(self) -> list[Section]:
        return [i for i in self.items if isinstance(i, Section)]

    @property
    def variables(self) -> list[VarDecl]:
        return [i for i in self.items if isinstance(i, VarDecl)]

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name and f.body is not None:
                return f
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)
