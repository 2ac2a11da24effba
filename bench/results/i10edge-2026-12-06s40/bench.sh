#!/bin/bash
# usage: bench.sh TREE TAG [ARCH...]: the GEMM rows of issue 10 at the bench instance, one process at a time
cd $1
OUT=/work/wt/i10edge/bench/results/i10edge-2026-12-06s40/records
shift; TAG=$1; shift
echo "start $(date -u +%H:%M:%S) $(uptime)" > $OUT/$TAG.load
nice -n 5 env PYTHONPATH=. /usr/bin/time -v timeout 900 /work/main/.venv/bin/python bench/verify.py gemm_accumulate gemm_fp8 gemm_fp16 gemm_silu gemm_block_scaled --instance bench --arch ${@:-sm_90a sm_100a} --timeout 200 --max-rss 6G --no-sentryward --no-scaling --json $OUT/$TAG.json > $OUT/$TAG.log 2>&1
echo "end $(date -u +%H:%M:%S) $(uptime)" >> $OUT/$TAG.load
