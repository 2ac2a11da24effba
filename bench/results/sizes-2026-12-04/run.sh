#!/bin/bash
# run.sh TREE TAG CONTRACT...: volta check --sizes symbolic of each contract's sm_80 verify build
# (/tmp/i10k/NAME.verify.ptx, written by harness.compile.compile_contract), one at a time
tree=$1; tag=$2; shift 2
cd "$tree"
ulimit -v 6000000
for n in "$@"; do
  PYTHONPATH=$tree /usr/bin/time -f "$n $tag %U user %S sys %e wall %M KB" /work/main/.venv/bin/python -m volta.cli check /tmp/i10k/$n.verify.ptx --contract $n --instance verify --sizes symbolic --arch sm_80 --json --timeout 240 > /tmp/i10k/$n.$tag.json 2> /tmp/i10k/$n.$tag.err
  tail -1 /tmp/i10k/$n.$tag.err; cat /proc/loadavg
done
