#!/bin/sh
# fleet-bench.sh [N] [PARALLEL]: time `fastpath remote` over N local targets
# (default 200) through a cheap exec-style transport (env HOME=DIR), the
# real static binary sent to each target once, then the same run again
# with every target's cache warm. Prints both wall times.
set -eu
n=${1:-200}
par=${2:-16}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/fastpath" ./cmd/fastpath
size=$(wc -c < "$work/fastpath")
i=0
while [ "$i" -lt "$n" ]; do
  mkdir "$work/t$i"
  echo "$work/t$i" >> "$work/targets"
  i=$((i + 1))
done
run() {
  start=$(date +%s.%N)
  "$work/fastpath" remote --via 'env HOME={}' --targets "$work/targets" --parallel "$par" --gpu 9.0 --json > "$work/out.json" || true
  end=$(date +%s.%N)
  sent=$(grep -c '"sent_binary": true' "$work/out.json" || true)
  answered=$(grep -c '"status": "\(ok\|findings\)"' "$work/out.json" || true)
  echo "$1: $n targets, parallel $par: $(awk "BEGIN { printf \"%.2f\", $end - $start }") s; $answered answered, binary ($size bytes) sent to $sent"
}
run "cold (binary sent)"
run "warm (cached)    "
