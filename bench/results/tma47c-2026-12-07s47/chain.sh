#!/bin/bash
ulimit -v 8000000
while ! grep -q ALLDONE /tmp/tma47c/rep.log; do sleep 5; done
run() {  # tree tag
  L=/work/wt/tma47c/bench/results/tma47c-2026-12-07s47/logs/final_$2.log
  cat /proc/loadavg > $L
  (cd $1 && PYTHONPATH=. nice -n 15 /usr/bin/time -v /work/main/.venv/bin/python /work/wt/tma47c/bench/results/tma47c-2026-12-07s47/drive.py sm_120 bench 500 >> $L 2>&1)
  cat /proc/loadavg >> $L
}
run /tmp/tma47c-base base1
run /work/wt/tma47c branch1
run /work/wt/tma47c branch2
run /tmp/tma47c-base base2
echo TMADONE >> /tmp/tma47c/rep.log
for it in sm_90a:attention_tma sm_120:attention_tma sm_120:gemm_block_scaled sm_120:gemm_tcgen05_ws sm_100a:gemm_tcgen05_ws sm_120:dion_update sm_90a:dion_update; do
  (cd /tmp/tma47c-base && PYTHONPATH=. nice -n 15 /work/main/.venv/bin/python /tmp/tma47c/reports.py /work/wt/tma47c/bench/results/tma47c-2026-12-07s47/logs/reports_base_bench.jsonl bench $it) >> /tmp/tma47c/rep.log 2>&1
  (cd /work/wt/tma47c && PYTHONPATH=. nice -n 15 /work/main/.venv/bin/python /tmp/tma47c/reports.py /work/wt/tma47c/bench/results/tma47c-2026-12-07s47/logs/reports_branch_bench.jsonl bench $it) >> /tmp/tma47c/rep.log 2>&1
done
echo BENCHDONE >> /tmp/tma47c/rep.log
