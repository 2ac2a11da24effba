"""Memory that costs what is touched (symexec.paged, harness.inputs lazy tensors) changes no result.

- PagedArray behaves as the numpy array it stands for under any sequence of reads and writes
  (hypothesis), and creates only the pages it is asked for;
- a lazily generated input has, at any indices, the values the whole tensor has there, and its
  device bytes are those of the whole tensor;
- every suite contract gives the same `volta check` report and the same `volta run` outputs
  with lazy buffers as with whole arrays.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from harness import inputs
from harness.compile import compile_contract
from harness.emulate import DeviceBytes, launch_for, to_device
from harness.suite import all_contracts
from symexec import load_program, run_kernel
from symexec.check import check_kernel
from symexec.paged import PAGE, PageLayout, PagedArray, ZeroBytes, byte_fill, constant, element_indices, from_array

CONTRACTS = {c.name: c for c in all_contracts()}


# ---------------------------------------------------------------------------------- PagedArray
@st.composite
def _ops(draw):
    size = draw(st.integers(1, 5 * PAGE + 17))
    ops = []
    for _ in range(draw(st.integers(1, 12))):
        shape = draw(st.sampled_from([(1,), (7,), (3, 4), (5, 2)]))
        idx = draw(st.lists(st.integers(0, size - 1), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        write = draw(st.booleans())
        vals = draw(st.lists(st.integers(0, 255), min_size=len(idx), max_size=len(idx))) if write else None
        ops.append((write, np.array(idx).reshape(shape), None if vals is None else np.array(vals).reshape(shape)))
    return size, ops, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(_ops())
def test_paged_array_is_the_array_it_stands_for(case) -> None:
    size, ops, densify_midway = case
    init = (np.arange(size) * 37 % 251).astype(np.uint8)
    ref = init.copy()
    pa = PagedArray(size, np.uint8, from_array(init))
    for i, (write, idx, vals) in enumerate(ops):
        if densify_midway and i == len(ops) // 2:
            assert np.array_equal(pa.dense(), ref)
        if write:
            ref[idx] = vals
            pa[idx] = vals
        else:
            assert np.array_equal(pa[idx], ref[idx])
    assert np.array_equal(pa.dense(), ref)
    assert np.array_equal(init, (np.arange(size) * 37 % 251).astype(np.uint8)), "the source was written"


@settings(max_examples=100, deadline=None)
@given(_ops(), st.booleans())
def test_paged_arrays_sharing_a_layout_are_the_arrays_they_stand_for(case, direct: bool) -> None:
    """Two arrays on one page layout (a memory shadow's columns, and termshadow._Mem on the check state's
    layout), indexed with the same index arrays and with others, by the layout's direct page table
    (PageLayout._direct, small arrays) or by its chunked one: each is the numpy array it stands for."""
    size, ops, _ = case
    init = (np.arange(size) * 37 % 251).astype(np.uint8)
    layout = PageLayout(size)
    if not direct:
        layout._direct = None  # the chunked table only (arrays of more than DIRECT_PAGES pages)
    a = PagedArray(size, np.uint8, from_array(init), layout)
    b = PagedArray(size, np.int64, constant(-3, np.int64), layout)
    ra, rb = init.copy(), np.full(size, -3, np.int64)
    for i, (write, idx, vals) in enumerate(ops):
        if write:
            ra[idx] = vals
            a[idx] = vals
            rb[idx[..., ::-1]] = i  # another index array: located anew
            b[idx[..., ::-1]] = i
        else:  # the same array for both: the second finds the first's translation
            assert np.array_equal(a[idx], ra[idx]) and np.array_equal(b[idx], rb[idx])
    assert np.array_equal(a.dense(), ra) and np.array_equal(b.dense(), rb)


def test_paged_array_makes_only_touched_pages() -> None:
    calls: list[np.ndarray] = []

    def fill(pages: np.ndarray) -> np.ndarray:
        calls.append(pages.copy())
        return element_indices(pages).astype(np.uint64)

    pa = PagedArray(1 << 30, np.uint64, fill)  # 8 GiB if it were whole
    got = pa[np.array([[5, PAGE * 1000 + 3], [PAGE * 1000 + 4, (1 << 30) - 1]])]
    assert got.tolist() == [[5, PAGE * 1000 + 3], [PAGE * 1000 + 4, (1 << 30) - 1]]
    assert pa.pages_touched == 3 and sorted(np.concatenate(calls).tolist()) == [0, 1000, (1 << 30) // PAGE - 1]
    pa[np.array([6])] = 99
    assert pa[np.array([6, 5])].tolist() == [99, 5] and pa.pages_touched == 3 and len(calls) == 1


def test_zero_bytes_and_arrays_fill_pages() -> None:
    assert not byte_fill(ZeroBytes(10))(np.array([0, 3])).any()
    arr = np.arange(300, dtype=np.uint16)
    pages = byte_fill(arr)(np.array([0, 2]))
    raw = arr.view(np.uint8)
    assert np.array_equal(pages[0], raw[:PAGE]) and np.array_equal(pages[1][: raw.size - 2 * PAGE], raw[2 * PAGE:])
    assert not pages[1][raw.size - 2 * PAGE:].any()


# ------------------------------------------------------------------------------- lazy inputs
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "i8", "i32", "u8", "i64"])
@pytest.mark.parametrize("dist", ["normal", "large", "tiny", "special", "cancel", "uniform"])
def test_lazy_input_values_are_the_whole_tensors(dtype: str, dist: str) -> None:
    from harness.dtypes import dtype as dt_of

    if not dt_of(dtype).is_float and dist != "uniform":
        pytest.skip("integers have one distribution")
    shape = (37, 129)
    whole = inputs.generate("x", dtype, shape, dist, 3, None, 100.0)
    lazy = inputs.lazy_input("x", dtype, shape, dist, 3, None, 100.0)
    idx = np.random.default_rng(0).integers(0, whole.size, 500)
    assert np.array_equal(lazy.values(idx), whole.reshape(-1)[idx], equal_nan=True)
    assert np.array_equal(np.asarray(lazy), whole, equal_nan=True)
    dev = DeviceBytes(lazy)
    raw = to_device(whole, dtype).view(np.uint8).reshape(-1)
    pages = np.array([0, 5, raw.size // PAGE])
    got = dev.fill(pages)
    for row, p in zip(got, pages.tolist()):
        part = raw[p * PAGE:(p + 1) * PAGE]
        assert np.array_equal(row[: part.size], part) and not row[part.size:].any()
    other = inputs.generate("x", dtype, shape, dist, 4, None, 100.0)
    assert not np.array_equal(whole, other, equal_nan=True), "the seed changes the inputs"


def test_generated_inputs_have_their_distribution() -> None:
    x = inputs.generate("x", "fp32", (1 << 16,), "normal", 0).astype(np.float64)
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    c = inputs.generate("x", "fp32", (64, 9), "cancel", 0).astype(np.float64)
    assert np.allclose(c[:, 1:8:2], -c[:, 0:8:2], rtol=1e-2) and not np.allclose(c[:, 8], -c[:, 7], rtol=1e-2)
    i = inputs.generate("n", "i8", (4096,), "uniform", 0)
    assert i.min() == -128 and i.max() == 127


# --------------------------------------------------------------- suite: same results, lazily
def _comparable(report) -> dict:
    d = report.to_json()
    d["stats"] = {k: v for k, v in d["stats"].items() if "second" not in k and "time" not in k}
    return d


@pytest.mark.parametrize("arch", ["sm_80", "sm_100a"])
@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_suite_check_and_run_are_unchanged_by_lazy_buffers(name: str, arch: str) -> None:
    c = CONTRACTS[name]
    if int(arch[3:].rstrip("a")) < c.min_arch:
        pytest.skip(f"{name} needs sm_{c.min_arch}")
    compiled = compile_contract(c, arch)
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
    dense = launch_for(c, compiled, c.make_inputs("verify", "normal", 0), "verify")
    lazy = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    assert any(isinstance(b, DeviceBytes) for b in lazy.buffers.values())
    assert _comparable(check_kernel(prog, lazy)) == _comparable(check_kernel(prog, dense))
    if arch == "sm_80":  # the emulator's results (volta run): every output byte
        g_dense, _, _ = run_kernel(prog, dense)
        g_lazy, _, _ = run_kernel(prog, lazy)
        for t in c.tensors:
            assert np.array_equal(g_lazy.by_name(t.name).data, g_dense.by_name(t.name).data), t.name


def test_a_negative_index_does_not_alias_the_last_page() -> None:
    """An element index below 0 is made in the chunked page table only: writing the direct table at a negative
    page wrapped onto the array's last page, which then read the negative page's values (found at stop 47)."""
    a = PagedArray(1024, np.int32, lambda p: (p[:, None] * PAGE + np.arange(PAGE)).astype(np.int32))
    a[np.array([-5])] = 777
    assert a[np.array([-5])].tolist() == [777]
    assert a[np.array([1000])].tolist() == [1000]
    assert a[np.arange(1024)].tolist() == list(range(1024))
