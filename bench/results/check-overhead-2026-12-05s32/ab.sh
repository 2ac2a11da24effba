#!/bin/bash
# ab.sh KERNEL N: least check CPU ms of N runs (after a warm-up), one process per tree, base and
# branch alternating twice. BASE / BRANCH: the trees' roots.
D=$(realpath "$(dirname "$0")")
k=$1; r=${2:-5}
for i in 1 2; do
 (cd "${BASE:-/tmp/i10ov4_base}" && echo -n "base   " && PYTHONPATH=. /work/main/.venv/bin/python "$D/ab.py" "$k" "$r")
 (cd "${BRANCH:-/work/wt/i10ov4}" && echo -n "branch " && PYTHONPATH=. /work/main/.venv/bin/python "$D/ab.py" "$k" "$r")
done
