"""semantics.ptx.warp._check_members tests every warp at once: the same verdict and message as the
per-warp loop it replaced (reference below); semantics.intops.u converts integers once, as through uint64."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics import intops
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.ptx import warp


class _X:
    def __init__(self, mask: np.ndarray) -> None:
        self.mask, self.n = mask, mask.size


class _Ins:
    name = "shfl.sync.bfly.b32"
    span = None


def _reference(ins, x, members) -> None:
    m = np.broadcast_to(np.asarray(members), (x.n,)).astype(np.uint32)
    bit = (np.uint32(1) << (np.arange(x.n, dtype=np.uint32) % 32)).astype(np.uint32)
    in_mask = (m & bit) != 0
    if (x.mask & ~in_mask).any():
        lane = int(np.nonzero(x.mask & ~in_mask)[0][0])
        raise UndefinedBehavior(f"{ins.name}: lane {lane % 32} of warp {lane // 32} is not in membermask", ins)
    warps = x.mask.reshape(-1, 32)
    active_bits = (warps * (np.uint32(1) << np.arange(32, dtype=np.uint32))).sum(axis=1, dtype=np.uint64)
    for w in np.nonzero(warps.any(axis=1))[0]:
        member = int(m.reshape(-1, 32)[w][warps[w]][0])
        if member & ~int(active_bits[w]) & 0xFFFFFFFF:
            raise Unsupported(f"{ins.name}: membermask 0x{member:08x} names lanes that are not executing "
                              f"with warp {w} here (divergent warp-synchronous code)", ins)


def _outcome(fn, ins, x, members) -> tuple:
    try:
        fn(ins, x, members)
    except (UndefinedBehavior, Unsupported) as e:
        return type(e), str(e)
    return None, ""


@settings(max_examples=300, deadline=None)
@given(warps=st.integers(1, 4), data=st.data())
def test_check_members_is_the_per_warp_loop(warps: int, data) -> None:
    n = 32 * warps
    kind = data.draw(st.sampled_from(["full", "subset", "random"]))
    words = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=warps, max_size=warps))
    mask = np.unpackbits(np.array(words, ">u4").view(np.uint8)).reshape(warps, 32)[:, ::-1].reshape(-1).astype(bool)
    if kind == "full":
        members = np.uint32(0xFFFFFFFF)
    elif kind == "subset":  # each warp's own executing lanes (plus some): per-lane masks
        extra = data.draw(st.integers(0, 2**32 - 1))
        members = np.repeat(np.array(words, np.uint64) | np.uint64(extra if data.draw(st.booleans()) else 0), 32)
        members = members.astype(np.uint32)
    else:
        members = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n)), np.uint32)
    x = _X(mask)
    assert _outcome(warp._check_members, _Ins, x, members) == _outcome(_reference, _Ins, x, members)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**64 - 1), min_size=1, max_size=20), st.sampled_from([8, 16, 32, 64]),
       st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]))
def test_u_converts_integers_once(values: list[int], width: int, dtype) -> None:
    with np.errstate(all="ignore"):
        a = np.array([v % 2**64 for v in values], np.uint64).astype(dtype)
    want = a.astype(np.uint64).astype(intops._DT[width])
    got = intops.u(a, width)
    assert got.dtype == want.dtype and np.array_equal(got, want)
