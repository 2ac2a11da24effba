for side in base br; do
  D=/tmp/i10ovh_$side
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd $D && nice -n 5 timeout 1000 /usr/bin/time -f "$side %U user %S sys %e wall" env PYTHONPATH=. /work/main/.venv/bin/python /work/wt/i10ovh/bench/results/check-overhead-2026-12-04/reports.py /tmp/i10ovh_out/rep-$side.json both)
  echo "$side end $(date -u +%T) rc $?"
done
