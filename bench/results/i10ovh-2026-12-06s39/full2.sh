for side in base branch; do
  if [ $side = base ]; then D=/tmp/i10ovh_base; else D=/tmp/i10ovh_br; fi
  bash /work/wt/i10ovh/bench/results/i10ovh-2026-12-06s39/full.sh $D /tmp/i10ovh_out/ab-$side.json > /tmp/i10ovh_out/ab-$side.txt 2>&1
done
