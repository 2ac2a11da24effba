#!/bin/bash
# Full JSON check reports of every tests/regression case and every sm_80 suite kernel from the base and the branch
# trees (git archive in /tmp/i10ovh2/{base,br}), then compared (stats.seconds aside; tree paths normalised).
R=/work/wt/i10ovh2/bench/results
for side in base br; do
  D=/tmp/i10ovh2/$side
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd $D && nice -n 5 timeout 1000 /usr/bin/time -f "$side %U user %S sys %e wall %M KiB maxrss" env PYTHONPATH=. \
     /work/main/.venv/bin/python $R/check-overhead-2026-12-04/reports.py /tmp/i10ovh2/rep-$side.json both)
  echo "$side end $(date -u +%T) rc $?"
done
/work/main/.venv/bin/python $R/check-overhead-2026-12-04x/compare.py /tmp/i10ovh2/rep-base.json /tmp/i10ovh2/rep-br.json \
  /tmp/i10ovh2/base /tmp/i10ovh2/br
