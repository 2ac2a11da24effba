"""Lark callbacks that build the AST directly while the LALR parser reduces (no parse tree).

Each method receives the children of one grammar rule (see ptx.lark). Anonymous punctuation is
filtered by lark; named tokens (keywords, operators, identifiers) arrive as `lark.Token`.
"""

from __future__ import annotations

import struct

from lark import Token, Transformer

from . import ast as A
from .modifiers import split_modifiers


class _Located(Exception):
    """An error found while building, raised to parse() which adds file and source line."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def parse_int(text: str, line: int = 1, col: int = 1) -> A.IntLit:
    """Integer literal (PTX 4.5.1): decimal, 0x hex, 0b binary, leading-0 octal, U suffix."""
    body = text[:-1] if text.endswith("U") else text
    try:
        if body[:2] in ("0x", "0X"):
            value = int(body[2:], 16)
        elif body[:2] in ("0b", "0B"):
            value = int(body[2:], 2)
        elif len(body) > 1 and body[0] == "0":
            value = int(body[1:], 8)
        else:
            value = int(body, 10)
    except ValueError:
        raise _Located(f"malformed integer literal '{text}'", line, col) from None
    if value >= 1 << 64:
        raise _Located(f"integer literal '{text}' does not fit in 64 bits", line, col)
    return A.IntLit(value, text.endswith("U") or value >= 1 << 63, text)


class Builder(Transformer):
    """Builds ptx_parser.ast nodes; spans are created lazily from tokens (file set per parse)."""

    def __init__(self, filename: str = "<input>") -> None:
        super().__init__(visit_tokens=False)
        self.filename = filename
        self.minus_at: dict[int, tuple[int, int]] = {}  # positions of binary '-' (address checks)
        self.current_loc: A.Loc | None = None  # the `.loc` in force (PTX 11.2)
        self.depth: dict[int, int] = {}  # nesting depth of expressions and blocks, by node id
        self.pos: tuple[int, int] = (1, 1)  # last token seen (for errors without a token)

    def _nest(self, node, children, tok=None):
        """Record `node`'s nesting depth; refuse absurd depths before printing or comparing them
        would exhaust Python's recursion limit."""
        if tok is not None and isinstance(tok, Token):
            self.pos = (tok.line, tok.column)
        d = 1 + max((self.depth.get(id(c), 0) for c in children), default=0)
        if d > MAX_DEPTH:
            raise _Located(f"expected at most {MAX_DEPTH} levels of nesting, got more", *self.pos)
        self.depth[id(node)] = d
        return node

    def _span(self, tok: Token) -> A.Span:
        return A.Span(self.filename, tok.line, tok.column)

    # ------------------------------------------------------------------ module
    def start(self, items):
        return A.Module(tuple(items), self.filename)

    def version(self, c):
        return A.Version(str(c[1]), self._span(c[0]))

    def target(self, c):
        return A.Target(tuple(str(t) for t in c[1:]), self._span(c[0]))

    def address_size(self, c):
        return A.AddressSize(parse_int(c[1]).value, self._span(c[0]))

    def file_dir(self, c):
        return A.FileEntry(parse_int(c[1]).value, _unquote(c[2]), tuple(c[3:]), self._span(c[0]))

    def alias(self, c):
        return A.Alias(str(c[1]), str(c[2]), self._span(c[0]))

    def pragma(self, c):
        return A.Pragma(tuple(_unquote(s) for s in c[1:]), self._span(c[0]))

    def loc(self, c):
        extra = tuple(c[4:])
        loc = A.Loc(parse_int(c[1]).value, parse_int(c[2]).value, parse_int(c[3]).value, extra,
                    self._span(c[0]))
        self.current_loc = loc
        return loc

    def loc_extra(self, c):
        key = str(c[0])
        if len(c) == 4:
            return (key, tuple(parse_int(t).value for t in c[1:]))
        return (key, (c[1],))

    # ------------------------------------------------------------------ declarations
    def linkages(self, c):
        return tuple(c)

    def linkage(self, c):
        return str(c[0])

    def space(self, c):
        return c[0]

    def decl_attr(self, c):
        if len(c) == 2:  # .align N
            return ("align", parse_int(c[1], c[1].line, c[1].column).value)
        return str(c[0])

    def module_var(self, c):
        if len(c) == 2:
            return A.VarDecl(c[1].space, c[1].attrs, c[1].align, c[1].items, c[0], c[1].span)
        return c[0]

    def local_var(self, c):
        return c[0]

    def var_decl(self, c):
        space_tok = c[0]
        attrs, align = _split_attrs(x for x in c[1:] if not isinstance(x, A.VarItem))
        items = tuple(x for x in c[1:] if isinstance(x, A.VarItem))
        return A.VarDecl(str(space_tok), attrs, align, items, (), self._span(space_tok))

    def var_item(self, c):
        name = c[0]
        rng = dims = init = None
        for x in c[1:]:
            if isinstance(x, tuple) and x and x[0] == "range":
                rng = x[1]
            elif isinstance(x, tuple) and x and x[0] == "dims":
                dims = x[1]
            elif isinstance(x, tuple) and x and x[0] == "init":
                init = x[1]
        return A.VarItem(str(name), rng, dims or (), init)

    def range(self, c):
        n = parse_int(c[1], c[1].line, c[1].column).value
        return ("range", n)

    def dims(self, c):
        return ("dims", tuple(c))

    def dim(self, c):
        if not c:
            return None
        return c[0]

    def initializer(self, c):
        return ("init", c[0])

    def init_brace(self, c):
        return tuple(c)

    def named_init(self, c):
        return A.NamedInit(str(c[0]), c[1])

    # ------------------------------------------------------------------ functions
    def fkind(self, c):
        self.current_loc = None  # a new function starts: no `.loc` in force yet
        return str(c[0])

    def ret_params(self, c):
        return ("ret", c[0] if c else ())

    def params(self, c):
        return ("params", c[0] if c else ())

    def param_list(self, c):
        return tuple(c)

    def param(self, c):
        space = str(c[0])
        name_tok = next(x for x in c[1:] if isinstance(x, Token) and x.type == "IDENT")
        idx = c.index(name_tok)
        attrs, align = _split_attrs(c[1:idx])
        dims: tuple = ()
        for x in c[idx + 1:]:
            if isinstance(x, tuple) and x and x[0] == "dims":
                dims = x[1]
            elif isinstance(x, tuple) and x and x[0] == "range":
                raise _Located("a parameter cannot be a register range", name_tok.line, name_tok.column)
        return A.Param(space, attrs, align, str(name_tok), dims)

    def perf_directive(self, c):
        if c[0].type == "PRAGMA_KW":
            return A.Directive(".pragma", (), tuple(_unquote(s) for s in c[1:]))
        return A.Directive(str(c[0]), tuple(parse_int(t, t.line, t.column).value for t in c[1:]))

    def function(self, c):
        linkage: tuple = ()
        i = 0
        if isinstance(c[0], tuple) and all(isinstance(x, str) for x in c[0]):
            linkage, i = c[0], 1
        kind = c[i]
        returns = params = None
        name_tok = None
        directives: list[A.Directive] = []
        body = None
        for x in c[i + 1:]:
            if isinstance(x, tuple) and x and x[0] == "ret":
                returns = x[1]
            elif isinstance(x, tuple) and x and x[0] == "params":
                params = x[1]
            elif isinstance(x, Token) and x.type == "IDENT":
                name_tok = x
            elif isinstance(x, A.Directive):
                directives.append(x)
            elif isinstance(x, A.Block):
                body = x
        assert name_tok is not None
        return A.Function(kind, str(name_tok), linkage, params, returns, tuple(directives), body,
                          self._span(name_tok))

    def block(self, c):
        return self._nest(A.Block(tuple(c)), [x for x in c if isinstance(x, A.Block)])

    def label(self, c):
        return A.Label(str(c[0]), self._span(c[0]))

    def callprototype(self, c):
        rets = c[1]
        rest = c[2:]
        params = None
        for x in rest:
            if isinstance(x, tuple) and x and x[0] == "pparams":
                params = x[1]
        if isinstance(rets, tuple) and rets and rets[0] == "pret":
            return A.CallPrototype(rets[1], params, True, self._span(c[0]))
        return A.CallPrototype(None, params, False, self._span(c[0]))

    def proto_ret(self, c):
        if c and isinstance(c[0], Token):
            return ("pret_sink",)
        return ("pret", c[0] if c else ())

    def proto_params(self, c):
        return ("pparams", c[0] if c else ())

    def directive_list(self, c):
        return A.TargetList(str(c[0]), tuple(str(t) for t in c[1:]), self._span(c[0]))

    # ------------------------------------------------------------------ instructions
    def guard(self, c):
        if len(c) == 2:
            return A.Guard(str(c[1]), True)
        return A.Guard(str(c[0]), False)

    def modifier(self, c):
        return str(c[0])

    def operands(self, c):
        return ("operands", tuple(_operand(x) for x in c))

    def instruction(self, c):
        guard = None
        i = 0
        if isinstance(c[0], A.Guard):
            guard, i = c[0], 1
        op_tok = c[i]
        mods: list[str] = []
        opcode = str(op_tok)
        if op_tok.type == "DOTTED":
            opcode, *fused = opcode.split(".")
            mods.extend("." + m for m in fused)
        operands: tuple = ()
        for x in c[i + 1:]:
            if isinstance(x, str):
                mods.append(x)
            else:
                operands = x[1]
        modset, types, positional = split_modifiers(mods)
        if len(modset) + len(types) - len(set(types)) != len(mods):  # a non-type modifier repeats
            seen: set[str] = set()
            for m in mods:
                if m in seen and m not in types:
                    raise _Located(f"expected each modifier once, got '{m}' twice in '{opcode}{''.join(mods)}'",
                                   op_tok.line, op_tok.column)
                seen.add(m)
        if opcode == "call":
            operands = tuple(_call_operand(o) for o in operands)
        return A.Instruction(opcode, modset, types, positional, operands, guard, tuple(mods),
                             self._span(op_tok), self.current_loc)

    # ------------------------------------------------------------------ operands / expressions
    def vector(self, c):
        return A.Vector(tuple(_operand(x) for x in c))

    def address(self, c):
        suffix = None
        if c and isinstance(c[-1], Token) and c[-1].type == "MOD":
            suffix = str(c[-1])
            c = c[:-1]
        first = c[0]
        if suffix is not None:
            if len(c) > 1 or not isinstance(first, A.Sym):
                raise _Located(f"unexpected '{suffix}' after this address", c[0].line if isinstance(c[0], Token) else 0, 0)
            return A.Address(first, None, suffix)
        if len(c) > 1:
            return A.TensorAddress(first, tuple(_operand(x) for x in c[1:]))
        if isinstance(first, A.Binary) and first.op == "-" and isinstance(first.lhs, A.Sym):
            line, col = self.minus_at.get(id(first), (0, 0))
            raise _Located("expected '+' before an address offset, got '-' (write [base+-N])", line, col)
        return _address(first)

    def vector_pair(self, c):
        return A.Pair(c[0], A.Sym(str(c[2])))

    def attribute_list(self, c):
        return f"{c[0]}(" + ",".join(str(x) for x in c[1:]) + ")"

    def indexed(self, c):
        return A.Indexed(str(c[0]), c[1])

    def paren_list(self, c):
        return A.ParenList(tuple(_operand(x) for x in c))

    def empty_paren_list(self, c):
        return A.ParenList(())

    def int_lit(self, c):
        self.pos = (c[0].line, c[0].column)
        return parse_int(c[0], c[0].line, c[0].column)

    def f32_lit(self, c):
        return A.FloatLit(int(c[0][2:], 16), 32, None, str(c[0]))

    def f64_lit(self, c):
        return A.FloatLit(int(c[0][2:], 16), 64, None, str(c[0]))

    def bad_number(self, c):
        t = c[0]
        need, kind = (8, "f32") if t[1] in "fF" else (16, "f64")
        raise _Located(f"expected an exact {kind} literal ({t[:2]} and {need} hex digits), got '{t}'",
                       t.line, t.column)

    def dec_float(self, c):
        value = float(c[0])
        return A.FloatLit(struct.unpack("<Q", struct.pack("<d", value))[0], 64, value, str(c[0]))

    def symbol(self, c):
        if str(c[0]) == "_":
            return A.Sink()
        return A.Sym(str(c[0]), str(c[1]) if len(c) > 1 else None)

    def dotted_symbol(self, c):
        name, _, component = str(c[0]).partition(".")
        if "." in component:
            raise _Located(f"unexpected '{c[0]}': a name takes at most one component", c[0].line, c[0].column)
        return A.Sym(name, "." + component)

    def func_expr(self, c):
        return A.FuncExpr(str(c[0]), str(c[1]))

    def paren(self, c):
        return self._nest(A.Paren(c[0]), c)

    def binchain(self, c):
        """Group `a op b op c ...` by PTX/C precedence (PTX 4.5.4, Table 4), left-associative."""
        operands = c[0::2]
        ops = c[1::2]
        out_vals: list = [operands[0]]
        out_ops: list[Token] = []

        def reduce_top() -> None:
            op = out_ops.pop()
            rhs = out_vals.pop()
            lhs = out_vals.pop()
            node = self._nest(A.Binary(str(op), lhs, rhs), (lhs, rhs), op)
            if node.op == "-":
                self.minus_at[id(node)] = (op.line, op.column)
            out_vals.append(node)

        for op, val in zip(ops, operands[1:]):
            p = PRECEDENCE[str(op)]
            while out_ops and PRECEDENCE[str(out_ops[-1])] >= p:
                reduce_top()
            out_ops.append(op)
            out_vals.append(val)
        while out_ops:
            reduce_top()
        return out_vals[0]

    def unop(self, c):
        return self._nest(A.Unary(str(c[0]), c[1]), c[1:], c[0])

    def cast(self, c):
        return self._nest(A.Cast(str(c[0]), c[1]), c[1:], c[0])

    def cond(self, c):
        return self._nest(A.Cond(c[0], c[1], c[2]), c)


MAX_DEPTH = 100  # nesting of expressions/blocks; real PTX stays far below

PRECEDENCE = {  # PTX 4.5.4, Table 4 (higher binds tighter)
   "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7,
         ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def _unquote(tok: Token) -> str:
    s = str(tok)
    return s[1:-1]


def _split_attrs(items) -> tuple[tuple[str, ...], int | None]:
    attrs: list[str] = []
    align = None
    for x in items:
        if isinstance(x, tuple) and x and x[0] == "align":
            align = x[1]
            attrs.append(".align")  # position marker; the value is in `align`
        elif isinstance(x, (str, Token)):
            attrs.append(str(x))
    return tuple(attrs), align


def _operand(x):
    """Top-level operand forms that the expression grammar cannot tell apart (PTX 6.3)."""
    if isinstance(x, A.Unary) and x.op == "!" and isinstance(x.operand, A.Sym):
        return A.Negated(x.operand)
    if isinstance(x, A.Binary) and x.op == "|" and isinstance(x.lhs, A.Sym) and isinstance(x.rhs, A.Sym):
        return A.Pair(x.lhs, x.rhs)
    return x


def _call_operand(x):
    """`call (ret), f, (a);` — a one-element list parses as a parenthesised expression."""
    if isinstance(x, A.Paren):
        return A.ParenList((_operand(x.inner),))
    return x


def _address(e):
    """Normalise `[base]`, `[base+off]`, `[imm]` (PTX 6.4.1)."""
    if isinstance(e, A.Sym):
        return A.Address(e, None)
    if isinstance(e, A.Binary) and e.op == "+" and isinstance(e.lhs, A.Sym) and e.lhs.component is None:
        return A.Address(e.lhs, e.rhs)
    return A.Address(None, e)
