"""Shared pieces of the emulator tests' hand-written PTX kernels."""

from __future__ import annotations

import functools
import shutil

from tests.corpus.common import run_ptxas


@functools.lru_cache(maxsize=None)
def assert_assembles(src: str, arch: str) -> None:
    """ptxas -arch=`arch` accepts the kernel (nothing is checked without ptxas on PATH)."""
    if shutil.which("ptxas") is None:
        return
    r = run_ptxas(src, arch, timeout=60)
    assert r.accepted, r.stderr


def copy_to_smem(nbytes: int) -> str:
    """PTX lines: every thread (%r1 = %tid.x, 128 threads) copies the 16-byte chunks t, t+128, ...
    of the `src` parameter to `smem` up to `nbytes`; uses %rd1-%rd3, %r2-%r9 and %p3."""
    return f"""  ld.param.u64 %rd1, [src];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 16;
  add.u64 %rd3, %rd1, %rd2;
  mov.u32 %r2, smem;
  shl.b32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  mov.u32 %r5, %r3;
COPY:
  setp.ge.u32 %p3, %r5, {nbytes};
  @%p3 bra COPIED;
  ld.global.v4.b32 {{%r6, %r7, %r8, %r9}}, [%rd3];
  st.shared.v4.b32 [%r4], {{%r6, %r7, %r8, %r9}};
  add.u64 %rd3, %rd3, 2048;
  add.u32 %r4, %r4, 2048;
  add.u32 %r5, %r5, 2048;
  bra COPY;
COPIED:
"""
