#!/bin/sh
# targeted tests of branch ovh47a (run from the worktree root)
ulimit -v 8000000
P="nice -n 15 /work/main/.venv/bin/python -m pytest -q -n 0 -p no:cacheprovider"
export PYTHONPATH=.
echo "== shadow/mix/overhead/implicit"; /usr/bin/time -f "%U+%S s CPU, %e s wall" $P tests/check/test_overhead_s47_shadow.py tests/check/test_overhead_s44.py tests/check/test_overhead_s33.py tests/check/test_mix.py tests/check/test_implicit_flow.py 2>&1 | tail -3
echo "== lazy memory"; /usr/bin/time -f "%U+%S s CPU, %e s wall" $P tests/test_lazy_memory.py 2>&1 | tail -3
echo "== race detector (not regression_case)"; /usr/bin/time -f "%U+%S s CPU, %e s wall" $P tests/check/test_race_detector.py -k "not regression_case" 2>&1 | tail -3
echo "== check suite relu/lion/dion/bitdelta_batched"; /usr/bin/time -f "%U+%S s CPU, %e s wall" $P tests/test_check_suite.py -k "relu or lion or dion or bitdelta_batched" 2>&1 | tail -3
echo "== regression (same value, shfl, implicit, guarded, f32x2, pack, shared)"; /usr/bin/time -f "%U+%S s CPU, %e s wall" $P tests/test_regression.py -k "same_value or same_element or equal_values or different_values or warp_lanes or implicit or guarded or shfl or f32x2 or pack" 2>&1 | tail -3
