#!/bin/bash
cd /work/main
for a in sm_80 sm_120; do for n in relu sigmoid swiglu lion rope bitdelta rmsnorm layernorm softmax rowsum gemv; do
  /usr/bin/time -f "TIME $n $a %U user %S sys %e wall %M KB" .venv/bin/volta check /tmp/sz/$n.$a.ptx --contract $n --instance verify --sizes symbolic --arch $a --timeout 900 > /tmp/sz/res.$n.$a.txt 2>&1
  v=$(head -1 /tmp/sz/res.$n.$a.txt | sed 's/.*: //'); p=$(grep -o "proven for ALL sizes ([^)]*)" /tmp/sz/res.$n.$a.txt | head -1); f=$(grep -o "symbolic sizes not applicable ([^)]*)" /tmp/sz/res.$n.$a.txt | head -1)
  echo "$n $a | $v | $p $f | $(grep TIME /tmp/sz/res.$n.$a.txt) | load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/sz/summary.txt
done; done
