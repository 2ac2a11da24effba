#!/bin/bash
for n in relu rmsnorm softmax gemm_fp16; do
  /tmp/i10szacc/one.sh $1 $n sm_80 /tmp/i10szacc/$n.sm_80.ptx $2
  echo "$n $(grep -o 'proven for ALL sizes ([^)]*)\|symbolic sizes not applicable ([^)]*)' /tmp/i10szacc/res.$2.$n.sm_80.txt | head -1) $(grep TIME /tmp/i10szacc/res.$2.$n.sm_80.txt) load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/i10szacc/summary.$2.txt
done
