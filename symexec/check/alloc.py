"""How large blocks of memory are obtained, set once for a process that checks kernels: glibc malloc's
thresholds for large blocks, and numpy's transparent huge pages.

The checker allocates and frees numpy arrays of megabytes many times per instruction window (the race
detector's merged sequences, the canonical states of loop boundaries). glibc's malloc serves a block above
its mmap threshold (dynamic, at most 32 MiB) with a fresh mapping and unmaps it when it is freed, and gives
the top of the heap back to the system past its trim threshold: every such block's pages are faulted in
again on first touch. On gemm_accumulate sm_100a at the bench instance that was ~550 thousand minor page
faults (its peak is ~115 thousand pages) and ~1 s of system time of a ~9 s check. With both thresholds
raised, freed blocks stay in the heap and are reused (85 thousand faults, 0.2 s), for a peak ~2-5 % higher.

numpy asks for transparent huge pages (madvise MADV_HUGEPAGE) on every array of 4 MiB or more; on this
kernel (THP "madvise") each first touch of such an array then zeroes (and may compact for) a 2 MiB page:
gemm_fp8 sm_90a bench spent 1.5-2.0 s of system time of ~10 s there, 0.3 s without (its arrays are read
once or twice, where huge pages save no TLB misses worth that). Off for the process, as
NUMPY_MADVISE_HUGEPAGE=0 does at numpy's import.

Only the allocator's policy changes: no value the checker computes."""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD = -1  # glibc malloc.h
M_MMAP_THRESHOLD = -3
#: blocks up to this size come from the heap (the largest arrays of a check, whole tensors, still mapped)
MMAP_THRESHOLD = 256 << 20
#: free memory at the top of the heap kept for reuse, not given back
TRIM_THRESHOLD = 512 << 20

_set: tuple[bool, bool] | None = None
_OFF = ("0", "false", "no", "off")


def keep_freed_memory() -> tuple[bool, bool]:
    """For this process, once: raise glibc's mmap and trim thresholds, and turn numpy's huge-page advice off;
    whether each was done. VOLTA_MALLOC_KEEP=0 leaves both as they are; the thresholds are also left where the
    C library is not glibc or the environment sets either (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_), the
    advice where NUMPY_MADVISE_HUGEPAGE is set."""
    global _set
    if _set is None:
        env = os.environ
        on = env.get("VOLTA_MALLOC_KEEP", "1").strip().lower() not in _OFF
        _set = (on and _thresholds(env), on and _no_huge_pages(env))
    return _set


def _thresholds(env) -> bool:
    if "MALLOC_MMAP_THRESHOLD_" in env or "MALLOC_TRIM_THRESHOLD_" in env or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def _no_huge_pages(env) -> bool:
    if "NUMPY_MADVISE_HUGEPAGE" in env:
        return False
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        return False
    _set_madvise_hugepage(False)
    return True
