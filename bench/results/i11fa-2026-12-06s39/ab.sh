# usage: ab.sh TAG DIR... : runs the S=512 script in each DIR in turn
tag=$1; shift
for d in "$@"; do
  cd $d; uptime
  PYTHONPATH=$d /usr/bin/time -f "$tag $(basename $d) cpu_user=%U sys=%S wall=%e rss_kb=%M" nice -n 5 /work/main/.venv/bin/python /tmp/i11fa/s512.py
done
uptime
