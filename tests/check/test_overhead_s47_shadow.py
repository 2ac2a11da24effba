"""Stop 47 (issue 10 item 2, check mode within 3x of plain emulation): exact fast paths of the value shadows.

- `_LoadElements.numbers`: a vector load's elements numbered from their bytes in one pass over every element; each
  element's number equals the per-element rule (`Tracker._element` on that element's bytes), on every lane.
- `_LoadElements._all_whole`: `plain`'s two whole-array tests equal every(whole).
- `PagedArray.dense` of an array with no page made: every page's fill at once, the same elements as page by page.
- `PageLayout._table`: the chunked page table takes the pages made through the direct one when it is read.
- `Tracker._input`: the union of the inputs' taints may start as a register's own taint array (not a copy): the
  registers' taints are never changed by it, and the union is the inputs' OR.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import shadow
from symexec.check.shadow import DATA, SCHED, Tracker, key_of, mix
from symexec.paged import PAGE, PAGE_SHIFT as PAGE_SHIFT_, PagedArray, constant, element_indices, from_array


def _load(n: int, nb: int, m: int, seed: int, taint: str, shape: str):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 3, (n, m)).astype(np.uint64)  # few values: lanes share numbers
    bh = np.repeat(mix(key_of("v"), values.reshape(-1)).reshape(n, m), nb, axis=1)
    bp = np.tile(shadow._expected_positions(nb), (n, m))
    if shape != "whole":  # bytes of several values, a value's bytes out of place, untouched input bytes
        sel = rng.random((n, m * nb)) < (1.0 if shape == "parts" else 0.2)
        bh = np.where(sel, rng.integers(0, 2**63, (n, m * nb), dtype=np.uint64), bh)
        bp = np.where(rng.random((n, m * nb)) < (1.0 if shape == "parts" else 0.1), np.uint8(0xFF), bp).astype(np.uint8)
    lanes = rng.random(n) < 0.7  # a masked load: the other lanes' bytes are zeros
    bt = {"all": np.full((n, m * nb), DATA, np.uint8), "none": np.zeros((n, m * nb), np.uint8),
          "some": (rng.random((n, m * nb)) < 0.5).astype(np.uint8) * DATA,
          "masked": np.where(lanes[:, None], DATA | (rng.random((n, m * nb)) < 0.1) * SCHED, 0).astype(np.uint8)}[taint]
    if taint == "masked":
        bh = np.where(lanes[:, None], bh, np.uint64(0))
        bp = np.where(lanes[:, None], bp, np.uint8(0)).astype(np.uint8)
    return rng, bh, bp, bt


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.sampled_from([1, 2, 4, 8]), st.integers(1, 4), st.integers(0, 2**32 - 1),
       st.sampled_from(["all", "none", "some", "masked"]), st.sampled_from(["whole", "parts", "mixed"]))
def test_load_elements_numbers_equal_the_per_element_rule(n: int, nb: int, m: int, seed: int, taint: str,
                                                           shape: str) -> None:
    rng, bh, bp, bt = _load(n, nb, m, seed, taint, shape)
    tr = Tracker(n)
    got = shadow._LoadElements(bh, bp, bt, nb)
    assert got.plain == (bool((got.taint != 0).all()) and bool(got.whole.all()))
    assert got._all_whole() == bool(got.whole.all())
    for j in range(m):
        value = np.where(rng.random(n) < 0.5, 0, rng.integers(0, 2**32, n)).astype(np.uint32)
        cols = slice(j * nb, (j + 1) * nb)
        fast = tr._element_of(got, j, value)
        rule = tr._element(bh[:, cols], bp[:, cols], bt[:, cols], value, 8 * nb)
        if rule[0] is None:
            assert fast[0] is None and fast[1] is None
            continue
        assert np.array_equal(fast[0], rule[0]) and np.array_equal(fast[1], rule[1])
        assert fast[0].dtype == np.uint64 and fast[1].dtype == np.uint8


def _fill_fn(kind: str, size: int, seed: int):
    if kind == "constant":
        return constant(7, np.int32), np.int32
    if kind == "array":
        return from_array(np.random.default_rng(seed).integers(0, 255, size, dtype=np.uint8)), np.uint8

    def numbered(pages: np.ndarray) -> np.ndarray:  # as MemShadow's hash: a function of the element index
        return mix(key_of("t"), np.uint64(seed), element_indices(pages).astype(np.uint64))

    return numbered, np.uint64


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6 * PAGE + 3), st.sampled_from(["constant", "array", "numbered"]), st.integers(0, 2**16),
       st.booleans(), st.lists(st.integers(0, 6 * PAGE + 2), max_size=6))
def test_dense_of_an_untouched_array_is_every_page_fill(size: int, kind: str, seed: int, whole_pages: bool,
                                                        touch: list[int]) -> None:
    fill, dtype = _fill_fn(kind, size, seed)
    fresh = PagedArray(size, dtype, fill)
    touched = PagedArray(size, dtype, fill)
    idx = np.array([t % size for t in touch], np.int64)
    if idx.size:  # the other path: some pages made first, the rest filled at dense()
        assert np.array_equal(touched[idx], fill(idx // PAGE)[np.arange(idx.size), idx % PAGE])
    want = np.concatenate([fill(np.array([p], np.int64)).reshape(-1) for p in range(-(-size // PAGE))])
    want = want if whole_pages else want[:size]
    for arr in (fresh, touched):
        got = arr.dense(whole_pages)
        assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)
    fresh[np.array([0])] = fresh[np.array([0])]  # still writable, backed by the dense array
    assert fresh.made_pages().size == -(-size // PAGE)


def test_taint_union_never_changes_a_register_taint() -> None:
    """The union starts as the first input's own array; later inputs make a new one; a register read twice
    adds nothing."""
    n = 64
    tr = Tracker(n)
    a = np.where(np.arange(n) % 2 == 0, DATA, 0).astype(np.uint8)
    b = np.where(np.arange(n) % 3 == 0, SCHED, 0).astype(np.uint8)
    keep_a, keep_b = a.copy(), b.copy()
    for r, t in (("%r1", a), ("%r2", b)):
        tr.reg_hash[r] = tr.reg_real[r] = mix(key_of(r), np.arange(n, dtype=np.uint64))
        tr.reg_taint[r] = t
    import ptx_parser
    from symexec import load_program

    prog = load_program(ptx_parser.parse(""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(){
 .reg .b32 %r<5>;
 add.s32 %r3, %r1, %r2;
 add.s32 %r4, %r1, %r1;
 ret;
}""", "k.ptx"), "k")
    value = np.arange(n, dtype=np.uint32)
    for ins, srcs, want in ((prog.code[0], ("%r1", "%r2"), a | b), (prog.code[1], ("%r1", "%r1"), a)):
        tr.begin(ins)
        for r in srcs:
            tr.on_read_reg(r, value, 32)
        assert np.array_equal(tr.in_taint, want)
        tr.on_write_reg("%r9", value, 32, np.ones(n, bool), True)
        assert np.array_equal(tr.reg_taint["%r9"], want) and tr.reg_taint["%r9"] is not a
    assert np.array_equal(a, keep_a) and np.array_equal(b, keep_b)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9 * PAGE), st.lists(st.lists(st.integers(0, 9 * PAGE - 1), min_size=1, max_size=12), min_size=1,
                                            max_size=8), st.integers(0, 8))
def test_chunked_page_table_is_made_lazily_and_agrees_with_the_direct_one(size: int, accesses: list[list[int]],
                                                                          switch: int) -> None:
    """PageLayout keeps pages made through its direct table out of the chunked one until that is read
    (`_table`): read at any point, both give every made page its slot, and an array indexed first through the
    direct table and then (from access `switch` on) through the chunked one is the array it stands for."""
    init = (np.arange(size) * 37 % 251).astype(np.uint8)
    arr = PagedArray(size, np.uint8, from_array(init))
    lay = arr._layout
    for i, acc in enumerate(accesses):
        if i == switch:  # from here on the chunked table's way (as for an array of more than DIRECT_PAGES pages)
            lay._direct_pages, lay._direct = False, None
        idx = np.array([a % size for a in acc], np.int64)
        assert np.array_equal(arr[idx], init[idx])
        made = lay.pages[:lay.used]
        assert np.array_equal(lay._table()[made], np.arange(lay.used, dtype=np.int32))
        assert np.unique(made).size == made.size  # no page made twice
        if lay._direct is not None:
            assert np.array_equal(lay._direct[made] >> PAGE_SHIFT_, np.arange(lay.used))
    assert np.array_equal(arr.dense(), init)
