#!/usr/bin/env bash
# Two versions of the library measured in turn, at the same load: `--only <scenario>` runs of
# this tree and of <ref> (checked out once into a worktree beside it) alternate, so a slower
# moment of a shared machine falls on both. Prints one line per run: round, scenario, version,
# load, ops/s, p50 ms, ZooKeeper requests per op, client CPU us per op and, for a row measured in
# turn with its baseline (uncontended, many-keys-*), its ratio to that baseline.
#   bench/ab.sh <ref> <rounds> <scenario>...     e.g. bench/ab.sh 1a6589d 5 multi-3 same-key-1p
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bench/ab.sh <ref> <rounds> <scenario>..." >&2
  exit 2
fi
ref=$1 rounds=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
other="$here/../.bench-ab-$(git -C "$here" rev-parse --short "$ref")"
if [ ! -d "$other" ]; then
  git -C "$here" worktree add -q --detach "$other" "$ref"
  cp -al "$here/node_modules" "$other/node_modules"
fi
row() {
  local out
  out=$(cd "$1" && npx ts-node --transpile-only bench/run.ts --only "$2" 2>&1)
  grep -E "^\| $2 " <<<"$out" | head -1 |
    awk -F'|' '{printf "ops/s %s p50 %s req/op %s cpu/op %s", $6, $7, $10, $12}'
  # A row measured in turn with its baseline: its ratio, from the same run.
  grep -E "^\| $2 +\| (p50|ops/s) / raw" <<<"$out" | head -1 | awk -F'|' '{printf " ratio %s", $4}'
}
for round in $(seq 1 "$rounds"); do
  for scenario in "$@"; do
    for version in "$ref" HEAD; do
      tree=$here
      [ "$version" = HEAD ] || tree=$other
      echo "$round $scenario $version load $(cut -d' ' -f1 /proc/loadavg) $(row "$tree" "$scenario")"
    done
  done
done
echo "remove the other tree when done: git worktree remove --force $other"
