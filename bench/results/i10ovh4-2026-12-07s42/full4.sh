#!/bin/bash
# bench/check_overhead.py --repeat 3 over every sm_80 suite kernel: base, branch, branch, base back to back (ABBA),
# one niced process each, JSON and text beside this script.
D=$(cd "$(dirname "$0")" && pwd)
for run in base:base1 branch:branch1 branch:branch2 base:base2; do
  side=${run%%:*}; name=${run##*:}
  { echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    nice -n 5 timeout 900 /usr/bin/time -f "%U user %S sys %e wall %M KiB maxrss" env PYTHONPATH=. \
      /work/main/.venv/bin/python $D/bench_side.py $side --repeat 3 --json $D/full-$name.json
    echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; } > $D/full-$name.txt 2>&1
done
