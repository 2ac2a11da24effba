#!/bin/bash
# usage: run1.sh NAME TAG
cd "$(git rev-parse --show-toplevel)"
n=$1; t=$2
VOLTA_Z3_LOG=${Z3LOG:-0} nice -n 10 /usr/bin/time -f "TIME $n %U user %S sys %e wall %M KB" env PYTHONPATH=. /work/main/.venv/bin/python -c "from volta.cli import main; main()" check /tmp/sz34/$n.sm_80.ptx --contract $n --instance verify --sizes symbolic --arch sm_80 --timeout ${TMO:-300} > /tmp/sz34/res.$n.$t.txt 2>&1
