"""`volta check`, `volta run` and `volta regress` end to end through the CLI: verdicts, exit codes
(0 proved, 1 bug, 2 bad input, 3 undecided), JSON and SARIF output, and bad input answered with a
message instead of a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from volta.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
REGRESSION = ROOT / "tests" / "regression"

TEXREF_KERNEL = """// launch: {"grid": [1], "block": [32], "params": []}
.version 8.5
.target sm_90a
.address_size 64

.global .texref tex0;

.visible .entry k()
{
	.reg .b32 %r<6>;
	mov.u32 %r1, %tid.x;
	tex.1d.v4.s32.s32 {%r2, %r3, %r4, %r5}, [tex0, {%r1}];
	ret;
}
"""


def volta(*args: str):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback for volta {' '.join(map(str, args))}: {result.exception!r}"
    return result


def test_check_proves_the_example_race_free():
    r = volta("check", EXAMPLES / "vector_add.ptx")
    assert r.exit_code == 0, r.output
    assert "vector_add: race_free" in r.output
    assert "assumptions:" in r.output and "launch: grid (4, 1, 1), block (128, 1, 1)" in r.output


def test_check_shows_a_race_witness():
    r = volta("check", EXAMPLES / "racy_reduction.ptx")
    assert r.exit_code == 1
    assert "block_sum: race" in r.output
    # both sides of the race: thread, instruction, address and PTX line:col
    assert "thread (1, 0, 0): write st.shared.f32 of shared partial[1] (0x4) at" in r.output
    assert "read ld.shared.f32 of shared partial[1] (0x4) at" in r.output and "racy_reduction.ptx:39:" in r.output


def test_check_json_and_sarif(tmp_path):
    sarif = tmp_path / "out.sarif"
    r = volta("check", EXAMPLES / "racy_reduction.ptx", "--json", "--sarif", sarif)
    assert r.exit_code == 1
    report = json.loads(r.stdout)
    assert report["verdict"] == "race" and report["exit_code"] == 1
    sites = report["findings"][0]["sites"]
    assert {s["thread"][0] for s in sites} == {0, 1} and all(s["ptx"].startswith(str(EXAMPLES)) for s in sites)
    log = json.loads(sarif.read_text())
    assert log["version"] == "2.1.0"
    result = log["runs"][0]["results"][0]
    assert result["level"] == "error" and "race" in result["message"]["text"]
    # the SARIF log is never overwritten
    before = sarif.read_text()
    r = volta("check", EXAMPLES / "racy_reduction.ptx", "--sarif", sarif)
    assert r.exit_code == 2 and "exists" in r.output and sarif.read_text() == before


def test_check_with_a_contract(tmp_path):
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    r = volta("check", ptx, "--contract", "relu")
    assert r.exit_code == 0 and "relu_kernel: race_free" in r.output
    # A candidate may drop Triton's hidden trailing scratch pointers.
    text = ptx.read_text()
    trimmed = tmp_path / "relu_trimmed.ptx"
    trimmed.write_text(text.replace(",\n\t.param .u64 .ptr .global .align 1 relu_kernel_param_4", "")
                       .replace(",\n\t.param .u64 .ptr .global .align 1 relu_kernel_param_3", ""))
    assert trimmed.read_text() != text
    r = volta("check", trimmed, "--contract", "relu")
    assert r.exit_code == 0 and "race_free" in r.output


@pytest.mark.parametrize("edit, message", [
    # the scalar n declared as a 64-bit integer
    (("relu_kernel_param_2", ".u32 relu_kernel_param_2", ".u64 relu_kernel_param_2"),
     "parameter 2 (relu_kernel_param_2) is .u64, but contract relu passes argument 'n' there, a .u32 scalar"),
    # the scalar n declared as a float
    (("relu_kernel_param_2", ".u32 relu_kernel_param_2", ".f32 relu_kernel_param_2"),
     "is .f32, but contract relu passes argument 'n' there"),
])
def test_check_refuses_a_kernel_whose_parameters_do_not_fit_the_contract(tmp_path, edit, message):
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    _, old, new = edit
    bad = tmp_path / "bad.ptx"
    bad.write_text(ptx.read_text().replace(old, new))
    r = volta("check", bad, "--contract", "relu")
    assert r.exit_code == 2 and message in r.output, r.output


def test_check_refuses_a_different_kernel_for_a_contract():
    r = volta("check", EXAMPLES / "vector_add.ptx", "--contract", "relu")
    assert r.exit_code == 2
    assert "vector_add_param_2" in r.output and "argument 'n'" in r.output
    r = volta("run", EXAMPLES / "vector_add.ptx", "--contract", "relu")
    assert r.exit_code == 2 and "argument 'n'" in r.output


def test_check_arch_selects_the_contract_build(tmp_path):
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    assert volta("check", ptx, "--contract", "relu", "--arch", "sm_100a").exit_code == 0
    r = volta("check", ptx, "--contract", "relu", "--arch", "sm_75")
    assert r.exit_code == 2 and "unknown arch 'sm_75'" in r.output


def test_unmodelled_feature_is_unsupported_not_a_traceback(tmp_path):
    ptx = tmp_path / "tex.ptx"
    ptx.write_text(TEXREF_KERNEL)
    r = volta("check", ptx)
    assert r.exit_code == 3
    assert "unsupported: .texref variable tex0" in r.output and f"{ptx}:6:1" in r.output
    spec = tmp_path / "launch.json"
    spec.write_text('{"grid": [1], "block": [32], "params": []}')
    r = volta("run", ptx, "--launch", spec)
    assert r.exit_code == 3 and "unsupported: .texref variable tex0" in r.output


_PARAMS = '"params": ["a", "a", "a", 1, 0, 0], "buffers": {"a": {"dtype": "float32", "shape": [4]}}'


@pytest.mark.parametrize("spec, message", [
    ('{"grid": "x", "block": [32], %s}' % _PARAMS, "grid: expected 1 to 3 positive integers, got 'x'"),
    ('{"grid": [0], "block": [32], %s}' % _PARAMS, "grid[0]: expected a positive integer, got 0"),
    ('{"grid": [1, 70000], "block": [32], %s}' % _PARAMS, "grid[1]: 70000 exceeds CUDA's limit of 65535"),
    ('{"grid": [1], "block": [2048], %s}' % _PARAMS, "block[0]: 2048 exceeds CUDA's limit of 1024"),
    ('{"grid": [1], "block": [32, 32, 2], %s}' % _PARAMS, "has 2048 threads; at most 1024"),
    ('{"grid": [1], "block": [32], "params": 3}', "params: expected a list of the kernel's parameter values, got 3"),
    ('{"grid": [1], "block": [32], %s, "dynamic_shared_bytes": 99999999999}' % _PARAMS,
     "dynamic_shared_bytes: 99999999999 exceeds CUDA's limit of 232448"),
    ('{"grid": [1], "block": [32], "params": [], "buffers": [1]}', "buffers: expected an object of name -> buffer"),
    ('{"grid": [1], "block": [32], "params": [], "buffers": {"a": 3}}', "buffers.a: expected an object"),
    ('{"grid": [1], "block": [32], "params": [], "buffers": {"a": {"dtype": "float32", "shape": [-1]}}}',
     "buffers.a.shape[0]: expected a non-negative integer, got -1"),
    ('{"grid": [1], "block": [32], "params": ["a", "a", "a", 1, 0, 0], '
     '"buffers": {"a": {"dtype": "float32", "shape": [100000000000]}}}', "buffers.a: 400000000000 bytes"),
    ('{"grid": [1], "block": [32], "params": [], "buffers": {"a": {"dtype": "f32", "shape": [4]}}}',
     "buffers.a.dtype: unknown dtype 'f32'"),
    ('{"grid": [1], "block": [32], "params": [1]}', "params: the kernel has 6 parameters"),
    ('{"grid": [1], "block": [32]', "invalid JSON"),
    ('[]', "the launch spec must be a JSON object"),
    ('{"grid": [1], "block": [32], %s, "grids": [1]}' % _PARAMS, "(top level): unknown field 'grids'"),
])
def test_bad_launch_specs_are_named(tmp_path, spec, message):
    path = tmp_path / "spec.json"
    path.write_text(spec)
    for cmd in ("check", "run"):
        r = volta(cmd, EXAMPLES / "vector_add.ptx", "--launch", path)
        assert r.exit_code == 2, (cmd, r.output)
        assert message in r.output, (cmd, r.output)


def test_huge_grids_are_covered_symbolically_or_refused(tmp_path):
    """10^8 CTAs: the symbolic grid runs two of them (and finds Triton's int32 offset overflow in
    the last CTA as an out-of-bounds access); enumerating them is refused as inconclusive."""
    spec = {"grid": [100_000_000], "block": [128], "params": ["a", "b", "c", 10, 0, 0],
            "buffers": {n: {"dtype": "float32", "shape": [10]} for n in "abc"}}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    r = volta("check", EXAMPLES / "vector_add.ptx", "--launch", path, "--json")
    report = json.loads(r.stdout)
    assert report["verdict"] == "out_of_bounds" and r.exit_code == 1
    assert report["findings"][0]["sites"][0]["cta"] == [99_999_999, 0, 0]
    r = volta("check", EXAMPLES / "vector_add.ptx", "--launch", path, "--grid", "enumerate")
    assert r.exit_code == 3 and "inconclusive: enumerating 100000000 CTAs" in r.output


def test_bad_ptx_and_missing_files(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k() { add.u32 %r1, ; }\n")
    r = volta("check", bad)
    assert r.exit_code == 2 and f"{bad}:4:" in r.output and "error" in r.output
    r = volta("check", tmp_path / "missing.ptx", "--contract", "relu")
    assert r.exit_code == 2 and "cannot read file" in r.output
    r = volta("check", EXAMPLES / "matmul_fp16_sm100a.ptx")
    assert r.exit_code == 2 and "no launch given" in r.output


def test_run_compares_with_the_contract_and_never_overwrites(tmp_path):
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    r = volta("run", ptx, "--contract", "relu")
    assert r.exit_code == 0, r.output
    dump = tmp_path / "out.npz"
    dump.write_bytes(b"keep me")
    r = volta("run", ptx, "--contract", "relu", "--dump", dump)
    assert r.exit_code == 2 and dump.read_bytes() == b"keep me"


def test_regress_reports_mismatches(tmp_path):
    for name in ("smem_raw_missing_barrier.ptx", "smem_raw_with_barrier.ptx"):
        shutil.copy(REGRESSION / name, tmp_path / name)
    r = volta("regress", tmp_path, "--json")
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert {(row["file"], row["actual"]) for row in rows} == {
        ("smem_raw_missing_barrier.ptx", "race"), ("smem_raw_with_barrier.ptx", "race_free")}
    wrong = tmp_path / "smem_raw_missing_barrier.ptx"
    wrong.write_text(wrong.read_text().replace("// expect: race", "// expect: race_free", 1))
    r = volta("regress", tmp_path)
    assert r.exit_code == 1 and "MISMATCH" in r.output and "1 passed, 1 failed" in r.output



def test_regress_compares_the_whole_verdict_where_a_case_states_it(tmp_path):
    """`// verdict: race_free: for the launch's input only` is about how far a verdict reaches: a plain
    `race_free` (every input) does not match it, though the verdict kind does."""
    name = "tma_load_element_as_store_index_input_only.ptx"
    shutil.copy(REGRESSION / name, tmp_path / name)
    r = volta("regress", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)
    assert row["expected"] == row["actual"] == "race_free: for the launch's input only"
    case = tmp_path / name
    case.write_text(case.read_text().replace("// verdict: race_free: for the launch's input only",
                                             "// verdict: race_free", 1))
    r = volta("regress", tmp_path)
    assert r.exit_code == 1 and "MISMATCH" in r.output

ENDLESS_SUM = """// launch: {"grid": [1], "block": [32], "buffers": {"x": {"dtype": "int32", "shape": [1], "init": "ones"}}, "params": ["x"]}
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 x)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [x];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, 0;
LOOP:
	ld.global.u32 %r2, [%rd1];
	add.s32 %r1, %r1, %r2;
	bra LOOP;
}
"""


def test_an_endless_loop_ends_at_the_time_limit(tmp_path):
    """A loop whose registers never repeat (a running sum) cannot be recognised as endless; the
    time limit turns it into an undecided answer naming the instruction, not a hang."""
    ptx = tmp_path / "endless.ptx"
    ptx.write_text(ENDLESS_SUM)
    r = volta("check", ptx, "--timeout", "1")
    assert r.exit_code == 3
    assert "inconclusive: time limit of 1 s reached" in r.output and f"{ptx}:" in r.output
    spec = tmp_path / "launch.json"
    spec.write_text(ENDLESS_SUM.splitlines()[0].removeprefix("// launch: "))
    r = volta("run", ptx, "--launch", spec, "--timeout", "1")
    assert r.exit_code == 3 and "undecided: time limit of 1 s reached" in r.output
    assert volta("check", ptx, "--timeout", "0").exit_code == 2          # not a positive number


def test_run_reports_a_loop_that_never_terminates(tmp_path):
    case = REGRESSION / "loop_never_terminates.ptx"
    spec = tmp_path / "launch.json"
    spec.write_text(next(line for line in case.read_text().splitlines()
                         if line.startswith("// launch:")).removeprefix("// launch: "))
    r = volta("run", case, "--launch", spec)
    assert r.exit_code == 1 and "never terminates" in r.output and "loop_never_terminates.ptx:20:" in r.output


def test_names_are_printed_as_given_not_as_emoji_codes(tmp_path):
    """User text (kernel names, paths) goes through rich: ':pick:' must not become an emoji."""
    src = (EXAMPLES / "vector_add.ptx").read_text().replace("vector_add", "pick")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(src)
    shutil.copy(EXAMPLES / "vector_add.json", tmp_path / "k.json")
    r = volta("check", ptx)
    assert r.exit_code == 0, r.output
    assert "k.ptx:pick: race_free" in r.output
    assert "\u26cf" not in r.output
