#!/bin/bash
# one.sh TREE NAME ARCH PTX TAG: volta check --sizes symbolic under /usr/bin/time, from TREE's code
cd $1
VOLTA_Z3_LOG=1 PYTHONPATH=. nice -n 15 /usr/bin/time -f "TIME %U user %S sys %e wall %M KB" /work/main/.venv/bin/python -c "import sys; from volta.cli import main; main(sys.argv[1:])" check $4 --contract $2 --instance verify --sizes symbolic --arch $3 --timeout 900 > /tmp/i10j/res.$5.$2.$3.txt 2>&1
v=$(grep -m1 "gemm_kernel\|: race\|: out_of\|: [a-z_]*$" /tmp/i10j/res.$5.$2.$3.txt | sed 's/.*: //'); p=$(grep -o "proven for ALL sizes ([^)]*)" /tmp/i10j/res.$5.$2.$3.txt | head -1); f=$(grep -o "symbolic sizes not applicable ([^)]*)" /tmp/i10j/res.$5.$2.$3.txt | head -1)
echo "$5 $2 $3 | $v | $p $f | $(grep TIME /tmp/i10j/res.$5.$2.$3.txt) | load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/i10j/summary.txt
