"""Every suite kernel compiles ahead of time to PTX for all five targets, ptxas accepts it, and the
derived launch facts (entry, parameters, threads) agree with the contract; plus the AOT cache
and the ``volta suite`` CLI."""
from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import triton
from click.testing import CliRunner

from harness import suite
from harness.compile import ArchError, DescPart, compile_contract, parse_arch, ptx_entry
from harness.contract import ContractError, Tensor, TensorDesc, kernel_parameters
from volta.suite_cli import suite as suite_cli

ARCHES = ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"]
TARGETS = {"sm_80": "sm_80", "sm_89": "sm_89", "sm_90a": "sm_90a", "sm_100a": "sm_100a", "sm_120": "sm_120a"}
NAMES = [c.name for c in suite.all_contracts()]


def _ptxas() -> str:
    found = shutil.which("ptxas")
    if found:
        return found
    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("aot")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", NAMES)
def test_compiles_for_every_target(name, arch, cache, tmp_path):
    contract = suite.get(name)
    if parse_arch(arch) < contract.min_arch:
        pytest.skip(f"{name} needs sm_{contract.min_arch}+ (e.g. FP8 tensor cores); {arch} is below")
    r = compile_contract(contract, arch, "verify", directory=cache)
    assert r.target == TARGETS[arch]
    assert re.search(r"^\.version 9\.0$", r.ptx, re.M)
    assert r.entry == contract.kernel_name
    assert r.threads_per_block == 32 * r.num_warps
    # warp specialisation (tl.range(..., warp_specialize=True)) adds worker warps to the contract's
    assert r.num_warps == contract.num_warps or (r.num_warps > contract.num_warps and "setmaxnreg" in r.ptx)
    assert r.grid == contract.resolve("verify").grid
    # Parameters: the contract's runtime args in order (a tensor descriptor expands to several),
    # then Triton's hidden scratch pointers.
    sig = contract.triton_signature("verify")[0]
    runtime = [n for n, c in kernel_parameters(contract.kernel) if not c and sig[n] != "constexpr"]
    named = [p for p in r.params if p.arg is not None]
    assert r.params[:len(named)] == named
    assert list(dict.fromkeys(p.arg for p in named)) == runtime
    assert all(p.arg is None and p.ptx_type == "b64" or p.ptx_type == "u64" for p in r.params[len(named):])
    assert 1 <= len(r.params) - len(named) <= 2
    for p in named:
        arg = next(a for a in contract.args if a.name == p.arg)
        if isinstance(arg, TensorDesc):
            assert [(q.part, q.ptx_type) for q in named if q.arg == p.arg] == _desc_params(len(arg.shape), r.tensordesc)
        elif isinstance(arg, Tensor):
            assert p.ptx_type in ("u64", "b64")
        else:
            assert p.ptx_type in ("u32", "b32", "u64", "f32", "b64")
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        assert Path(r.paths[stage]).is_file()
    proc = subprocess.run([_ptxas(), f"-arch={r.ptxas_arch}", r.paths["ptx"], "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _desc_params(rank: int, tma: list) -> list:
    """The PTX parameters of a rank-`rank` tensor descriptor (harness.compile.DescPart)."""
    dims = lambda part, ty: [(part, ty)] * rank  # noqa: E731
    if tma:
        return [(DescPart.TENSOR_MAP, "b1024")] + dims(DescPart.SHAPE, "u32") + dims(DescPart.STRIDE, "u64")
    return ([(DescPart.BASE, "u64")] + dims(DescPart.SHAPE64, "u64") + dims(DescPart.STRIDE64, "u64")
            + [(DescPart.PADDING_NAN, "u8"), (DescPart.ROUND_TF32, "u8")] + dims(DescPart.SHAPE, "u32")
            + dims(DescPart.STRIDE, "u64"))


def test_bench_instance_compiles_for_hopper(cache):
    for c in suite.all_contracts():
        if c.min_arch > 90:
            continue
        r = compile_contract(c, "sm_90a", "bench", directory=cache)
        assert r.entry == c.kernel_name and r.grid == c.resolve("bench").grid


def test_below_min_arch_is_refused():
    with pytest.raises(ContractError, match="min_arch"):
        compile_contract(suite.get("gemm_fp8"), "sm_80")
    with pytest.raises(ArchError, match="unknown arch"):
        compile_contract(suite.get("relu"), "sm_75")


def test_cache_and_env(tmp_path, monkeypatch):
    monkeypatch.setenv("VOLTA_CACHE_DIR", str(tmp_path))
    c = suite.get("relu")
    first = compile_contract(c, "sm_100a")
    assert Path(first.paths["ptx"]).is_relative_to(tmp_path)
    Path(first.paths["ttir"]).write_text("sentinel")            # a hit must not recompile
    again = compile_contract(c, "sm_100a")
    assert again.key == first.key and again.ptx == first.ptx
    assert Path(again.paths["ttir"]).read_text() == "sentinel"
    # The key is the specialisation, not the instance name: relu's verify and bench builds are one
    # (n a multiple of 16 in both); an n that is not one is another build.
    assert compile_contract(c, "sm_100a", instance="bench").key == first.key
    other = compile_contract(_with_verify(c, N=2500), "sm_100a")
    assert other.key != first.key
    assert len(list(tmp_path.glob("*/*/meta.json"))) == 2


def _with_verify(c, **dims):
    """``c`` with other verify dims (the suite's own verify instances specialise like the bench)."""
    return dataclasses.replace(c, instances={**c.instances, "verify": {**c.instances["verify"], **dims}})


def test_divisibility_matches_a_real_launch(tmp_path):
    c = _with_verify(suite.get("relu"), N=2500)                # n = 2500 (verify), 2**26 (bench)
    verify = compile_contract(c, "sm_90a", "verify", directory=tmp_path)
    bench = compile_contract(c, "sm_90a", "bench", directory=tmp_path)
    ttir_v, ttir_b = (Path(r.paths["ttir"]).read_text() for r in (verify, bench))
    header = lambda t: next(line for line in t.splitlines() if "tt.func public" in line)
    assert header(ttir_v).count("tt.divisibility = 16") == 2   # the two pointers
    assert header(ttir_b).count("tt.divisibility = 16") == 3   # pointers and n


def test_ptx_entry_regex():
    name, params = ptx_entry(".visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_param_0,\n"
                             "\t.param .u32 k_param_1\n)\n{\n}")
    assert name == "k" and params == [("k_param_0", "u64", True), ("k_param_1", "u32", False)]
    name, params = ptx_entry(".visible .entry d(\n\t.param .align 64 .b8 d_param_0[128],\n\t.param .u32 d_param_1\n)")
    assert params == [("d_param_0", "b1024", False), ("d_param_1", "u32", False)]


# ---------------------------------------------------------------------------------------- CLI
def _cli(*args: str):
    return CliRunner().invoke(suite_cli, list(args), prog_name="suite")


def test_cli_list_and_show():
    r = _cli("list")
    assert r.exit_code == 0 and all(n in r.output for n in NAMES)
    r = _cli("show", "flash_attention")
    assert r.exit_code == 0 and "grid=(2, 2, 1)" in r.output and "fp16[B, H, S, D]" in r.output
    r = _cli("show", "gemm_fp8", "--json")
    assert r.exit_code == 0 and '"min_arch": "sm_89"' in r.output


@pytest.mark.parametrize("args, message", [
    (("show", "nope"), "unknown kernel 'nope'"),
    (("ptx", "nope"), "unknown kernel 'nope'"),
    (("ptx", "relu", "--arch", "sm_70"), "unknown arch 'sm_70'"),
    (("ptx", "gemm_fp8", "--arch", "sm_80"), "needs sm_89"),
])
def test_cli_errors_are_one_line(args, message):
    r = _cli(*args)
    assert r.exit_code == 2
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_ptx_output_file(tmp_path):
    out = tmp_path / "relu.ptx"
    r = _cli("ptx", "relu", "--arch", "sm_100a", "-o", str(out))
    assert r.exit_code == 0 and ".target sm_100a" in out.read_text()
    r = _cli("ptx", "relu", "--arch", "sm_80", "-o", str(out))
    assert r.exit_code == 2 and "exists" in r.output
    assert ".target sm_100a" in out.read_text()
    r = _cli("ptx", "relu", "--arch", "sm_80", "-o", str(out), "--force")
    assert r.exit_code == 0 and ".target sm_80" in out.read_text()
    r = _cli("ptx", "softmax", "--arch", "sm_120", "--instance", "bench")
    assert r.exit_code == 0 and ".target sm_120a" in r.output and ".entry softmax_kernel" in r.output
