#!/bin/bash
# ab.sh KERNEL N: least check CPU ms of N runs (after a warm-up), one process per tree, main and
# branch alternating twice. MAIN / BRANCH: the trees' roots.
D=$(realpath "$(dirname "$0")")
k=$1; r=${2:-5}
for i in 1 2; do
 (cd "${MAIN:-/tmp/i10ov3_main}" && echo -n "main   " && PYTHONPATH=. /work/main/.venv/bin/python "$D/ab.py" "$k" "$r")
 (cd "${BRANCH:-/work/wt/i10ov3}" && echo -n "branch " && PYTHONPATH=. /work/main/.venv/bin/python "$D/ab.py" "$k" "$r")
done
