"""Float arithmetic run by few lanes of a large batch is computed on those lanes only
(semantics.ptx.arith._sparse_lanes): the same bits as the whole-batch computation, specials and
directed roundings included; a guarded instruction (whose other lanes' bits the equivalence shadow may
read) and a dense one run on every lane as before."""

from __future__ import annotations

import numpy as np
import pytest

import ptx_parser
from semantics import floatops as F
from semantics.ptx import arith
from symexec import Launch, Machine, load_program

KERNEL = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a_ptr, .param .u64 o_ptr, .param .u32 active)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a_ptr];
  ld.param.u64 %rd2, [o_ptr];
  ld.param.u32 %r6, [active];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.ge.u32 %p1, %r1, %r6;
  @%p1 bra $L_end;
  mul.wide.u32 %rd3, %r4, 12;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  ld.global.f32 %f2, [%rd4+4];
  ld.global.f32 %f3, [%rd4+8];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  fma.rz.ftz.f32 %f5, %f1, %f2, %f3;
  add.rm.f32 %f6, %f1, %f3;
  mul.rp.sat.f32 %f7, %f1, %f2;
  sub.f32 %f8, %f2, 0f3F800000;
  setp.gt.f32 %p2, %f1, 0f00000000;
  mov.f32 %f9, 0f40000000;
  @%p2 fma.rn.f32 %f9, %f1, %f3, %f2;
  mul.wide.u32 %rd5, %r4, 24;
  add.s64 %rd6, %rd2, %rd5;
  st.global.v2.f32 [%rd6], {%f4, %f5};
  st.global.v2.f32 [%rd6+8], {%f6, %f7};
  st.global.v2.f32 [%rd6+16], {%f8, %f9};
$L_end:
  ret;
}
"""


def _inputs(n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    with np.errstate(over="ignore"):  # some overflow to infinity: specials too
        v = (rng.standard_normal(3 * n) * np.exp2(rng.integers(-130, 130, 3 * n))).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, 1.0], np.float32)
    v[: 3 * n: 5] = specials[np.arange(v[: 3 * n: 5].size) % specials.size]
    return v


@pytest.mark.parametrize("active", [32, 256])  # one warp of eight (sparse), every lane (dense)
def test_sparse_float_ops_are_the_whole_batch_results(active: int, monkeypatch) -> None:
    ctas, block = 4, 256
    n = ctas * block
    a = _inputs(n)
    calls = {"sparse": 0}
    real = arith._sparse_lanes

    def spy(ins, x, ops):
        got = real(ins, x, ops)
        calls["sparse"] += got is not None
        assert got is None or ins.guard is None
        return got

    monkeypatch.setattr(arith, "_sparse_lanes", spy)
    prog = load_program(ptx_parser.parse(KERNEL, "k.ptx"))
    m = Machine(prog, Launch((ctas,), (block,), {"a": a.copy(), "o": np.zeros(6 * n, np.float32)}, ["a", "o", active]))
    glob = m.run()
    out = np.ascontiguousarray(glob.by_name("o").store[np.arange(24 * n)]).view(np.uint32).reshape(n, 6)
    assert (calls["sparse"] > 0) == (active == 32)  # 5 unguarded float instructions per batch when sparse
    bits = a.view(np.uint32).reshape(n, 3)
    x, y, z = bits[:, 0], bits[:, 1], bits[:, 2]
    one = np.full(n, 0x3F800000, np.uint32)
    want = np.stack([F.fma(x, y, z, "f32", "rn"), F.fma(x, y, z, "f32", "rz", ftz=True), F.add(x, z, "f32", "rm"),
                     F.mul(x, y, "f32", "rp", sat=True), F.sub(y, one, "f32", "rn"),
                     np.where(x.view(np.float32) > 0, F.fma(x, z, y, "f32", "rn"), np.uint32(0x40000000))],
                    axis=1).astype(np.uint32)
    run = (np.arange(n) % block) < active
    assert np.array_equal(out[run], want[run])
    assert not out[~run].any()
