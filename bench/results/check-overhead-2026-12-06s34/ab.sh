#!/bin/bash
# Alternating A/B of the four kernels: base (git archive of 3ef2214) and branch (git archive of the
# branch commit) processes in turn, each `check_overhead.py --repeat 3` on the four; load logged.
# usage: ab.sh BASE_DIR BRANCH_DIR OUT_DIR ROUNDS
set -e
BASE=$1; BR=$2; OUT=$3; N=${4:-2}
K="lion dion_update bitdelta_batched mamba2_chunk_scan"
PY=/work/main/.venv/bin/python
for i in $(seq 1 $N); do
  for side in base branch; do
    if [ $side = base ]; then D=$BASE; else D=$BR; fi
    echo "== round $i $side $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd $D && PYTHONPATH=. nice -n 10 $PY bench/check_overhead.py --repeat 3 $K --json $OUT/ab-$side-$i.json | grep -E "^\s*(│|\|)?\s*(lion|dion|bitdelta|mamba)" || true)
  done
done
echo "== done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
