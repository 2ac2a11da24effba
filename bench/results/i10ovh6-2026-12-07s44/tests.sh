#!/bin/bash
# tests.sh: the branch's tests, one pytest process at a time (-n 0), CPU and wall per command. From the worktree root.
PY=/work/main/.venv/bin/python
run() { echo "== $* ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"; PYTHONPATH=. /usr/bin/time -f "cpu %U+%S s wall %e s" $PY -m pytest -q -p no:cacheprovider -n 0 "$@" 2>&1 | tail -3; }
run tests/check/test_mix.py tests/check/test_overhead_s32.py tests/check/test_overhead_s33.py tests/check/test_overhead_s34.py \
    tests/check/test_overhead_s39.py tests/check/test_overhead_s40.py tests/check/test_overhead_s44.py tests/check/test_implicit_flow.py
run tests/check/test_race_detector.py -k "not regression_case"
run tests/test_regression.py -k "same_value or same_element or equal_values or different_values or warp_lanes or implicit or guarded or shfl or f32x2 or pack"
run tests/test_check_suite.py -k sm_80
