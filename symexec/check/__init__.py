"""Check mode: prove a kernel free of races, divergence, deadlocks, out-of-bounds accesses and
uninitialised shared data for one launch, or show a witness (symexec.check.kernel)."""

from .findings import ExitCode, Finding, GridMethod, Report, Site, Verdict
from .kernel import GridMode, check_kernel
from .run import CheckRun, new_run, run_checked

__all__ = ["check_kernel", "run_checked", "new_run", "CheckRun", "GridMode", "Report", "Finding", "Site", "Verdict",
           "ExitCode", "GridMethod"]
