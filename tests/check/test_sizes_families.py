"""Symbolic sizes over a tile whose rows are unrolled: each of 64 threads reads, changes and writes back
four rows of a K x N fp16 matrix, `r = 16 ctaid.y + t / 16` and `r + 4`, `r + 8`, `r + 12`, one load and one
store each (an unrolled tile, as gemm_accumulate's C tile with 32 rows per thread, where Triton writes `r | 4`).
The instructions of rows `+ 4` .. `+ 12` differ only in that constant, so grid.py `families` merges them into one access class
whose lane columns hold it: the cross-CTA and intra-CTA phases ask one query per pair of families instead of
one per pair of instructions (gemm_accumulate sm_80: 64 classes, 1552 pairs at about 7 s CPU each, out of
time before).

- `ROWS`: right for every K, N multiple of 16 (K * N < 2^31): proved for all sizes.
- `NEXT_TILE`: the last row is `r + 16`, the first rows of the next CTA's tile (CTA y + 1): a cross-CTA race
  as soon as there are two rows of CTAs. At the checked launch (K = 16, one row of CTAs) it is masked off
  (`row < K`), so only the proof over the sizes finds it; the witness is run concretely.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from harness.contract import cdiv
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.grid import _Class, families
from symexec.check.grid_expr import evaluate
from symexec.check.grid_shadow import Access
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y, .param .u32 n, .param .u32 kk)
{
    .reg .pred %p<20>;
    .reg .b32 %r<60>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [y];
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
    or.b32 %r12, %r11, %r10;
    setp.lt.s32 %p1, %r9, %r1;
"""


def _row(i: int, offset: int) -> str:
    """Row `r + offset` (r itself for 0): read, add 1 to its first word, write back, masked by
    `row < K` and `col < N`; registers of its own (i)."""
    row = "%r12" if offset == 0 else f"%r{20 + i}"
    r0, p, rd = 30 + 4 * i, 2 + 2 * i, 2 + 3 * i
    vec = f"{{%r{r0}, %r{r0 + 1}, %r{r0 + 2}, %r{r0 + 3}}}"
    return ((f"    add.s32 {row}, %r12, {offset};\n" if offset else "")
            + f"    setp.lt.s32 %p{p}, {row}, %r2;\n    and.pred %p{p + 1}, %p{p}, %p1;\n"
            f"    mad.lo.s32 %r{50 + i}, {row}, %r1, %r9;\n    mul.wide.s32 %rd{rd}, %r{50 + i}, 2;\n"
            f"    add.s64 %rd{rd + 1}, %rd1, %rd{rd};\n"
            f"    @%p{p + 1} ld.global.v4.b32 {vec}, [%rd{rd + 1}];\n    add.s32 %r{r0}, %r{r0}, 1;\n"
            f"    @%p{p + 1} st.global.v4.b32 [%rd{rd + 1}], {vec};\n")


def _kernel(offsets: tuple[int, ...]) -> str:
    return HEAD + "".join(_row(i, o) for i, o in enumerate(offsets)) + "    ret;\n}\n"


#: 64 threads, thread t at row `16 ctaid.y + t / 16` (0 .. 3 in the tile) and rows `+ 4`, `+ 8`, `+ 12`
ROWS = _kernel((0, 4, 8, 12))
#: the last row `+ 16`: the next tile's (CTA y + 1's) first rows
NEXT_TILE = _kernel((0, 4, 8, 16))
TOP = 2**31 - 16


def _launch(k: int, n: int) -> Launch:
    return Launch((cdiv(n, 128), cdiv(k, 16), 1), (64, 1, 1), {"y": ZeroBytes(2 * k * n)}, ["y", n, k])


def _domain(k: int, n: int) -> SizeDomain:
    return SizeDomain([SizeVar("K", 16, TOP, 16), SizeVar("N", 16, TOP, 16)], {"K": k, "N": n},
                      {"n": lambda e: e["N"], "kk": lambda e: e["K"]},
                      lambda e: (cdiv(e["N"], 128), cdiv(e["K"], 16), 1),
                      {"y": lambda e: e["K"] * e["N"] * 2},
                      lambda p: _launch(p["K"], p["N"]), facts=[lambda e: e["K"] * e["N"] <= 2**31 - 1])


def _check(src: str, k: int, n: int):
    return check_kernel(load_program(ptx_parser.parse(src, "k.ptx"), "k"), _launch(k, n), sizes=_domain(k, n))


def test_unrolled_tile_rows_are_proved_for_every_size_as_one_family() -> None:
    r = _check(ROWS, 16, 272)
    assert r.verdict == "race_free" and not r.findings, (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.stats["sizes"]
    assert r.stats["class_families"] == 4, r.stats  # row r's load and store; rows + 4, + 8, + 12 as one
    note = next(a for a in r.assumptions if "proven for ALL sizes" in a)
    assert f"K in [16, {TOP}], a multiple of 16, N in [16, {TOP}], a multiple of 16" in note, note
    assert "no race between two different CTAs on global memory" in note, note
    # intra-CTA races: the integer form answers unknown on a family paired with row r's class (as on
    # gemm_accumulate's four such pairs), so they stay checked on the executed CTAs, as the note says


def test_a_row_in_the_next_tile_races_across_ctas_at_another_size() -> None:
    r = _check(NEXT_TILE, 16, 272)
    assert r.verdict == "race", (r.verdict, r.notes, r.assumptions)
    k, n = r.stats["witness_sizes"]["K"], r.stats["witness_sizes"]["N"]
    assert k >= 32, (k, n)  # two rows of CTAs at least
    a, b = r.findings[0].sites[:2]
    assert a.cta[0] == b.cta[0] and abs(a.cta[1] - b.cta[1]) == 1, (a, b)  # tiles one above the other


# ---- families: a family's accesses are exactly its members' (hypothesis, numpy evaluation of each)

def _expr(c_row: int, c_guard: int, c_mul: int) -> tuple[tuple, tuple]:
    row = ("or", 32, ("q", 32, 0), ("k", 32, c_row))
    addr = ("add", 64, ("k", 64, 4096), ("mul", 64, ("zext", 64, ("mul", 32, row, ("k", 32, c_mul))), ("k", 64, 2)))
    guard = ("cmp", 0, "slt", ("add", 32, ("q", 32, 1), ("k", 32, c_guard)), ("k", 32, 100))
    return addr, guard


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(-5, 40), st.sampled_from([1, 3, 64])),
                min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 63), st.integers(0, 50)), min_size=1, max_size=12, unique=True),
       st.integers(1, 40))
def test_a_family_s_accesses_are_exactly_its_members(consts, lanes, max_rows) -> None:
    """Members differing in constants (row offset, guard offset, a multiplier); each member's rows are
    `lanes` (q0, q1) with the thread and the vector offset. Every member's (address, guard, thread,
    offset) at each of its rows is found in the family it went to, evaluated at its extended row, and the
    families hold no access that no member has; no family has more than max_rows rows unless one member
    alone does."""
    classes, want = [], set()
    for i, (cr, cg, cm) in enumerate(consts):
        addr, guard = _expr(cr, cg, cm)
        rows = np.array([(q0, q1, 7 * q0 % 5, 8 * (q1 % 2)) for q0, q1 in lanes], dtype=np.uint64)
        classes.append(_Class(Access(pc=i, kind=1, strong=1, buffer=0, size=16, addr=addr, guard=guard, rows=rows)))
        want |= _accesses(addr, guard, rows)
    got, out = set(), families(classes, max_rows)
    for f in out:
        rows = f.all_rows()
        assert rows.shape[0] <= max(max_rows, len(lanes)), rows.shape
        got |= _accesses(f.a.addr, f.a.guard, rows)
    assert got == want
    per = max_rows // len(lanes)  # members a family takes (greedily, in order); one member alone if none fits
    assert len(out) == (len(consts) if per == 0 else -(-len(consts) // per)), (len(out), len(consts), per)


def _accesses(addr: tuple, guard: tuple, rows: np.ndarray) -> set:
    ncol = rows.shape[1] - 2
    env = {("q", i): rows[:, i] for i in range(ncol)}
    a = np.broadcast_to(evaluate(addr, env), rows.shape[:1])
    g = np.broadcast_to(evaluate(guard, env), rows.shape[:1])
    return {(int(x) % 2**64, bool(y), int(t), int(o)) for x, y, t, o in zip(a, g, rows[:, ncol], rows[:, ncol + 1])}
