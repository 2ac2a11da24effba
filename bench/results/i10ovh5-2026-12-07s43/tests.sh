cd /work/wt/i10ovh5
run() { name=$1; shift; echo "== $name $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"; /usr/bin/time -f "$name cpu %U+%S wall %e" env PYTHONPATH=. timeout 1500 /work/main/.venv/bin/python -m pytest -q -n 0 -p no:cacheprovider "$@" 2>&1 | tail -4; }
run detector-fast tests/check/test_race_detector.py -k "not regression_case"
run overhead tests/check/test_overhead*.py
run suite tests/test_check_suite.py -k sm_80
run regression-race-shared tests/test_regression.py -k "race or shared"
run detector-regression tests/check/test_race_detector.py -k regression_case
echo "== done $(date -u +%T)"
