#!/usr/bin/env bash
# explain on a 50 MB log on a real many-core host (issue 17: under 100 ms),
# side by side in one run with the build before (fastpath-base) and with
# `grep -E` of the same signatures (the floor), after checking that both
# builds print the same JSON, on that log and on every real log of the
# corpus. Then the Go benchmark (line scan vs block scan, 50 MB and 1 MB,
# CPU ms and allocations) and the block-vs-line equivalence tests, from a
# test binary, at all cores and at 2.
#
#   scripts/device/explainspeed.sh [DIR] [OUTDIR]
# DIR (default .device/explainspeed) holds: fastpath (this branch),
# fastpath-base (main before it), explain.test (go test -c of
# internal/explain), testdata/ (internal/explain/testdata) and
# signatures.json (internal/kb/data/signatures.json). OUTDIR defaults to
# $OUT. Writes OUTDIR/explainspeed.log and OUTDIR/explainspeed.tar.gz.
# Needs python3, grep, awk; no network. Every step is bounded by timeout.
set -uo pipefail
set -x
dir=$(realpath "${1:-.device/explainspeed}")
out=${2:-${OUT:-/tmp/explainspeed-out}}
N=${N:-10}
mkdir -p "$out"
work=$(mktemp -d /tmp/explainspeed.XXXXXX)
log="$out/explainspeed.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
fp="$dir/fastpath"; base="$dir/fastpath-base"
export NO_COLOR=1
now() { date +%s%N; }
median_ms() {
  for _ in $(seq "$N"); do
    local s e; s=$(now); timeout 60 "$@" >/dev/null 2>&1; e=$(now); echo $(( (e - s) / 1000 ))
  done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}'
}
row() { say "$(printf '%-62s %9s ms' "$1" "$2")"; }

say "== host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
say "== fastpath $("$fp" --version 2>&1 | head -1); base $("$base" --version 2>&1 | head -1)"

# 1. The 50 MB log of scripts/bench.sh and BenchmarkExplain, and 1 MB of it.
timeout 120 python3 scripts/explain-bench-inputs.py log "$work/big.log"
head -c 1048576 "$work/big.log" > "$work/1mb.log"
say "== log: $(wc -c < "$work/big.log") bytes, $(wc -l < "$work/big.log") lines"

# grep -E of every signature pattern (as scripts/bench.sh converts them).
timeout 60 python3 scripts/explain-bench-inputs.py patterns "$dir/signatures.json" "$work/patterns.txt"

# 2. Same output: both builds, one facts file (this host's facts change
#    between runs: free memory), the big log and every real log.
timeout 60 "$fp" facts > "$work/host-facts.json"
timeout 60 "$base" explain "$work/big.log" --json --facts "$work/host-facts.json" > "$work/big.base.json" 2>&1
timeout 60 "$fp" explain "$work/big.log" --json --facts "$work/host-facts.json" > "$work/big.new.json" 2>&1
if cmp -s "$work/big.base.json" "$work/big.new.json"; then say "50 MB log: JSON IDENTICAL to the base build"; else say "50 MB log: JSON DIFFERS"; diff "$work/big.base.json" "$work/big.new.json" | head -20 | tee -a "$log"; fi
same=0; diff=0
for f in "$dir"/testdata/corpus/*.log "$dir"/testdata/logs/*.log; do
  a=$(timeout 20 "$base" explain "$f" --json --facts "$work/host-facts.json" 2>&1); b=$(timeout 20 "$fp" explain "$f" --json --facts "$work/host-facts.json" 2>&1)
  if [ "$a" = "$b" ]; then same=$((same + 1)); else diff=$((diff + 1)); say "DIFFERS: $f"; fi
done
say "real logs: $same identical, $diff different"

# 3. Time, medians of N, in one run.
say "== medians of $N (ms), same run"
ex=$(median_ms "$fp" explain "$work/big.log" --json); row "fastpath explain 50 MB --json (this host's facts)" "$ex"
exf=$(median_ms "$fp" explain "$work/big.log" --json --facts "$work/host-facts.json"); row "fastpath explain 50 MB --json --facts FILE" "$exf"
exb=$(median_ms "$base" explain "$work/big.log" --json); row "fastpath-base explain 50 MB --json" "$exb"
exs=$(median_ms sh -c '"$1" explain - --json < "$2"' sh "$fp" "$work/big.log"); row "fastpath explain - --json < 50 MB (stdin)" "$exs"
ex1=$(median_ms "$fp" explain "$work/1mb.log" --json); row "fastpath explain 1 MB --json" "$ex1"
gr=$(median_ms grep -E -f "$work/patterns.txt" "$work/big.log"); row "grep -E -f <$(wc -l < "$work/patterns.txt") signature patterns> 50 MB (floor)" "$gr"
awk -v a="$ex" -v b="$gr" -v c="$exb" 'BEGIN { if (b > 0) printf "explain / grep -E: %.2fx; base / new: %.1fx\n", a / b, c / a }' | tee -a "$log"
for b in fastpath fastpath-base; do
  /usr/bin/time -f "$b explain 50 MB: %e s wall, %U s user, %S s sys, %M KB peak RSS" timeout 60 "$dir/$b" explain "$work/big.log" --json > /dev/null 2>> "$work/time.txt"
done
grep -h 'explain 50 MB' "$work/time.txt" | tee -a "$log"

# 4. The Go benchmark and the equivalence tests, at all cores and at 2.
cd "$dir" || exit 0
for p in "$(nproc)" 2; do
  say "== go test -bench Explain, GOMAXPROCS=$p"
  GOMAXPROCS=$p timeout 300 ./explain.test -test.run '^$' -test.bench 'Explain' -test.benchtime 10x 2>&1 | grep -E '^Benchmark|^ok|FAIL' | tee -a "$log"
done
say "== equivalence tests (block scan vs line scan), all cores"
timeout 300 ./explain.test -test.run 'BlockScan|Corpus|BigLog' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tee -a "$log"
cd - >/dev/null || true

mkdir -p "$work/keep"
cp "$work"/*.json "$work"/time.txt "$work"/patterns.txt "$work/keep"/ 2>/dev/null
tar -C "$work/keep" -czf "$out/explainspeed.tar.gz" . 2>/dev/null
rm -rf "$work"
say "== done"
