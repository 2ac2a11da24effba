#!/bin/sh
# in-process ABBA, base = git archive main (68842e4) in /tmp/ovh47a-base, branch = git archive HEAD in /tmp/ovh47a-final
A=/tmp/ovh47a-base; B=/tmp/ovh47a-final
PY="nice -n 15 /work/main/.venv/bin/python bench/results/ovh47a-2026-12-07s47/abab.py"
date -u; cat /proc/loadavg
PYTHONPATH= $PY $A $B 40 relu lion
PYTHONPATH= $PY $A $B 10 bitdelta_batched gemv softmax layernorm
PYTHONPATH= $PY $A $B 5 dion_update
date -u; cat /proc/loadavg
