"""numpy's transparent huge pages, turned off once for a process that checks kernels.

numpy asks for transparent huge pages (madvise MADV_HUGEPAGE) on every array of 4 MiB or more; on this
kernel (THP "madvise") each first touch of such an array then zeroes (and may compact for) a 2 MiB page.
The checker allocates and frees arrays of megabytes many times (the race detector's merged sequences, the
canonical states of loop boundaries), each read once or twice, where huge pages save no TLB misses worth
that: gemm_fp8 sm_90a at the bench instance spent 1.5-2.0 s of system time of ~10 s there, 0.3 s without;
tests/regression/loop_tcgen05_pipeline_late_reuse_race (2.6 GB peak) 53.5 + 15.4 -> 49.1 + 3.5 s user + sys.
Off for the process, as NUMPY_MADVISE_HUGEPAGE=0 does at numpy's import.

(Raising glibc's mmap and trim thresholds as well, so that freed blocks are reused instead of unmapped, cut
gemm_accumulate sm_100a's page faults 550k -> 87k but made loop_tcgen05_pipeline_late_reuse_race 4x slower in
user time, 223 s: probably its large np.zeros arrays, calloc'd from the heap instead of fresh zero pages, memset
whole. Not done.)

Only how memory is obtained changes: no value the checker computes."""

from __future__ import annotations

import os

_set: bool | None = None


def no_huge_pages() -> bool:
    """Turn numpy's huge-page advice off for this process (once); whether it was done. Left as numpy set it
    where NUMPY_MADVISE_HUGEPAGE is set (numpy read it at import: NUMPY_MADVISE_HUGEPAGE=1 keeps huge pages)."""
    global _set
    if _set is None:
        _set = False
        if "NUMPY_MADVISE_HUGEPAGE" not in os.environ:
            try:
                from numpy._core.multiarray import _set_madvise_hugepage
            except ImportError:
                return False
            _set_madvise_hugepage(False)
            _set = True
    return _set
