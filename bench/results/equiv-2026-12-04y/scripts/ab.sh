#!/bin/bash
# run the S=512 bench for each "name:tree" argument, one after another
for spec in "$@"; do
  name=${spec%%:*}; tree=${spec#*:}
  (cd $tree && PYTHONPATH=. /work/main/.venv/bin/python bench/equiv.py -k "S=512" --max-memory 6G --timeout 3000 --out /tmp/i11c-bench/$name --name $name > /tmp/i11c-bench/$name.log 2>&1)
done
