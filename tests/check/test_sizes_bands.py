"""Symbolic sizes over attention-style tile loads whose mask tests another lane constant than the one the
address adds (grid.py `_pair_lemma`'s band, `_lane_part_lemmas`, `_at_small_sizes`).

`GROUPED` is the shape of sinkhorn_attention's `gj = tl.load(g + bh * M + cols, mask=cols < M)` as Triton
emits it for sm_80: a CTA per slice bh of an BH x M fp32 matrix; thread t (p = t % 4) loads eight 2-float
vectors at elements 2p + 8k (one register plus 32 k bytes), and the pair 2j, 2j + 1 is masked by the first
one's column only, `2p + 16j < M`, which is the same test because M is a multiple of 16 (`tt.divisibility`).
Its proof needs what no two columns of the lane table say: the element `4 q0 + o` (address) is `4 q1 + {0,
32}` (guard column q1), which with `q1 - q0 in {0, 16, 32, 48}` and q0 <= 6 gives q1 mod 16 <= 6. With 128 threads (1024 rows) bit-blasting answers unknown and
the integer form, which leaves the table out, had not the first: the check fell back to the launch.
`GROUPED_PAST_ROW` masks by `col < M + 8`: right at M = 64 (the checked launch: no column reaches M), out of
bounds at M = 16, 32, 48; its witness is found at small sizes (`_at_small_sizes`) where the query over the
whole domain is unknown. `KV_ROWS` is the K/V tile load: row t / 8 of a D = 64 slice, 8 vectors a row
(more offsets than `PAIR_OFFSETS`: the band `128 r <= o - base <= 128 r + 112`), mask `r < N`.
"""

from __future__ import annotations

import numpy as np
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.grid import _lane_part_lemmas, _pair_lemma, _row_lemmas
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

TOP = 2**31 - 1

GROUPED = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 g, .param .u32 m)
{
    .reg .pred %p<6>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [g];
    ld.param.u32 %r1, [m];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    and.b32 %r4, %r3, 3;
    shl.b32 %r5, %r4, 1;
    mul.wide.u32 %rd3, %r2, %r1;
    shl.b64 %rd4, %rd3, 2;
    add.s64 %rd5, %rd1, %rd4;
    mad.wide.s32 %rd7, %r5, 4, %rd5;
    add.s64 %rd8, %rd7, 32;
    add.s64 %rd9, %rd7, 64;
    add.s64 %rd10, %rd7, 96;
    add.s64 %rd11, %rd7, 128;
    add.s64 %rd12, %rd7, 160;
    add.s64 %rd13, %rd7, 192;
    add.s64 %rd14, %rd7, 224;
    add.s32 %r6, %r5, 16;
    add.s32 %r7, %r5, 32;
    add.s32 %r8, %r5, 48;
    setp.lt.s32 %p1, %r5, %r1;
    setp.lt.s32 %p2, %r6, %r1;
    setp.lt.s32 %p3, %r7, %r1;
    setp.lt.s32 %p4, %r8, %r1;
    @%p1 ld.global.v2.b32 {%r10, %r11}, [%rd7];
    @%p1 ld.global.v2.b32 {%r12, %r13}, [%rd8];
    @%p2 ld.global.v2.b32 {%r14, %r15}, [%rd9];
    @%p2 ld.global.v2.b32 {%r16, %r17}, [%rd10];
    @%p3 ld.global.v2.b32 {%r18, %r19}, [%rd11];
    @%p3 ld.global.v2.b32 {%r20, %r21}, [%rd12];
    @%p4 ld.global.v2.b32 {%r22, %r23}, [%rd13];
    @%p4 ld.global.v2.b32 {%r24, %r25}, [%rd14];
    ret;
}
"""
GROUPED_PAST_ROW = GROUPED.replace("    setp.lt.s32 %p1, %r5, %r1;", "    add.s32 %r9, %r1, 8;\n    setp.lt.s32 %p1, %r5, %r9;")
for _k in (2, 3, 4):
    GROUPED_PAST_ROW = GROUPED_PAST_ROW.replace(f"setp.lt.s32 %p{_k}, %r{_k + 4}, %r1", f"setp.lt.s32 %p{_k}, %r{_k + 4}, %r9")


def _grouped_launch(bh: int, m: int) -> Launch:
    return Launch((bh, 1, 1), (128, 1, 1), {"g": ZeroBytes(4 * bh * m)}, ["g", m])


def _grouped(src: str, bh: int, m: int, multiple: int = 16):
    dom = SizeDomain([SizeVar("BH", 1, TOP), SizeVar("M", multiple, TOP - TOP % multiple, multiple)],
                     {"BH": bh, "M": m}, {"m": lambda e: e["M"]}, lambda e: (e["BH"], 1, 1),
                     {"g": lambda e: e["BH"] * e["M"] * 4}, lambda p: _grouped_launch(p["BH"], p["M"]),
                     facts=[lambda e: e["BH"] * e["M"] <= TOP])
    return check_kernel(load_program(ptx_parser.parse(src, "k.ptx"), "k"), _grouped_launch(bh, m), sizes=dom)


def _proven_note(r) -> str:
    return next((a for a in r.assumptions if "proven for ALL sizes" in a), "")


def test_a_vector_masked_by_its_group_s_column_is_proved_for_every_size() -> None:
    r = _grouped(GROUPED, 2, 64)
    assert r.verdict == "race_free" and not r.findings, (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.stats["sizes"]
    assert "BH in [1, 2147483647], M in [16, 2147483632], a multiple of 16" in _proven_note(r), r.assumptions


def test_a_group_mask_past_the_row_is_found_at_a_short_row() -> None:
    r = _grouped(GROUPED_PAST_ROW, 2, 64)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    m = r.stats["witness_sizes"]["M"]
    assert m in (16, 32, 48), r.stats["witness_sizes"]
    assert any(f"M = {m}" in n for n in r.notes), r.notes


def test_the_group_mask_fails_where_m_is_a_multiple_of_8_only() -> None:
    """The divisibility the mask relies on: over M a multiple of 8, M = 16 i + 8 has a group whose first
    column is below M and whose second vector pair is past it."""
    r = _grouped(GROUPED, 2, 64, multiple=8)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    assert r.stats["witness_sizes"]["M"] % 16 == 8, r.stats["witness_sizes"]


KV_ROWS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    shr.u32 %r4, %r3, 3;
    and.b32 %r5, %r3, 7;
    shl.b32 %r6, %r4, 6;
    shl.b32 %r7, %r5, 3;
    add.s32 %r8, %r6, %r7;
    mul.wide.u32 %rd3, %r2, %r1;
    shl.b64 %rd4, %rd3, 7;
    mul.wide.s32 %rd6, %r8, 2;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd7, %rd5, %rd6;
    add.s64 %rd8, %rd2, %rd4;
    add.s64 %rd9, %rd8, %rd6;
    setp.lt.s32 %p1, %r4, %r1;
    @%p1 ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd7];
    @%p1 st.global.v4.b32 [%rd9], {%r10, %r11, %r12, %r13};
    ret;
}
"""


def _kv_launch(bh: int, n: int) -> Launch:
    return Launch((bh, 1, 1), (512, 1, 1), {"x": ZeroBytes(128 * bh * n), "y": ZeroBytes(128 * bh * n)}, ["x", "y", n])


def _kv(src: str, bh: int, n: int):
    dom = SizeDomain([SizeVar("BH", 1, TOP), SizeVar("N", 1, TOP)], {"BH": bh, "N": n}, {"n": lambda e: e["N"]},
                     lambda e: (e["BH"], 1, 1),
                     {"x": lambda e: e["BH"] * e["N"] * 128, "y": lambda e: e["BH"] * e["N"] * 128},
                     lambda p: _kv_launch(p["BH"], p["N"]), facts=[lambda e: e["BH"] * e["N"] <= TOP // 64])
    return check_kernel(load_program(ptx_parser.parse(src, "k.ptx"), "k"), _kv_launch(bh, n), sizes=dom)


def test_a_row_tile_masked_by_its_row_is_proved_for_every_size() -> None:
    r = _kv(KV_ROWS, 2, 64)
    assert r.verdict == "race_free" and not r.findings, (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.stats["sizes"]
    assert "BH in [1, 2147483647], N in [1, 2147483647]" in _proven_note(r), r.assumptions


def test_a_row_mask_one_row_long_is_found_at_a_short_slice() -> None:
    """`r <= N`: at N = 64 no thread's row reaches N (rows 0 .. 63); below, row N of the last slice is read."""
    r = _kv(KV_ROWS.replace("setp.lt.s32 %p1, %r4, %r1", "setp.le.s32 %p1, %r4, %r1"), 2, 64)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    assert r.stats["witness_sizes"]["N"] < 64, r.stats["witness_sizes"]


# ---- the lemmas alone: true at every row, and what the proof needs


def _grouped_rows() -> np.ndarray:
    """(q0, q1, thread, o) of GROUPED's class: q0 = 2 p the address's column, q1 = 2 p + 16 j the mask's."""
    out = []
    for t in range(128):
        p = t % 4
        for k in range(8):
            out.append((2 * p, 2 * p + 16 * (k // 2), t, 32 * k))
    return np.unique(np.array(out, dtype=np.uint64), axis=0)


def _grouped_bound(lemmas: list, cols: list):
    """The bounds query of GROUPED's class at slice c < BH, with the lemmas but not the table (the integer
    form's view): the 8 bytes at 4 (c M + q0) + o past 4 BH M bytes, under q1 < M."""
    q0, q1, _, o = cols
    bh, m, c = z3.BitVecs("BH M c", 64)
    off = (c * m) * 4 + z3.ZeroExt(32, q0) * 4 + o
    facts = [bh >= 1, bh <= TOP, m >= 16, m <= TOP, z3.SRem(m, 16) == 0, bh * m <= TOP, z3.ULT(c, bh),
             z3.ULE(q0, 6), z3.ULE(q1, 54), z3.ULE(o, 224), z3.SignExt(32, q1) < m]
    return facts + lemmas + [z3.UGT(z3.ZeroExt(1, off) + 8, z3.ZeroExt(1, bh * m * 4))]


def test_the_lane_part_and_span_lemmas_refute_the_group_bound_without_the_table() -> None:
    from symexec.check.bv2int import to_int
    from symexec.check.monotone import refute

    rows = _grouped_rows()
    cols = [z3.BitVec("q0", 32), z3.BitVec("q1", 32), z3.BitVec("t", 32), z3.BitVec("o", 64)]
    addr = ("add", 64, ("mul", 64, ("sext", 64, ("q", 32, 0)), ("k", 64, 4)), ("s", 64, "base"))
    pair = _row_lemmas(rows, cols)
    lane = _lane_part_lemmas(addr, rows, cols)
    assert lane, "the element 4 q0 + o is related to the mask's column"
    assert refute(to_int(_grouped_bound(pair + lane, cols)), 50_000_000, 30_000)
    assert not refute(to_int(_grouped_bound(pair, cols)), 50_000_000, 30_000)  # the two-column lemmas: not enough


@settings(max_examples=60, deadline=None)
@given(st.integers(-300, 300), st.lists(st.integers(0, 2**20), min_size=5, max_size=12, unique=True),
       st.lists(st.integers(0, 500), min_size=1, max_size=30), st.lists(st.tuples(st.integers(0, 2**16),
                                                                                  st.integers(0, 2**40)), max_size=3))
def test_the_band_holds_on_every_row(a: int, offs: list[int], xs: list[int], noise: list[tuple[int, int]]) -> None:
    """Soundness: rows y = a x + d (d from more than PAIR_OFFSETS offsets) plus a few arbitrary rows: every
    pair lemma (the band, where given) is true at every row, read as the 64-bit terms are."""
    rows = [(x, (a * x + d) % 2**64) for x in xs for d in offs] + [(x, y) for x, y in noise]
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 64)
    got = _pair_lemma(x, y, [r[0] for r in rows], [r[1] for r in rows])
    if got is None:
        return
    for u, v in rows:
        assert z3.is_true(z3.simplify(z3.substitute(got, (x, z3.BitVecVal(u, 32)), (y, z3.BitVecVal(v, 64))))), (u, v)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**12), st.integers(0, 2**12), st.integers(0, 127), st.integers(0, 2**20)),
                min_size=2, max_size=40), st.integers(-8, 8), st.integers(-8, 8))
def test_lane_part_lemmas_hold_on_every_row(rows: list[tuple[int, int, int, int]], a0: int, a1: int) -> None:
    """Soundness: whatever the rows and the address's coefficients, every lane-part lemma is true at every row."""
    table = np.unique(np.array(rows, dtype=np.uint64), axis=0)
    cols = [z3.BitVec("q0", 32), z3.BitVec("q1", 32), z3.BitVec("t", 32), z3.BitVec("o", 64)]
    addr = ("add", 64, ("mul", 64, ("sext", 64, ("q", 32, 0)), ("k", 64, a0 % 2**64)),
            ("sub", 64, ("s", 64, "n"), ("shl", 64, ("zext", 64, ("q", 32, 1)), ("k", 64, 3))))
    addr = addr if a1 >= 0 else ("add", 64, addr, ("mul", 64, ("zext", 64, ("q", 32, 1)), ("k", 64, a1 % 2**64)))
    for lemma in _lane_part_lemmas(addr, table, cols):
        for row in table.tolist():
            at = [(c, z3.BitVecVal(v, c.size())) for c, v in zip(cols, row)]
            assert z3.is_true(z3.simplify(z3.substitute(lemma, *at))), (row, lemma)
