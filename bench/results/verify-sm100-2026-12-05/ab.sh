set -x
ROWS="$1"; TAG=$2
cd /tmp/i10g_base && PYTHONPATH=. nice -n 5 /work/main/.venv/bin/python bench/verify.py $ROWS --instance bench --arch sm_100a --timeout 200 --max-rss 6G --no-sentryward --scaling --json /work/wt/i10g/bench/results/verify-sm100-2026-12-05/main-$TAG.json
cd /work/wt/i10g && PYTHONPATH=. nice -n 5 /work/main/.venv/bin/python bench/verify.py $ROWS --instance bench --arch sm_100a --timeout 200 --max-rss 6G --no-sentryward --scaling --json /work/wt/i10g/bench/results/verify-sm100-2026-12-05/branch-$TAG.json
