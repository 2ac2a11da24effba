"""The evaluation pipeline: a candidate PTX for a contract, through every stage of :data:`STAGES`.

    from harness import evaluate
    report = evaluate("softmax", open("cand.ptx").read())          # CPU: emulator numerics, no timing
    with GpuSession() as gpu:                                       # GPU: one worker process for many
        reports = [evaluate("softmax", ptx, gpu=gpu) for ptx in candidates]

Stages run in table order, cheap gates first; after the first rejection the rest are skipped
(``EvalOptions.keep_going`` runs them anyway). A stage is a row of the table: its name, whether it
needs a GPU, and a function of the :class:`Context` returning a StageResult; a new gate
(equivalence, say) is one more row and no caller changes. The candidate's text is read once: the
static gate, ptxas, the checker and the numeric test all see the same bytes, whose sha256 the
report carries; the GPU worker refuses a cubin whose hash differs from the assembled one.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from ptx_parser import ParseError
from ptx_parser import ast as A

from ..candidate import LaunchHeaderError
from ..compile import ARCH_ALIASES, CompiledPTX, compile_contract
from ..contract import Contract
from . import ptxas as _ptxas
from . import static as _static
from . import verify as _verify
from .device import EmulatorDevice, KernelCode
from .launch import launch_config
from .numeric import NumericDetail, Trial, run_numeric
from .report import Problem, Reason, Report, Severity, StageResult, Status
from .shapes import unseen_shapes
from .timing import TimingPlan

ALL_SANITIZERS = ("memcheck", "racecheck", "synccheck", "initcheck")


class EvaluationError(ValueError):
    """The evaluation cannot start (unknown contract, a target the contract does not support)."""


@dataclass(frozen=True)
class EvalOptions:
    seed: int | None = None  # None: a fresh seed per evaluation (recorded in the report)
    trials: int = 1  # seeds per distribution at the verify instance
    unseen: int = 2  # sizes nobody saw (harness.judge.shapes)
    unseen_max_elements: int = 1 << 20
    verify_timeout: float = 300.0
    emulator_timeout: float = 300.0
    rerun: bool = True  # second run per trial: unwritten elements and nondeterminism
    keep_going: bool = False
    skip: frozenset[str] = frozenset()
    timing: TimingPlan = field(default_factory=TimingPlan)
    timing_instance: str = "bench"
    sanitizers: tuple[str, ...] = ALL_SANITIZERS
    profile: bool = True


class GpuRunner(Protocol):
    """The GPU side (harness.judge.worker.GpuSession, or a fake in tests)."""

    device_name: str
    capability: int

    def numeric(self, request: "GpuRequest", trials: list[Trial]) -> tuple[list[Problem], NumericDetail]: ...

    def sanitize(self, request: "GpuRequest", tool: str, trial: Trial) -> StageResult: ...

    def time(self, request: "GpuRequest") -> StageResult: ...

    def profile(self, request: "GpuRequest") -> StageResult: ...


@dataclass(frozen=True)
class GpuRequest:
    """Everything the GPU worker needs about one candidate (picklable: contracts go by name)."""

    contract: str
    arch: str
    candidate: str
    ptx: str
    ptx_sha256: str
    cubin: bytes
    cubin_sha256: str
    entry: str
    param_count: int
    twin_cubin: bytes = b""
    line_map: dict[int, int] = field(default_factory=dict)
    timing: TimingPlan = field(default_factory=TimingPlan)
    timing_instance: str = "bench"
    seed: int = 0

    def code(self, twin: bool = False) -> KernelCode:
        if hashlib.sha256(self.cubin).hexdigest() != self.cubin_sha256:
            raise ValueError("the cubin is not the one assembled from the verified PTX")
        return KernelCode(self.ptx, self.twin_cubin if twin else self.cubin, self.entry, self.candidate)


@dataclass
class Context:
    contract: Contract
    name: str
    ptx: str
    sha256: str
    arch: str
    options: EvalOptions
    gpu: GpuRunner | None = None
    seed: int = 0
    module: A.Module | None = None
    kernel: A.Function | None = None
    reference: CompiledPTX | None = None
    assembled: _ptxas.Assembled | None = None
    trials: list[Trial] = field(default_factory=list)
    twin: tuple[bytes, dict[int, int]] | None = None

    def request(self, twin: bool = False) -> GpuRequest:
        """What the GPU side needs; ``twin``: with the line-annotated twin cubin and its line table
        (empty when it cannot be assembled or has other machine code: the lanes then say so)."""
        a = self.assembled
        assert a is not None and self.kernel is not None
        if twin and self.twin is None:
            t = _ptxas.assemble(_ptxas.annotate(self.ptx, self.module), a.target, self.kernel.name, lineinfo=True)
            self.twin = (t.cubin, _ptxas.line_map(t.cubin)) if t.ok and _ptxas.same_code(a.cubin, t.cubin) else \
                (b"", {})
        twin_cubin, lines = self.twin if twin and self.twin else (b"", {})
        return GpuRequest(self.contract.name, self.arch, self.name, self.ptx, self.sha256, a.cubin, a.cubin_sha256,
                          self.kernel.name, len(self.kernel.params or ()), twin_cubin, lines, self.options.timing,
                          self.options.timing_instance, self.seed)


@dataclass(frozen=True)
class Stage:
    name: str
    title: str
    run: Callable[[Context], StageResult]
    gpu_only: bool = False


@dataclass
class StaticDetail:
    entry: str
    target: str | None
    reference_target: str
    parameters: int
    reference_ptx_key: str


@dataclass
class AssembleDetail:
    ptxas: str
    version: str
    target: str
    cubin_sha256: str
    resources: _ptxas.Resources


_REF_MODULES: dict[str, A.Module] = {}


def _reference_module(ref: CompiledPTX) -> A.Module:
    import ptx_parser

    if ref.key not in _REF_MODULES:
        _REF_MODULES[ref.key] = ptx_parser.parse(ref.ptx, f"{ref.contract}.{ref.target}.ptx")
    return _REF_MODULES[ref.key]


def _run_static(ctx: Context) -> StageResult:
    import ptx_parser

    try:
        ctx.module = ptx_parser.parse(ctx.ptx, ctx.name)
    except ParseError as e:
        return StageResult.from_problems("static", [Problem(Reason.BAD_PTX, e.message, where=e.location)], "")
    ref = ctx.reference
    try:
        block = launch_config(ctx.contract, ref, "verify", ctx.ptx).block
    except LaunchHeaderError as e:
        return StageResult.from_problems("static", [Problem(Reason.LAUNCH_CONFIG, str(e))], "")
    problems, ctx.kernel = _static.gate(ctx.contract, ctx.module, ref, _reference_module(ref), block)
    detail = StaticDetail(ref.entry, ctx.module.arch, ref.target,
                          len(ctx.kernel.params or ()) if ctx.kernel else 0, ref.key)
    if ctx.kernel is None or any(p.severity is Severity.REJECT for p in problems):
        return StageResult.from_problems("static", problems, "", detail)
    return StageResult.from_problems("static", problems, f"entry {ref.entry}, target {ctx.module.arch}, nothing "
                                     "the reference does not use", detail)


_PTXAS_LINE = re.compile(r"candidate\.ptx, line (\d+); (error|fatal)\s*:\s*(.*)")


def _run_assemble(ctx: Context) -> StageResult:
    target = ctx.reference.target
    a = ctx.assembled = _ptxas.assemble(ctx.ptx, target, ctx.kernel.name)
    if not a.ok:
        m = _PTXAS_LINE.search(a.log)
        where = f"{ctx.name}:{m.group(1)}" if m else None
        msg = m.group(3) if m else (a.log.splitlines() or ["ptxas failed"])[-1]
        return StageResult.from_problems("assemble", [Problem(Reason.PTXAS, msg, where=where)], "")
    r = a.resources
    problems = []
    if r.spill_stores or r.spill_loads:
        problems.append(Problem(Reason.SPILLS, f"{r.spill_stores} bytes spill stores, {r.spill_loads} bytes spill "
                                "loads", Severity.FLAG))
    detail = AssembleDetail(a.ptxas, a.version, target, a.cubin_sha256, r)
    return StageResult.from_problems("assemble", problems, f"{target}: {r.registers} registers, {r.shared_bytes} B "
                                     f"static shared, {r.stack_frame} B stack, spills {r.spill_stores}/"
                                     f"{r.spill_loads} B", detail)


def _trials(ctx: Context) -> list[Trial]:
    rng = np.random.default_rng(ctx.seed)
    seed = lambda: int(rng.integers(1, 2**31))  # noqa: E731
    c, o = ctx.contract, ctx.options
    verify = dict(c.instances["verify"])
    trials = [Trial("verify", verify, d, seed()) for d in c.distributions_for() for _ in range(o.trials)]
    shapes = unseen_shapes(c, ctx.arch, o.unseen, seed(), max_elements=o.unseen_max_elements) if o.unseen else []
    trials += [Trial(f"unseen{i + 1}", s, c.distributions_for()[0], seed()) for i, s in enumerate(shapes)]
    return trials


def _run_numeric(ctx: Context) -> StageResult:
    ctx.trials = _trials(ctx)
    if ctx.gpu is not None:
        problems, detail = ctx.gpu.numeric(ctx.request(), ctx.trials)
    else:
        code = KernelCode(ctx.ptx, b"", ctx.kernel.name, ctx.name)
        problems, detail = run_numeric(EmulatorDevice(ctx.options.emulator_timeout), code, ctx.contract, ctx.arch,
                                       ctx.trials, len(ctx.kernel.params or ()), ctx.options.rerun)
    sizes = sorted({t.trial.label for t in detail.trials})
    passed = (f"{len(detail.trials)} trial(s) on {detail.device} ({', '.join(sizes)}; "
              f"{len({t.trial.distribution for t in detail.trials})} distribution(s)); guard bands, input hashes"
              + (", two sentinel runs" if detail.rerun else "") + " ok")
    res = StageResult.from_problems("numeric", problems, passed, detail)
    if res.status is Status.PASSED and detail.undecided:
        res.status, res.summary = Status.UNDECIDED, f"the {detail.device} could not run it: {detail.undecided}"
    return res


def _run_verify(ctx: Context) -> StageResult:
    report = _verify.check(ctx.contract, ctx.module, ctx.kernel, ctx.reference, "verify", ctx.options.verify_timeout,
                           ctx.ptx)
    problems, detail, undecided = _verify.judge(report, ctx.sha256, "verify")
    if undecided:
        return StageResult("verify", Status.UNDECIDED, report.verdict, problems, detail)
    return StageResult.from_problems("verify", problems, f"{report.verdict} (sha256 {ctx.sha256[:12]})", detail)


def _run_sanitize(ctx: Context) -> StageResult:
    if not ctx.options.sanitizers:
        return StageResult("sanitize", Status.SKIPPED, "no sanitizer tools asked for")
    request = ctx.request(twin=True)
    trial = ctx.trials[0] if ctx.trials else Trial("verify", dict(ctx.contract.instances["verify"]), "normal", ctx.seed)
    results = [ctx.gpu.sanitize(request, tool, trial) for tool in ctx.options.sanitizers]
    problems = [p for r in results for p in r.problems]
    detail = {r.stage: r.to_json() for r in results}
    if any(r.rejected for r in results):
        return StageResult.from_problems("sanitize", problems, "", detail)
    ran = [r.stage for r in results if r.status is Status.PASSED]
    missing = [f"{r.stage}: {r.summary}" for r in results if r.status is not Status.PASSED]
    if not ran:
        return StageResult("sanitize", Status.UNAVAILABLE, "; ".join(missing), problems, detail)
    summary = f"{', '.join(ran)}: no errors" + (f"; not run: {'; '.join(missing)}" if missing else "")
    return StageResult("sanitize", Status.PASSED, summary, problems, detail)


def _run_timing(ctx: Context) -> StageResult:
    return ctx.gpu.time(ctx.request())


def _run_profile(ctx: Context) -> StageResult:
    if not ctx.options.profile:
        return StageResult("profile", Status.SKIPPED, "not asked for")
    return ctx.gpu.profile(ctx.request(twin=True))


#: The stages, in the order they run. Add a gate by adding a row.
STAGES: tuple[Stage, ...] = (
    Stage("static", "static gate", _run_static),
    Stage("assemble", "ptxas", _run_assemble),
    Stage("numeric", "numeric test", _run_numeric),
    Stage("verify", "volta check", _run_verify),
    Stage("sanitize", "compute-sanitizer", _run_sanitize, gpu_only=True),
    Stage("timing", "timing vs Triton", _run_timing, gpu_only=True),
    Stage("profile", "Nsight Compute", _run_profile, gpu_only=True),
)


def target_for(capability: int) -> str:
    """The suite's target name for a compute capability (90 -> sm_90a)."""
    names = [n for n, c in ARCH_ALIASES.items() if c == capability]
    return max(names, key=lambda n: (n.endswith("a"), len(n))) if names else f"sm_{capability}"


def _contract(contract: Contract | str) -> Contract:
    if isinstance(contract, Contract):
        return contract
    from .. import suite

    try:
        return suite.get(contract)
    except suite.SuiteError as e:
        raise EvaluationError(str(e)) from None


def evaluate(contract: Contract | str, ptx: str | bytes, *, name: str = "candidate.ptx", gpu: GpuRunner | None = None,
             arch: str | None = None, options: EvalOptions | None = None) -> Report:
    """Judge one candidate PTX for ``contract`` (a Contract or a suite name). Without ``gpu`` the
    numeric test runs on the CPU emulator and the GPU stages are skipped; ``arch`` defaults to the
    GPU's target, else sm_90a (the H200 the suite is timed on)."""
    c = _contract(contract)
    options = options or EvalOptions()
    try:
        text = ptx.decode("utf-8") if isinstance(ptx, bytes) else ptx
    except UnicodeDecodeError as e:
        raise EvaluationError(f"{name}: not UTF-8 text (byte {e.start}); PTX is ASCII") from None
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()  # the bytes ptxas reads
    arch = arch or (target_for(gpu.capability) if gpu is not None else "sm_90a")
    if gpu is not None and not isinstance(contract, str) and c.name not in _suite_names():
        raise EvaluationError(f"GPU evaluation needs a suite contract (the worker loads it by name); {c.name!r} "
                              "is not one")
    try:
        reference = compile_contract(c, arch, "verify")
    except Exception as e:  # ContractError, ArchError: nothing to compare against
        raise EvaluationError(str(e)) from None
    seed = options.seed if options.seed is not None else int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF
    ctx = Context(c, name, text, sha, arch, options, gpu, seed, reference=reference)
    report = Report(c.name, name, reference.target, sha, "gpu" if gpu is not None else "cpu", seeds=[seed])
    stopped = ""
    for stage in STAGES:
        if stage.name in options.skip:
            report.stages.append(StageResult(stage.name, Status.SKIPPED, "skipped on request"))
            continue
        if stage.gpu_only and gpu is None:
            report.stages.append(StageResult(stage.name, Status.SKIPPED, "needs a GPU (--gpu)"))
            continue
        missing = _missing(ctx, stage)
        if (stopped and not options.keep_going) or missing:
            report.stages.append(StageResult(stage.name, Status.SKIPPED, f"after {stopped}" if stopped else missing))
            continue
        t0 = time.perf_counter()
        result = stage.run(ctx)
        result.seconds = time.perf_counter() - t0
        report.stages.append(result)
        if result.status in (Status.REJECTED, Status.UNDECIDED) and not stopped:
            stopped = f"{stage.name} {result.status.value}"
    return report


def _missing(ctx: Context, stage: Stage) -> str:
    """What ``stage`` needs from earlier stages and does not have ("" when nothing)."""
    if stage.name == "static":
        return ""
    if ctx.kernel is None:
        return "no kernel to run (static gate)"
    needs_cubin = stage.gpu_only or (stage.name == "numeric" and ctx.gpu is not None)
    if needs_cubin and (ctx.assembled is None or not ctx.assembled.ok):
        return "no cubin (ptxas)"
    return ""


def _suite_names() -> set[str]:
    from .. import suite

    return set(suite.names())


def evaluate_many(contract: Contract | str, candidates: list[tuple[str, str]], *, gpu: GpuRunner | None = None,
                  arch: str | None = None, options: EvalOptions | None = None) -> list[Report]:
    """Every (name, ptx) candidate of one contract, in order, on one GPU session (or the CPU)."""
    return [evaluate(contract, text, name=name, gpu=gpu, arch=arch, options=options) for name, text in candidates]
