"""Bad input through the CLI: every mistake a user makes is answered with exit 2 and a message that
names what is wrong (the file, the JSON path of a launch-spec field, the option), never a
traceback and never exit 1 (the "bug found" code); `--json` answers on stdout even then."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from volta.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
REGRESSION = ROOT / "tests" / "regression"
VECTOR_ADD = EXAMPLES / "vector_add.ptx"
SPEC = json.loads((EXAMPLES / "vector_add.json").read_text())


def volta(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback for volta {' '.join(map(str, args))}: {result.exception!r}"
    return result


def spec_file(tmp_path: Path, **changes) -> Path:
    spec = json.loads(json.dumps(SPEC))
    spec.update(changes)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


# ---------------------------------------------------------------- defect 1: tracebacks on bad input
def test_unwritable_sarif_path_is_bad_input_not_a_traceback():
    r = volta("check", EXAMPLES / "racy_reduction.ptx", "--sarif", "/nonexistent/dir/x.sarif")
    assert r.exit_code == 2, r.output
    assert "/nonexistent/dir" in r.output and "cannot write" in r.output


def test_unwritable_dump_path_is_bad_input_not_a_traceback():
    r = volta("run", VECTOR_ADD, "--launch", EXAMPLES / "vector_add.json", "--dump", "/nonexistent/x.npz")
    assert r.exit_code == 2, r.output
    assert "/nonexistent" in r.output and "cannot write" in r.output


def test_null_parameter_is_named(tmp_path):
    params = list(SPEC["params"])
    params[3] = None
    path = spec_file(tmp_path, params=params)
    for cmd in ("check", "run"):
        r = volta(cmd, VECTOR_ADD, "--launch", path)
        assert r.exit_code == 2, (cmd, r.output)
        assert "params[3]" in r.output and "vector_add_param_3" in r.output, r.output


# ---------------------------------------------------------------- defect 2: the launch spec's schema
@pytest.mark.parametrize("position, value, message", [
    (3, "x", "params[3]: a .u32 parameter (vector_add_param_3) takes an integer"),     # buffer name for .u32
    (3, 99999999999999, "params[3]: 99999999999999 is outside the range of .u32"),
    (3, -1, "params[3]: -1 is outside the range of .u32"),
    (3, True, "params[3]: a .u32 parameter (vector_add_param_3) takes an integer"),     # a JSON boolean
    (3, 1.5, "params[3]: a .u32 parameter (vector_add_param_3) takes an integer"),
    (3, {"float": 1.0}, "params[3]: a .u32 parameter (vector_add_param_3) takes an integer"),
    (0, "nosuch", "params[0]: no buffer named 'nosuch'"),
    (0, 2**64, "params[0]: 18446744073709551616 is outside the range of .u64"),
])
def test_parameter_values_are_checked_against_the_kernels_declarations(tmp_path, position, value, message):
    params = list(SPEC["params"])
    params[position] = value
    path = spec_file(tmp_path, params=params)
    for cmd in ("check", "run"):
        r = volta(cmd, VECTOR_ADD, "--launch", path)
        assert r.exit_code == 2, (cmd, r.output)
        assert message in r.output, (cmd, r.output)


@pytest.mark.parametrize("buffers, message", [
    ({"x": {"dtype": "float32", "shape": [1000], "sed": 5}}, "buffers.x: unknown field 'sed'"),
    ({"x": {"dtype": "float32", "shape": [1000], "seed": "one"}}, "buffers.x.seed"),
    ({"x": {"dtype": "float32", "shape": [1000], "init": "rand"}}, "buffers.x.init"),
    ({"x": {"dtype": "float32", "shape": [True]}}, "buffers.x.shape[0]"),
    ({"x": {"dtype": "float32"}}, "buffers.x: give 'data' or 'shape'"),
    ({"x": {"dtype": "int32", "data": [1, "a"]}}, "buffers.x.data[1]"),
])
def test_buffer_entries_are_checked_at_every_depth(tmp_path, buffers, message):
    spec = json.loads(json.dumps(SPEC))
    spec["buffers"].update(buffers)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    r = volta("check", VECTOR_ADD, "--launch", path)
    assert r.exit_code == 2, r.output
    assert message in r.output, r.output


def test_a_tensor_map_needs_a_128_byte_parameter(tmp_path):
    params = list(SPEC["params"])
    params[3] = {"tensor_map": {"buffer": "x", "dtype": "float32", "global_dims": [1000], "global_strides": [],
                                "box_dims": [64]}}
    r = volta("check", VECTOR_ADD, "--launch", spec_file(tmp_path, params=params))
    assert r.exit_code == 2 and "params[3]" in r.output, r.output


def test_launch_header_is_validated_the_same_way(tmp_path):
    ptx = tmp_path / "k.ptx"
    bad = dict(SPEC, params=["x", "y", "out", "x", 0, 0])
    ptx.write_text(f"// launch: {json.dumps(bad)}\n" + VECTOR_ADD.read_text())
    r = volta("check", ptx)
    assert r.exit_code == 2 and "params[3]" in r.output and "launch header" in r.output, r.output


# ---------------------------------------------------------------- defect 3: options that were ignored
def test_contract_and_launch_together_are_refused():
    r = volta("check", VECTOR_ADD, "--contract", "relu", "--launch", EXAMPLES / "vector_add.json")
    assert r.exit_code == 2 and "--contract" in r.output and "--launch" in r.output, r.output


def test_unknown_entry_names_the_kernels():
    for cmd in (("check", VECTOR_ADD), ("run", VECTOR_ADD, "--launch", EXAMPLES / "vector_add.json")):
        r = volta(*cmd, "--entry", "nosuch")
        assert r.exit_code == 2, r.output
        assert "no kernel named 'nosuch'" in r.output and "vector_add" in r.output, r.output


def test_regress_with_no_case_is_bad_input(tmp_path):
    shutil.copy(REGRESSION / "smem_raw_missing_barrier.ptx", tmp_path / "a.ptx")
    r = volta("regress", tmp_path, "-k", "nosuch")
    assert r.exit_code == 2 and "no case" in r.output, r.output
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(VECTOR_ADD, plain / "v.ptx")
    r = volta("regress", plain)
    assert r.exit_code == 2 and "no case" in r.output and "1 .ptx file" in r.output, r.output


# ---------------------------------------------------------------- defect 7: --json output
def test_bad_input_with_json_answers_on_stdout(tmp_path):
    path = spec_file(tmp_path, params=[None] + SPEC["params"][1:])
    for cmd in ("check", "run"):
        r = volta(cmd, VECTOR_ADD, "--launch", path, "--json")
        assert r.exit_code == 2
        out = json.loads(r.stdout)
        assert out["verdict"] == "bad_input" and out["exit_code"] == 2
        assert "params[0]" in out["error"]["message"]
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k() { add.u32 %r1, ; }\n")
    out = json.loads(volta("check", bad, "--json").stdout)
    assert out["verdict"] == "bad_input" and out["error"]["line"] == 4


def test_run_json_is_strict_json(tmp_path):
    """A mismatch against a tolerance of 0 has an infinite error ratio: JSON has no Infinity."""
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    wrong = tmp_path / "wrong.ptx"
    wrong.write_text(ptx.read_text().replace("selp.b32 \t%r10, 0, %r1, %p3", "selp.b32 \t%r10, %r1, %r1, %p3"))
    assert wrong.read_text() != ptx.read_text()
    r = volta("run", wrong, "--contract", "relu", "--json")
    assert r.exit_code == 1
    assert "Infinity" not in r.stdout and "NaN" not in r.stdout
    out = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert out["ok"] is False and out["comparisons"][0]["worst"] == "inf"


def test_dump_keeps_dtype_and_shape(tmp_path):
    spec = json.loads(json.dumps(SPEC))
    spec["buffers"]["out"] = {"dtype": "float32", "shape": [10, 100]}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    dump = tmp_path / "out.npz"
    r = volta("run", VECTOR_ADD, "--launch", path, "--dump", dump)
    assert r.exit_code == 0, r.output
    with np.load(dump) as z:
        assert z["out"].dtype == np.float32 and z["out"].shape == (10, 100)
        assert z["x"].dtype == np.float32 and z["x"].shape == (1000,)
        np.testing.assert_array_equal(z["out"].reshape(-1), z["x"] + z["y"])


# ---------------------------------------------------------------- defect 9: smaller ones
def test_top_must_not_be_negative():
    r = volta("parse", VECTOR_ADD, "--top", "-3")
    assert r.exit_code == 2 and "--top" in r.output


def test_distribution_help_and_errors_name_the_contracts_distributions(tmp_path):
    r = volta("run", "--help")
    assert "zeros_ones" not in r.output and "volta suite show" in r.output
    ptx = tmp_path / "relu.ptx"
    assert volta("suite", "ptx", "relu", "--arch", "sm_80", "-o", ptx).exit_code == 0
    r = volta("run", ptx, "--contract", "relu", "--distribution", "zeros_ones")
    assert r.exit_code == 2
    assert "contract relu" in r.output and "normal, large, tiny, special, cancel" in r.output, r.output
