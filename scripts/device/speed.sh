#!/usr/bin/env bash
# Speed of `fastpath doctor` on a real GPU host, side by side with its peers
# in one run (issue 17): warm and cold medians, the per-collector --timings,
# collect_env, pip list, and an oracle that the faster reads changed no fact.
#
#   scripts/device/speed.sh [DIR] [OUTDIR] [PYTHON]
# DIR holds `fastpath` (the build under test) and, optionally,
# `fastpath-base` (the build before, for the side-by-side and the facts
# oracle) and `fastpath-alt` (a variant of the build under test, timed warm
# and cold next to it; DIR/alt.txt says what differs); default .device/speed. OUTDIR defaults to $OUT (or /tmp/speed-out).
# PYTHON defaults to /opt/torch/.venv/bin/python3, else python3 on PATH.
# Writes OUTDIR/speed.log (the summary) and OUTDIR/speed.tar.gz (everything).
# Needs no network. Every step is bounded with timeout and the script keeps
# going after failures. N (default 10) runs per fastpath median, NPEER
# (default 5) for collect_env (about 7 s a run), NCOLD (default 5) cold runs.
set -uo pipefail
set -x
dir=${1:-.device/speed}
out=${2:-${OUT:-/tmp/speed-out}}
py=${3:-}
if [ -z "$py" ]; then
  if [ -x /opt/torch/.venv/bin/python3 ]; then py=/opt/torch/.venv/bin/python3; else py=$(command -v python3); fi
fi
N=${N:-10}; NPEER=${NPEER:-5}; NCOLD=${NCOLD:-5}
work=$(mktemp -d /tmp/speed.XXXXXX)
mkdir -p "$out" "$work/raw"
log="$out/speed.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
fp=$(realpath "$dir/fastpath")
base=""
[ -x "$dir/fastpath-base" ] && base=$(realpath "$dir/fastpath-base")
alt=""
[ -x "$dir/fastpath-alt" ] && alt=$(realpath "$dir/fastpath-alt")
# The fastpath runs see what a user's shell sees: the venv's bin first.
venvbin=$(dirname "$py")
export PATH="$venvbin:$PATH" NO_COLOR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "NA"}'; }
# runs NAME COUNT CMD...: wall microseconds of COUNT runs, one per line, into raw/NAME.us
runs() {
  local name=$1 n=$2; shift 2
  for _ in $(seq "$n"); do
    local s e; s=$(now); timeout 120 "$@" >/dev/null 2>&1; e=$(now)
    echo $(( (e - s) / 1000 ))
  done > "$work/raw/$name.us"
  median < "$work/raw/$name.us"
}
ms() { awk -v u="$1" 'BEGIN { if (u == "NA") print "NA"; else printf "%.1f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "NA"; else printf "%.0f", a / b }'; }

# Cold: drop the page cache where allowed (root, not in a read-only /proc);
# else evict the files doctor reads with posix_fadvise(DONTNEED), which
# needs no privilege and drops clean pages of those files only.
evict() {
  sync
  if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then echo drop_caches; return; fi
  timeout 120 "$py" - "$(dirname "$(dirname "$py")")" /usr/local/cuda/ /usr/lib/x86_64-linux-gnu /etc "$fp" ${base:+"$base"} <<'PY' 2>/dev/null && echo fadvise || echo none
import os, sys
for top in sys.argv[1:]:
    for root, dirs, files in os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]:
        for n in files:
            try:
                fd = os.open(os.path.join(root, n), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError:
                pass
            os.close(fd)
PY
}

{
  echo "== date $(date -u +%FT%TZ)"; uname -a; nproc; free -m | head -2
  echo "== python $py"; timeout 20 "$py" --version
  echo "== distributions"; ls -d "$(dirname "$(dirname "$py")")"/lib/python3*/site-packages/*.dist-info | wc -l
  echo "== fastpath $fp"; "$fp" --version; ls -la "$fp" ${base:+"$base"}
  echo "== strace"; command -v strace
} > "$work/machine.txt" 2>&1

say "== speed.sh on $(hostname) $(date -u +%FT%TZ); python $py; N=$N NPEER=$NPEER NCOLD=$NCOLD"
[ -n "$alt" ] && say "alt build: $(cat "$dir/alt.txt" 2>/dev/null || echo "(no alt.txt)")"

# 0. Startup: what every command pays before it does anything. --version
#    medians, and the package init time the runtime reports (the sum of
#    GODEBUG=inittrace=1's per-package clock times, median of N starts).
inittime() {
  for _ in $(seq "$N"); do
    GODEBUG=inittrace=1 timeout 20 "$1" --version 2>&1 >/dev/null | awk '/^init /{s += $5} END {printf "%.0f\n", s * 1000}'
  done | median
}
for b in "$fp" $base $alt; do GODEBUG=inittrace=1 timeout 20 "$b" --version 2>&1 >/dev/null | sort -k5 -n -r | head -12; echo; done > "$work/inittrace.txt"
v=$(runs version "$N" "$fp" --version); vi=$(inittime "$fp")
vb=NA; vbi=NA; [ -n "$base" ] && { vb=$(runs version-base "$N" "$base" --version); vbi=$(inittime "$base"); }
say "startup medians (ms): --version $(ms "$v") (base $(ms "$vb"));  package init $(ms "$vi") (base $(ms "$vbi"))"

# 1. Facts oracle: the hash-table lookups, the cache and the concurrent
#    collectors must not change a fact. Volatile fields (free memory, GPU
#    memory in use, timings) are dropped before comparing.
timeout 60 "$fp" doctor --json > "$work/doctor.json" 2> "$work/doctor.err"; echo "exit $?" >> "$work/doctor.err"
timeout 60 "$fp" doctor --json --timings > "$work/doctor-timings.json" 2>/dev/null
timeout 60 "$fp" doctor > "$work/doctor.txt" 2>&1
norm() {
  "$py" - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d.get("facts", {})
f.pop("timings", None); f.get("os", {}).pop("mem_available_bytes", None)
f.get("gpu", {}).pop("processes", None)
for g in f.get("gpu", {}).get("devices", []) or []:
    for k in list(g):
        if "used" in k or "free" in k or "util" in k or "temp" in k or "power" in k:
            g.pop(k)
d = {"facts": f, "finding_ids": sorted(x["id"] for x in d.get("findings", []))}
print(json.dumps(d, sort_keys=True, indent=1))
PY
}
if [ -n "$base" ]; then
  timeout 60 "$base" doctor --json > "$work/doctor-base.json" 2>/dev/null
  norm "$work/doctor.json" > "$work/doctor.norm.json"; norm "$work/doctor-base.json" > "$work/doctor-base.norm.json"
  if cmp -s "$work/doctor.norm.json" "$work/doctor-base.norm.json"; then
    say "facts oracle: doctor --json of this build == the base build (volatile fields dropped): IDENTICAL"
  else
    say "facts oracle: DIFFERENT from the base build:"; diff "$work/doctor-base.norm.json" "$work/doctor.norm.json" | head -40 | tee -a "$log"
  fi
fi
# Determinism: ten runs of this build give the same facts.
for i in $(seq 10); do timeout 60 "$fp" doctor --json 2>/dev/null > "$work/det.json"; norm "$work/det.json" | md5sum; done | sort | uniq -c > "$work/determinism.txt"
say "determinism: $(wc -l < "$work/determinism.txt") distinct facts over 10 runs (1 is right)"
"$py" - "$work/doctor.json" <<'PY' | tee -a "$log"
import json, sys
f = json.load(open(sys.argv[1]))["facts"]
ex = f.get("extensions", [])
print(f"extensions: {len(ex)} kept, {sum(1 for e in ex if e.get('links_torch'))} link torch, "
      f"{sum(e.get('missing_count', 0) for e in ex)} missing torch symbols; torch cxx11 abi {f.get('torch', {}).get('cxx11_abi')} from {f.get('torch', {}).get('cxx11_abi_from')}")
PY

# 2. Warm: medians of N, side by side.
timeout 60 "$fp" doctor >/dev/null 2>&1   # warm the page cache
# The builds take turns (this, base, alt, this, ...): a machine that slows
# down or speeds up during the block then weighs on all of them alike.
: > "$work/raw/doctor.us"; : > "$work/raw/doctor-base.us"; : > "$work/raw/doctor-alt.us"
for _ in $(seq "$N"); do
  for nb in "doctor=$fp" ${base:+"doctor-base=$base"} ${alt:+"doctor-alt=$alt"}; do
    name=${nb%%=*} bin=${nb#*=}
    s=$(now); timeout 120 "$bin" doctor >/dev/null 2>&1; e=$(now)
    echo $(( (e - s) / 1000 )) >> "$work/raw/$name.us"
  done
done
doc=$(median < "$work/raw/doctor.us")
docj=$(runs doctor-json "$N" "$fp" doctor --json)
docb=NA; [ -n "$base" ] && docb=$(median < "$work/raw/doctor-base.us")
doca=NA; [ -n "$alt" ] && doca=$(median < "$work/raw/doctor-alt.us")
pk=$(runs packages "$N" "$fp" packages --json)
pip=$(runs pip-list "$N" "$py" -m pip list --format=json)
ce=$(runs collect-env "$NPEER" "$py" -m torch.utils.collect_env)
say "warm medians (ms): doctor $(ms "$doc")  doctor --json $(ms "$docj")  base doctor $(ms "$docb")  alt doctor $(ms "$doca")  collect_env $(ms "$ce") (of $NPEER)  packages --json $(ms "$pk")  pip list $(ms "$pip")"
say "ratios: collect_env / doctor = $(ratio "$ce" "$doc")x   base / this doctor = $(awk -v a="$docb" -v b="$doc" 'BEGIN{if(a=="NA")print "NA"; else printf "%.2f", a/b}')x   pip list / packages = $(ratio "$pip" "$pk")x"
say "targets: doctor warm <= 50 ms: $(awk -v u="$doc" 'BEGIN{print (u!="NA" && u<=50000)?"MET":"NOT MET"}');  >= 100x collect_env: $(awk -v a="$ce" -v b="$doc" 'BEGIN{print (a!="NA" && a>=100*b)?"MET":"NOT MET"}')"
timeout 60 "$fp" packages --json > "$work/packages.json" 2>/dev/null
timeout 60 "$py" -m pip list --format=json > "$work/pip-list.json" 2>/dev/null
if cmp -s "$work/packages.json" "$work/pip-list.json"; then say "packages --json == pip list --format=json: IDENTICAL"; else say "packages --json != pip list"; fi
for i in 1 2 3; do timeout 60 "$fp" doctor --timings 2>&1 | sed -n '/collector/,$p'; echo; done > "$work/timings-warm.txt"
say "-- warm --timings (third run):"; tail -12 "$work/timings-warm.txt" | tee -a "$log"
FASTPATH_TRACE=1 timeout 60 "$fp" doctor > /dev/null 2> "$work/trace-warm.txt"

# 3. Cold: evict, then one run; NCOLD times each build.
how=none
: > "$work/timings-cold.txt"
for i in $(seq "$NCOLD"); do
  how=$(evict)
  s=$(now); timeout 60 "$fp" doctor --timings > "$work/cold-$i.txt" 2>&1; e=$(now)
  echo $(( (e - s) / 1000 )) >> "$work/raw/doctor-cold.us"
  if [ -n "$base" ]; then
    evict >/dev/null
    s=$(now); timeout 60 "$base" doctor --timings > "$work/cold-base-$i.txt" 2>&1; e=$(now)
    echo $(( (e - s) / 1000 )) >> "$work/raw/doctor-base-cold.us"
  fi
  if [ -n "$alt" ]; then
    evict >/dev/null
    s=$(now); timeout 60 "$alt" doctor --timings > "$work/cold-alt-$i.txt" 2>&1; e=$(now)
    echo $(( (e - s) / 1000 )) >> "$work/raw/doctor-alt-cold.us"
  fi
done
# What one cold run reads from storage (GNU time's %I: file system inputs,
# 512-byte blocks), for each build.
if [ -x /usr/bin/time ]; then
  for b in "$fp" $base $alt; do
    evict >/dev/null
    timeout 60 /usr/bin/time -f "%I" -o "$work/cold-inblocks.tmp" "$b" doctor >/dev/null 2>&1
    echo "$(basename "$b"): $(tail -1 "$work/cold-inblocks.tmp" | awk '{printf "%.1f MB", $1 * 512 / 1e6}') read from storage by one cold doctor"
  done > "$work/cold-io.txt"
  rm -f "$work/cold-inblocks.tmp"
fi
cold=$(median < "$work/raw/doctor-cold.us")
coldb=NA; [ -n "$base" ] && coldb=$(median < "$work/raw/doctor-base-cold.us")
colda=NA; [ -n "$alt" ] && colda=$(median < "$work/raw/doctor-alt-cold.us")
say "cold (page cache emptied by $how) medians of $NCOLD (ms): doctor $(ms "$cold")  base doctor $(ms "$coldb")  alt doctor $(ms "$colda")   target <= 250 ms: $(awk -v u="$cold" 'BEGIN{print (u!="NA" && u<=250000)?"MET":"NOT MET"}')"
say "-- cold --timings (first cold run):"; sed -n '/collector/,$p' "$work/cold-1.txt" | tee -a "$log"
if [ -n "$base" ]; then say "-- base build, cold --timings (first cold run):"; sed -n '/collector/,$p' "$work/cold-base-1.txt" | tee -a "$log"; fi
if [ -n "$alt" ]; then say "-- alt build, cold --timings (first cold run):"; sed -n '/collector/,$p' "$work/cold-alt-1.txt" | tee -a "$log"; fi
[ -s "$work/cold-io.txt" ] && tee -a "$log" < "$work/cold-io.txt"
if command -v strace >/dev/null; then
  timeout 60 strace -f -c -o "$work/strace-c.txt" "$fp" doctor >/dev/null 2>&1
  timeout 60 strace -f -e trace=openat,open -o "$work/strace-open.txt" "$fp" doctor >/dev/null 2>&1
  say "openat calls: $(grep -c open "$work/strace-open.txt")  (distinct paths: $(awk -F'"' '{print $2}' "$work/strace-open.txt" | sort -u | wc -l))"
fi
if [ -x /usr/bin/time ]; then /usr/bin/time -v "$fp" doctor > /dev/null 2> "$work/time-v.txt"; say "peak RSS: $(grep 'Maximum resident' "$work/time-v.txt")"; fi

# 4. inspect vs cuobjdump on torch's smaller CUDA library (the oracle).
lib=$(timeout 60 "$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
l="$lib/libtorch_cuda_linalg.so"
if [ -f "$l" ] && command -v cuobjdump >/dev/null; then
  s=$(now); timeout 120 cuobjdump --list-elf "$l" > "$work/linalg.elf.txt" 2>/dev/null; timeout 120 cuobjdump --list-ptx "$l" > "$work/linalg.ptx.txt" 2>/dev/null; e=$(now); cu=$(( (e - s) / 1000 ))
  ins=$(runs inspect "$N" "$fp" inspect --cuobjdump "$l")
  timeout 60 "$fp" inspect --cuobjdump "$l" > "$work/linalg.fastpath.txt" 2>/dev/null
  if cat "$work/linalg.elf.txt" "$work/linalg.ptx.txt" | cmp -s - "$work/linalg.fastpath.txt"; then r=IDENTICAL; else r=DIFFERENT; fi
  say "inspect --cuobjdump libtorch_cuda_linalg.so: $r to cuobjdump; fastpath $(ms "$ins") ms (median of $N), cuobjdump elf+ptx $(ms "$cu") ms (one run): $(ratio "$cu" "$ins")x"
fi

for f in "$work"/raw/*.us; do echo "$(basename "$f" .us): $(tr '\n' ' ' < "$f")"; done > "$work/all-runs.txt"
cp "$log" "$work/"
tar -C "$work" -czf "$out/speed.tar.gz" . 2>/dev/null
rm -rf "$work"
echo "done: $out/speed.log $out/speed.tar.gz"
