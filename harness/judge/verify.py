"""The verify gate: `volta check` (symexec.check) on exactly the PTX bytes that are assembled and timed.

The candidate's text is parsed once by the pipeline; its sha256 is recorded in the report and in
this stage's detail. The launch is the contract's at the verify instance (the bench build's
constexprs, warps and stages, only problem sizes shrink: tests/test_verify_matches_bench.py), with
the candidate's launch configuration (harness.judge.launch) and lazy inputs. A race, out-of-bounds
access, deadlock or other finding rejects the candidate with its witness; `unsupported` or
`inconclusive` (time budget, memory) leaves it undecided: never accepted as verified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptx_parser import ast as A

from ..compile import CompiledPTX
from ..contract import Contract
from ..emulate import kernel_launch
from .launch import launch_config
from .report import Problem, Reason, Severity


@dataclass
class VerifyDetail:
    verdict: str
    ptx_sha256: str
    instance: str
    grid_method: str = ""
    findings: list[dict[str, Any]] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check(contract: Contract, module: A.Module, kernel: A.Function, reference: CompiledPTX, instance: str,
          timeout: float, ptx: str | None = None) -> Any:
    """The symexec.check Report of ``kernel`` at ``instance`` (at most ``timeout`` seconds of emulation);
    ``ptx``: the candidate's text, whose `// volta-launch:` header gives the launch shape."""
    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
    from symexec import LaunchError, Unsupported, load_program, time_limit
    from symexec.check import check_kernel
    from symexec.check.findings import Report, Verdict

    arrays = contract.make_inputs(instance, "normal", 0, lazy=True)
    launch = kernel_launch(contract, reference, kernel, arrays, instance)
    config = launch_config(contract, reference, instance, ptx)
    launch.grid, launch.block, launch.dynamic_shared_bytes = config.grid, config.block, config.dynamic_shared
    try:
        prog = load_program(module, kernel.name)
        with time_limit(timeout):
            return check_kernel(prog, launch)
    except LaunchError as e:  # .reqntid/.maxntid forbid this block: CUDA refuses the launch (the static gate says so)
        return Report(Verdict.INCONCLUSIVE, kernel.name, f"the launch is refused: {e}")
    except Unsupported as e:
        return Report(Verdict.UNSUPPORTED, kernel.name, str(e).removeprefix("unsupported: "))
    except MemoryError:
        return Report(Verdict.INCONCLUSIVE, kernel.name, "out of memory while checking")


def judge(report: Any, sha: str, instance: str) -> tuple[list[Problem], VerifyDetail, bool]:
    """(problems, detail, undecided) of a symexec.check Report."""
    detail = VerifyDetail(report.verdict, sha, instance, str(report.stats.get("grid", "")),
                          [f.to_json() for f in report.findings], list(report.assumptions), list(report.notes))
    code = report.exit_code
    if code == 0 and report.reason:  # race_free for the verify input only (data-dependent accesses)
        return [Problem(Reason.VERIFY_UNDECIDED, report.verdict, Severity.FLAG)], detail, True
    if code == 0:
        return [], detail, False
    if code == 1:
        problems = []
        for f in report.findings:
            where = f.sites[0].ptx if f.sites else None
            witness = "; ".join(s.describe() for s in f.sites[:2])
            problems.append(Problem(Reason.VERIFY_FINDING, f"{f.kind.value}: {f.message}"
                                    + (f" [{witness}]" if witness else ""), where=where))
        return problems or [Problem(Reason.VERIFY_FINDING, report.verdict)], detail, False
    return [Problem(Reason.VERIFY_UNDECIDED, report.verdict, Severity.FLAG)], detail, True
