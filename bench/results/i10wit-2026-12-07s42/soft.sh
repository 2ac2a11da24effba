#!/bin/bash
for side in base branch branch base; do
  if [ $side = base ]; then D=/tmp/i10wit_base; else D=/work/wt/i10wit; fi
  echo "$side start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd $D && nice -n 5 timeout 300 env PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=. /work/main/.venv/bin/python bench/verify.py softmax layernorm cross_entropy_zloss \
     --instance bench --arch sm_80 --no-sentryward --no-scaling --timeout 100 --repeat 3 --json /tmp/i10wit_soft_$side.json >/dev/null 2>&1;
   /work/main/.venv/bin/python -c "
import json; d=json.load(open('/tmp/i10wit_soft_$side.json'))
for r in d['records']:
    v = r['volta']; print('$side', r['contract'], r['arch'], v.get('verdict'), 'cpu_s', v.get('cpu_seconds'), 'analysis_s', round(v.get('seconds'),3), 'rss_mib', round(v.get('peak_rss_mib')), v.get('grid_method', ''))
")
done
