#!/bin/bash
# usage: bench.sh TREE TAG
cd $1
OUT=/work/wt/i10acc/bench/results/i10acc-2026-12-06s39/records
echo "start $(date -u +%H:%M:%S) $(uptime)" > $OUT/$2.load
nice -n 5 env PYTHONPATH=. /usr/bin/time -v timeout 900 /work/main/.venv/bin/python bench/verify.py gemm_accumulate gemm_fp16 gemm_silu gemm_fp8 --instance bench --arch sm_100a --timeout 200 --max-rss 6G --no-sentryward --no-scaling --json $OUT/$2.json > $OUT/$2.log 2>&1
echo "end $(date -u +%H:%M:%S) $(uptime)" >> $OUT/$2.load
