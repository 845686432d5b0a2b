#!/usr/bin/env bash
# The GPU host and startup measurements of issue 17 (docs/speed.md, "GPU host
# and startup"), in one run on the H200, from the repo root:
#   bash .device/gpuhost/run.sh          (this script, staged as run.sh)
# .device/gpuhost/ holds: fastpath (the build under test), fastpath-base
# (main's build, for the side-by-side and the facts oracle), fastpath-alt
# (the build under test with the kernel's readahead left on for binaries;
# alt.txt says so), each plain or gzipped (NAME.gz, to stay small), and
# speed.sh and bench-startup.sh (this branch's copies).
# Writes $OUT/gpuhost.log (the summary) and $OUT/gpuhost.tar.gz (everything).
# No network. Every step is bounded with timeout; the script keeps going
# after failures. About 2 to 3 minutes. NCOLD (default 10) is the number of
# cold runs of each build.
set -uo pipefail
set -x
src=.device/gpuhost
dir=$(mktemp -d /tmp/gpuhost-bin.XXXXXX)
for b in fastpath fastpath-base fastpath-alt; do
  if [ -f "$src/$b.gz" ]; then gunzip -c "$src/$b.gz" > "$dir/$b"; elif [ -f "$src/$b" ]; then cp "$src/$b" "$dir/$b"; fi
  [ -f "$dir/$b" ] && chmod +x "$dir/$b"
done
cp "$src"/alt.txt "$src"/speed.sh "$src"/bench-startup.sh "$dir/" 2>/dev/null
out=${OUT:-/tmp/gpuhost-out}
mkdir -p "$out"
work=$(mktemp -d /tmp/gpuhost.XXXXXX)
log="$out/gpuhost.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
now() { date +%s%N; }
say "== gpuhost.sh on $(hostname) $(date -u +%FT%TZ)"
ls -la "$dir" >> "$log" 2>&1

# 1. speed.sh: facts oracle, determinism, warm and cold medians (this build,
#    main's, the readahead variant), collect_env, pip list, --timings, inspect.
s=$(now)
N=10 NPEER=5 NCOLD=${NCOLD:-10} timeout 900 bash "$dir/speed.sh" "$dir" "$work/speed" > "$work/speed.out" 2>&1
say "speed.sh exit $? in $(( ($(now) - s) / 1000000 )) ms"
cat "$work/speed/speed.log" >> "$log" 2>/dev/null

# 2. Startup and the seed tree on an idle machine: init time, --version and
#    doctor --root on the seed container, medians of 20, interleaved, with the
#    binaries held in 4 KB pages (as read from disk) and in large folios (as
#    a copy leaves them): docs/speed.md, "The binary's page cache".
for state in disk copied; do
  say "== bench-startup.sh, page-cache state $state (medians of 20; CPU from wait4)"
  BENCH_STARTUP_STATE=$state timeout 300 bash "$dir/bench-startup.sh" "$dir/fastpath-base" "$dir/fastpath" 20 > "$work/startup-$state.txt" 2>&1
  say "bench-startup exit $?"
  tee -a "$log" < "$work/startup-$state.txt"
done

# 3. nvidia-smi: the warm doctor waits for it. Each query alone and both at
#    once (as doctor runs them), medians of 5, in ms.
smi=$(command -v nvidia-smi)
if [ -n "$smi" ]; then
  q1=(--query-gpu=index,name,uuid,pci.bus_id,pci.device_id,compute_cap,memory.total,memory.used,driver_version --format=csv,noheader,nounits)
  q2=(--query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader,nounits)
  med() { sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.1f", a[int((NR+1)/2)] / 1e6; else print "NA"}'; }
  a=$(for _ in 1 2 3 4 5; do s=$(now); timeout 20 "$smi" "${q1[@]}" >/dev/null 2>&1; echo $(( $(now) - s )); done | med)
  b=$(for _ in 1 2 3 4 5; do s=$(now); timeout 20 "$smi" "${q2[@]}" >/dev/null 2>&1; echo $(( $(now) - s )); done | med)
  c=$(for _ in 1 2 3 4 5; do s=$(now); timeout 20 "$smi" "${q1[@]}" >/dev/null 2>&1 & timeout 20 "$smi" "${q2[@]}" >/dev/null 2>&1; wait; echo $(( $(now) - s )); done | med)
  say "nvidia-smi medians of 5 (ms): --query-gpu $a  --query-compute-apps $b  both at once $c"
  timeout 20 "$smi" "${q1[@]}" "${q2[@]}" > "$work/smi-combined.txt" 2>&1
  say "nvidia-smi with both queries in one call: exit $? ($(head -c 300 "$work/smi-combined.txt" | tr '\n' '|'))"
  persistence=$(timeout 20 "$smi" --query-gpu=persistence_mode --format=csv,noheader 2>&1 | head -1)
  say "persistence mode: $persistence"
fi

# 4. Where a warm doctor's time goes, three times each build.
for b in fastpath fastpath-base; do
  for _ in 1 2 3; do FASTPATH_TRACE=1 timeout 60 "$dir/$b" doctor --timings 2>&1 >/dev/null | cat; done > "$work/trace-$b.txt"
  for _ in 1 2 3; do timeout 60 "$dir/$b" doctor --timings 2>/dev/null | sed -n '/collector/,$p'; done > "$work/timings-$b.txt"
done
say "-- warm --timings, this build (third run):"; tail -10 "$work/timings-fastpath.txt" | tee -a "$log"
say "-- warm --timings, base build (third run):"; tail -10 "$work/timings-fastpath-base.txt" | tee -a "$log"

# 5. How many Ps: the warm doctor and the seed tree with GOMAXPROCS capped
#    (the runtime reads the variable), wall and CPU (user+sys, nvidia-smi's
#    included for the live doctor), medians of 10, the settings in turn.
"$dir/fastpath" demo --write-tree "$work/seed" >/dev/null 2>&1
timeout 300 python3 - "$dir/fastpath" "$work/seed" <<'PY' > "$work/gomaxprocs.txt" 2>&1
import os, statistics, subprocess, sys, time
fp, seed = sys.argv[1], sys.argv[2]
env_path = "PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
cases = {"doctor": [fp, "doctor"], "doctor --root seed": [fp, "doctor", "--root", seed, "--gpu", "12.0", "--env", env_path]}
for name, argv in cases.items():
    res = {}
    for _ in range(10):
        for g in ("default", "2", "4", "8"):
            env = dict(os.environ)
            if g != "default":
                env["GOMAXPROCS"] = g
            t = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            _, _, ru = os.wait4(p.pid, 0)
            res.setdefault(g, []).append(((time.perf_counter() - t) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3))
    for g, r in res.items():
        print(f"{name:20} GOMAXPROCS={g:8} wall {statistics.median(x[0] for x in r):7.1f} ms  cpu {statistics.median(x[1] for x in r):7.1f} ms")
PY
say "== GOMAXPROCS (medians of 10, in turn)"; tee -a "$log" < "$work/gomaxprocs.txt"
rm -rf "$work/seed"

cp "$work/speed/speed.tar.gz" "$work/" 2>/dev/null
rm -rf "$work/speed"
cp "$log" "$work/"
tar -C "$work" -czf "$out/gpuhost.tar.gz" . 2>/dev/null
rm -rf "$work" "$dir"
say "done $(date -u +%FT%TZ): $out/gpuhost.log $out/gpuhost.tar.gz"
