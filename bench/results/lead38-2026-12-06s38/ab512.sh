#!/bin/bash
# alternating base/branch S=512 runs: user/sys CPU s, page faults
for r in 1 2 3; do
 for t in /work/main /work/wt/lead38; do
  cd $t
  PYTHONPATH=$t timeout 600 perf stat -e page-faults -o /tmp/ab.perf /work/main/.venv/bin/python /work/main/bench/results/i11cls-2026-12-06s36/phases.py 512 > /tmp/ab.out 2>&1
  echo "$r $t load=$(cut -d' ' -f1 /proc/loadavg) $(grep -oE 'run_cpu=[0-9.]+' /tmp/ab.out) $(grep -E 'page-faults|user|sys' /tmp/ab.perf | awk '{print $1}' | tr '\n' ' ')"
 done
done
