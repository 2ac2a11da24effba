#!/bin/bash
# Full suite, base then branch (each tree's own bench script), CPU and wall from /usr/bin/time.
OUT=$1
PY=/work/main/.venv/bin/python
for side in base branch; do
  if [ $side = base ]; then D=/tmp/i10ov6_base; else D=/tmp/i10ov6_c1; fi
  echo "== $side start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd $D && nice -n 10 /usr/bin/time -f "$side: %U user %S sys %e wall %M KiB maxrss" env PYTHONPATH=. $PY bench/check_overhead.py --repeat 3 --json $OUT/full-$side.json > $OUT/full-$side.txt 2>&1; tail -1 $OUT/full-$side.txt)
  echo "== $side end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
