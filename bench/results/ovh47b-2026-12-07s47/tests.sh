#!/bin/bash
# the branch's tests (targeted), one after another; each line: command, result, CPU, wall, load
cd "$(dirname "$0")/../../.."
ulimit -v 8000000
run() {
  echo "== $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg): pytest $*"
  PYTHONPATH=. /usr/bin/time -f "%U+%S s CPU, %e s wall" nice -n 15 /work/main/.venv/bin/python -m pytest -q -n 0 -p no:cacheprovider "$@" 2>&1 | tail -3
}
run tests/check/test_overhead_s47.py tests/check/test_overhead_s39.py tests/check/test_overhead_s34.py tests/check/test_overhead_s33.py tests/test_sorted_unique.py
run tests/check/test_race_detector.py -k "not regression_case"
run tests/check/test_race_detector.py -k "regression_case and (async or tma or bulk or tcgen05 or proxy or mbarrier or atomic or strong)"
run tests/test_regression.py -k "shared or (race and (async or tma or bulk or mbarrier or atomic))"
run tests/test_check_suite.py -k sm_80
echo "== end $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
