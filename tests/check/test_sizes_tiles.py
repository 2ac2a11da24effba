"""Symbolic sizes over a GEMM-style tile load: the bounds of a masked 16-byte row-wise access whose
mask tests a different row than the one it loads (grid.py `_row_lemmas`).

`TILE` copies a K x N fp16 matrix in 16 x 128 tiles (grid (cdiv(N, 128), cdiv(K, 16)), 256
threads): thread t loads the 8 halves at row `16 ctaid.y + t / 16`, column `128 ctaid.x + 8 (t % 16)`,
as one `ld.global.v4.b32`, at the element offset row * N + col taken in 32 bits (Triton's
`mad.lo.s32`). Like the B tile of gemm_fp16's pipelined prologue, the row mask tests the first
row of each group of eight (`16 ctaid.y + (t / 16) % 8 < K`), which is the same test because K is a
multiple of 16 (`tt.divisibility`). The proof needs two facts the table of lane rows holds but
whose integer form (bv2int.py) leaves the table out: the tested row is the loaded one or 8 below
it, and it is below 8 modulo 16; and the column is a multiple of 8 (the vector's 16 bytes end within
the row). `TILE_OFF_BY_ONE` tests the column `<=` N: right where N is a multiple of 128, out of bounds
at the ragged sizes, a witness found and run concretely; and `TILE` over K a multiple of only 8 reads
rows K .. K + 7 where K is not a multiple of 16.
"""

from __future__ import annotations

import numpy as np
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from harness.contract import cdiv
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.grid import _row_lemmas
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

TILE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n, .param .u32 kk)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [kk];
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ctaid.y;
    and.b32 %r6, %r3, 15;
    shl.b32 %r7, %r6, 3;
    shl.b32 %r8, %r4, 7;
    or.b32 %r9, %r8, %r7;
    shr.u32 %r10, %r3, 4;
    shl.b32 %r11, %r5, 4;
    add.s32 %r12, %r11, %r10;
    and.b32 %r13, %r10, 7;
    add.s32 %r14, %r11, %r13;
    setp.lt.s32 %p1, %r14, %r2;
    setp.lt.s32 %p2, %r9, %r1;
    and.pred %p3, %p1, %p2;
    mad.lo.s32 %r15, %r12, %r1, %r9;
    mul.wide.s32 %rd3, %r15, 2;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    @%p3 ld.global.v4.b32 {%r16, %r17, %r18, %r19}, [%rd4];
    @%p3 st.global.v4.b32 [%rd5], {%r16, %r17, %r18, %r19};
    ret;
}
"""
TILE_OFF_BY_ONE = TILE.replace("setp.lt.s32 %p2, %r9, %r1;", "setp.le.s32 %p2, %r9, %r1;")
TOP = 2**31 - 16


def _launch(k: int, n: int) -> Launch:
    return Launch((cdiv(n, 128), cdiv(k, 16), 1), (256, 1, 1),
                  {"x": ZeroBytes(2 * k * n), "y": ZeroBytes(2 * k * n)}, ["x", "y", n, k])


def _domain(k: int, n: int, k_multiple: int = 16) -> SizeDomain:
    k_top = 2**31 - 1 - (2**31 - 1) % k_multiple
    return SizeDomain([SizeVar("K", k_multiple, k_top, k_multiple), SizeVar("N", 16, TOP, 16)], {"K": k, "N": n},
                      {"n": lambda e: e["N"], "kk": lambda e: e["K"]},
                      lambda e: (cdiv(e["N"], 128), cdiv(e["K"], 16), 1),
                      {"x": lambda e: e["K"] * e["N"] * 2, "y": lambda e: e["K"] * e["N"] * 2},
                      lambda p: _launch(p["K"], p["N"]), facts=[lambda e: e["K"] * e["N"] <= 2**31 - 1])


def _check(src: str, k: int, n: int, k_multiple: int = 16):
    return check_kernel(load_program(ptx_parser.parse(src, "k.ptx"), "k"), _launch(k, n),
                        sizes=_domain(k, n, k_multiple))


def test_a_tile_masked_by_its_group_s_first_row_is_proved_for_every_size() -> None:
    r = _check(TILE, 48, 272)
    assert r.verdict == "race_free" and not r.findings, (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.stats["sizes"]
    assert any(f"proven for ALL sizes (K in [16, {TOP}], a multiple of 16, N in [16, {TOP}], a multiple of 16)" in a
               for a in r.assumptions), r.assumptions


def test_a_column_mask_off_by_one_is_found_at_another_size() -> None:
    """`col <= N`: at N = 256 (a multiple of the tile) no column reaches N, so the checked launch is
    right; at a ragged N the last row's vector at column N lies past the end."""
    r = _check(TILE_OFF_BY_ONE, 48, 256)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    k, n = r.stats["witness_sizes"]["K"], r.stats["witness_sizes"]["N"]
    assert n % 128, (k, n)
    site = r.findings[0].sites[0]
    row, col = 16 * site.cta[1] + site.thread[0] // 16, 128 * site.cta[0] + 8 * (site.thread[0] % 16)
    assert row * n + col + 8 > k * n and col == n, (site.cta, site.thread, k, n)


def test_a_row_mask_that_relies_on_divisibility_fails_without_it() -> None:
    """The same kernel over K a multiple of 8 only: the mask of rows 8 .. 15 of a tile tests its
    first row, so at K = 16 j + 8 the rows K .. K + 7 load past the end."""
    r = _check(TILE, 48, 256, k_multiple=8)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    k, n = r.stats["witness_sizes"]["K"], r.stats["witness_sizes"]["N"]
    assert k % 16 == 8, (k, n)
    site = r.findings[0].sites[0]
    assert 16 * site.cta[1] + site.thread[0] // 16 >= k, (site.cta, site.thread, k)


def _rows(draw_rows: list[tuple[int, int, int]]) -> np.ndarray:
    return np.array(draw_rows, dtype=np.uint64)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 2**16), st.integers(0, 255)), min_size=1, max_size=40))
def test_row_lemmas_hold_on_every_row(rows: list[tuple[int, int, int]]) -> None:
    """Soundness: every lemma is true at every recorded row (the lemmas only restate the table)."""
    cols = [z3.BitVec("a", 32), z3.BitVec("b", 32), z3.BitVec("t", 32)]
    lemmas = _row_lemmas(_rows(rows), cols)
    for row in rows:
        at = [(c, z3.BitVecVal(v, 32)) for c, v in zip(cols, row)]
        for lemma in lemmas:
            assert z3.is_true(z3.simplify(z3.substitute(lemma, *at))), (row, lemma)


def test_row_lemmas_state_the_tile_s_relations() -> None:
    """The rows of `TILE`'s access (address row, guard row, column) give the relations its proof needs."""
    t = np.arange(256)
    rows = np.stack([t // 16, (t // 16) % 8, 8 * (t % 16)], axis=1).astype(np.uint64)
    a, g, c = z3.BitVecs("a g c", 32)
    lemmas = z3.And(_row_lemmas(rows, [a, g, c]))
    s = z3.Solver()
    for claim in (z3.URem(c, 8) == 0, z3.ULT(z3.URem(g, 16), 8), z3.Or(a == g, a == g + 8)):
        s.push()
        s.add(lemmas, z3.Not(claim))
        assert s.check() == z3.unsat, claim
        s.pop()


#: `TILE`'s store, but its column mask lets one vector past the row's end (`col < N + 8`) and each thread
#: stores its own id: for N in [16, 128] the grid has one column of CTAs, so the vector at column N of row r
#: is row r + 1's first, stored by another thread of the same CTA (an intra-CTA race on global memory);
#: at N = 128 (the checked launch) no column reaches N. The output has one spare row, so nothing is out of
#: bounds: the race is the only fault.
TILE_STORE_PAST_ROW = (TILE.replace("setp.lt.s32 %p2, %r9, %r1;", "add.s32 %r16, %r1, 8;\n    setp.lt.s32 %p2, %r9, %r16;")
                       .replace("    @%p3 ld.global.v4.b32 {%r16, %r17, %r18, %r19}, [%rd4];\n", "")
                       .replace("{%r16, %r17, %r18, %r19}", "{%r3, %r3, %r3, %r3}"))


def _narrow_launch(k: int, n: int) -> Launch:
    return Launch((cdiv(n, 128), cdiv(k, 16), 1), (256, 1, 1),
                  {"x": ZeroBytes(2 * k * n), "y": ZeroBytes(2 * (k + 1) * n)}, ["x", "y", n, k])


def _narrow_domain(k: int, n: int) -> SizeDomain:
    return SizeDomain([SizeVar("K", 16, 2**20, 16), SizeVar("N", 16, 128, 16)], {"K": k, "N": n},
                      {"n": lambda e: e["N"], "kk": lambda e: e["K"]},
                      lambda e: (cdiv(e["N"], 128), cdiv(e["K"], 16), 1),
                      {"x": lambda e: e["K"] * e["N"] * 2, "y": lambda e: (e["K"] + 1) * e["N"] * 2},
                      lambda p: _narrow_launch(p["K"], p["N"]))


def _intra_note(r) -> str:
    return next(a for a in r.assumptions if "proven for ALL sizes" in a)


def test_a_tile_store_s_threads_are_apart_for_every_size() -> None:
    """Two threads of one CTA store `TILE`'s vectors at `row * N + col` with different (row, col) (the
    table's threads own distinct constants, grid.py `_threads_apart`): the integer form proves them apart
    for every N, so intra-CTA races on global memory are covered for all sizes, not only on the executed
    CTAs (before: Z3 answered unknown on the nonlinear `N * (r1 - r2)`)."""
    r = _check(TILE, 48, 272)
    assert r.verdict == "race_free", (r.verdict, r.notes)
    note = _intra_note(r)
    assert "no two threads of one CTA touch overlapping global bytes in any CTA" in note, note
    assert "checked on the executed CTAs only" not in note, note


def test_a_tile_store_past_its_row_races_inside_a_cta_at_another_size() -> None:
    r = check_kernel(load_program(ptx_parser.parse(TILE_STORE_PAST_ROW, "k.ptx"), "k"), _narrow_launch(48, 128),
                     sizes=_narrow_domain(48, 128))
    assert r.verdict == "race", (r.verdict, r.notes, r.assumptions)
    n = r.stats["witness_sizes"]["N"]
    assert n < 128, r.stats["witness_sizes"]
    sites = r.findings[0].sites
    assert sites[0].cta == sites[1].cta and sites[0].thread != sites[1].thread, sites


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**33), st.integers(0, 40), st.integers(0, 7), st.integers(0, 3)),
                min_size=1, max_size=30))
def test_threads_apart_holds_for_every_pair_of_rows(rows: list[tuple[int, int, int, int]]) -> None:
    """Soundness: when `_threads_apart` gives its fact, it is true at every pair of recorded rows (columns
    q0 (read modulo 2^32), q1, thread, o), whatever the rows; it gives it only when the rows allow it."""
    from symexec.check.grid import _threads_apart

    table = np.array(rows, dtype=np.uint64)
    lanes = (z3.BitVec("w_t", 32), z3.BitVec("a_t", 32))
    got = _threads_apart(table, {0: 32, 1: 32}, ("w", "a"), lanes)
    keyed = {}
    for q0, q1, t, o in rows:
        keyed.setdefault((q0 % 2**32, q1, o), set()).add(t)
    assert bool(got) == all(len(ts) == 1 for ts in keyed.values())
    names = [[z3.BitVec(f"{s}_q0", 32), z3.BitVec(f"{s}_q1", 32), lanes[j], z3.BitVec(f"{s}_o", 64)]
             for j, s in enumerate(("w", "a"))]
    for r1 in rows:
        for r2 in rows:
            at = [(v, z3.BitVecVal(x, v.size())) for v, x in zip(names[0] + names[1], r1 + r2)]
            for fact in got:
                assert z3.is_true(z3.simplify(z3.substitute(fact, *at))), (r1, r2, fact)
