#!/bin/sh
# fleet-bench.sh [N] [PARALLEL]: time `fastpath remote` over N local targets
# (default 200) through a cheap exec-style transport (env HOME=DIR), the
# real static binary, twice: cold (the binary sent) and warm (cached), and
# report each run's wall time and the peak memory of the remote process
# itself (VmHWM, sampled from /proc) and of it with its children (GNU
# time's maximum resident set, where /usr/bin/time exists).
#
# Every target's home shares one ~/.cache (a link), so N targets cost one
# binary of disk, not N; the first PARALLEL targets race to send it, the rest
# find it. FLEET_BENCH_PRIVATE_CACHE=1 gives each its own (N x the binary).
#
#   scripts/fleet-bench.sh 1000 16
set -eu
n=${1:-200}
par=${2:-16}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/fastpath" ./cmd/fastpath
size=$(wc -c < "$work/fastpath")
mkdir "$work/shared-cache"
i=0
while [ "$i" -lt "$n" ]; do
  mkdir "$work/t$i"
  [ "${FLEET_BENCH_PRIVATE_CACHE:-0}" = 1 ] || ln -s "$work/shared-cache" "$work/t$i/.cache"
  echo "$work/t$i" >> "$work/targets"
  i=$((i + 1))
done
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -f %M -o $work/maxrss"
run() {
  rm -f "$work/maxrss" "$work/hwm"
  start=$(date +%s.%N)
  $timer "$work/fastpath" remote --via 'env HOME={}' --targets "$work/targets" --parallel "$par" --gpu 9.0 --json > "$work/out.json" &
  pid=$!
  # The remote process itself: the last VmHWM seen before it exits.
  rp=
  while kill -0 "$pid" 2>/dev/null; do
    [ -n "$rp" ] || rp=$(pgrep -P "$pid" -x fastpath || true)
    [ -z "$timer" ] && rp=$pid
    [ -n "$rp" ] && awk '/VmHWM/ { print $2 }' "/proc/$rp/status" > "$work/hwm.new" 2>/dev/null && [ -s "$work/hwm.new" ] && mv "$work/hwm.new" "$work/hwm"
    sleep 0.2
  done
  wait "$pid" || true
  end=$(date +%s.%N)
  sent=$(grep -c '"sent_binary": true' "$work/out.json" || true)
  answered=$(grep -c '"status": "\(ok\|findings\)"' "$work/out.json" || true)
  hwm=$(cat "$work/hwm" 2>/dev/null || echo '?')
  all=$(tail -n 1 "$work/maxrss" 2>/dev/null || echo "?")
  echo "$1: $n targets, parallel $par: $(awk "BEGIN { printf \"%.2f\", $end - $start }") s; $answered answered, binary ($size bytes) sent to $sent; peak memory: remote ${hwm} KiB, largest with children ${all} KiB"
}
run "cold (binary sent)"
run "warm (cached)    "
