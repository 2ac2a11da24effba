"""The suite contract gemm_block_scaled (Triton 3.9 `tl.dot_scaled`, mxfp8) on the emulator: every input
distribution the contract defines matches its float64 numpy reference on sm_100a (tcgen05.mma
.kind::mxf8f6f4.block_scale.block32, scales written by tcgen05.st) and sm_120 (mma.sync
.kind::mxf8f6f4.block_scale.scale_vec::1X). The reference knows nothing of the tensor-memory layout
of the scale factors or of the mma.sync scale selectors, so it checks those MODELs
(tcgen05/scales.py, semantics.ptx.mma.scale_lanes): the same run with a wrong reading of either
fails."""

from __future__ import annotations

import numpy as np
import pytest

import semantics.ptx.mma as M
import tcgen05.scales as S
from harness.emulate import emulate
from harness.suite import get

C = get("gemm_block_scaled")


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120"])
@pytest.mark.parametrize("dist", list(C.distributions_for()))
def test_every_distribution_matches_the_reference(arch, dist):
    res = emulate(C, arch, arrays=C.make_inputs("verify", dist, 0))
    assert res.ok, [str(x) for x in res.comparisons if not x.ok]


def _fails(arch: str) -> bool:
    try:
        return not emulate(C, arch, arrays=C.make_inputs("verify", "normal", 0)).ok
    except Exception:
        return True


def test_a_wrong_scale_byte_order_is_caught(monkeypatch):
    monkeypatch.setattr(S.ScaleMatrix, "first_byte", property(lambda self: 3 - self.sf_id))
    assert _fails("sm_100a")


def test_a_wrong_scale_lane_mapping_is_caught(monkeypatch):
    def cells(self):  # row r in lane r // 4, column r % 4 instead of lane r % 32, column r // 32
        r = np.arange(self.rows)[None, :]
        lanes = self.lane0 + 32 * np.arange(4)[:, None] + (r // 4) % 32
        return lanes, np.broadcast_to(self.col0 + r % 4, lanes.shape)

    monkeypatch.setattr(S.ScaleMatrix, "cells", cells)
    assert _fails("sm_100a")


def test_a_swapped_mma_sync_scale_pair_is_caught(monkeypatch):
    rows, cols = np.arange(16), np.arange(8)
    monkeypatch.setattr(M, "scale_lanes", lambda ta, tb: (4 * (rows % 8) + 2 * ta + 1 - rows // 8, 4 * cols + tb))
    assert _fails("sm_120")
