"""The hand-written candidates (examples/candidates), the paper-style pairs (examples/pairs), their
seeded-bug twins, and the `// volta-launch:` header that gives a candidate its own grid and block
(harness/candidate.py).

Every candidate assembles with ptxas for its target, matches its contract's float64 reference within
the contract's tolerance in the emulator (at the verify instance, over the contract's input
distributions, and at extra sizes that take its ragged-edge and fallback paths) and is race_free under
`volta check --contract`. Both kernels of a pair assemble for sm_80 and sm_90a, agree with each
other and with a float64 reference, and are race_free under `volta check --launch`. Every bug twin
(`// bug:` header) differs from the reference on an input named here.
"""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from harness import suite
from harness.candidate import (LaunchHeaderError, candidate_launch, contract_launch, nearest_arch, parse_header,
                               read_header)
from harness.compile import compile_contract
from harness.emulate import from_device
from symexec import load_program, run_kernel
from symexec.check import check_kernel
from symexec.launch import spec_to_launch
from tests.corpus.common import run_ptxas, tool_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES / "pairs"))
import launches as pair_launches  # noqa: E402  (examples/pairs/launches.py)

_LINE = re.compile(r"^//\s*([a-z-]+)\s*:\s*(.*?)\s*$")


def headers(path: Path) -> dict[str, str]:
    """The `// key: value` lines at the top of a PTX file (the first value of each key)."""
    out: dict[str, str] = {}
    for line in path.read_text().splitlines()[:40]:
        m = _LINE.match(line)
        if m:
            out.setdefault(m.group(1), m.group(2))
    return out


def _rel(p: Path) -> str:
    return str(p.relative_to(EXAMPLES))


CANDIDATE_FILES = sorted((EXAMPLES / "candidates").rglob("*.ptx"))
CANDIDATES = [p for p in CANDIDATE_FILES if "bug" not in headers(p)]
PAIR_FILES = sorted((EXAMPLES / "pairs").rglob("*.ptx"))
#: candidates whose emulation costs more than a few seconds: their extra runs are marked slow
HEAVY = {"gemm_splitk", "dion_cta_fma"}


def _heavy(p: Path) -> bool:
    return p.name.split(".")[0] in HEAVY


_TARGET = re.compile(r"^\s*\.target\s+(\w+)", re.MULTILINE)


@lru_cache(maxsize=None)
def _target(p: Path) -> str:
    """The file's `.target` architecture (its first name), read from the text: parsing the 114 files at
    collection took 71 s of each pytest process's 88 (2026-12-07s45), for one word."""
    m = _TARGET.search(p.read_text())
    return m.group(1) if m else "sm_80"


# --------------------------------------------------------------------------- running candidates
@lru_cache(maxsize=None)
def _build(contract: str, arch: str):
    """Triton's verify build of `contract`: the parameter list a candidate must carry."""
    return compile_contract(suite.get(contract), arch, "verify")


@lru_cache(maxsize=None)
def _program(path: Path, entry: str | None = None):
    """(module, program) of a PTX file, parsed once per test process."""
    module = ptx_parser.parse_file(path)
    return module, load_program(module, entry or module.kernels[0].name)


def run_candidate(path: Path, dims: dict[str, int] | None = None, distribution: str = "normal", seed: int = 0):
    """Emulate candidate `path` on its contract's inputs (at `dims` instead of the verify instance's
    when given): (outputs, comparisons with the reference)."""
    c = suite.get(headers(path)["volta-candidate"])
    module, prog = _program(path)
    compiled = _build(c.name, nearest_arch(int(module.arch[3:5]), c.min_arch))
    if dims is not None:
        c = dataclasses.replace(c, instances={"verify": dict(dims), "bench": dict(dims)})
    cl = contract_launch(c, module, source=path, distribution=distribution, seed=seed, compiled=compiled)
    glob, _, _ = run_kernel(prog, cl.launch)
    r = c.resolve("verify")
    outputs = {t.name: from_device(glob.by_name(t.name).data, t.dtype, r.shapes[t.name])
               for t in c.tensors if t.is_output}
    comps = c.compare(outputs, c.run_reference(cl.arrays), c.abs_scale(cl.arrays))
    return outputs, comps


def _ok(comps) -> bool:
    return all(x.ok for x in comps)


def _conv(n, h, w, c, f):
    return {"N": n, "H": h, "W": w, "C": c, "F": f, "KH": 3, "KW": 3, "STRIDE": 1, "PAD": 1, "OH": h, "OW": w}


#: Sizes beyond the verify instance that reach each candidate's ragged edges and fallback paths.
EXTRA_SIZES: dict[str, list[tuple[str, dict[str, int]]]] = {
    "softmax_warp_row": [("general path, N > 4096", {"M": 3, "N": 5000}),
                         ("general path, N % 4 != 0", {"M": 2, "N": 2081}),
                         ("N < 32", {"M": 2, "N": 7}), ("N = 4096", {"M": 2, "N": 4096})],
    "rmsnorm_warp_row": [("general path, N % 8 != 0", {"M": 2, "N": 1001}),
                         ("general path, N > 8192", {"M": 2, "N": 8200}), ("one slot", {"M": 2, "N": 40})],
    "layernorm_warp_row": [("general path, N % 4 != 0", {"M": 2, "N": 1001}),
                           ("general path, N > 4096", {"M": 2, "N": 4100}), ("short row", {"M": 2, "N": 40})],
    "rowsum_warp_row": [("scalar path", {"M": 2, "N": 1001}), ("ragged float4 tail", {"M": 2, "N": 8200}),
                        ("short row", {"M": 2, "N": 40})],
    "rowsum_cta_row": [("scalar path", {"M": 2, "N": 1001}), ("one full step and a ragged tail", {"M": 2, "N": 8200}),
                       ("short row", {"M": 2, "N": 40})],
    "bitdelta_signflip": [("ragged rows and K tail", {"O": 40, "K": 1180, "KB": 148}),
                          ("byte path, KB % 4 != 0", {"O": 7, "K": 9000, "KB": 1125})],
    "bitdelta_batched_mma": [
        ("ragged M and O, 2 K chunks, 3 adapters", {"A": 3, "M": 40, "O": 300, "K": 512, "KB": 64}),
        ("element-wise staging, KB % 16 != 0, K tail", {"A": 2, "M": 7, "O": 33, "K": 300, "KB": 38})],
    "ce_zloss_smem_row": [("unrolled loop and tail", {"T": 2, "V": 40000}),
                          ("cached and uncached parts", {"T": 2, "V": 70000}),
                          ("scalar path, V % 8 != 0", {"T": 3, "V": 1001})],
    "conv2d_halo_mma": [("ragged tiles, 2 channel chunks, 2 filter blocks", _conv(2, 9, 17, 64, 72)),
                        ("direct path, C and F not multiples of 8", _conv(2, 5, 6, 3, 5))],
    "gemm_splitk": [("ragged tiles, 1 split", {"M": 20, "N": 36, "K": 100}),
                    ("scalar path, K and N odd", {"M": 20, "N": 31, "K": 99})],
    "dion_cta_fma": [("ragged step widths", {"L": 1, "M": 40, "N": 52, "RK": 32}),
                     ("scalar staging, N % 4 != 0", {"L": 1, "M": 33, "N": 37, "RK": 32}),
                     ("two row blocks", {"L": 1, "M": 1040, "N": 16, "RK": 32})],
}

#: bug twin (file stem) -> (distribution that exposes it, does the twin pass on the normal inputs?)
BUG_INPUTS: dict[str, tuple[str, bool]] = {
    "bitdelta_signflip.bug_sign_set": ("normal", False),
    "bitdelta_signflip.bug_fp16_acc": ("large", True),  # a precision bug: benign on normal inputs
    "bitdelta_batched_mma.bug_sign_shift": ("normal", False),
    "ce_zloss_smem_row.bug_label_off_by_one": ("normal", False),
    "conv2d_halo_mma.bug_halo_mask": ("normal", False),
    "gemm_splitk.bug_skip_last_split": ("normal", False),
    "dion_cta_fma.bug_q_unnormalised": ("normal", False),
    "rowsum_cta_row.bug_last_warp": ("normal", False),
}


# --------------------------------------------------------------------------- the header
def test_header_parsed_and_evaluated() -> None:
    h = parse_header("// x\n// volta-launch: grid=(cdiv(M, 4), max(1, N // 8), min(K, 3))  block=(128,)"
                     "  shared=2 * 1024\n.version 8.0\n", "k.ptx")
    assert h is not None and h.where == "k.ptx:2"
    s = h.shape({"M": 9, "N": 3, "K": 7})
    assert (s.grid, s.block, s.dynamic_shared_bytes) == ((3, 1, 3), (128, 1, 1), 2048)
    assert parse_header(".version 8.0\n// volta-launch: grid=(N) block=(32, 2)").shape({"N": 5}).block == (32, 2, 1)
    assert parse_header("// launch: {}\n.version 8.0\n") is None
    late = "\n" * 45 + "// volta-launch: grid=(1) block=(1)\n"
    assert parse_header(late) is None  # only the first 40 lines are a header


@pytest.mark.parametrize("line, message", [
    ("grid=(M) block=(32) grid=(1)", "given twice"),
    ("grid=(M)", "missing 'block"),
    ("block=(32) junk", "missing 'grid"),
    ("x grid=(M) block=(32)", "expected 'grid"),
    ("grid=(M,) block=(32, 1, 1, 1)", "1 to 3 axes"),
    ("grid=(M +) block=(32)", "not an expression"),
    ("grid=(M) block=(32) shared=(1, 2)", "one expression"),
])
def test_header_syntax_errors(line: str, message: str) -> None:
    with pytest.raises(LaunchHeaderError, match=re.escape(message)) as e:
        parse_header(f"// volta-launch: {line}\n", "bad.ptx")
    assert str(e.value).startswith("bad.ptx:1: volta-launch:")


@pytest.mark.parametrize("expr, message", [
    ("M.__class__", "not allowed"), ("__import__('os')", "not allowed"), ("eval('1')", "not allowed"),
    ("M / 2", "not allowed"), ("M ** 2", "not allowed"), ("1.5", "not allowed"), ("True", "not allowed"),
    ("(lambda: 1)()", "not allowed"), ("[M][0]", "not allowed"), ("cdiv(M)", "takes 2"),
    ("cdiv(M, 0)", "cdiv by 0"), ("M // (N - N)", "division by zero"), ("max()", "at least one"),
    ("cdiv(M, N=1)", "not allowed"), ("X", "unknown name 'X'"),
])
def test_header_expressions_refused(expr: str, message: str) -> None:
    h = parse_header(f"// volta-launch: grid=({expr}, 1, 1) block=(32, 1, 1)\n", "k.ptx")
    with pytest.raises(LaunchHeaderError, match=re.escape(message)):
        h.shape({"M": 4, "N": 2})


@pytest.mark.parametrize("line, message", [
    ("grid=(M - 4) block=(32)", "grid x = 0"), ("grid=(1, 70000) block=(32)", "grid y = 70000"),
    ("grid=(1) block=(1024, 2)", "2048 threads"), ("grid=(1) block=(32) shared=300000", "shared = 300000"),
])
def test_header_shapes_beyond_cuda_limits(line: str, message: str) -> None:
    with pytest.raises(LaunchHeaderError, match=re.escape(message)):
        parse_header(f"// volta-launch: {line}\n").shape({"M": 4})


_EXPR = st.recursive(
    st.one_of(st.integers(0, 1000).map(str), st.sampled_from(["M", "N", "K"])),
    lambda e: st.one_of(
        st.tuples(e, st.sampled_from(["+", "-", "*"]), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(e, st.integers(1, 50)).map(lambda t: f"({t[0]} // {t[1]})"),
        st.tuples(e, st.integers(1, 50)).map(lambda t: f"cdiv({t[0]}, {t[1]})"),
        st.lists(e, min_size=1, max_size=3).map(lambda xs: f"min({', '.join(xs)})"),
        st.lists(e, min_size=1, max_size=3).map(lambda xs: f"max({', '.join(xs)})"),
        e.map(lambda x: f"-{x}")),
    max_leaves=12)


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@settings(max_examples=200, deadline=None)
@given(expr=_EXPR, m=st.integers(1, 10**6), n=st.integers(1, 10**6), k=st.integers(1, 10**6))
def test_header_evaluates_like_python(expr: str, m: int, n: int, k: int) -> None:
    """The tree walker computes what Python computes for the same integer expression (eval is the
    test's oracle only; the header is never eval-ed)."""
    h = parse_header(f"// volta-launch: grid=({expr}, 1, 1) block=(1)\n")
    env = {"M": m, "N": n, "K": k}
    oracle = {"__builtins__": {}, "min": lambda *xs: min(xs), "max": lambda *xs: max(xs),
              "cdiv": lambda a, b: -(-a // b)}
    want = eval(expr, oracle, dict(env))
    assert h.evaluate(env)[0][0] == want


def test_candidate_launch_without_header_is_none(tmp_path: Path) -> None:
    p = tmp_path / "k.ptx"
    p.write_text("// volta-candidate: relu\n.version 8.0\n")
    assert read_header(p) is None and candidate_launch(suite.get("relu"), p, {"N": 16}) is None


RELU = """// volta-candidate: relu
// volta-launch: grid=({grid}, 1, 1) block=(256, 1, 1)
.version 8.0
.target sm_80
.address_size 64
.visible .entry relu_thread(.param .u64 x, .param .u64 y, .param .u32 n)
{{
  .reg .pred %p<3>;
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r2, 256, %r3;
  setp.lt.s32 %p1, %r4, %r1;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  mov.f32 %f1, 0f00000000;
  @%p1 ld.global.f32 %f1, [%rd4];
  setp.lt.f32 %p2, %f1, 0f00000000;
  selp.f32 %f2, 0f00000000, %f1, %p2;
  {guard} st.global.f32 [%rd5], %f2;
  ret;
}}
"""


@dataclasses.dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def _volta(*args: str) -> CliResult:
    """`volta ARGS` in this process (click's runner: no interpreter start-up per call)."""
    from click.testing import CliRunner

    from volta.cli import main

    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return CliResult(r.exit_code, r.stdout, r.stderr)


def test_cli_uses_the_header_grid(tmp_path: Path) -> None:
    """A relu with one element per thread: the header's grid (cdiv(N, 256), not Triton's
    cdiv(N, 1024)) covers the vector; half that grid leaves elements unwritten; an unguarded store
    with a grid one CTA too large is out of bounds; --sizes symbolic proves it for every N."""
    good = tmp_path / "relu.ptx"
    good.write_text(RELU.format(grid="cdiv(N, 256)", guard="@%p1"))
    run = _volta("run", str(good), "--contract", "relu")
    assert run.returncode == 0, run.stdout + run.stderr
    chk = _volta("check", str(good), "--contract", "relu", "--json")
    rep = json.loads(chk.stdout)
    assert rep["verdict"] == "race_free", chk.stdout
    assert any("block (256, 1, 1)" in a and "grid (10, 1, 1)" in a for a in rep["assumptions"])
    assert any("launch shape from the candidate's header" in a and "relu.ptx:2" in a for a in rep["assumptions"])
    sym = json.loads(_volta("check", str(good), "--contract", "relu", "--sizes", "symbolic", "--json").stdout)
    assert sym["verdict"] == "race_free" and any("every size" in a for a in sym["assumptions"]), sym
    half = tmp_path / "half.ptx"
    half.write_text(RELU.format(grid="cdiv(N, 512)", guard="@%p1"))
    assert _volta("run", str(half), "--contract", "relu").returncode == 1
    oob = tmp_path / "oob.ptx"
    oob.write_text(RELU.format(grid="cdiv(N, 256) + 1", guard=""))
    assert json.loads(_volta("check", str(oob), "--contract", "relu", "--json").stdout)["verdict"] == "out_of_bounds"


def test_cli_bad_header_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ptx"
    bad.write_text(RELU.format(grid="cdiv(N, 256) + Z", guard="@%p1"))
    for cmd in ("run", "check"):
        r = _volta(cmd, str(bad), "--contract", "relu")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "bad.ptx:2: volta-launch: unknown name 'Z'" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------- candidates
def test_candidates_present() -> None:
    contracts = {headers(p)["volta-candidate"] for p in CANDIDATES}
    assert {"softmax", "bitdelta", "bitdelta_batched", "conv2d", "gemm_accumulate", "rmsnorm", "layernorm",
            "rowsum", "cross_entropy_zloss", "dion_update"} <= contracts
    for p in CANDIDATE_FILES:
        h = headers(p)
        assert h["volta-candidate"] in suite.names(), p
        assert read_header(p) is not None, f"{p}: no volta-launch header"
        assert p.with_name(p.name.split(".")[0] + ".cu").exists(), f"{p}: its CUDA source is missing"


@pytest.mark.parametrize("path", CANDIDATE_FILES + PAIR_FILES, ids=_rel)
def test_assembles(path: Path) -> None:
    try:
        tool_path("ptxas")
    except FileNotFoundError:
        pytest.skip("ptxas not on PATH")
    targets = [_target(path)] + (["sm_90a"] if path.is_relative_to(EXAMPLES / "pairs") else [])
    for arch in targets:
        res = run_ptxas(path.read_text(), arch)
        assert res.accepted, f"ptxas -arch={arch}: {res.stderr}"


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.slow] if _heavy(p) and _target(p) != "sm_90a"
                                               else []) for p in CANDIDATES], ids=_rel)
def test_candidate_matches_reference(path: Path) -> None:
    _, comps = run_candidate(path)
    assert _ok(comps), [str(x) for x in comps]


@pytest.mark.parametrize("path", [p for p in CANDIDATES if _target(p) == "sm_90a"], ids=_rel)
def test_sm80_twin_is_the_same_kernel(path: Path) -> None:
    """The sm_80 file of a candidate is nvcc's output of the same source: the same body."""
    twin = path.with_name(path.name.replace(".sm_90a.", ".sm_80."))

    def body(p: Path) -> list[str]:
        return [ln for ln in p.read_text().splitlines() if not ln.startswith((".target", "// generated by"))]

    assert twin.exists() and body(twin) == body(path)


DISTRIBUTIONS = ["large", "tiny", "special", "cancel"]


@pytest.mark.parametrize("path, dist", [
    pytest.param(p, d, marks=[pytest.mark.slow] if _heavy(p) else [], id=f"{_rel(p)}-{d}")
    for p in CANDIDATES if _target(p) == "sm_90a" for d in DISTRIBUTIONS])
def test_candidate_all_distributions(path: Path, dist: str) -> None:
    c = suite.get(headers(path)["volta-candidate"])
    if dist not in c.distributions_for():
        pytest.skip(f"{c.name} does not draw {dist} inputs")
    _, comps = run_candidate(path, distribution=dist, seed=3)
    assert _ok(comps), [str(x) for x in comps]


@pytest.mark.parametrize("path, what, dims", [
    pytest.param(p, what, dims, marks=[pytest.mark.slow] if _heavy(p) else [], id=f"{_rel(p)}-{what}")
    for p in CANDIDATES if _target(p) == "sm_90a" for what, dims in EXTRA_SIZES.get(p.name.split(".")[0], [])])
def test_candidate_other_sizes(path: Path, what: str, dims: dict[str, int]) -> None:
    _, comps = run_candidate(path, dims)
    assert _ok(comps), [str(x) for x in comps]


def test_every_candidate_has_extra_sizes() -> None:
    assert {p.name.split(".")[0] for p in CANDIDATES} == set(EXTRA_SIZES)


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.slow] if _heavy(p) else [])
                                  for p in CANDIDATES if _target(p) == "sm_90a"], ids=_rel)
def test_candidate_race_free(path: Path) -> None:
    from volta.check_cli import check_file

    report = check_file(path, contract=headers(path)["volta-candidate"])
    detail = [f.message for f in report.findings] + report.notes
    assert report.verdict == "race_free", detail
    assert any("every input" in a for a in report.assumptions)
    assert any("launch shape from the candidate's header" in a for a in report.assumptions)


TWINS = [p for p in CANDIDATE_FILES if "bug" in headers(p)]


def test_every_twin_has_an_input() -> None:
    assert {p.name.removesuffix(".ptx").rsplit(".", 1)[0] for p in TWINS} == set(BUG_INPUTS)


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.slow] if _heavy(p) else []) for p in TWINS],
                         ids=_rel)
def test_bug_twin_differs(path: Path) -> None:
    dist, benign_on_normal = BUG_INPUTS[path.name.removesuffix(".ptx").rsplit(".", 1)[0]]
    correct = path.with_name(path.name.split(".")[0] + f".{_target(path)}.ptx")
    bad_out, bad = run_candidate(path, distribution=dist)
    good_out, good = run_candidate(correct, distribution=dist)
    assert _ok(good) and not _ok(bad), [str(x) for x in bad]
    assert any(not np.array_equal(bad_out[k], good_out[k], equal_nan=True) for k in good_out)
    if dist != "normal":
        _, normal = run_candidate(path)
        assert _ok(normal) == benign_on_normal, [str(x) for x in normal]


#: candidates cheap enough to judge end to end on the CPU in the fast tier (the others: slow)
JUDGED_FAST = {"softmax_warp_row", "rowsum_warp_row", "bitdelta_signflip"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=[] if p.name.split(".")[0] in JUDGED_FAST else
                                               [pytest.mark.slow])
                                  for p in CANDIDATES if _target(p) == "sm_90a"], ids=_rel)
def test_judge_accepts_candidate(path: Path) -> None:
    """`volta eval` on the CPU (harness.judge): static gate (the entry is Triton's kernel name),
    ptxas, numeric trials at the verify instance and at sizes nobody saw (the header evaluated
    there), volta check on the same bytes: accepted."""
    from harness.judge.pipeline import EvalOptions, evaluate

    report = evaluate(headers(path)["volta-candidate"], path.read_text(), name=path.name,
                      options=EvalOptions(seed=7))
    assert report.accepted, [(r.stage, r.status.value, r.summary) for r in report.stages]


def test_judge_rejects_a_twin_and_a_bad_header() -> None:
    from harness.judge.pipeline import EvalOptions, evaluate
    from harness.judge.report import Reason

    twin = EXAMPLES / "candidates/bitdelta/bitdelta_signflip.bug_sign_set.sm_90a.ptx"
    report = evaluate("bitdelta", twin.read_text(), name=twin.name, options=EvalOptions(seed=7))
    assert not report.accepted and any(p.reason is Reason.WRONG_VALUES for r in report.stages for p in r.problems)
    good = (EXAMPLES / "candidates/rowsum/rowsum_warp_row.sm_90a.ptx").read_text()
    bad = good.replace("grid=(M, 1, 1)", "grid=(M + Q, 1, 1)", 1)
    report = evaluate("rowsum", bad, name="bad.ptx", options=EvalOptions(seed=7))
    static = report.stages[0]
    assert static.stage == "static" and static.status.value == "rejected"
    assert any(p.reason is Reason.LAUNCH_CONFIG and "unknown name 'Q'" in p.message for p in static.problems)


# --------------------------------------------------------------------------- pairs
def run_spec(ptx: Path, spec: dict):
    """(outputs as float32 arrays, input buffers) of one launch spec."""
    launch = spec_to_launch(json.loads(json.dumps(spec)), str(ptx))
    glob, _, _ = run_kernel(_program(ptx, spec["kernel"])[1], launch)
    outs = {name: glob.by_name(name).data.view(np.float32)[:int(np.prod(b["shape"]))].reshape(b["shape"])
            for name, b in spec["buffers"].items() if "init" not in b}
    ins = {name: launch.buffers[name] for name, b in spec["buffers"].items() if "init" in b}
    return outs, ins


def check_spec(ptx: Path, spec: dict, grid: str = "auto"):
    launch = spec_to_launch(json.loads(json.dumps(spec)), str(ptx))
    return check_kernel(_program(ptx, spec["kernel"])[1], launch, grid=grid)


#: pair -> (small ragged sizes, tolerance of both kernels against float64, do both sum in one order?)
PAIRS = {
    "matmul": (lambda: pair_launches.matmul(72, 40, 56), 1e-5, True),
    "attention": (lambda: pair_launches.attention(40), 1e-5, False),
    "conv": (lambda: pair_launches.conv(3, 20, 19, 12), 1e-5, True),
}


def _compare_pair(pair: str, specs: dict[str, dict], rtol: float, same_order: bool) -> None:
    out = pair_launches.OUTPUT[pair]
    naive, ins = run_spec(EXAMPLES / "pairs" / pair / "naive.ptx", specs["naive"])
    fast, ins_fast = run_spec(EXAMPLES / "pairs" / pair / "fast.ptx", specs["fast"])
    assert all(np.array_equal(ins[k], ins_fast[k]) for k in ins)
    want = pair_launches.reference(pair, ins)
    scale = np.abs(want).max()
    for got in (naive[out], fast[out]):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
    if same_order:  # the same fma chain per output: bit for bit (up to the sign of zero)
        np.testing.assert_array_equal(naive[out], fast[out])
    else:
        np.testing.assert_allclose(naive[out], fast[out], rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("pair", PAIRS)
def test_pair_agrees_ragged(pair: str) -> None:
    make, rtol, same = PAIRS[pair]
    _compare_pair(pair, make(), rtol, same)


def _committed(pair: str) -> list[tuple[str, dict[str, dict]]]:
    """(size tag, {naive, fast}) of the committed JSON specs of `pair`: naive.json -> "default",
    naive.s128.json -> "s128"."""
    d = EXAMPLES / "pairs" / pair
    out = []
    for p in sorted(d.glob("naive*.json")):
        suffix = p.name.removeprefix("naive")
        tag = suffix.removesuffix(".json").removeprefix(".") or "default"
        out.append((tag, {s: json.loads((d / f"{s}{suffix}").read_text()) for s in ("naive", "fast")}))
    return out


def test_committed_specs_are_generated() -> None:
    for rel, spec in pair_launches.committed().items():
        assert json.loads((EXAMPLES / "pairs" / rel).read_text()) == json.loads(json.dumps(spec)), rel


@pytest.mark.parametrize("pair, tag", [pytest.param(p, t, marks=[pytest.mark.slow] if "512" in t else [])
                                       for p in PAIRS for t, _ in _committed(p)])
def test_pair_agrees_committed(pair: str, tag: str) -> None:
    specs = dict(_committed(pair))[tag]
    _, rtol, same = PAIRS[pair]
    _compare_pair(pair, specs, rtol, same)


@pytest.mark.parametrize("pair, side", [(p, s) for p in PAIRS for s in ("naive", "fast")])
def test_pair_race_free_ragged(pair: str, side: str) -> None:
    report = check_spec(EXAMPLES / "pairs" / pair / f"{side}.ptx", PAIRS[pair][0]()[side])
    assert report.verdict == "race_free", [f.message for f in report.findings] + report.notes


@pytest.mark.slow
@pytest.mark.parametrize("pair, tag, side", [(p, t, s) for p in PAIRS for t, _ in _committed(p)
                                             for s in ("naive", "fast")])
def test_pair_race_free_committed(pair: str, tag: str, side: str) -> None:
    spec = dict(_committed(pair))[tag][side]
    # two CTAs and Z3 for the rest where the symbolic grid applies (it falls back to every CTA, and
    # says so, where it does not: the naive attention at S = 512, ~4 GB)
    report = check_spec(EXAMPLES / "pairs" / pair / f"{side}.ptx", spec, "symbolic")
    assert report.verdict == "race_free", [f.message for f in report.findings] + report.notes


#: pair bug twin -> the size that exposes it
PAIR_BUGS = {"attention/fast.bug_no_rescale.ptx": lambda: pair_launches.attention(300),  # 3 key tiles
             "conv/fast.bug_halo_mask.ptx": lambda: pair_launches.conv(3, 20, 19, 12)}


def test_every_pair_twin_listed() -> None:
    assert {_rel(p).removeprefix("pairs/") for p in PAIR_FILES if "bug" in headers(p)} == set(PAIR_BUGS)


@pytest.mark.parametrize("twin", PAIR_BUGS)
def test_pair_bug_twin_differs(twin: str) -> None:
    pair = twin.split("/")[0]
    specs = PAIR_BUGS[twin]()
    out, ins = run_spec(EXAMPLES / "pairs" / twin, specs["fast"])
    want = pair_launches.reference(pair, ins)
    got = out[pair_launches.OUTPUT[pair]]
    assert np.abs(got - want).max() > 1e-2 * np.abs(want).max()


# --------------------------------------------------------------------------- the build script
def test_manifest_lists_every_file() -> None:
    sys.path.insert(0, str(EXAMPLES))
    import build_kernels

    listed = {EXAMPLES / f.path for f in build_kernels.load_manifest()}
    assert listed == set(CANDIDATE_FILES + PAIR_FILES)
    for f in build_kernels.load_manifest():
        h = headers(EXAMPLES / f.path)
        assert all(h.get(k) == v for k, v in (ln.split(": ", 1) for ln in f.header if re.match(r"^[a-z-]+: ", ln)))
        assert ("bug" in h) == bool(f.defines)


@pytest.mark.slow
def test_committed_ptx_is_nvcc_output() -> None:
    """examples/build_kernels.py --check: every committed PTX is what nvcc makes of its source."""
    try:
        tool_path("nvcc")
    except FileNotFoundError:
        pytest.skip("nvcc not on PATH")
    r = subprocess.run([sys.executable, str(EXAMPLES / "build_kernels.py"), "--check"], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
