#!/bin/sh
# final measurements of branch ovh47a (git archive HEAD in /tmp/ovh47a-final) against main 68842e4 (/tmp/ovh47a-base)
R=bench/results/ovh47a-2026-12-07s47
sh $R/abba.sh > /tmp/ovh47a/abba-final.log 2>&1
date -u > /tmp/ovh47a/full.log; cat /proc/loadavg >> /tmp/ovh47a/full.log
(cd /tmp/ovh47a-final && PYTHONPATH=. /usr/bin/time -f "%U+%S s CPU, %e s wall" nice -n 15 /work/main/.venv/bin/python bench/check_overhead.py --arch sm_80 --repeat 3 --json /tmp/ovh47a/full.json) >> /tmp/ovh47a/full.log 2>&1
date -u >> /tmp/ovh47a/full.log; cat /proc/loadavg >> /tmp/ovh47a/full.log
PYTHONPATH= nice -n 15 /work/main/.venv/bin/python $R/abab.py /tmp/ovh47a-base /tmp/ovh47a-final 1 all > /tmp/ovh47a/reports-all-final.log 2>&1
