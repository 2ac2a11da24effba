cd "$(git rev-parse --show-toplevel)"
for k in $(PYTHONPATH=. /work/main/.venv/bin/python -c "
import sys; sys.argv=['x']; sys.path.insert(0,'.')
from harness.suite import all_contracts
print(' '.join(c.name for c in all_contracts()))"); do
  PYTHONPATH=. timeout 120 /work/main/.venv/bin/python bench/results/i10ovh5-2026-12-07s43/ev4.py $k 2>&1 | grep -v "^True\|^Report" | tail -1
done
