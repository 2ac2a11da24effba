#!/bin/bash
# usage: ab.sh kernel reps  -> main vs branch, alternating twice
k=$1; r=${2:-5}
for i in 1 2; do
 (cd /tmp/i10ov_main && echo -n "main   " && PYTHONPATH=. /work/main/.venv/bin/python /tmp/i10ov/ab.py $k $r)
 (cd /work/wt/i10ov && echo -n "branch " && PYTHONPATH=. /work/main/.venv/bin/python /tmp/i10ov/ab.py $k $r)
done
