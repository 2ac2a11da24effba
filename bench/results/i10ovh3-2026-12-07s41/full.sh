#!/bin/bash
# One full run of bench/check_overhead.py over every sm_80 suite kernel, in one niced process, from tree $1
# (a `git archive` of the base or the branch), JSON to $2; $3: repeats (default 3).
cd "$1" && echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" && \
nice -n 5 timeout 900 /usr/bin/time -f "%U user %S sys %e wall %M KiB maxrss" env PYTHONPATH=. \
  /work/main/.venv/bin/python bench/check_overhead.py --repeat "${3:-3}" --json "$2" && \
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
