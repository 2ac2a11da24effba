#!/bin/bash
for side in ${SIDES:-base branch}; do
  if [ $side = base ]; then D=/tmp/i10wit_base; else D=/work/wt/i10wit; fi
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $(git -C /work/wt/i10wit rev-parse --short HEAD)"
  (cd $D && nice -n 5 timeout 1200 /usr/bin/time -f "$side %U user %S sys %e wall %M KiB maxrss" env PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=. \
     /work/main/.venv/bin/python /work/wt/i10wit/bench/results/i10wit-2026-12-07s42/twice.py)
  echo "$side end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
