# reports of five sm_80 suite kernels (the detector-heavy ones; every kernel took too long at load 11) in both trees, then ABBA of bench/check_overhead.py: base (git archive main) vs branch
cd /tmp/i10ovh5/base && PYTHONHASHSEED=0 PYTHONPATH=. nice /work/main/.venv/bin/python /tmp/i10ovh5/reports.py bitdelta bitdelta_batched dion_update gemv layernorm > /tmp/i10ovh5/reports-base.txt 2>&1
cd /work/wt/i10ovh5 && PYTHONHASHSEED=0 PYTHONPATH=. nice /work/main/.venv/bin/python /tmp/i10ovh5/reports.py bitdelta bitdelta_batched dion_update gemv layernorm > /tmp/i10ovh5/reports-branch.txt 2>&1
cmp /tmp/i10ovh5/reports-base.txt /tmp/i10ovh5/reports-branch.txt && echo "reports identical: $(wc -l < /tmp/i10ovh5/reports-base.txt) kernels"
for side in base branch branch base; do
  if [ $side = base ]; then cd /tmp/i10ovh5/base; else cd /work/wt/i10ovh5; fi
  echo "== $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "$side cpu %U+%S wall %e" env PYTHONPATH=. /work/main/.venv/bin/python bench/check_overhead.py --arch sm_80 --repeat 3 bitdelta_batched dion_update 2>&1 | grep -E "sm_80:|cpu"
done
echo "== done $(date -u +%T)"
