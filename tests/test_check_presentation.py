"""What `volta check` tells a person: the headline verdict names the cause, every site points at a
real PTX line (and the CUDA/Triton line from `.loc`), witnesses name buffers and elements, a
time limit says what was and was not executed, a fallback of the symbolic grid is said in text,
and a launch that gives the kernel too little shared memory is bad input, not a kernel bug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from volta.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
REGRESSION = ROOT / "tests" / "regression"


def volta(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback for volta {' '.join(map(str, args))}: {result.exception!r}"
    return result


# ---------------------------------------------------------------- defect 4: a barrier in a branch
def test_divergent_barrier_is_the_headline_with_its_line_and_all_threads():
    case = REGRESSION / "barrier_in_branch_first_warps.ptx"
    r = volta("check", case, "--json")
    report = json.loads(r.stdout)
    assert report["verdict"] == "divergence" and r.exit_code == 1
    div = report["findings"][0]
    assert div["kind"] == "divergence"
    assert "192 thread(s)" in div["message"] and "64-255" in div["message"], div["message"]
    bar_line = next(i for i, line in enumerate(case.read_text().splitlines(), 1)
                    if line.strip().startswith("bar.sync"))
    assert div["sites"][0]["ptx"].startswith(f"{case}:{bar_line}:"), div["sites"]
    assert div["sites"][0]["instruction"] == "bar.sync"
    assert any(f["kind"] == "race" for f in report["findings"][1:])   # the consequence is still shown
    text = volta("check", case).output
    assert "<end of kernel>" not in text and "<unknown>" not in text


# ---------------------------------------------------------------- defect 5: the time limit
def test_time_limit_says_how_far_it_got(tmp_path):
    spec = json.loads((EXAMPLES / "vector_add.json").read_text())
    spec["grid"] = [40000]
    spec["buffers"] = {n: {"dtype": "float32", "shape": [40000 * 256]} for n in ("x", "y", "out")}
    spec["params"] = ["x", "y", "out", 40000 * 256, 0, 0]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    r = volta("check", EXAMPLES / "vector_add.ptx", "--launch", path, "--grid", "enumerate", "--timeout", "1",
              "--json")
    report = json.loads(r.stdout)
    assert r.exit_code == 3 and report["verdict"].startswith("inconclusive: time limit of 1 s reached")
    assert "loop" not in report["verdict"]          # vector_add has no loop
    assert "of 40000 CTAs" in report["verdict"]
    launch = report["assumptions"][0]
    assert "all 40000 CTA(s) executed" not in launch and "of 40000 CTAs" in launch, launch


def test_time_limit_in_a_loop_names_the_loop(tmp_path):
    ptx = tmp_path / "endless.ptx"
    from tests.test_cli import ENDLESS_SUM

    ptx.write_text(ENDLESS_SUM)
    r = volta("check", ptx, "--timeout", "1", "--json")
    report = json.loads(r.stdout)
    assert r.exit_code == 3 and "in the loop" in report["verdict"] and f"{ptx}:" in report["verdict"]


# ---------------------------------------------------------------- defect 6: the symbolic grid and `if (i < n)`
def test_guarded_cuda_kernel_is_covered_symbolically():
    r = volta("check", EXAMPLES / "saxpy.ptx", "--grid", "symbolic", "--json")
    report = json.loads(r.stdout)
    assert report["verdict"] == "race_free", report
    assert report["stats"]["grid_method"].startswith("symbolic"), report["stats"]
    assert not any("not applicable" in n for n in report["notes"])
    assert any("saxpy.ptx:40" in a and "as a guard" in a for a in report["assumptions"]), report["assumptions"]


def test_off_by_one_guard_is_found_symbolically_with_the_element():
    r = volta("check", EXAMPLES / "saxpy.ptx", "--entry", "saxpy_oob", "--grid", "symbolic", "--json")
    report = json.loads(r.stdout)
    assert report["verdict"] == "out_of_bounds" and r.exit_code == 1
    site = report["findings"][0]["sites"][0]
    assert site["cta"] == [3906, 0, 0] and site["thread"] == [64, 0, 0]
    assert site["address"] in ("x[1000000], one past the end of x (1000000 elements)",
                               "y[1000000], one past the end of y (1000000 elements)"), site
    assert site["source"] == "examples/saxpy.cu:13:5" or site["source"].endswith("saxpy.cu:13:5")


def test_enumerated_witness_names_the_right_cta(tmp_path):
    """The fault is in the last CTA of a grid run in several batches: the witness must name it."""
    spec = json.loads((EXAMPLES / "saxpy.json").read_text())
    spec.update(grid=[200], kernel="saxpy_oob")
    spec["buffers"] = {n: {"dtype": "float32", "shape": [51000]} for n in ("x", "y")}
    spec["params"] = [51000, {"float": 2.0}, "x", "y"]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    report = json.loads(volta("check", EXAMPLES / "saxpy.ptx", "--launch", path, "--grid", "enumerate",
                              "--json").stdout)
    site = report["findings"][0]["sites"][0]
    assert report["verdict"] == "out_of_bounds"
    assert (site["cta"], site["thread"]) == ([199, 0, 0], [56, 0, 0]), site


SCATTER = """// launch: {"grid": [80], "block": [32], "buffers": {"idx": {"dtype": "int32", "data": %s}, "out": {"dtype": "int32", "shape": [80]}}, "params": ["idx", "out"]}
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 idx, .param .u64 out)
{
	.reg .pred %%p<2>;
	.reg .b32 %%r<6>;
	.reg .b64 %%rd<6>;
	ld.param.u64 %%rd1, [idx];
	cvta.to.global.u64 %%rd1, %%rd1;
	ld.param.u64 %%rd2, [out];
	cvta.to.global.u64 %%rd2, %%rd2;
	mov.u32 %%r1, %%ctaid.x;
	mov.u32 %%r4, %%tid.x;
	setp.ne.u32 %%p1, %%r4, 0;
	@%%p1 bra END;
	mul.wide.u32 %%rd3, %%r1, 4;
	add.s64 %%rd3, %%rd1, %%rd3;
	ld.global.u32 %%r2, [%%rd3];
	mul.wide.u32 %%rd4, %%r2, 4;
	add.s64 %%rd4, %%rd2, %%rd4;
	st.global.u32 [%%rd4], %%r1;
END:
	ret;
}
""" % list(range(79, -1, -1))


def test_symbolic_fallback_is_said_in_text(tmp_path):
    """A scatter through an index loaded from memory: the symbolic grid cannot follow the address."""
    ptx = tmp_path / "scatter.ptx"
    ptx.write_text(SCATTER)
    r = volta("check", ptx, "--grid", "symbolic")
    # the address depends on input data: proved for the launch's input, and labelled so
    assert r.exit_code == 0 and "race_free: for the launch's input only" in r.output, r.output
    assert "note: symbolic grid not applicable" in r.output and "not a function of %ctaid" in r.output, r.output
    assert "all 80 CTAs were executed instead" in r.output


# ---------------------------------------------------------------- defect 9: too little shared memory
def test_a_build_with_less_shared_memory_is_bad_input(tmp_path):
    ptx = tmp_path / "gemm.ptx"
    assert volta("suite", "ptx", "gemm_fp16", "--arch", "sm_90a", "-o", ptx).exit_code == 0
    r = volta("check", ptx, "--contract", "gemm_fp16", "--arch", "sm_80")
    assert r.exit_code == 2, r.output
    assert "shared memory" in r.output and "65536" in r.output and "--arch" in r.output, r.output


# ---------------------------------------------------------------- defect 9: a missing extra
BLOCK_IMPORTS = """
import sys, importlib.abc
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
sys.argv = ['volta'] + sys.argv[1:]
from volta.cli import main
main()
"""


def without(blocked: set[str], *args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run the CLI in a fresh interpreter in which the named packages cannot be imported."""
    code = BLOCK_IMPORTS.format(blocked=blocked)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_contract_without_triton_names_the_extra():
    r = without({"triton", "torch"}, "check", EXAMPLES / "vector_add.ptx", "--contract", "relu")
    assert r.returncode == 2, r.stderr
    assert "pip install 'volta[triton]'" in r.stderr and "Traceback" not in r.stderr
    assert "attention" not in r.stderr
    r = without({"triton", "torch"}, "suite", "list")
    assert r.returncode == 2 and "volta[triton]" in r.stderr


@pytest.mark.parametrize("cmd", [
    ("parse", "examples/vector_add.ptx"),
    ("check", "examples/vector_add.ptx"),
    ("check", "examples/racy_reduction.ptx"),
    ("run", "examples/vector_add.ptx", "--launch", "examples/vector_add.json"),
])
def test_core_commands_need_no_extra(cmd):
    """The core install (no torch, triton, hypothesis, cuda-python or openai) runs parse, check
    --launch and run --launch."""
    r = without({"triton", "torch", "hypothesis", "cuda", "openai", "pytest"}, *cmd)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr


def test_regress_needs_no_extra(tmp_path):
    import shutil

    for name in ("smem_raw_missing_barrier.ptx", "smem_raw_with_barrier.ptx"):
        shutil.copy(REGRESSION / name, tmp_path / name)
    r = without({"triton", "torch", "hypothesis", "cuda", "openai", "pytest"}, "regress", tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "2 passed, 0 failed" in r.stdout
