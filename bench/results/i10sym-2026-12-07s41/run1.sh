#!/bin/bash
# usage: run1.sh NAME TAG [TREE]
N=$1; TAG=$2; TREE=${3:-/work/wt/i10sym}
cd $TREE
uptime > /tmp/s41/$N.$TAG.load
VOLTA_Z3_LOG=1 timeout 400 nice -n 5 /usr/bin/time -f "TIME %U user %S sys %e wall %M KB" env PYTHONPATH=$TREE \
  /work/main/.venv/bin/python -c "from volta.cli import main; main()" check /tmp/s41/$N.sm_80.ptx --contract $N --instance verify \
  --sizes symbolic --arch sm_80 --timeout 380 > /tmp/s41/$N.$TAG.out 2> /tmp/s41/$N.$TAG.err
echo "rc=$?" >> /tmp/s41/$N.$TAG.err
uptime >> /tmp/s41/$N.$TAG.load
