"""Unit and property tests of the PTX front end (grammar, AST, printer, errors, symbols)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser as P
from ptx_parser import ast as A

HEADER = ".version 9.0\n.target sm_100a\n.address_size 64\n"


def kernel(body: str, decls: str = "", params: str = "") -> str:
    return (HEADER + f".visible .entry k({params})\n{{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<256>;\n"
            f"\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<16>;\n{decls}{body}\n\tret;\n}}\n")


def instrs(src: str) -> list[A.Instruction]:
    """The kernel's instructions without the trailing `ret` that kernel() adds."""
    return P.parse(src).function("k").instructions()[:-1]


def roundtrip(src: str) -> A.Module:
    m = P.parse(src)
    assert P.parse(P.print_module(m)) == m
    return m


# ---------------------------------------------------------------- modifiers


def test_modifier_order_is_a_set_but_types_keep_order() -> None:
    a, b, c, d = instrs(kernel(
        "\tlg2.approx.ftz.f32 %f1, %f0;\n\tlg2.ftz.approx.f32 %f1, %f0;\n"
        "\tcvt.f32.f16 %f1, %r1;\n\tcvt.f16.f32 %f1, %r1;"))
    assert a == b and a.order != b.order
    assert c != d and c.types == (".f32", ".f16")


def test_state_space_order_is_kept() -> None:
    src = kernel("\tcp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 16;\n"
                 "\tcp.async.bulk.shared::cta.global.bulk_group [%rd1], [%r1], 16;")
    a, b = instrs(src)
    assert a != b
    assert a.spaces == (".global", ".shared::cta")


def test_every_permutation_of_tcgen05_ld_modifiers_is_equal() -> None:
    mods = [".sync", ".aligned", ".32x32b", ".x2"]
    seen = set()
    for perm in itertools.permutations(mods):
        (ins,) = instrs(kernel(f"\ttcgen05.ld{''.join(perm)}.b32 {{%r1, %r2}}, [%r3];"))
        seen.add(ins)
    assert len(seen) == 1


@settings(max_examples=60, deadline=None)
@given(st.permutations([".rn", ".ftz", ".sat"]))
def test_property_modifier_permutations_parse_equal(perm: list[str]) -> None:
    (a,) = instrs(kernel(f"\tadd{''.join(perm)}.f32 %f1, %f2, %f3;"))
    (b,) = instrs(kernel("\tadd.rn.ftz.sat.f32 %f1, %f2, %f3;"))
    assert a == b and a.name == "add" + "".join(perm) + ".f32"


# ---------------------------------------------------------------- operands


def test_operand_forms() -> None:
    src = kernel(
        "\tsetp.lt.u32 %p1|%p2, %r1, 32;\n"
        "\t@!%p1 selp.b32 %r3, 1, 0, !%p2;\n"
        "\tld.global.v4.b32 {%r4, %r5, _, %r7}, [%rd1+16];\n"
        "\tld.global.b32 %r8, [%rd1+-4];\n"
        "\tld.shared.b32 %r9, [smem];\n"
        "\tld.global.b32 %r9, [64];\n"
        "\tmov.u32 %r10, %tid.x;\n"
        "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r1, %r2}], [%r3];",
        decls="\t.shared .align 16 .b8 smem[64];\n")
    setp, selp, ld4, ldneg, lds, ldimm, mov, tma = instrs(src)
    assert setp.operands[0] == A.Pair(A.Sym("%p1"), A.Sym("%p2"))
    assert selp.guard == A.Guard("%p1", True) and selp.operands[3] == A.Negated(A.Sym("%p2"))
    assert ld4.operands[0].elements[2] == A.Sink()
    assert ld4.operands[1] == A.Address(A.Sym("%rd1"), A.IntLit(16))
    assert ldneg.operands[1] == A.Address(A.Sym("%rd1"), A.Unary("-", A.IntLit(4)))
    assert lds.operands[1] == A.Address(A.Sym("smem"))
    assert ldimm.operands[1] == A.Address(None, A.IntLit(64))
    assert mov.operands[1] == A.Sym("%tid", ".x")
    assert isinstance(tma.operands[1], A.TensorAddress)
    roundtrip(src)


def test_128_element_vector_with_sinks_and_immediates() -> None:
    regs = ", ".join(f"%r{i}" if i % 7 else "_" for i in range(128))
    src = kernel(f"\ttcgen05.ld.sync.aligned.32x32b.x128.b32 {{{regs}}}, [%r200];")
    (ins,) = instrs(src)
    assert len(ins.operands[0].elements) == 128
    roundtrip(src)


@pytest.mark.parametrize("text,value,unsigned", [
    ("42", 42, False), ("0x1F", 31, False), ("017", 15, False), ("0b101", 5, False),
    ("42U", 42, True), ("0xFFFFFFFFFFFFFFFF", 2**64 - 1, True), ("0", 0, False),
])
def test_integer_literals(text: str, value: int, unsigned: bool) -> None:
    (ins,) = instrs(kernel(f"\tmov.b64 %rd1, {text};"))
    lit = ins.operands[1]
    assert (lit.value, lit.unsigned) == (value, unsigned)
    assert f"mov.b64 %rd1, {text};" in P.print_module(P.parse(kernel(f"\tmov.b64 %rd1, {text};")))


def test_float_literals() -> None:
    a, b, c = instrs(kernel("\tmov.f32 %f1, 0f3F800000;\n\tmov.f64 %rd1, 0d3FF0000000000000;\n"
                            "\tadd.f32 %f1, %f1, 0.5;"))
    assert a.operands[1] == A.FloatLit(0x3F800000, 32)
    assert b.operands[1].bits == 0x3FF0000000000000
    assert c.operands[2].value == 0.5


# ---------------------------------------------------------------- constant expressions


_leaf = st.integers(0, 1000).map(lambda v: A.IntLit(v, False, str(v)))


def _exprs() -> st.SearchStrategy:
    ops = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==", "!=", "&&", "||"]
    return st.recursive(
        _leaf,
        lambda sub: st.one_of(
            st.tuples(st.sampled_from(ops), sub, sub).map(lambda t: A.Binary(*t)),
            st.tuples(st.sampled_from(["-", "~", "!"]), sub).map(lambda t: A.Unary(*t)),
            sub.map(A.Paren),
            st.tuples(sub, sub, sub).map(lambda t: A.Cond(*t)),
        ),
        max_leaves=12,
    )


@settings(max_examples=300, deadline=None)
@given(_exprs())
def test_property_constant_expressions_print_and_parse_back(e) -> None:
    from ptx_parser.printer import expr

    text = expr(e)
    src = HEADER + f".global .s64 g = {text};\n"
    m = P.parse(src)
    assert m.variables[0].items[0].init == _strip_redundant(e, m.variables[0].items[0].init)


def _strip_redundant(e, parsed):
    """The printer adds parentheses only where precedence needs them; compare modulo Paren nodes
    that the printer introduced (parsed Paren nodes are the original ones or added ones)."""
    from ptx_parser.printer import expr

    # Printing the parsed tree must give the same text as printing the original.
    assert expr(parsed) == expr(e) or expr(_unparen(parsed)) == expr(_unparen(e))
    return parsed


def _unparen(e):
    if isinstance(e, A.Paren):
        return _unparen(e.inner)
    if isinstance(e, A.Binary):
        return A.Binary(e.op, _unparen(e.lhs), _unparen(e.rhs))
    if isinstance(e, A.Unary):
        return A.Unary(e.op, _unparen(e.operand))
    if isinstance(e, A.Cond):
        return A.Cond(_unparen(e.cond), _unparen(e.then), _unparen(e.other))
    return e


def test_precedence_groups_like_c() -> None:
    m = P.parse(HEADER + ".global .s64 g = 1 + 2 * 3 << 1 | 4;\n")
    init = m.variables[0].items[0].init
    assert init == A.Binary("|", A.Binary("<<", A.Binary("+", A.IntLit(1), A.Binary("*", A.IntLit(2), A.IntLit(3))), A.IntLit(1)), A.IntLit(4))


# ---------------------------------------------------------------- declarations, functions, debug info


def test_declarations_and_initializers() -> None:
    src = (HEADER + ".global .align 4 .u32 tbl[4] = {1, 2, 0x3, 017};\n"
           ".global .align 8 .u64 ptrs[2] = {generic(tbl), generic(tbl)+4};\n"
           ".extern .shared .align 16 .b8 smem[];\n"
           ".const .f32 cf = 0f3F800000;\n")
    m = roundtrip(src)
    tbl, ptrs, smem, cf = m.variables
    assert tbl.align == 4 and tbl.type == ".u32" and tbl.items[0].dims == (A.IntLit(4),)
    assert ptrs.items[0].init[0] == A.FuncExpr("generic", "tbl")
    assert smem.linkage == (".extern",) and smem.items[0].dims == (None,)


def test_function_header_params_and_directives() -> None:
    src = (HEADER + ".func (.param .b32 r) f(.param .b32 a)\n{\n\tst.param.b32 [r], 1;\n\tret;\n}\n"
           ".visible .entry k(.param .u64 .ptr .global .align 16 p0, .param .align 64 .b8 tmap[128])\n"
           ".reqntid 128, 1, 1\n.minnctapersm 1\n.maxnreg 64\n{\n\t.reg .b32 %r<4>;\n"
           "\tcall.uni (%r1), f, (%r2);\n\tret;\n}\n")
    m = roundtrip(src)
    f, k = m.functions
    assert f.returns[0].name == "r" and not f.is_kernel
    assert k.params[0].attrs == (".u64", ".ptr", ".global", ".align") and k.params[0].align == 16
    assert k.directive(".reqntid").values == (128, 1, 1)
    call = k.instructions()[0]
    assert call.operands[0] == A.ParenList((A.Sym("%r1"),))


def test_callprototype_and_branch_targets() -> None:
    src = kernel("proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                 "ts: .branchtargets L1, L2;\n\tbrx.idx %r1, ts;\nL1:\n\tcall (%r2), %rd1, (%r3), proto;\nL2:")
    m = roundtrip(src)
    assert any(isinstance(s, A.CallPrototype) for s in m.function("k").body.statements)


def test_file_after_function_resolves_loc() -> None:
    src = (HEADER + ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\t.loc 1 7 3\n\tmov.b32 %r1, 1;\n\tret;\n}\n"
           '.file 1 "kernel.py", 1700000000, 123\n')
    m = roundtrip(src)
    ins = m.function("k").instructions()[0]
    assert str(P.source_location(m, ins)) == "kernel.py:7:3"


def test_debug_sections_kept_aside() -> None:
    src = (HEADER + ".visible .entry k()\n{\n\tret;\n}\n"
           ".section .debug_info\n{\n.b32 $L__end-$L__start\n$L__start:\n.b8 2\n.b8 0\n$L__end:\n}\n"
           ".section .debug_macinfo { }\n")
    m = roundtrip(src)
    info, macinfo = m.sections
    assert info.name == ".debug_info" and len(info.entries) == 5 and macinfo.entries == ()
    assert info.entries[0].values == ("$L__end-$L__start",)


def test_nested_scopes_allow_shadowing_and_local_labels() -> None:
    src = kernel("\t{\n\t.reg .b32 %x;\nL:\n\tmov.b32 %x, 1;\n\t}\n\t{\n\t.reg .b32 %x;\nL:\n\tmov.b32 %x, 2;\n\t}")
    roundtrip(src)


# ---------------------------------------------------------------- errors


def _error(src: str) -> P.ParseError:
    with pytest.raises(P.ParseError) as info:
        P.parse(src, "t.ptx")
    return info.value


def test_syntax_error_has_location_expected_and_caret() -> None:
    e = _error(HEADER + ".visible .entry k()\n{\n\tmov.b32 %r1 1;\n}\n")
    assert (e.line, e.col) == (6, 14)
    assert "expected" in e.message and "got '1'" in e.message
    text = str(e)
    assert text.startswith("t.ptx:6:14: error:") and text.splitlines()[-1].endswith("^")


def test_undeclared_symbol() -> None:
    e = _error(kernel("\tadd.s32 %r1, %q, 1;"))
    assert "undeclared symbol '%q'" in e.message
    assert e.col == str(e).splitlines()[1].index("%q") + 1


def test_register_out_of_declared_range() -> None:
    e = _error(kernel("\tmov.b32 %r256, 1;"))
    assert "outside the declared range '%r<256>'" in e.message


def test_duplicate_declaration() -> None:
    e = _error(kernel("", decls="\t.reg .b32 %x;\n\t.reg .b32 %x;\n"))
    assert "duplicate declaration of '%x'" in e.message


def test_negative_address_offset_spelled_with_minus_is_rejected_like_ptxas() -> None:
    e = _error(kernel("\tld.global.b32 %r1, [%rd1-4];"))
    assert "expected '+'" in e.message


def test_unterminated_section_and_eof() -> None:
    assert "unterminated" in _error(HEADER + ".section .debug_info {\n.b8 1\n").message
    assert "end of input" in _error(HEADER + ".visible .entry k()\n{\n\tret;\n").message


@pytest.mark.parametrize("bad", ["\0", "\x7f\x80", "@@@", "{" * 50, "(" * 2000, ".version", "\"unterminated"])
def test_garbage_raises_parse_error_only(bad: str) -> None:
    with pytest.raises(P.ParseError) as info:
        P.parse(HEADER + bad)
    assert info.value.line >= 1 and info.value.col >= 1
