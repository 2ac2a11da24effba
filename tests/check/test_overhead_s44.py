"""Stop 44's cuts in the value numbering of register results (shadow.Tracker), and the rule they must keep:
equal numbers mean equal values for every input.

- `_Plan` (shadow.plan_of): what the per-result rules read of a static instruction (its number's key, its lane
  scope, commutative / symmetric operands, the real-arithmetic rule, a floating product, .f32x2), decided once
  per instruction; each field must be what the rules computed from the instruction at every result before.
- `_LoadElements.plain` / `.untainted`: a vector load's elements numbered without the per-element steps when
  every lane read whole data values (or nothing tainted); the same numbers and taints as the steps.
- The property over random instruction sequences: a Tracker fed lane-local instructions (integer, bitwise,
  floating, permutes with immediates, partial writes under a mask) over registers holding input data at
  random positions (lanes may share one) and lane-varying constants; run on two inputs, numbers are the
  same in both runs, and lanes (or registers) with equal numbers hold equal bits in each run.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import ptx_parser
from symexec import load_program
from symexec.check import shadow
from symexec.check.shadow import DATA, INPUT_KEY, Collective, RealRule, Tracker, key_of, mix, plan_of
from symexec.opcodes import LaneScope, facts

_PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p){
 .reg .b32 %r<12>; .reg .f32 %f<12>; .reg .b64 %rd<4>; .reg .pred %p<2>;
 add.s32 %r1, %r2, %r3;
 sub.s32 %r1, %r2, %r3;
 and.b32 %r1, %r2, %r3;
 xor.b32 %r1, %r2, %r3;
 shr.u32 %r1, %r2, %r3;
 shl.b32 %r1, %r2, 3;
 mul.lo.s32 %r1, %r2, %r3;
 mad.lo.s32 %r1, %r2, %r3, %r4;
 min.s32 %r1, %r2, %r3;
 max.s32 %r1, %r2, %r3;
 mov.b32 %r1, %r2;
 prmt.b32 %r1, %r2, %r3, 0x5140;
 fma.rn.f32 %f1, %f2, %f3, %f4;
 mul.f32 %f1, %f2, %f3;
 add.f32 %f1, %f2, %f3;
 sub.f32 %f1, %f2, %f3;
 neg.f32 %f1, %f2;
 mov.f32 %f1, %f2;
 cvt.rn.f32.s32 %f1, %r2;
 cvt.rn.f16.f32 %r1, %f2;
 mad.wide.s32 %rd1, %r2, %r3, %rd2;
 shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;
 ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
 setp.lt.s32 %p1, %r2, %r3;
 ret;
}
"""


def _instructions() -> list:
    prog = load_program(ptx_parser.parse(_PTX, "s44.ptx"), "k")
    return [i for i in prog.code if hasattr(i, "opcode") and i.opcode != "ret"]


_INS = _instructions()


def _floaty(ins) -> bool:
    return any(ty.startswith(".f") or ty.startswith(".bf") for ty in ins.types)


def _old_real(ins, n_in: int) -> RealRule:
    """The rule Tracker._real applied before stop 44, read from the instruction at each result."""
    op, floaty = ins.opcode, _floaty(ins)
    if op == "add" and n_in == 2:
        return RealRule.ADD
    if op == "sub" and n_in == 2:
        return RealRule.SUB
    if op in ("fma", "mad") and floaty and n_in == 3:
        return RealRule.FMA
    if op == "mul" and floaty and n_in == 2:
        return RealRule.MUL
    if op == "neg" and n_in == 1:
        return RealRule.NEG
    if op in ("mov", "cvt") and n_in == 1 and floaty:
        return RealRule.MOVE
    return RealRule.NONE


def test_plan_is_what_the_rules_read_of_the_instruction() -> None:
    for ins in _INS:
        p = plan_of(ins)
        assert plan_of(ins) is p and p.ins is ins
        f = facts(ins.opcode)
        assert p.key == key_of(ins.name) and p.opcode == ins.opcode
        assert p.commutative == bool(f.commutative) and p.symmetric == bool(f.symmetric)
        assert p.uniform == (f.lanes is LaneScope.WARP_UNIFORM)
        want = Collective.WARP if f.lanes in (LaneScope.WARP, LaneScope.WARP_UNIFORM) else \
            Collective.OPAQUE if f.lanes is LaneScope.MULTI_WARP else None
        assert p.collective == want, ins.name
        assert p.f32x2 == any(t == ".f32x2" for t in ins.types)
        for n_in in range(5):
            got = p.real if n_in == p.real_inputs else RealRule.NONE
            assert got == _old_real(ins, n_in), (ins.name, n_in)
            old_product = ins.opcode in ("fma", "mad", "mul") and n_in == (2 if ins.opcode == "mul" else 3) \
                and _floaty(ins)
            assert (p.product_inputs != 0 and p.product_inputs == n_in) == old_product, (ins.name, n_in)


def test_plan_cache_never_answers_for_another_instruction(monkeypatch) -> None:
    """Keyed by id: a cached plan whose instruction is not this one (an id reused) is made again."""
    a, b = _INS[0], _INS[1]
    monkeypatch.setattr(shadow, "_PLANS", {id(b): plan_of(a)})
    assert plan_of(b).ins is b and plan_of(b).key == key_of(b.name)


def _elements_by_steps(got, j: int, tr: Tracker, value) -> tuple:
    """_element_of with the fast paths off: the per-element steps."""
    plain, untainted = got.plain, got.untainted
    got.plain = got.untainted = False
    try:
        return tr._element_of(got, j, value)
    finally:
        got.plain, got.untainted = plain, untainted


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.sampled_from([1, 2, 4, 8]), st.integers(1, 4), st.integers(0, 2**32 - 1),
       st.sampled_from(["all", "none", "some"]), st.sampled_from(["whole", "parts", "mixed"]))
def test_load_elements_fast_paths_equal_the_steps(n: int, nb: int, m: int, seed: int, taint: str, shape: str) -> None:
    rng = np.random.default_rng(seed)
    tr = Tracker(n)
    values = rng.integers(0, 3, (n, m)).astype(np.uint64)  # few values: lanes share numbers
    bh = np.repeat(mix(key_of("v"), values.reshape(-1)).reshape(n, m), nb, axis=1)
    bp = np.tile(shadow._expected_positions(nb), (n, m))
    if shape != "whole":  # bytes of several values, or a value's bytes out of place
        sel = rng.random((n, m * nb)) < (1.0 if shape == "parts" else 0.2)
        bh = np.where(sel, rng.integers(0, 2**63, (n, m * nb), dtype=np.uint64), bh)
        bp = np.where(rng.random((n, m * nb)) < 0.1, np.uint8(0xFF), bp).astype(np.uint8)
    bt = {"all": np.full((n, m * nb), DATA, np.uint8), "none": np.zeros((n, m * nb), np.uint8),
          "some": (rng.random((n, m * nb)) < 0.5).astype(np.uint8) * DATA}[taint]
    got = shadow._LoadElements(bh, bp, bt, nb)
    assert got.plain == (bool((got.taint != 0).all()) and bool(got.whole.all()))
    assert got.untainted == (taint == "none" or not bt.any())
    for j in range(m):
        value = rng.integers(0, 2**32, n).astype(np.uint32)
        fast, steps = tr._element_of(got, j, value), _elements_by_steps(got, j, tr, value)
        if steps[0] is None:
            assert fast[0] is None and fast[1] is None
            continue
        assert np.array_equal(fast[0], steps[0]) and np.array_equal(fast[1], steps[1])
        assert fast[1].dtype == steps[1].dtype == np.uint8


# ---------------------------------------------------------------- equal numbers mean equal values

def _canon(f: np.ndarray) -> np.ndarray:
    """float32 bits with every NaN one pattern (a deterministic, operand-order-free result)."""
    b = f.astype(np.float32).view(np.uint32).copy()
    b[np.isnan(f.astype(np.float32))] = 0x7FFFFFFF
    return b


def _f(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


#: name -> (instruction index in _INS, operand count, semantics over uint32 lane arrays): any deterministic
#: function of the operands will do (the numbers are structural), but commutative operands must commute
_SEM = {
    "add.s32": (0, 2, lambda a, b: a + b),
    "sub.s32": (1, 2, lambda a, b: a - b),
    "and.b32": (2, 2, lambda a, b: a & b),
    "xor.b32": (3, 2, lambda a, b: a ^ b),
    "shr.u32": (4, 2, lambda a, b: a >> (b & np.uint32(31))),
    "mul.lo.s32": (6, 2, lambda a, b: a * b),
    "mad.lo.s32": (7, 3, lambda a, b, c: a * b + c),
    "min.s32": (8, 2, lambda a, b: np.minimum(a.view(np.int32), b.view(np.int32)).view(np.uint32)),
    "mov.b32": (10, 1, lambda a: a),
    "fma.rn.f32": (12, 3, lambda a, b, c: _canon(_f(a) * _f(b) + _f(c))),
    "mul.f32": (13, 2, lambda a, b: _canon(_f(a) * _f(b))),
    "add.f32": (14, 2, lambda a, b: _canon(_f(a) + _f(b))),
    "sub.f32": (15, 2, lambda a, b: _canon(_f(a) - _f(b))),
    "neg.f32": (16, 1, lambda a: a ^ np.uint32(0x80000000)),
    "cvt.rn.f32.s32": (18, 1, lambda a: _canon(a.view(np.int32).astype(np.float64))),
}
_IMM_SEM = {  # with an immediate last operand
    "shl.b32": (5, lambda a, i: a << np.uint32(i & 31)),
    "prmt.b32": (11, lambda a, b, i: (a << np.uint32(8)) ^ b ^ np.uint32(i)),
}
_REGS = [f"%r{i}" for i in range(1, 8)]


def test_the_sequences_instructions_are_the_named_ones() -> None:
    assert all(_INS[idx].name == op for op, (idx, _, _) in _SEM.items())
    assert all(_INS[idx].name == op for op, (idx, _) in _IMM_SEM.items())

_step = st.tuples(st.sampled_from(sorted(_SEM) + sorted(_IMM_SEM)), st.lists(st.integers(0, 6), min_size=3, max_size=3),
                  st.integers(0, 6), st.integers(0, 40), st.one_of(st.none(), st.integers(0, 2**8 - 1)))


def _run(program, inits, n: int, data: np.ndarray) -> tuple[dict, dict]:
    """Feed the tracker `program` over registers `inits`; returns (numbers, bits) per register."""
    tr = Tracker(n)
    regs: dict[str, np.ndarray] = {}
    for name, (kind, pos, bits) in zip(_REGS, inits):
        if kind == "data":  # an input element per lane (numbered by its position, as a whole-value load)
            regs[name] = data[pos].astype(np.uint32)
            tr.reg_hash[name] = mix(INPUT_KEY, pos.astype(np.uint64))
            tr.reg_real[name] = tr.reg_hash[name]
            tr.reg_taint[name] = np.full(n, DATA, np.uint8)
        else:  # a constant of the launch, lane-varying or not: numbered by its bits
            regs[name] = bits.astype(np.uint32)
    for op, srcs, dst, imm, mask_bits in program:
        if op in _SEM:
            idx, k, fn = _SEM[op]
            ins, names, extra = _INS[idx], [_REGS[s] for s in srcs[:k]], ()
        else:
            idx, fn = _IMM_SEM[op]
            k = 1 if op == "shl.b32" else 2
            ins, names, extra = _INS[idx], [_REGS[s] for s in srcs[:k]], (imm,)
        tr.begin(ins)
        for name in names:
            tr.on_read_reg(name, regs[name], 32)
        if extra:
            tr.on_read_const(np.uint32(imm), 32)
        with np.errstate(all="ignore"):
            value = np.asarray(fn(*[regs[nm] for nm in names], *extra), np.uint32)
        value = np.broadcast_to(value, (n,)).copy()
        name = _REGS[dst]
        if mask_bits is None:
            tr.on_write_reg(name, value, 32, np.ones(n, bool), True)
            regs[name] = value
        else:  # a partial write: lanes off the mask keep their bits
            mask = ((mask_bits >> (np.arange(n) % 8)) & 1).astype(bool)
            old = regs[name]
            tr.on_write_reg(name, value, 32, mask, False, old)
            regs[name] = np.where(mask, value, old)
    numbers = {r: tr.number_of(r, regs).copy() for r in _REGS}
    return numbers, regs


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 24), st.lists(_step, min_size=1, max_size=25), st.integers(0, 2**32 - 1),
       st.lists(st.sampled_from(["data", "data", "const", "uniform"]), min_size=7, max_size=7))
def test_equal_numbers_mean_equal_values_for_every_input(n: int, program, seed: int, kinds: list[str]) -> None:
    rng = np.random.default_rng(seed)
    inits = []
    for kind in kinds:
        pos = rng.integers(0, 6, n)  # few positions: lanes share input elements
        bits = np.full(n, rng.integers(0, 2**32), np.uint64) if kind == "uniform" else rng.integers(0, 4, n)
        inits.append(("data" if kind == "data" else "const", pos, bits))
    data1 = rng.integers(0, 2**32, 6).astype(np.uint32)
    data2 = (rng.integers(-4, 5, 6).astype(np.float32)).view(np.uint32)  # small floats: no NaN needed
    num1, bits1 = _run(program, inits, n, data1)
    num2, bits2 = _run(program, inits, n, data2)
    for r in _REGS:
        assert np.array_equal(num1[r], num2[r]), r  # a number names an expression, never the data's value
    flat_n = np.concatenate([num1[r] for r in _REGS])
    for bits in (bits1, bits2):
        flat_b = np.concatenate([np.broadcast_to(bits[r], (n,)) for r in _REGS])
        order = np.argsort(flat_n, kind="stable")
        same = flat_n[order][1:] == flat_n[order][:-1]
        assert np.array_equal(flat_b[order][1:][same], flat_b[order][:-1][same])
