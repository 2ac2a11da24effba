"""AST -> PTX text. `parse(print_module(m)) == m`, and the text assembles wherever the source did."""

from __future__ import annotations

from . import ast as A

from .builder import PRECEDENCE as _PREC


def expr(e, prec: int = 0) -> str:
    if isinstance(e, A.IntLit):
        return e.text or (f"{e.value}U" if e.unsigned else str(e.value))
    if isinstance(e, A.FloatLit):
        if e.text:
            return e.text
        if e.width == 32:
            return f"0f{e.bits:08X}"
        return f"0d{e.bits:016X}"
    if isinstance(e, A.Sym):
        return e.name + (e.component or "")
    if isinstance(e, A.Sink):
        return "_"
    if isinstance(e, A.Paren):
        return f"({expr(e.inner)})"
    if isinstance(e, A.Unary):
        inner = expr(e.operand, 11)
        # `- -1` must not print as `--1`
        sep = " " if inner[:1] in "+-!~" else ""
        return f"{e.op}{sep}{inner}"
    if isinstance(e, A.Cast):
        return f"({e.type}){expr(e.operand, 11)}"
    if isinstance(e, A.Binary):
        p = _PREC[e.op]
        s = f"{expr(e.lhs, p)} {e.op} {expr(e.rhs, p + 1)}"
        return f"({s})" if p < prec else s
    if isinstance(e, A.Cond):
        s = f"{expr(e.cond, 1)} ? {expr(e.then)} : {expr(e.other)}"
        return f"({s})" if prec > 0 else s
    if isinstance(e, A.FuncExpr):
        return f"{e.func}({e.arg})"
    raise TypeError(f"not an expression: {e!r}")


def operand(o) -> str:
    if isinstance(o, A.Negated):
        return "!" + expr(o.operand)
    if isinstance(o, A.Pair):
        first = operand(o.first) if isinstance(o.first, A.Vector) else expr(o.first)
        return f"{first}|{expr(o.second)}"
    if isinstance(o, A.Vector):
        return "{" + ", ".join(operand(x) for x in o.elements) + "}"
    if isinstance(o, A.Address):
        if o.suffix is not None:
            return f"[{expr(o.base)}]{o.suffix}"
        if o.base is None:
            return f"[{expr(o.offset)}]"
        if o.offset is None:
            return f"[{expr(o.base)}]"
        return f"[{expr(o.base)}+{expr(o.offset, 10)}]"
    if isinstance(o, A.TensorAddress):
        return "[" + ", ".join([expr(o.tensor)] + [operand(x) for x in o.rest]) + "]"
    if isinstance(o, A.Indexed):
        return f"{o.base}[{expr(o.index)}]"
    if isinstance(o, A.ParenList):
        return "(" + ", ".join(operand(x) for x in o.elements) + ")"
    return expr(o)


def instruction(i: A.Instruction) -> str:
    guard = ""
    if i.guard is not None:
        guard = f"@{'!' if i.guard.negated else ''}{i.guard.pred} "
    mods = i.order if i.order else _canonical_order(i)
    ops = ", ".join(operand(o) for o in i.operands)
    return f"{guard}{i.opcode}{''.join(mods)}" + (f" {ops}" if ops else "") + ";"


def _canonical_order(i: A.Instruction) -> tuple[str, ...]:
    """Spelling for instructions built in code: other modifiers sorted, then positional, then types."""
    rest = sorted(i.modifiers - set(i.types) - set(i.positional))
    return tuple(rest) + i.positional + i.types


def _attrs(space: str, attrs: tuple[str, ...], align: int | None) -> str:
    parts = [space] + [f".align {align}" if a == ".align" else a for a in attrs]
    return " ".join(parts)


def _init(v) -> str:
    if isinstance(v, A.NamedInit):
        return f"{v.name} = {expr(v.value)}"
    if isinstance(v, tuple):
        return "{" + ", ".join(_init(x) for x in v) + "}"
    return expr(v)


def var_item(v: A.VarItem) -> str:
    s = v.name
    if v.range is not None:
        s += f"<{v.range}>"
    for d in v.dims:
        s += "[]" if d is None else f"[{expr(d)}]"
    if v.init is not None:
        s += " = " + _init(v.init)
    return s


def var_decl(d: A.VarDecl) -> str:
    head = " ".join(list(d.linkage) + [_attrs(d.space, d.attrs, d.align)])
    return f"{head} " + ", ".join(var_item(v) for v in d.items) + ";"


def param(p: A.Param) -> str:
    s = _attrs(p.space, p.attrs, p.align) + " " + p.name
    for d in p.dims:
        s += "[]" if d is None else f"[{expr(d)}]"
    return s


def _params(ps: tuple[A.Param, ...]) -> str:
    if not ps:
        return "()"
    return "(\n" + ",\n".join("\t" + param(p) for p in ps) + "\n)"


def _loc(l: A.Loc) -> str:
    s = f".loc\t{l.file} {l.line} {l.col}"
    for key, vals in l.extra:
        if len(vals) == 1 and not isinstance(vals[0], int):
            s += f", {key} {expr(vals[0])}"
        else:
            s += f", {key} " + " ".join(str(v) for v in vals)
    return s


def statement(s, indent: str, out: list[str]) -> None:
    if isinstance(s, A.Instruction):
        out.append(indent + instruction(s))
    elif isinstance(s, A.Label):
        out.append(f"{s.name}:")
    elif isinstance(s, A.VarDecl):
        out.append(indent + var_decl(s))
    elif isinstance(s, A.Loc):
        out.append(indent + _loc(s))
    elif isinstance(s, A.Pragma):
        out.append(indent + ".pragma " + ", ".join(f'"{x}"' for x in s.strings) + ";")
    elif isinstance(s, A.Block):
        out.append(indent + "{")
        for x in s.statements:
            statement(x, indent + "\t", out)
        out.append(indent + "}")
    elif isinstance(s, A.CallPrototype):
        params = "(" + ", ".join(param(p) for p in (s.params or ())) + ")" if s.params is not None else ""
        if s.has_ret_parens:
            rets = "(" + ", ".join(param(p) for p in (s.returns or ())) + ")"
            out.append(f"{indent}.callprototype {rets} _ {params};")
        else:
            out.append(f"{indent}.callprototype _ {params};")
    elif isinstance(s, A.TargetList):
        out.append(f"{indent}{s.kind} " + ", ".join(s.names) + ";")
    else:
        raise TypeError(f"not a statement: {s!r}")


def function(f: A.Function, out: list[str]) -> None:
    head = " ".join(list(f.linkage) + [f.kind])
    if f.returns is not None:
        head += " " + _params(f.returns)
    head += " " + f.name
    if f.params is not None:
        head += _params(f.params)
    out.append(head)
    for d in f.directives:
        if d.name == ".pragma":
            out.append(".pragma " + ", ".join(f'"{x}"' for x in d.strings) + ";")
        else:
            out.append(d.name + (" " + ", ".join(str(v) for v in d.values) if d.values else ""))
    if f.body is None:
        out[-1] += ";"
        return
    out.append("{")
    for s in f.body.statements:
        statement(s, "\t", out)
    out.append("}")


def section(s: A.Section, out: list[str]) -> None:
    out.append(f".section {s.name}")
    out.append("{")
    for e in s.entries:
        if e.label is not None:
            out.append(f"{e.label}:")
        else:
            out.append(f"\t{e.directive} " + ", ".join(e.values))
    out.append("}")


def print_module(m: A.Module) -> str:
    out: list[str] = []
    for item in m.items:
        if isinstance(item, A.Version):
            out.append(f".version {item.version}")
        elif isinstance(item, A.Target):
            out.append(".target " + ", ".join(item.targets))
        elif isinstance(item, A.AddressSize):
            out.append(f".address_size {item.size}")
        elif isinstance(item, A.FileEntry):
            extra = "".join(", " + expr(e) for e in item.extra)
            out.append(f'.file {item.index} "{item.name}"{extra}')
        elif isinstance(item, A.Loc):
            out.append(_loc(item))
        elif isinstance(item, A.Pragma):
            out.append(".pragma " + ", ".join(f'"{x}"' for x in item.strings) + ";")
        elif isinstance(item, A.VarDecl):
            out.append(var_decl(item))
        elif isinstance(item, A.Function):
            out.append("")
            function(item, out)
        elif isinstance(item, A.Alias):
            out.append(f".alias {item.alias}, {item.target};")
        elif isinstance(item, A.Section):
            section(item, out)
        else:
            raise TypeError(f"not a top-level item: {item!r}")
    return "\n".join(out) + "\n"
