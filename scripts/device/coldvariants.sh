#!/usr/bin/env bash
# Several builds' cold doctor in turns on the H200, with what each run asked
# of the storage (docs/speed.md, "Fewer disk reads a library"):
#   bash scripts/device/coldvariants.sh [ROUNDS]     (default 10; root, for drop_caches)
# .device/coldvariants/ holds the builds, NAME or NAME.gz each (a release
# build, CGO_ENABLED=0). Each round runs every build once, page cache dropped
# before each run, in an order that rotates from round to round. For each run
# it records the wall time and the reads and KB that the disks completed
# during it (/proc/diskstats: the run's own and nvcc's and nvidia-smi's page-
# ins). Prints per build: medians of wall, reads and KB, and the median of
# the rounds' paired differences against the first build (alphabetically).
# Writes $OUT/coldvariants.log.
set -uo pipefail
src=.device/coldvariants; out=${OUT:-/tmp/coldvariants-out}; mkdir -p "$out"
rounds=${1:-10}
bin=$(mktemp -d /tmp/coldvariants.XXXXXX)
for f in "$src"/*; do
  n=$(basename "$f" .gz)
  if [[ $f == *.gz ]]; then gunzip -c "$f" > "$bin/$n"; else cp "$f" "$bin/$n"; fi
  chmod +x "$bin/$n"
done
names=($(cd "$bin" && ls))
exec > >(tee "$out/coldvariants.log") 2>&1
echo "== coldvariants.sh $(date -u +%FT%TZ), $rounds rounds: ${names[*]}"
: > "$bin/runs.txt"
for r in $(seq "$rounds"); do
  k=${#names[@]}
  for i in $(seq 0 $((k - 1))); do
    n=${names[$(( (i + r) % k ))]}
    sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.3
    awk '{r[$3]=$4; s[$3]=$6} END {for (d in r) print d, r[d], s[d]}' /proc/diskstats > "$bin/d0"
    s=$(date +%s%N); timeout 60 "$bin/$n" doctor > /dev/null 2>&1; e=$(date +%s%N)
    # The disk with the most reads (a whole disk counts its partitions').
    rd=$(awk 'NR==FNR {r[$1]=$2; s[$1]=$3; next} {dr=$4-r[$3]; ds=$6-s[$3]; if (dr > br) {br=dr; bs=ds}} END {print br+0, int((bs+0)/2)}' "$bin/d0" /proc/diskstats)
    echo "$r $n $(( (e - s) / 1000 )) $rd" | tee -a "$bin/runs.txt"
  done
done
python3 - "$bin/runs.txt" <<'PY'
import statistics, sys, collections
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, n, us, reads, kb = line.split()
    runs[n][int(r)] = (int(us) / 1000, int(reads), int(kb))
names = sorted(runs)
first = names[0]
for n in names:
    v = runs[n]
    ms = [x[0] for x in v.values()]
    paired = [v[r][0] - runs[first][r][0] for r in v if r in runs[first]]
    print(f"{n:>16}: cold median {statistics.median(ms):6.1f} ms (min {min(ms):.1f}, max {max(ms):.1f}); "
          f"reads {statistics.median([x[1] for x in v.values()]):.0f}; KB {statistics.median([x[2] for x in v.values()]):.0f}; "
          f"paired - {first}: {statistics.median(paired):+.1f} ms")
PY
