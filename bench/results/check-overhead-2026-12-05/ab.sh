#!/bin/bash
k=$1; r=${2:-5}
for i in 1 2; do
 (cd /tmp/i10ov2_main && echo -n "main   " && PYTHONPATH=. /work/main/.venv/bin/python /tmp/i10ov2_ab.py $k $r)
 (cd /work/wt/i10ov2 && echo -n "branch " && PYTHONPATH=. /work/main/.venv/bin/python /tmp/i10ov2_ab.py $k $r)
done
