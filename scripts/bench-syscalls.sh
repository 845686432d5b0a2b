#!/usr/bin/env bash
# The system calls `fastpath doctor --root` makes, counted by `strace -f -c`,
# for the build before this work and this build, on the seed tree and on a
# scale tree: a measure of the file-reading work that does not depend on the
# machine's load (issue 17; docs/speed.md, "Reading files under --root").
# Each count is the median of RUNS runs (default 3; collectors run
# concurrently, so a few lookups race and the counts vary by a handful).
# Both builds must print identical facts (doctor --json); the script says so.
#   scripts/bench-syscalls.sh [RUNS]
#   BASE_REF=main scripts/bench-syscalls.sh         # the "before" build (default: main)
#   BASE_BIN=/path/fastpath scripts/bench-syscalls.sh
#   SCALE=5000,4096 scripts/bench-syscalls.sh       # the scale tree: DISTS,EXTS ("" for none)
# Needs: go, git, strace.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
scale="${SCALE-5000,4096}"
command -v strace >/dev/null || { echo "needs strace" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -trimpath -o "$tmp/after" ./cmd/fastpath || exit 2
if [ -n "${BASE_BIN:-}" ]; then
  cp "$BASE_BIN" "$tmp/before"
else
  ref="${BASE_REF:-main}"
  mkdir "$tmp/src"
  git archive "$ref" | tar -x -C "$tmp/src" || { echo "cannot export $ref" >&2; exit 2; }
  (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -o "$tmp/before" ./cmd/fastpath) || exit 2
fi

"$tmp/after" demo --write-tree "$tmp/seed" >/dev/null || exit 2
seedenv='PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
printf '%s\n' "seed|doctor --root $tmp/seed --gpu 12.0 --json --env $seedenv" >"$tmp/cases"
if [ -n "$scale" ]; then
  go test -c -o "$tmp/scale.test" ./cmd/fastpath || exit 2
  FASTPATH_SCALE_TREE="$tmp/scale" FASTPATH_SCALE="$scale" "$tmp/scale.test" -test.run '^TestWriteScaleTree$' >"$tmp/args" 2>&1 ||
    { echo "writing the $scale tree failed:"; cat "$tmp/args"; exit 2; }
  printf '%s\n' "scale $scale|$(grep '^doctor ' "$tmp/args")" >>"$tmp/cases"
fi

calls="newfstatat openat close fstat read pread64 getdents64 readlinkat lseek"
# count BIN ARGS...: one strace'd run; prints "syscall calls" lines (calls is
# the fourth column whether or not the errors column is filled).
count() {
  strace -f -c -o "$tmp/strace" "$@" >/dev/null 2>&1
  awk '$1 ~ /^[0-9.]+$/ { print $NF, $4 }' "$tmp/strace"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR) printf "%d", a[int((NR+1)/2)]; else printf "0"}'; }

printf 'strace -f -c of doctor, medians of %s runs; load average: %s\n' "$runs" "$(cut -d' ' -f1-3 /proc/loadavg)"
while IFS='|' read -r name cmd; do
  read -r -a args <<<"$cmd"
  "$tmp/before" "${args[@]}" >"$tmp/before.json" 2>/dev/null
  "$tmp/after" "${args[@]}" >"$tmp/after.json" 2>/dev/null
  same=identical; cmp -s "$tmp/before.json" "$tmp/after.json" || same=DIFFERENT
  for b in before after; do
    : >"$tmp/$b.counts"
    for i in $(seq "$runs"); do count "$tmp/$b" "${args[@]}" | sed "s/^/$i /" >>"$tmp/$b.counts"; done
  done
  printf '\n%s (facts %s)\n%-12s %9s %9s\n' "$name" "$same" "syscall" "before" "after"
  tb=0; ta=0
  for c in $calls; do
    b=$(awk -v c="$c" '$2 == c {print $3}' "$tmp/before.counts" | median)
    a=$(awk -v c="$c" '$2 == c {print $3}' "$tmp/after.counts" | median)
    tb=$((tb + b)); ta=$((ta + a))
    printf '%-12s %9d %9d\n' "$c" "$b" "$a"
  done
  printf '%-12s %9d %9d\n' "file calls" "$tb" "$ta"
done <"$tmp/cases"
