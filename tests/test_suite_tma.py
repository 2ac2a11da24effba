"""The tensor-descriptor suite kernels (gemm_tma_persistent, gemm_tcgen05_ws, attention_tma,
gemm_block_scaled): what Triton 3.9 emits for host-side TensorDescriptors, the launch the harness
builds (CUtensorMap parameters as TensorMaps, Triton's boxes), the contract signature check, the
instructions each target gets, `volta run` on the emulator, and a broken tensor map caught.

The suite-wide tests (test_suite_ptx, test_suite_reference, test_emulator_suite, test_check_suite)
cover these contracts like every other; this file checks what is particular to descriptors."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import triton
import triton.language as tl
from click.testing import CliRunner

import ptx_parser
from harness import suite
from harness import emulate as E
from harness.compile import DescPart, compile_contract
from harness.contract import Contract, Scalar, Tensor
from harness.emulate import check_signature, emulate, launch_for
from symexec.tensormap import ElementType, L2Promotion, OobFill, Swizzle, TensorMap

def _ops(ptx: str) -> set[str]:
    return set(re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z_][\w.:]*)", ptx, re.M))


def test_triton_emits_a_cutensormap_then_sizes_and_strides():
    """Triton 3.9, sm_90a and sm_100a: a descriptor of rank r is `.param .align 64 .b8 p[128]`, then
    r .u32 sizes and r .u64 strides (elements, outermost first); two hidden .u64 pointers trail."""
    c = suite.get("gemm_tma_persistent")
    for arch in ("sm_90a", "sm_100a"):
        r = compile_contract(c, arch)
        head = r.ptx[r.ptx.index(".entry"):r.ptx.index(")")]
        assert head.count(".param .align 64 .b8") == 3
        assert [(p.arg, p.part, p.index, p.ptx_type) for p in r.params[:5]] == [
            ("a", DescPart.TENSOR_MAP, 0, "b1024"), ("a", DescPart.SHAPE, 0, "u32"), ("a", DescPart.SHAPE, 1, "u32"),
            ("a", DescPart.STRIDE, 0, "u64"), ("a", DescPart.STRIDE, 1, "u64")]
        assert [p.arg for p in r.params[15:]] == ["M", "N", "K", "SMS", None, None]
        # the tensor maps are read through cvta.param, by cp.async.bulk.tensor (no tensormap.replace)
        assert "cvta.param.u64" in r.ptx and "tensormap.replace" not in r.ptx
        # B's block [64, 128] is 256 bytes wide: Triton copies it as two 64 x 64 boxes (128B swizzle)
        assert [m["block_size"] for m in r.tensordesc] == [[128, 64], [64, 64], [128, 64]]
        assert {m["swizzle"] for m in r.tensordesc} == {3}


def test_launch_holds_the_maps_triton_encodes():
    c = suite.get("gemm_tma_persistent")
    compiled = compile_contract(c, "sm_90a")
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0), "verify")
    maps = launch.tensor_maps
    assert sorted(maps) == [0, 5, 10]
    assert maps[5] == TensorMap(ElementType.FLOAT16, (144, 144), (288,), (64, 64), (1, 1), swizzle=Swizzle.B128,
                                l2_promotion=L2Promotion.L2_128B, oob_fill=OobFill.ZERO, buffer="b")
    assert launch.params[6:10] == [144, 144, 144, 1]  # B's sizes and strides, as Triton's launcher passes them
    check_signature(c, compiled, ptx_parser.parse(compiled.ptx).kernels[0])


def test_signature_check_wants_the_aligned_128_byte_map():
    c = suite.get("gemm_tma_persistent")
    compiled = compile_contract(c, "sm_90a")
    bad = compiled.ptx.replace(".param .align 64 .b8 gemm_tma_persistent_kernel_param_5[128]",
                               ".param .align 8 .b8 gemm_tma_persistent_kernel_param_5[128]")
    with pytest.raises(ValueError, match=r"tensor map of 'b' and must be `\.param \.align 64"):
        check_signature(c, compiled, ptx_parser.parse(bad).kernels[0])
    bad = compiled.ptx.replace(".param .align 64 .b8 gemm_tma_persistent_kernel_param_5[128]",
                               ".param .u64 gemm_tma_persistent_kernel_param_5")
    with pytest.raises(ValueError, match=r"b tensor_map \(\.align 64 \.b8\[128\]\)"):
        check_signature(c, compiled, ptx_parser.parse(bad).kernels[0])


@pytest.mark.parametrize("name, arch, want", [
    ("gemm_tma_persistent", "sm_90a", {"wgmma.mma_async", "cp.async.bulk.tensor.2d.shared::cta.global",
                                       "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"}),
    ("gemm_tcgen05_ws", "sm_100a", {"tcgen05.mma", "mbarrier.try_wait", "cp.async.bulk.tensor.2d.shared::cta.global",
                                    "setmaxnreg", "brx.idx"}),
    ("attention_tma", "sm_100a", {"tcgen05.mma", "cp.async.bulk.tensor.4d.shared::cta.global",
                                  "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"}),
    ("gemm_block_scaled", "sm_100a", {"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32",
                                      "tcgen05.st.sync.aligned.32x32b.x4", "cp.async.bulk.tensor.2d.shared::cta.global"}),
])
def test_targets_get_tma_and_the_tensor_cores(name, arch, want):
    ops = _ops(compile_contract(suite.get(name), arch).ptx)
    for w in want:
        assert any(o.startswith(w) for o in ops), f"{name} on {arch}: no {w}"
    if name == "gemm_block_scaled":
        assert not any(o.startswith("tcgen05.cp") for o in ops)  # the scales reach TMEM through tcgen05.st


def test_warp_specialisation_adds_worker_warps():
    r = compile_contract(suite.get("gemm_tcgen05_ws"), "sm_100a")
    assert r.num_warps == 8 and r.threads_per_block == 256 and ".reqntid 256" in r.ptx


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_without_tma_descriptors_are_decomposed(arch):
    """Below sm_90 Triton lowers descriptors to pointer arithmetic: base, sizes and strides, flags."""
    c = dataclasses.replace(suite.get("gemm_tma_persistent"), min_arch=80)
    r = compile_contract(c, arch)
    assert not r.tensordesc and "cp.async.bulk.tensor" not in r.ptx
    assert [p.part for p in r.params[:3]] == [DescPart.BASE, DescPart.SHAPE64, DescPart.SHAPE64]
    assert emulate(c, arch).ok


def test_a_wrong_tensor_map_is_caught(monkeypatch):
    """The same PTX with the maps' swizzle dropped reads the tiles scrambled: the emulator's answer
    depends on the tensor map, and the comparison catches it."""
    c = suite.get("gemm_tma_persistent")
    assert emulate(c, "sm_90a").ok
    real = E.descriptor_map
    monkeypatch.setattr(E, "descriptor_map", lambda *a: dataclasses.replace(real(*a), swizzle=Swizzle.NONE))
    assert not emulate(c, "sm_90a").ok


@pytest.mark.parametrize("name, arch", [("gemm_tma_persistent", "sm_90a"), ("gemm_tcgen05_ws", "sm_100a"),
                                        ("attention_tma", "sm_100a"), ("gemm_block_scaled", "sm_100a"),
                                        ("gemm_block_scaled", "sm_120")])
def test_volta_run_matches_the_reference(name, arch, tmp_path):
    from volta.run_cli import run_cmd
    from volta.suite_cli import suite as suite_cli

    ptx = tmp_path / f"{name}.ptx"
    r = CliRunner().invoke(suite_cli, ["ptx", name, "--arch", arch, "-o", str(ptx)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(run_cmd, [str(ptx), "--contract", name, "--json"])
    assert r.exit_code == 0, r.output
    assert '"ok": true' in r.output


def test_nan_padding_is_a_fill_mode():
    c = suite.get("attention_tma")
    d = dataclasses.replace(next(a for a in c.args if a.name == "k"), padding="nan")
    m = E.descriptor_map(c.name, d, (1, 2, 144, 64), compile_contract(c, "sm_90a").tensordesc[1])
    assert m.oob_fill is OobFill.NAN_REQUEST_ZERO_FMA and m.box_dims == (64, 64, 1, 1)
    assert np.prod(m.box_counts()) * 2 == m.box_bytes() == 8192


# ---------------------------------------------------------------------- descriptors built on the device

@triton.jit
def _device_desc_add_one(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    xd = tl.make_tensor_descriptor(x, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm, pn = tl.program_id(0), tl.program_id(1)
    yd.store([pm * BM, pn * BN], xd.load([pm * BM, pn * BN]) + 1.0)


DEVICE_DESC = Contract(
    name="device_desc_add_one", description="y = x + 1 through tl.make_tensor_descriptor", kernel=_device_desc_add_one,
    args=[Tensor("x", "fp32", ("M", "N")), Tensor("y", "fp32", ("M", "N"), role="out"), Scalar("M", "i32", "M"),
          Scalar("N", "i32", "N")],
    constexprs={"BM": 64, "BN": 32}, grid=lambda d: (triton.cdiv(d["M"], 64), triton.cdiv(d["N"], 32), 1),
    reference=lambda x: {"y": x.astype(np.float64) + 1.0}, min_arch=90,
    instances={"verify": {"M": 80, "N": 48}, "bench": {"M": 4096, "N": 4096}})


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_descriptors_built_on_the_device(arch):
    """Triton 3.9's tl.make_tensor_descriptor: a warp zero-fills 128 bytes of shared memory, thread 0
    sets the fields with tensormap.replace (global_address, rank, box_dim, global_dim, global_stride,
    element_stride, elemtype, swizzle_mode; never interleave, atomicity or fill), the warp copies the
    map to the program's slot of Triton's global scratch with tensormap.cp_fenceproxy, then
    fence.proxy.tensormap::generic.acquire; launch_for allocates that scratch."""
    compiled = compile_contract(DEVICE_DESC, arch)
    assert compiled.global_scratch_size == 256 and not compiled.tensordesc
    fields = set(re.findall(r"tensormap\.replace\.tile\.(\w+)\.", compiled.ptx))
    assert fields == {"global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
                      "elemtype", "swizzle_mode"}
    assert "tensormap.cp_fenceproxy" in compiled.ptx
    launch = launch_for(DEVICE_DESC, compiled, DEVICE_DESC.make_inputs(), "verify")
    assert launch.buffers[E.GLOBAL_SCRATCH].nbytes == 256 * 2 * 2
    assert emulate(DEVICE_DESC, arch).ok
