#!/bin/bash
ROWS="$1"; TAG=$2
cd /tmp/i10k_base && uptime > /tmp/i10k/load-base-$TAG.txt && PYTHONPATH=. nice -n 15 /work/main/.venv/bin/python bench/verify.py $ROWS --instance bench --arch sm_100a --timeout 200 --max-rss 6G --no-sentryward --scaling --json /tmp/i10k/base-$TAG.json > /tmp/i10k/base-$TAG.log 2>&1
cd /work/wt/i10k && uptime > /tmp/i10k/load-branch-$TAG.txt && PYTHONPATH=. nice -n 15 /work/main/.venv/bin/python bench/verify.py $ROWS --instance bench --arch sm_100a --timeout 200 --max-rss 6G --no-sentryward --scaling --json /tmp/i10k/branch-$TAG.json > /tmp/i10k/branch-$TAG.log 2>&1
echo done > /tmp/i10k/done-$TAG
