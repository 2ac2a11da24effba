# ABBA of bench/check_overhead.py: main export (base) vs main + recoarsen-tried.patch (patched), one process each
for side in base patched patched base; do
  cd /tmp/i10ovh5/$side
  echo "== $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "$side cpu %U+%S wall %e rss %MkB" env PYTHONPATH=. /work/main/.venv/bin/python bench/check_overhead.py --arch sm_80 --repeat 3 bitdelta_batched dion_update bitdelta 2>&1 | grep -E "sm_80:|cpu"
done
