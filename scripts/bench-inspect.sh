#!/usr/bin/env bash
# Times `fastpath inspect --cuobjdump FILE` against `cuobjdump --list-elf FILE` plus
# `cuobjdump --list-ptx FILE` (the same listing), best of N runs, with peak memory
# from /usr/bin/time -v where it exists, and checks both print the same stdout.
# Usage: scripts/bench-inspect.sh FILE [CUOBJDUMP]
#   CUOBJDUMP defaults to cuobjdump on PATH; without one only fastpath is timed.
#   FASTPATH=path/to/fastpath to use a built binary (default: go build into a temp dir).
#   RUNS=N runs per tool (default 5).
# For the 300 MB synthetic section of fatbin's BenchmarkWalk300MB:
#   FASTPATH_BENCH_300MB=/tmp/libbig.so go test ./internal/fatbin -run TestWrite300MB -count=1
#   scripts/bench-inspect.sh /tmp/libbig.so
set -euo pipefail
file=${1:?usage: bench-inspect.sh FILE [CUOBJDUMP]}
cuobjdump=${2:-$(command -v cuobjdump || true)}
runs=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fastpath=${FASTPATH:-}
if [ -z "$fastpath" ]; then
  fastpath=$tmp/fastpath
  (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -o "$fastpath" ./cmd/fastpath)
fi

now() { date +%s%N; }

# best_ms NAME CMD...: the fastest of $runs runs in ms (printed), output kept in $tmp/NAME.out.
best_ms() {
  local name=$1; shift
  local best=
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(now)
    "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" || true
    t1=$(now)
    local ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

# peak_kb CMD...: peak resident memory in KiB, or "?" without GNU time.
peak_kb() {
  if [ -x /usr/bin/time ]; then
    { /usr/bin/time -v "$@" 2>&1 >/dev/null || true; } | sed -n 's/.*Maximum resident set size (kbytes): //p'
  else
    echo "?"
  fi
}

cuobjdump_both() { "$cuobjdump" --list-elf "$1"; "$cuobjdump" --list-ptx "$1"; }

size=$(stat -c %s "$file")
echo "file: $file ($size bytes)"
fp_ms=$(best_ms fastpath "$fastpath" inspect --cuobjdump "$file")
fp_kb=$(peak_kb "$fastpath" inspect --cuobjdump "$file")
printf '%-34s %8s ms  %10s KiB peak\n' "fastpath inspect --cuobjdump" "$fp_ms" "$fp_kb"
if [ -z "$cuobjdump" ]; then
  echo "no cuobjdump (on PATH or given): fastpath timed alone"
  exit 0
fi
export -f cuobjdump_both
export cuobjdump
cu_ms=$(best_ms cuobjdump bash -c 'cuobjdump_both "$1"' _ "$file")
cu_kb=$(peak_kb "$cuobjdump" --list-elf "$file")
printf '%-34s %8s ms  %10s KiB peak (--list-elf alone)\n' "cuobjdump --list-elf; --list-ptx" "$cu_ms" "$cu_kb"
if [ ! -s "$tmp/cuobjdump.out" ] && grep -q fatal "$tmp/cuobjdump.err"; then
  # cuobjdump decompresses every payload even to list; the synthetic file's are zeros.
  echo "cuobjdump failed: $(grep -m1 fatal "$tmp/cuobjdump.err")"
  exit 0
fi
if cmp -s "$tmp/fastpath.out" "$tmp/cuobjdump.out"; then
  echo "listings: identical"
else
  echo "listings: DIFFER"; diff "$tmp/cuobjdump.out" "$tmp/fastpath.out" | head -20
fi
awk -v a="$cu_ms" -v b="$fp_ms" 'BEGIN { if (b < 1) b = 1; printf "cuobjdump / fastpath time: %.1fx\n", a / b }'
