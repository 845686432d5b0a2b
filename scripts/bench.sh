#!/usr/bin/env bash
# Times fastpath against the peers people run today, in the same run, on this
# machine, and prints a table. Needs hyperfine (apt-get install hyperfine).
#   scripts/bench.sh [runs]
# Measures: doctor on the seed container tree (--root), doctor on this host,
# packages --json vs `python3 -m pip list --format=json` (checked identical
# first), and, where installed, `python3 -m torch.utils.collect_env`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bin="$tmp/fastpath"
CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/fastpath
export PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
"$bin" demo --write-tree "$tmp/seed" >/dev/null
seedenv='PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
cmp -s <("$bin" packages --json) <(python3 -m pip list --format=json) || { echo "packages --json differs from pip list" >&2; exit 1; }
cmds=("$bin doctor --root $tmp/seed --gpu 12.0 --env $seedenv" "$bin doctor" "$bin packages --json" "python3 -m pip list --format=json")
if python3 -c 'import torch' 2>/dev/null; then cmds+=("python3 -m torch.utils.collect_env"); fi
hyperfine -N -i --warmup 3 --runs "$runs" --export-json "$tmp/r.json" "${cmds[@]}" >/dev/null
python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
t = {x["command"].split("/")[-1] if "fastpath" in x["command"] else x["command"]: x for x in r}
print(f"{'command':60} {'mean ms':>9} {'median ms':>10} {'stddev':>7}")
for x in r:
    name = x["command"].replace(sys.argv[1].rsplit('/',1)[0] + "/", "")
    print(f"{name[:60]:60} {x['mean']*1000:9.1f} {x['median']*1000:10.1f} {x['stddev']*1000:7.1f}")
pk = next(x for x in r if x["command"].endswith("packages --json"))
pip = next(x for x in r if "pip list" in x["command"])
print(f"packages --json is {pip['median']/pk['median']:.1f}x faster than pip list (medians)")
PY
