#!/bin/bash
# Base (e2ecf59) and branch trees (git archive in /tmp/i10ovh2/{base,br}): a warm-up run each (compiles the suite
# into the tree's cache; not reported), then base, branch, branch, base back to back (ABBA: drift cancels).
D=$(cd "$(dirname "$0")" && pwd)
O=${1:-$D}
"$D/full.sh" /tmp/i10ovh2/base /tmp/i10ovh2/warm-base.json 1 > /tmp/i10ovh2/warm-base.txt 2>&1
"$D/full.sh" /tmp/i10ovh2/br /tmp/i10ovh2/warm-br.json 1 > /tmp/i10ovh2/warm-br.txt 2>&1
"$D/full.sh" /tmp/i10ovh2/base "$O/full-base1.json" > "$O/full-base1.txt" 2>&1
"$D/full.sh" /tmp/i10ovh2/br "$O/full-branch1.json" > "$O/full-branch1.txt" 2>&1
"$D/full.sh" /tmp/i10ovh2/br "$O/full-branch2.json" > "$O/full-branch2.txt" 2>&1
"$D/full.sh" /tmp/i10ovh2/base "$O/full-base2.json" > "$O/full-base2.txt" 2>&1
