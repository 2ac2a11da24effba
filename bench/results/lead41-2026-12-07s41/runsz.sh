#!/bin/bash
# usage: runsz.sh NAME
N=$1
PYTHONPATH=. /work/main/.venv/bin/python -c "from volta.cli import main; main()" suite ptx $N --arch sm_80 --instance verify -o /tmp/sz41/$N.ptx
/usr/bin/time -f "TIME %U user %S sys %e wall %M KB" env PYTHONPATH=. /work/main/.venv/bin/python -c "from volta.cli import main; main()" check /tmp/sz41/$N.ptx --contract $N --instance verify --sizes symbolic --arch sm_80 --timeout 1500 > /tmp/sz41/$N.out 2>&1
echo "rc=$?" >> /tmp/sz41/$N.out
