"""`check_kernel`: the checker's entry point. It refuses what the checker does not model, picks how
the CTAs of the grid are covered (every CTA executed, or a symbolic pair of CTAs with Z3: grid.py)
and returns the report of that run (run.py)."""

from __future__ import annotations

from enum import Enum

from ptx_parser import ast as A

from ..launch import Launch
from ..machine import time_limit_passed
from ..program import Program
from .alloc import no_huge_pages
from .findings import GridMethod, Report, Verdict
from .grid import check_symbolic
from .run import new_run, run_checked
from .sizes import SizeDomain

AUTO_MIN_CTAS = 64  # grid="auto": up to this many CTAs, enumerating (one vectorised batch) is cheaper

#: Enumerating a grid keeps per-thread clocks for every CTA: beyond this many threads (about 1.5 GB
#: of clocks, and hours of emulation) the checker answers inconclusive instead of trying.
MAX_ENUMERATED_THREADS = 1 << 27


def _past_deadline(prog: Program, launch: Launch, why: str) -> Report | None:
    """The symbolic grid's attempt used up the run's time limit (`why` says where it stopped): enumerating
    the grid now would stop at its first instruction and name that, as if the enumeration had been too
    slow. Inconclusive, naming where the symbolic attempt stopped instead; None while time is left."""
    seconds = time_limit_passed()
    if seconds is None:
        return None
    detail = why.removeprefix("symbolic not applicable: ").removeprefix(
        f"inconclusive: time limit of {seconds:g} s reached ")
    report = Report(Verdict.INCONCLUSIVE, prog.function.name,
                    f"time limit of {seconds:g} s reached in the symbolic grid's attempt ({detail}); the "
                    f"{launch.num_ctas} CTAs were not enumerated")
    report.notes.append("no time was left to enumerate the grid after the symbolic grid's attempt: nothing was "
                        "decided")
    report.stats["grid_method"] = GridMethod.NONE.describe(f"time limit during the symbolic grid: {why}")
    return report


class GridMode(Enum):
    AUTO = "auto"  # symbolic where it applies and the grid has more than AUTO_MIN_CTAS CTAs
    ENUMERATE = "enumerate"
    SYMBOLIC = "symbolic"


def _unmodelled(prog: Program) -> tuple[str, A.Instruction] | None:
    """Features the emulator runs but whose ordering the checker does not model yet. A verdict that
    ignored them could call a racy kernel race-free, so they make the verdict `unsupported`."""
    for ins in prog.code:
        if ins.opcode == "tcgen05" and not TCGEN05_EVENTS:
            return "tcgen05 tensor-memory and async-proxy ordering", ins
    return None


def _has_loop(prog: Program) -> bool:
    """Does the kernel branch backwards anywhere?"""
    for pc, ins in enumerate(prog.code):
        t = ins.operands[0] if ins.opcode == "bra" and ins.operands else None
        if isinstance(t, A.Sym) and prog.labels.get(t.name, pc + 1) <= pc:
            return True
    return False


#: The tcgen05 unit reports its asynchronous operations (symexec.asyncops) to the checker.
TCGEN05_EVENTS = True


def check_kernel(prog: Program, launch: Launch, grid: GridMode | str = GridMode.AUTO,
                 sizes: SizeDomain | None = None) -> Report:
    """grid: ENUMERATE runs every CTA; SYMBOLIC proves cross-CTA global races and global bounds
    with Z3 for a symbolic pair of CTAs (grid.py) and falls back to enumerating when it cannot;
    AUTO (default) = symbolic where it applies and the grid has more than AUTO_MIN_CTAS CTAs.
    sizes: prove for every launch of the domain (symbolic sizes, sizes.py; `launch` is one of
    them); where that does not apply, the verdict is for `launch` and a note says why."""
    try:
        mode = GridMode(grid)
    except ValueError:
        raise ValueError(f"grid must be auto, enumerate or symbolic, not {grid!r}") from None
    no_huge_pages()
    if sizes is not None and _unmodelled(prog) is None:
        done, why = check_symbolic(prog, launch, sizes)
        if done is not None:
            return done
        report = check_kernel(prog, launch, grid)
        report.notes.insert(0, f"symbolic sizes not applicable ({why.removeprefix('symbolic not applicable: ')}): "
                               "the verdict holds for the checked launch only ("
                               + ", ".join(f"{k} = {v}" for k, v in sizes.concrete.items()) + ")")
        report.stats["sizes"] = {"domain": sizes.describe(), "fallback": why}
        return report
    gap = _unmodelled(prog)
    if gap is not None:
        what, ins = gap
        report = Report(Verdict.UNSUPPORTED, prog.function.name, f"{what} (checker) at {ins.span}")
        report.notes.append(f"{ins.name} at {ins.span}: the emulator runs it (volta run) but the race "
                            "checker does not model its ordering yet")
        return report
    why = "requested" if mode is GridMode.ENUMERATE else f"grid of at most {AUTO_MIN_CTAS} CTAs"
    tried = mode is GridMode.SYMBOLIC or (mode is GridMode.AUTO and launch.num_ctas > AUTO_MIN_CTAS)
    if tried:
        done, why = check_symbolic(prog, launch)
        if done is not None:
            return done
    elif mode is GridMode.AUTO and launch.num_ctas > 2 and _has_loop(prog):
        # a small grid of long loops: two CTAs whose loops are summarised (loops.py) beat every CTA
        # running every iteration; if no loop was long enough to summarise, every CTA is run
        tried = True
        done, why = check_symbolic(prog, launch, require_summary=True)
        if done is not None:
            return done
        why = f"grid of at most {AUTO_MIN_CTAS} CTAs ({why.removeprefix('symbolic not applicable: ')})"
    late = _past_deadline(prog, launch, why) if tried else None
    if late is not None:
        return late
    threads = launch.num_ctas * (-(-launch.threads_per_block // 32) * 32)
    if threads > MAX_ENUMERATED_THREADS:
        report = Report(Verdict.INCONCLUSIVE, prog.function.name,
                        f"enumerating {launch.num_ctas} CTAs ({threads} threads) is beyond the checker's limit of "
                        f"{MAX_ENUMERATED_THREADS} threads")
        report.notes.append(f"the symbolic grid could not be used: {why}" if mode is not GridMode.ENUMERATE else
                            "use --grid symbolic (or auto) to cover the grid with a symbolic pair of CTAs")
        report.stats["grid_method"] = GridMethod.NONE.describe("grid too large to enumerate")
        return report
    report = run_checked(new_run(prog, launch), prog, launch)
    report.stats["grid_method"] = GridMethod.ENUMERATE.describe("" if mode is GridMode.ENUMERATE else why)
    if why.startswith("symbolic not applicable"):  # the symbolic grid was asked for or chosen, and fell back
        report.notes.insert(0, f"symbolic grid not applicable ({why.removeprefix('symbolic not applicable: ')}): "
                               f"all {launch.num_ctas} CTAs were executed instead")
    return report



__all__ = ["check_kernel", "GridMode", "AUTO_MIN_CTAS", "MAX_ENUMERATED_THREADS"]
