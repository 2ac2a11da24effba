import sys
sys.path.insert(0, "/tmp/tma47c")
from gen import ring_kernel
from pathlib import Path
R = Path("tests/regression")
common = ("an outer loop of 8 iterations (row r) runs an inner loop of {inner} (j) over a {stages}-slot shared ring (slot s = j mod {stages}, "
          "its byte offset stepped by add/and: it repeats with a period of {stages} iterations, so the inner loop's state at its head "
          "repeats with period {stages}, not 1): each thread loads x[((c * 8 + r) * {inner} + j) * 32 + tid], stores it to its slot, "
          "one bar.sync, reads its neighbour's (tid ^ 1) element of the slot and sums; with {stages} slots one barrier per iteration "
          "orders the read of slot s before its rewrite {stages} iterations later. ")
cases = {
    "loop_nested_ring2_ok": (16, 2, 99, 99, False, "race_free",
        common + "Race free and in bounds. The inner loop is summarised inside the outer loop's checked period with period 2 "
        "(loops.py `_nested`, guessed from its period-2 summary in outer iteration 0), as the K loop of gemm_tma_persistent "
        "(period 4) is"),
    "loop_nested_ring2_skipped_oob": (16, 2, 1, 5, False, "out_of_bounds",
        common + "Twin of loop_nested_ring2_ok: at r = 1, j = 5 only, the load moves past x's end by x's size (e = (((r ^ 1) | (j ^ 5)) - 1) >> 31, "
        "bit arithmetic, no guard). r = 1 is the outer loop's checked period, and j = 5 is in the inner period u = 2 that the nested "
        "period-2 summary skips there (it checks j = 1, 2 and skips j = 3..14): only the symbolic grid's bounds query over the "
        "skipped loads (both leaves, each over its range) finds it"),
    "loop_nested_ring4_ok": (32, 4, 99, 99, False, "race_free",
        common + "Race free and in bounds. The inner loop is summarised inside the outer loop's checked period with period 4 "
        "(loops.py `_nested`)"),
    "loop_nested_ring4_skipped_race": (32, 4, 1, 21, True, "race",
        common + "Twin of loop_nested_ring4_ok: at r = 1, j = 21 only, every thread branches over the barrier, so the neighbour's "
        "element of slot 1 is read unordered after its store: a race. j = 21 is the first iteration of the inner period u = 5 "
        "inside the outer loop's checked period (the nested period-4 summary checks j = 1..4): its decision scan must stop the "
        "summary before it"),
    "loop_nested_ring4_last_period_oob": (32, 4, 1, 28, False, "out_of_bounds",
        common + "Twin of loop_nested_ring4_ok: at r = 1, j = 28 only, the load moves past x's end by x's size (bit arithmetic, no "
        "guard). j = 28 is the last iteration of the last inner period (u = 6, j = 25..28) that the nested period-4 summary skips "
        "in the outer loop's checked period"),
}
for stem, (inner, stages, r0, j0, barrier, expect, why) in cases.items():
    text = ring_kernel(8, inner, stages, r0, j0, barrier)
    (R / f"{stem}.ptx").write_text(f"// expect: {expect}\n// why: {why.format(inner=inner, stages=stages)}\n" + text)
