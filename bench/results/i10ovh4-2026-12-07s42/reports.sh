#!/bin/bash
# Full JSON reports of every regression case and sm_80 suite kernel, base (main's numbering put back) then branch,
# from this tree under PYTHONHASHSEED=0, then check-overhead-2026-12-04x/compare.py.
R=/work/main/bench/results; D=$(cd "$(dirname "$0")" && pwd); T=/tmp/i10ovh4; mkdir -p $T
for side in base branch; do
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n 5 timeout 1500 /usr/bin/time -f "$side %U user %S sys %e wall %M KiB maxrss" env PYTHONHASHSEED=0 PYTHONPATH=. \
     /work/main/.venv/bin/python $D/reports_side.py $T/rep-$side.json $side
  echo "$side end $(date -u +%T) rc $?"
done
/work/main/.venv/bin/python $R/check-overhead-2026-12-04x/compare.py $T/rep-base.json $T/rep-branch.json . .
