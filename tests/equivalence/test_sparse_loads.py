"""A load by some lanes of the batch keeps only those lanes' rows in the term shadow (TermShadow.loaded_rows)
and assembles their terms only: the terms, node ids included, are those of the whole-batch rows it kept
before (every other lane's bytes CONCRETE), for whole elements, narrow loads (zero and sign extension),
vector loads, words made of two elements, bytes mixing a term and concrete bits, and atomics (several
reads in one instruction: the rows are widened to the batch's). `scatter_rows` is numpy's row assignment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symexec.check.termshadow as TS
from ptx_parser import parse
from semantics.terms import TermStore, sort_of_type
from symexec import Launch, load_program
from symexec.check.run import run_checked
from symexec.check.termshadow import GlobalInfo, equivalence_run
from symexec.memory import scatter_rows

KERNEL = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a_ptr, .param .u64 c_ptr, .param .u64 o_ptr, .param .u32 active, .param .u32 stride)
{
  .reg .pred %p<4>;
  .reg .b16 %h<4>;
  .reg .b32 %r<24>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<16>;
  .shared .align 8 .b8 sh[1024];
  ld.param.u64 %rd1, [a_ptr];
  ld.param.u64 %rd2, [c_ptr];
  ld.param.u64 %rd3, [o_ptr];
  ld.param.u32 %r1, [active];
  ld.param.u32 %r2, [stride];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %ntid.x;
  mad.lo.s32 %r6, %r4, %r5, %r3;
  setp.ge.u32 %p1, %r3, %r1;
  rem.u32 %r7, %r3, %r2;
  setp.ne.u32 %p2, %r7, 0;
  or.pred %p3, %p1, %p2;
  @%p3 bra $L_end;
  mul.wide.u32 %rd4, %r6, 16;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.global.v2.f32 {%f2, %f3}, [%rd5+4];
  ld.global.u8 %r8, [%rd5+1];
  ld.global.s16 %r9, [%rd5+2];
  ld.global.b64 %rd6, [%rd5+8];
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
  ld.global.u16 %h1, [%rd5+6];
  mul.wide.u32 %rd7, %r6, 4;
  add.s64 %rd8, %rd2, %rd7;
  ld.global.u32 %r14, [%rd8];
  mul.lo.u32 %r15, %r3, 8;
  mov.u32 %r16, sh;
  add.s32 %r17, %r16, %r15;
  st.shared.f32 [%r17], %f1;
  st.shared.u32 [%r17+4], %r14;
  ld.shared.b64 %rd9, [%r17];
  ld.shared.u32 %r18, [%r17+2];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  mul.wide.u32 %rd10, %r6, 64;
  add.s64 %rd11, %rd3, %rd10;
  st.global.f32 [%rd11], %f4;
  st.global.u32 [%rd11+4], %r8;
  st.global.u32 [%rd11+8], %r9;
  st.global.b64 [%rd11+16], %rd6;
  st.global.v4.b32 [%rd11+24], {%r10, %r11, %r12, %r13};
  st.global.u16 [%rd11+40], %h1;
  st.global.b64 [%rd11+48], %rd9;
  st.global.u32 [%rd11+56], %r18;
  atom.global.add.f32 %f5, [%rd3], %f1;
$L_end:
  ret;
}
"""

CTAS, BLOCK = 4, 128


def _launch(active: int, stride: int) -> Launch:
    n = CTAS * BLOCK
    rng = np.random.default_rng(3)
    a = rng.standard_normal(4 * n).astype(np.float32)
    c = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    o = np.zeros(16 * n, np.uint32)
    return Launch((CTAS, 1, 1), (BLOCK, 1, 1), {"a": a, "c": c, "o": o}, ["a", "c", "o", active, stride])


INFOS = {"a": GlobalInfo("a", sort_of_type(".f32"), 4, True),
         "c": GlobalInfo("c", sort_of_type(".b32"), 4, False),
         "o": GlobalInfo("o", sort_of_type(".b32"), 4, False)}


def _run(active: int, stride: int, compact: bool, monkeypatch) -> tuple[TermStore, dict, int]:
    calls = {"compact": 0}
    real = TS._increasing

    def spy(lanes: np.ndarray) -> bool:
        got = compact and real(lanes)
        calls["compact"] += got
        return got

    monkeypatch.setattr(TS, "_increasing", spy)
    prog = load_program(parse(KERNEL))
    T = TermStore()
    run, shadow = equivalence_run(prog, _launch(active, stride), T, INFOS, races=False)
    assert run_checked(run, prog, _launch(active, stride)).outcome.value == "race_free"
    return T, shadow.outputs(), calls["compact"]


def _same_store(S: TermStore, T: TermStore) -> None:
    assert len(S) == len(T)
    for col in ("_op", "_sort", "_aux", "_off", "_nk", "_kids", "_shape"):
        assert np.array_equal(getattr(S, col).view, getattr(T, col).view), col


@settings(max_examples=12, deadline=None)
@given(active=st.sampled_from([1, 5, 32, 33, 64, 127, 128]), stride=st.sampled_from([1, 2, 3, 32]))
def test_sparse_loads_make_the_whole_batch_terms(active: int, stride: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        S, outs_s, used = _run(active, stride, True, mp)
    with pytest.MonkeyPatch.context() as mp:
        T, outs_t, _ = _run(active, stride, False, mp)
    assert used > 0 or active >= BLOCK and stride == 1  # (every lane active: the batch's rows as before)
    _same_store(S, T)
    assert outs_s.keys() == outs_t.keys()
    for name, o in outs_s.items():
        p = outs_t[name]
        for f in ("elements", "terms", "bits", "stores", "atomics", "writer"):
            assert np.array_equal(getattr(o, f), getattr(p, f)), (name, f)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 64), k=st.sampled_from([1, 2, 3, 4, 8, 16]), data=st.data())
def test_scatter_rows_is_row_assignment(m: int, k: int, data) -> None:
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, m - 1)))), np.int64)
    rng = np.random.default_rng(m * 31 + k)
    for dtype in (np.uint8, np.int64):
        dst = rng.integers(0, 200, (m, k)).astype(dtype)
        src = rng.integers(0, 200, (rows.size, k)).astype(dtype)
        want = dst.copy()
        want[rows] = src
        scatter_rows(dst, rows, src)
        assert np.array_equal(dst, want)
    wide = rng.integers(0, 200, (m, 2 * k)).astype(np.uint8)  # a strided (non-contiguous) view: numpy's way
    view, want = wide[:, ::2], wide[:, ::2].copy()
    src = rng.integers(0, 200, (rows.size, k)).astype(np.uint8)
    want[rows] = src
    scatter_rows(view, rows, src)
    assert np.array_equal(view, want)
