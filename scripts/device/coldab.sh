#!/usr/bin/env bash
# Two builds' cold doctor side by side on the H200 (issue 17's "at most 250 ms
# cold"; docs/speed.md, "A cold doctor's disk waits"), from the repo root:
#   bash scripts/device/coldab.sh [ROUNDS]      (default 10; needs root for drop_caches)
# .device/coldab/ holds fastpath-base and fastpath (plain or .gz), and
# optionally fastpath-trace(.gz), the new build made with -tags
# fastpath_trace. Each round drops the page cache before each build's run,
# the builds in turns (base first in odd rounds), and prints the wall time and
# the --timings rows of the critical path. Then: the medians, the median of
# the rounds' paired differences, the warm medians of 10, the facts oracle
# (doctor --json of both, volatile fields dropped) and, with the traced
# build, one cold run's trace. Writes $OUT/coldab.log and, with a trace,
# $OUT/coldab.tar.gz. About 2 s a cold run.
set -uo pipefail
src=.device/coldab; out=${OUT:-/tmp/coldab-out}; mkdir -p "$out"
rounds=${1:-10}
bin=$(mktemp -d /tmp/coldab.XXXXXX)
for b in fastpath fastpath-base fastpath-trace; do
  if [ -f "$src/$b.gz" ]; then gunzip -c "$src/$b.gz" > "$bin/$b"; elif [ -f "$src/$b" ]; then cp "$src/$b" "$bin/$b"; fi
  [ -f "$bin/$b" ] && chmod +x "$bin/$b"
done
log=$out/coldab.log
exec > >(tee "$log") 2>&1
echo "== coldab.sh $(date -u +%FT%TZ), $rounds rounds"; ls -la "$bin"
cold() { # label binary
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
  local s e; awk '{print $3, $4}' /proc/diskstats > "$bin/disk0"
  s=$(date +%s%N); timeout 60 "$2" doctor --timings > "$bin/doc.txt" 2>&1; e=$(date +%s%N)
  # Reads the storage completed during the run, on each disk that did any
  # (whole disks and their partitions both count them: the largest is the disk).
  local reads; reads=$(awk 'NR==FNR {r[$1]=$2; next} $4-r[$3] > 0 {print $3 "=" $4-r[$3]}' "$bin/disk0" /proc/diskstats | tr '\n' ' ')
  echo "$1 $(( (e - s) / 1000 ))" >> "$bin/cold.txt"
  printf '%-5s %6.1f ms  %s  reads %s\n' "$1" "$(( (e - s) / 1000 ))e-3" \
    "$(awk '/^ *(python|nvcc|gpu|extensions) /{printf "%s %s+%s  ", $1, $2, $3} /^ *total/{printf "total %s", $2}' "$bin/doc.txt")" "$reads"
}
: > "$bin/cold.txt"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then cold base "$bin/fastpath-base"; cold new "$bin/fastpath"; else cold new "$bin/fastpath"; cold base "$bin/fastpath-base"; fi
done
python3 - "$bin/cold.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
base = [int(v) / 1000 for k, v in rows if k == "base"]
new = [int(v) / 1000 for k, v in rows if k == "new"]
print(f"cold medians of {len(new)}: new {statistics.median(new):.1f} ms (min {min(new):.1f}, max {max(new):.1f}); "
      f"base {statistics.median(base):.1f} ms (min {min(base):.1f}, max {max(base):.1f}); "
      f"paired new-base median {statistics.median([a - b for a, b in zip(new, base)]):+.1f} ms; target <= 250 ms")
PY
python3 - "$bin/fastpath-base" "$bin/fastpath" <<'PY'
import statistics, subprocess, sys, time
res = {b: [] for b in sys.argv[1:]}
for i in range(10):
    for b in (sys.argv[1:] if i % 2 == 0 else sys.argv[:0:-1]):
        t = time.perf_counter(); subprocess.run([b, "doctor"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        res[b].append((time.perf_counter() - t) * 1000)
print("warm medians of 10: " + "; ".join(f"{b.rsplit('/', 1)[1]} {statistics.median(v):.1f} ms" for b, v in res.items()))
PY
norm() { timeout 60 "$1" doctor --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin); f = d.get("facts", {})
f.pop("timings", None); f.get("os", {}).pop("mem_available_bytes", None); f.get("gpu", {}).pop("processes", None)
for g in f.get("gpu", {}).get("devices", []) or []:
    for k in list(g):
        if any(w in k for w in ("used", "free", "util", "temp", "power")): g.pop(k)
print(json.dumps({"facts": f, "finding_ids": sorted(x["id"] for x in d.get("findings", []))}, sort_keys=True, indent=1))'; }
norm "$bin/fastpath-base" > "$bin/base.json"; norm "$bin/fastpath" > "$bin/new.json"
if cmp -s "$bin/base.json" "$bin/new.json"; then echo "facts oracle: IDENTICAL (volatile fields dropped)"; else echo "facts oracle: DIFFERENT"; diff "$bin/base.json" "$bin/new.json" | head -30; fi
if [ -x "$bin/fastpath-trace" ]; then
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
  FASTPATH_GOTRACE="$bin/cold.trace" timeout 60 "$bin/fastpath-trace" doctor --timings > "$bin/cold-trace.txt" 2>&1
  sed -n '/collector/,$p' "$bin/cold-trace.txt"
  tar -C "$bin" -czf "$out/coldab.tar.gz" cold.trace cold-trace.txt cold.txt
fi
