"""Tensor maps (symexec/tensormap.py): the tile-mode box mapping against a straightforward numpy
gather, the shared-memory swizzles against the tables of PTX 5.5.7, the validation of every field
(cuTensorMapEncodeTiled's requirements), the launch spec, and the opaque 128-byte tags."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec import Launch, LaunchError
from symexec.launch import spec_to_launch
from symexec.tensormap import (ElementType, Interleave, MapField, MapFields, OobFill, Swizzle, TensorMap,
                               TensorMapError, UnsetField, shared_addresses, swizzle, tag_bytes, tag_ident, tile,
                               unmodelled)

# ---------------------------------------------------------------------- the swizzle tables of 5.5.7

# Rows of 16-byte cells in consecutive 128-byte shared-memory lines, transcribed from the manual;
# the pattern repeats after the last row.
TABLES = {
    Swizzle.B32: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]],
    Swizzle.B64: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
                  [3, 2, 1, 0, 7, 6, 5, 4]],
    Swizzle.B128: [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
                   [3, 2, 1, 0, 7, 6, 5, 4], [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2],
                   [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]],
    Swizzle.B128_ATOM_32B: [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5], [4, 5, 6, 7, 0, 1, 2, 3],
                            [6, 7, 4, 5, 2, 3, 0, 1]],
    Swizzle.B128_ATOM_64B: [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]],
}


@pytest.mark.parametrize("mode", list(TABLES), ids=lambda m: m.name)
def test_swizzle_is_the_manuals_table(mode: Swizzle) -> None:
    table = TABLES[mode]
    a = np.arange(0, 4 * 1024, dtype=np.int64)  # every byte of 4 KiB, from a 1024-aligned start
    line, cell, byte = (a // 128) % len(table), (a % 128) // 16, a % 16
    moved = np.array([table[r][c] for r, c in zip(line, cell)])
    # position `cell` of line `line` holds source cell table[line][cell]: source `moved` goes there
    want = a - cell * 16 - byte + moved * 16 + byte
    got = swizzle(a, mode)
    inverse = np.empty_like(got)
    inverse[got] = a  # the permutation the swizzle applies, read the other way round
    assert np.array_equal(got, want) or np.array_equal(inverse, want)
    assert np.array_equal(swizzle(got, mode), a)  # an involution: each table row is one


def test_swizzles_not_modelled_are_refused() -> None:
    for mode in (Swizzle.B128_ATOM_32B_FLIP_8B, Swizzle.B96):
        with pytest.raises(TensorMapError, match="swizzle"):
            swizzle(np.arange(16), mode)
    tm = TensorMap(ElementType.FLOAT16, (64, 8), (128,), (64, 8), swizzle=Swizzle.B128_ATOM_32B_FLIP_8B, buffer="x")
    assert "figure" in unmodelled(tm)
    tm = TensorMap(ElementType.FLOAT16, (64, 8, 4), (128, 1024), (64, 8, 2), interleave=Interleave.B16, buffer="x")
    assert "interleaved" in unmodelled(tm)


# ---------------------------------------------------------------------- the box: numpy reference

def reference_box(data: np.ndarray, tm: TensorMap, coords: tuple[int, ...], fill=0) -> np.ndarray:
    """The box in shared-memory order, gathered element by element from `data` (its dimensions
    outermost first, as numpy has them); outside elements are `fill`."""
    counts, steps = tm.box_counts(), tm.steps()
    out = np.full(tuple(reversed(counts)), fill, dtype=data.dtype)
    for idx in np.ndindex(*out.shape):  # idx outermost first
        pos = [coords[i] + steps[i] * idx[tm.rank - 1 - i] for i in range(tm.rank)]  # innermost first
        if all(0 <= p < d for p, d in zip(pos, tm.global_dims)):
            out[idx] = data[tuple(reversed(pos))]
    return out.reshape(-1)


def gathered_box(data: np.ndarray, tm: TensorMap, coords: tuple[int, ...]) -> np.ndarray:
    t = tile(tm, coords)
    flat = data.reshape(-1)
    vals = np.zeros(t.n, dtype=data.dtype)
    vals[t.inside] = flat[t.offsets[t.inside] // data.itemsize]
    return vals


@st.composite
def maps_and_coords(draw):
    rank = draw(st.integers(1, 3))
    et = draw(st.sampled_from([ElementType.UINT8, ElementType.FLOAT16, ElementType.FLOAT32, ElementType.INT64]))
    eb = et.bytes
    dims = [draw(st.integers(1, 40)) for _ in range(rank)]
    unit = 16 // eb
    box = [unit * draw(st.integers(1, 4))] + [draw(st.integers(1, 12)) for _ in range(rank - 1)]
    es = [1] + [draw(st.integers(1, 8)) for _ in range(rank - 1)]
    # row-major strides with padding, each a multiple of 16 bytes
    strides = []
    inner = -(-dims[0] * eb // 16) * 16 + 16 * draw(st.integers(0, 2))
    for i in range(1, rank):
        strides.append(inner)
        inner = inner * dims[i] + 16 * draw(st.integers(0, 1))
    tm = TensorMap(et, tuple(dims), tuple(strides), tuple(box), tuple(es), buffer="t")
    coords = tuple(draw(st.integers(-box[i] * es[i] - 2, dims[i] + 2)) for i in range(rank))
    return tm, coords


def _data_for(tm: TensorMap, seed: int) -> np.ndarray:
    """A row-major array with the map's (padded) strides, as the flat buffer the map points into."""
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[tm.elem_bytes]
    shape_elems = [s // tm.elem_bytes for s in (tm.elem_bytes,) + tm.global_strides]
    total = tm.extent_bytes() // tm.elem_bytes
    flat = np.random.default_rng(seed).integers(1, 1 << 15, total, dtype=np.uint64).astype(dt)
    view = np.lib.stride_tricks.as_strided(flat, shape=tuple(reversed(tm.global_dims)),
                                           strides=tuple(reversed([s * flat.itemsize for s in shape_elems])))
    return flat, view


@settings(max_examples=150, deadline=None)
@given(maps_and_coords(), st.integers(0, 2**16))
def test_tile_matches_a_numpy_gather(case, seed) -> None:
    tm, coords = case
    flat, view = _data_for(tm, seed)
    want = reference_box(view, tm, coords)
    t = tile(tm, coords)
    got = np.zeros(t.n, dtype=flat.dtype)
    got[t.inside] = flat[t.offsets[t.inside] // tm.elem_bytes]
    assert np.array_equal(got, want)
    assert t.n * tm.elem_bytes == tm.box_bytes()  # the tx count: the whole box, outside elements too


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128, Swizzle.B128_ATOM_32B,
                        Swizzle.B128_ATOM_64B]), st.integers(1, 16), st.integers(0, 7))
def test_shared_addresses_permute_the_boxs_lines(mode: Swizzle, rows: int, start_line: int) -> None:
    """The swizzle moves 16-byte cells within each 128-byte line: the box's bytes stay in its lines."""
    tm = TensorMap(ElementType.FLOAT16, (64, 64), (128,), (mode.span // 2 or 64, rows), swizzle=mode, buffer="t")
    n = tm.box_bytes() // 2
    start = 1024 * 3 + 128 * start_line
    sh = shared_addresses(tm, start, n)
    linear = start + 2 * np.arange(n)
    assert np.unique(sh).size == n
    assert np.array_equal(np.sort(sh // 128), np.sort(linear // 128))
    assert np.array_equal(sh % 16, linear % 16)


def test_narrow_rows_start_on_their_own_span() -> None:
    """Where an H200 puts a box of 16 x 16 float32 (64-byte rows) under the 128B swizzle: each row on
    its own 128-byte line, its 16-byte cells permuted there (tests/emulator/tma_gpu.py)."""
    tm = TensorMap(ElementType.FLOAT32, (96, 40), (384,), (16, 16), swizzle=Swizzle.B128, buffer="t")
    sh = shared_addresses(tm, 0, 256).reshape(16, 16)[:, ::4]  # the first element of each cell
    observed = [[0, 16, 32, 48], [144, 128, 176, 160], [288, 304, 256, 272], [432, 416, 400, 384],
                [576, 592, 608, 624], [720, 704, 752, 736], [864, 880, 832, 848], [1008, 992, 976, 960],
                [1024, 1040, 1056, 1072], [1168, 1152, 1200, 1184]]
    assert sh[:10].tolist() == observed
    tm = TensorMap(ElementType.FLOAT32, (96, 40), (384,), (4, 16), swizzle=Swizzle.B32, buffer="t")
    assert shared_addresses(tm, 0, 64).reshape(16, 4)[:10, 0].tolist() == [0, 32, 64, 96, 144, 176, 208, 240,
                                                                          256, 288]
    assert tm.box_bytes() == 256  # the transaction count: the data, not the spans


def test_element_strides_and_oob() -> None:
    data = np.arange(10 * 12, dtype=np.float32).reshape(10, 12)  # 10 rows of 12
    tm = TensorMap(ElementType.FLOAT32, (12, 10), (48,), (8, 6), (1, 3), buffer="t")  # rows 0,3 from 6 / 3
    assert tm.box_counts() == (8, 2) and tm.box_bytes() == 64
    got = gathered_box(data, tm, (8, 7))
    want = np.array([data[7, 8], data[7, 9], data[7, 10], data[7, 11], 0, 0, 0, 0] + [0] * 8, dtype=np.float32)
    assert np.array_equal(got, want)
    got = gathered_box(data, tm, (-4, -3))
    assert np.array_equal(got[8:12], [0, 0, 0, 0]) and np.array_equal(got[12:], data[0, :4])


# ---------------------------------------------------------------------- validation (every field)

GOOD = {"buffer": "x", "offset": 0, "dtype": "float16", "global_dims": [64, 32], "global_strides": [128],
        "box_dims": [64, 16], "element_strides": [1, 1], "interleave": "none", "swizzle": "128B",
        "l2_promotion": "128B", "oob_fill": "zero"}

BAD = [
    ({"dtype": "float128"}, "tensor_map.dtype", "unknown element type"),
    ({"dtype": "16u4_align8b"}, "tensor_map.dtype", "packed"),
    ({"global_dims": []}, "tensor_map.global_dims", "rank 0"),
    ({"global_dims": [2] * 6, "global_strides": [128] * 5, "box_dims": [8] * 6, "element_strides": [1] * 6},
     "tensor_map.global_dims", "rank 6"),
    ({"global_dims": [64, 0]}, "tensor_map.global_dims[1]", "must be 1 to 2^32"),
    ({"global_dims": [64, 2**32 + 1]}, "tensor_map.global_dims[1]", "must be 1 to 2^32"),
    ({"global_dims": [64, "a"]}, "tensor_map.global_dims", "list of integers"),
    ({"global_strides": [120]}, "tensor_map.global_strides[0]", "multiple of 16"),
    ({"global_strides": [2**40]}, "tensor_map.global_strides[0]", "below 2^40"),
    ({"global_strides": []}, "tensor_map.global_strides", "rank 2 needs 1"),
    ({"box_dims": [64]}, "tensor_map.box_dims", "rank 2 needs 2"),
    ({"box_dims": [64, 257]}, "tensor_map.box_dims[1]", "1 to 256"),
    ({"box_dims": [64, 0]}, "tensor_map.box_dims[1]", "1 to 256"),
    ({"box_dims": [4, 16], "swizzle": "none"}, "tensor_map.box_dims[0]", "multiple of 16 bytes"),
    ({"box_dims": [128, 16]}, "tensor_map.box_dims[0]", "128-byte swizzle span"),
    ({"box_dims": [32, 16], "swizzle": "32B"}, "tensor_map.box_dims[0]", "32-byte swizzle span"),
    ({"element_strides": [1, 9]}, "tensor_map.element_strides[1]", "1 to 8"),
    ({"element_strides": [1, 0]}, "tensor_map.element_strides[1]", "1 to 8"),
    ({"element_strides": [1]}, "tensor_map.element_strides", "rank 2 needs 2"),
    ({"interleave": "8B"}, "tensor_map.interleave", "expected one of"),
    ({"interleave": "16B"}, "tensor_map.interleave", "rank >= 3"),
    ({"global_dims": [64, 32, 2], "global_strides": [128, 4096], "box_dims": [16, 16, 1],
      "element_strides": [1, 1, 1], "interleave": "32B"}, "tensor_map.swizzle", "32B interleave requires"),
    ({"global_dims": [64, 32, 2], "global_strides": [144, 4608], "box_dims": [16, 16, 1],
      "element_strides": [1, 1, 1], "interleave": "32B", "swizzle": "32B"}, "tensor_map.global_strides[0]",
     "multiple of 32"),
    ({"swizzle": "256B"}, "tensor_map.swizzle", "expected one of"),
    ({"l2_promotion": "512B"}, "tensor_map.l2_promotion", "expected one of"),
    ({"oob_fill": "nan"}, "tensor_map.oob_fill", "expected one of"),
    ({"dtype": "int32", "oob_fill": "nan_request_zero_fma", "box_dims": [32, 16]}, "tensor_map.oob_fill",
     "floating-point"),
    ({"offset": 8}, "tensor_map.offset", "16-byte aligned"),
    ({"offset": -16}, "tensor_map.offset", "non-negative"),
    ({"buffer": 3}, "tensor_map.buffer", "buffer name"),
    ({"mode": "im2col"}, "tensor_map.mode", "im2col"),
    ({"box": [1]}, "tensor_map.box", "unknown field"),
]


@pytest.mark.parametrize("change, field, words", BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_every_field_is_validated(change, field, words) -> None:
    spec = {**GOOD, **change}
    with pytest.raises(TensorMapError) as ei:
        TensorMap.from_spec(spec)
    assert str(ei.value).startswith(field + ":") and words in str(ei.value), str(ei.value)
    launch = {"grid": [1], "block": [32], "buffers": {"x": {"dtype": "float16", "shape": [64 * 64]}},
              "params": [{"tensor_map": spec}]}
    with pytest.raises(LaunchError) as le:
        spec_to_launch(launch, "spec.json")
    assert f"params[0].{field}" in str(le.value) and "Traceback" not in str(le.value)


def test_missing_fields_are_named() -> None:
    for key in ("buffer", "dtype", "global_dims", "box_dims"):
        with pytest.raises(TensorMapError, match=f"tensor_map.{key}: missing"):
            TensorMap.from_spec({k: v for k, v in GOOD.items() if k != key})


def test_spec_round_trip_and_launch() -> None:
    tm = TensorMap.from_spec(GOOD)
    assert TensorMap.from_spec(tm.to_spec()) == tm
    assert tm.swizzle is Swizzle.B128 and tm.box_counts() == (64, 16) and tm.box_bytes() == 2048
    launch = spec_to_launch({"grid": [1], "block": [32], "buffers": {"x": {"dtype": "float16", "shape": [2048]}},
                             "params": [5, {"tensor_map": GOOD}]}, "spec")
    assert launch.tensor_maps == {1: tm}
    with pytest.raises(LaunchError, match="no buffer named 'y'"):
        Launch((1,), (32,), {"x": np.zeros(2048, np.float16)}, [{"tensor_map": {**GOOD, "buffer": "y"}}])
    with pytest.raises(LaunchError, match="spans 4096 bytes"):
        Launch((1,), (32,), {"x": np.zeros(100, np.float16)}, [tm])


# ---------------------------------------------------------------------- objects and tags


def test_tags_are_exact() -> None:
    for ident in (1, 7, 1 << 20, (1 << 20) + 12345):
        raw = tag_bytes(ident)
        assert len(raw) == 128 and tag_ident(raw) == ident
        for pos in (0, 9, 17, 64, 127):
            broken = bytearray(raw)
            broken[pos] ^= 1
            assert tag_ident(bytes(broken)) is None
    assert tag_ident(bytes(128)) is None and tag_ident(tag_bytes(3)[:64]) is None


def test_fields_round_trip_and_unset_fields() -> None:
    tm = TensorMap.from_spec({**GOOD, "swizzle": "128B_atom_64B", "oob_fill": "nan_request_zero_fma"})
    fields = MapFields.of(tm, 0x7F00_0000_1000)
    back = fields.tensor_map()
    assert back.buffer is None and back.offset == 0x7F00_0000_1000
    assert (back.dtype, back.global_dims, back.global_strides, back.box_dims, back.swizzle, back.oob_fill) == \
        (tm.dtype, tm.global_dims, tm.global_strides, tm.box_dims, tm.swizzle, OobFill.NAN_REQUEST_ZERO_FMA)
    # built from zero bytes: fields Triton leaves unset read as encoding 0; the others must be set
    f = MapFields()
    for field, value, ordinal in ((MapField.GLOBAL_ADDRESS, 4096, 0), (MapField.RANK, 0, 0),
                                  (MapField.BOX_DIM, 32, 0), (MapField.GLOBAL_DIM, 100, 0),
                                  (MapField.ELEMENT_STRIDE, 1, 0)):
        f = f.set(field, value, ordinal)
    with pytest.raises(UnsetField, match="elemtype: never set"):
        f.tensor_map()
    f = f.set(MapField.ELEMTYPE, 7)  # .f32 (Table 33)
    with pytest.raises(UnsetField, match="swizzle_mode"):
        f.tensor_map()
    m = f.set(MapField.SWIZZLE_MODE, 0).tensor_map()
    assert m.dtype is ElementType.FLOAT32 and m.interleave is Interleave.NONE and m.oob_fill is OobFill.ZERO
    with pytest.raises(TensorMapError, match="Table 14"):
        f.set(MapField.SWIZZLE_MODE, 1).set(MapField.SWIZZLE_ATOMICITY, 3).tensor_map()
