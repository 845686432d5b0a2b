#!/usr/bin/env bash
# Times fastpath against the tools people run today, side by side in one run
# on this machine, medians of RUNS (default 10), and prints the ratios.
#   scripts/bench.sh [RUNS]
# Each peer runs only where it exists:
#   doctor --root on the seed container tree (the issue asks < 5 ms);
#   doctor on this host vs `python3 -m torch.utils.collect_env` (needs torch);
#   packages --json vs `python3 -m pip list --format=json` (checked identical first);
#   inspect --cuobjdump vs `cuobjdump --list-elf` + `--list-ptx` (needs cuobjdump; FILE from
#     BENCH_INSPECT_FILE, else torch's libtorch_cuda_linalg.so; checked identical first);
#   explain on a 50 MB log vs `grep -E` of the same signatures (a floor: grep finds lines, explain
#     also names causes and fixes).
# With BENCH_SCALE=1 it also runs the Go scaling benchmarks (200/1,000/5,000 distributions,
# 100/1,000/4,096 extension libraries, and 5,000 + 4,096): ns/op, B/op, the median wall time of
# the real command and its peak RSS. See docs/speed.md.
# Needs: go, python3, awk. No network. No hyperfine.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bin="$tmp/fastpath"
CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/fastpath || exit 2
export PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
py=$(command -v python3)

now() { date +%s%N; }
# median_ms CMD...: the median wall time of $runs runs, in ms (one decimal).
median_ms() {
  for _ in $(seq "$runs"); do
    local s e; s=$(now); "$@" >/dev/null 2>&1; e=$(now); echo $(( (e - s) / 1000 ))
  done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}'
}
row() { printf '%-58s %10s ms\n' "$1" "$2"; }
ratio() { awk -v a="$1" -v b="$2" -v what="$3" 'BEGIN { if (b > 0) printf "  -> fastpath is %.0fx faster than %s\n", a / b, what }'; }

printf '%-58s %13s\n' "command (medians of $runs, same run)" "median"

# 1. The seed container tree, read as --root.
"$bin" demo --write-tree "$tmp/seed" >/dev/null
seedenv='PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
seed=$(median_ms "$bin" doctor --root "$tmp/seed" --gpu 12.0 --env "$seedenv")
row "fastpath doctor --root SEED (target < 5 ms)" "$seed"

# 2. This host, and collect_env where torch imports.
doc=$(median_ms "$bin" doctor)
row "fastpath doctor (this host)" "$doc"
if "$py" -c 'import torch' 2>/dev/null; then
  ce=$(median_ms "$py" -m torch.utils.collect_env)
  row "python3 -m torch.utils.collect_env" "$ce"
  ratio "$ce" "$doc" "collect_env"
fi

# 3. packages vs pip list: the same bytes first, then the time.
if "$py" -m pip --version >/dev/null 2>&1; then
  if cmp -s <("$bin" packages --json) <("$py" -m pip list --format=json 2>/dev/null); then
    pk=$(median_ms "$bin" packages --json)
    pip=$(median_ms "$py" -m pip list --format=json)
    row "fastpath packages --json (identical to pip list)" "$pk"
    row "python3 -m pip list --format=json" "$pip"
    ratio "$pip" "$pk" "pip list"
  else
    echo "packages --json DIFFERS from pip list --format=json: not timed (a regression)"
  fi
fi

# 4. inspect vs cuobjdump on one CUDA library.
file=${BENCH_INSPECT_FILE:-}
if [ -z "$file" ] && "$py" -c 'import torch' 2>/dev/null; then
  file=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda_linalg.so"))')
fi
if [ -n "$file" ] && [ -f "$file" ] && command -v cuobjdump >/dev/null; then
  cuobjdump --list-elf "$file" > "$tmp/cu.txt" 2>/dev/null; cuobjdump --list-ptx "$file" >> "$tmp/cu.txt" 2>/dev/null
  if cmp -s "$tmp/cu.txt" <("$bin" inspect --cuobjdump "$file" 2>/dev/null); then
    ins=$(median_ms "$bin" inspect --cuobjdump "$file")
    cu=$(median_ms sh -c 'cuobjdump --list-elf "$1"; cuobjdump --list-ptx "$1"' sh "$file")
    row "fastpath inspect --cuobjdump $(basename "$file") (identical)" "$ins"
    row "cuobjdump --list-elf + --list-ptx" "$cu"
    ratio "$cu" "$ins" "cuobjdump"
  else
    echo "inspect --cuobjdump DIFFERS from cuobjdump on $file: not timed (a regression)"
  fi
fi

# 5. explain on 50 MB of build/training noise holding three real failures,
#    against grep -E of every signature pattern explain knows (the floor).
"$py" scripts/explain-bench-inputs.py log "$tmp/big.log"
"$py" scripts/explain-bench-inputs.py patterns internal/kb/data/signatures.json "$tmp/patterns.txt"
# explain must find the three failures before it is timed (a scan that
# finds nothing would be fast and wrong).
found=$("$bin" explain "$tmp/big.log" --json 2>/dev/null | grep -o '"id": "[a-z-]*"' | tr '\n' ' ')
if [ "$found" != '"id": "no-cuda-compiler" "id": "build-out-of-memory" "id": "fast-path-fallback" ' ]; then
  echo "explain on the 50 MB log found: ${found:-nothing}; want no-cuda-compiler, build-out-of-memory, fast-path-fallback: not timed (a regression)"
elif grep -E -f "$tmp/patterns.txt" /dev/null 2>/dev/null; [ $? -le 1 ]; then
  ex=$(median_ms "$bin" explain "$tmp/big.log" --json)
  gr=$(median_ms grep -E -f "$tmp/patterns.txt" "$tmp/big.log")
  row "fastpath explain 50 MB log --json (target < 100 ms)" "$ex"
  row "grep -E -f <$(wc -l < "$tmp/patterns.txt") signature patterns> (floor)" "$gr"
  awk -v a="$ex" -v b="$gr" 'BEGIN { if (b > 0) printf "  -> explain takes %.2fx the time of grep -E (%.0f MB/s)\n", a / b, 50 / (a / 1000) }'
else
  echo "grep -E rejects the converted signature patterns: explain timed alone"
  row "fastpath explain 50 MB log --json (target < 100 ms)" "$(median_ms "$bin" explain "$tmp/big.log" --json)"
fi

# 6. Scaling (Go benchmarks; minutes: they build trees of up to 5,000 distributions).
if [ "${BENCH_SCALE:-0}" = 1 ]; then
  go test ./cmd/fastpath -run '^$' -bench 'Seed|Scale' -benchtime 10x -timeout 60m | grep -E '^Benchmark|^ok'
fi
