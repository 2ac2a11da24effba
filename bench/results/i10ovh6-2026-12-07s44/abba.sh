#!/bin/bash
# abba.sh: bench/check_overhead.py --repeat 3 bitdelta_batched dion_update, base (git archive main) vs branch
# (git archive HEAD), one process per side, order base branch branch base; /usr/bin/time -v per run; load logged.
# Usage (from the worktree root): bash bench/results/i10ovh6-2026-12-07s44/abba.sh OUT_DIR
set -e
OUT=${1:-/tmp/i10ovh6/abba}
rm -rf "$OUT" && mkdir -p "$OUT/base" "$OUT/branch"
git archive main | tar -x -C "$OUT/base"
git archive HEAD | tar -x -C "$OUT/branch"
PY=/work/main/.venv/bin/python
for side in base branch branch base; do
  echo "== $side start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  (cd "$OUT/$side" && PYTHONPATH=. /usr/bin/time -v $PY bench/check_overhead.py --repeat 3 bitdelta_batched dion_update \
     2> >(grep -E "User time|System time|Elapsed" >&2)) 2>&1 | grep -vE "^\s*$|┃|━|─|┏|┗|┡|└"
  echo "== $side end $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
done
