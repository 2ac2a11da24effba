#!/bin/bash
# one.sh TREE NAME ARCH PTX TAG
cd $1
VOLTA_Z3_LOG=1 PYTHONPATH=. nice -n 15 timeout 1500 /usr/bin/time -f "TIME %U user %S sys %e wall %M KB" /work/main/.venv/bin/python -c "import sys; from volta.cli import main; main(sys.argv[1:])" check $4 --contract $2 --instance verify --sizes symbolic --arch $3 --timeout 1500 > /tmp/i10szacc/res.$5.$2.$3.txt 2>&1
