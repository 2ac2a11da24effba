#!/bin/bash
R=/work/main/bench/results
for side in base br; do
  D=/tmp/i10ovh3/$side
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd $D && nice -n 5 timeout 1500 /usr/bin/time -f "$side %U user %S sys %e wall %M KiB maxrss" env PYTHONHASHSEED=0 PYTHONPATH=. \
     /work/main/.venv/bin/python $R/check-overhead-2026-12-04/reports.py /tmp/i10ovh3/rep-$side.json both)
  echo "$side end $(date -u +%T) rc $?"
done
/work/main/.venv/bin/python $R/check-overhead-2026-12-04x/compare.py /tmp/i10ovh3/rep-base.json /tmp/i10ovh3/rep-br.json \
  /tmp/i10ovh3/base /tmp/i10ovh3/br
