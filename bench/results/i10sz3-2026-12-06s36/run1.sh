#!/bin/bash
# run1.sh TREE TAG T
cd $1
VOLTA_Z3_LOG=1 nice -n 10 /usr/bin/time -f "TIME %U user %S sys %e wall %M KB" env PYTHONPATH=$1 timeout 2000 \
  /work/main/.venv/bin/python -c "from volta.cli import main; main()" check /tmp/sz3/bitdelta_batched.sm_80.ptx --contract bitdelta_batched --instance verify \
  --sizes symbolic --arch sm_80 --timeout $3 > /tmp/sz3/$2.log 2>&1
uptime >> /tmp/sz3/$2.log
