#!/usr/bin/env bash
# `fastpath doctor --root` on synthetic environments of growing size, the build
# before this work and this build side by side in one run: the median wall
# time, user+sys CPU and peak RSS (/usr/bin/time) of RUNS runs each (default
# 10), the two binaries alternating run by run, and whether their facts are
# identical (doctor --json, which carries no timings).
#   scripts/bench-scale.sh [RUNS]
#   BASE_REF=main scripts/bench-scale.sh        # the "before" build (default: main)
#   BASE_BIN=/path/fastpath scripts/bench-scale.sh   # or a binary already built
#   SCALE_CASES="5000,4096" scripts/bench-scale.sh 5  # only some trees (DISTS,EXTS ...)
# The trees (issue 17): 200, 1,000 and 5,000 distributions; 200 distributions
# holding 100, 1,000 and 4,096 extension libraries; 5,000 with 4,096 (the
# target: under 300 ms and 64 MB). They are written by the Go test
# TestWriteScaleTree (cmd/fastpath/scale_test.go): the seed container, grown,
# with a torch whose libtorch_cpu.so exports 150,000 symbols behind a
# .gnu.hash. Building them takes about a minute; RUNS=10 over all seven
# trees another few minutes. Needs: go, git, GNU time (/usr/bin/time), awk.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
cases="${SCALE_CASES:-200,0 1000,0 5000,0 200,100 200,1000 200,4096 5000,4096}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time" >&2; exit 2; }

CGO_ENABLED=0 go build -trimpath -o "$tmp/after" ./cmd/fastpath || exit 2
if [ -n "${BASE_BIN:-}" ]; then
  cp "$BASE_BIN" "$tmp/before"
else
  ref="${BASE_REF:-main}"
  mkdir "$tmp/src"
  git archive "$ref" | tar -x -C "$tmp/src" || { echo "cannot export $ref" >&2; exit 2; }
  (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -o "$tmp/before" ./cmd/fastpath) || exit 2
fi
go test -c -o "$tmp/scale.test" ./cmd/fastpath || exit 2

# measure BIN ARGS...: one run; prints "wall_ms cpu_ms rss_kb".
measure() {
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>&1
  tail -n 1 "$tmp/time" | awk '{printf "%.1f %.1f %d\n", $1*1000, ($2+$3)*1000, $4}'
}
median() { sort -n | awk '{a[NR]=$1} END {printf "%.0f", a[int((NR+1)/2)]}'; }

printf 'medians of %s runs, both builds alternating; load average at start: %s\n' "$runs" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s | %9s %9s %8s | %9s %9s %8s | %s\n' "tree" "wall ms" "cpu ms" "RSS MB" "wall ms" "cpu ms" "RSS MB" "facts"
printf '%-22s | %-28s | %-28s |\n' "" "before (${BASE_REF:-${BASE_BIN:-main}})" "after (this tree)"
for c in $cases; do
  d=${c%,*} e=${c#*,}
  tree="$tmp/tree-$d-$e"
  FASTPATH_SCALE_TREE="$tree" FASTPATH_SCALE="$c" "$tmp/scale.test" -test.run '^TestWriteScaleTree$' >"$tmp/args" 2>&1 ||
    { echo "writing the $c tree failed:"; cat "$tmp/args"; continue; }
  read -r -a args < <(grep '^doctor ' "$tmp/args")
  same=identical
  "$tmp/before" "${args[@]}" >"$tmp/before.json" 2>/dev/null
  "$tmp/after" "${args[@]}" >"$tmp/after.json" 2>/dev/null
  cmp -s "$tmp/before.json" "$tmp/after.json" || same=DIFFERENT
  : >"$tmp/before.txt"; : >"$tmp/after.txt"
  for _ in $(seq "$runs"); do
    measure "$tmp/before" "${args[@]}" >>"$tmp/before.txt"
    measure "$tmp/after" "${args[@]}" >>"$tmp/after.txt"
  done
  col() { awk -v k="$2" '{print $k}' "$1" | median; }
  printf '%-22s | %9s %9s %8s | %9s %9s %8s | %s\n' "$d dists, $e exts" \
    "$(col "$tmp/before.txt" 1)" "$(col "$tmp/before.txt" 2)" "$(( $(col "$tmp/before.txt" 3) / 1024 ))" \
    "$(col "$tmp/after.txt" 1)" "$(col "$tmp/after.txt" 2)" "$(( $(col "$tmp/after.txt" 3) / 1024 ))" "$same"
  rm -rf "$tree"
done
