#!/bin/bash
# Base (b9c69a6, main) and branch trees (git archive in /tmp/i10ovh3/{base,br}; their suites already compiled into
# their caches by reports.sh): base, branch, branch, base back to back (ABBA: drift cancels).
D=$(cd "$(dirname "$0")" && pwd)
O=${1:-$D}
"$D/full.sh" /tmp/i10ovh3/base "$O/full-base1.json" > "$O/full-base1.txt" 2>&1
"$D/full.sh" /tmp/i10ovh3/br "$O/full-branch1.json" > "$O/full-branch1.txt" 2>&1
"$D/full.sh" /tmp/i10ovh3/br "$O/full-branch2.json" > "$O/full-branch2.txt" 2>&1
"$D/full.sh" /tmp/i10ovh3/base "$O/full-base2.json" > "$O/full-base2.txt" 2>&1
