#!/bin/bash
cd /work/wt/i10d
ulimit -v 6000000
for n in "$@"; do
  /usr/bin/time -f "$n %U user %S sys %e wall %M KB" /work/main/.venv/bin/python -m volta.cli check /tmp/i10d/$n.verify.ptx --contract $n --instance verify --sizes symbolic --arch sm_80 --json --timeout 400 > /tmp/i10d/$n.json 2> /tmp/i10d/$n.err
  tail -1 /tmp/i10d/$n.err; cat /proc/loadavg
done
