#!/usr/bin/env bash
# Times `fastpath packages --json` against `python3 -m pip list --format=json`
# on this machine's python3, in the same run, and prints both and the ratio.
# Usage: scripts/bench-packages.sh [runs]   (hyperfine is used when present)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
bin="$(mktemp -d)/fastpath"
CGO_ENABLED=0 go build -o "$bin" ./cmd/fastpath
export PIP_DISABLE_PIP_VERSION_CHECK=1

# Same output first: a fast wrong answer is no answer.
if ! cmp -s <("$bin" packages --json) <(python3 -m pip list --format=json); then
	echo "fastpath packages --json differs from pip list --format=json" >&2
	exit 1
fi

if command -v hyperfine >/dev/null; then
	hyperfine --warmup 3 --runs "$runs" --export-json /tmp/bench-packages.json \
		"$bin packages --json" "python3 -m pip list --format=json"
	python3 - <<'PY'
import json
r = json.load(open("/tmp/bench-packages.json"))["results"]
fp, pip = r[0]["mean"] * 1000, r[1]["mean"] * 1000
print(f"fastpath packages --json: {fp:.1f} ms\npip list --format=json:   {pip:.1f} ms\nratio: {pip / fp:.1f}x")
PY
	exit 0
fi

# mean_ms CMD...: the mean wall time of runs executions, in milliseconds.
mean_ms() {
	local start end
	"$@" >/dev/null # warm-up
	start=$(date +%s%N)
	for ((i = 0; i < runs; i++)); do "$@" >/dev/null; done
	end=$(date +%s%N)
	echo $(((end - start) / runs / 1000))
}
fp_us=$(mean_ms "$bin" packages --json)
pip_us=$(mean_ms python3 -m pip list --format=json)
awk -v f="$fp_us" -v p="$pip_us" 'BEGIN {
	printf "fastpath packages --json: %.1f ms\npip list --format=json:   %.1f ms\nratio: %.1fx\n", f/1000, p/1000, p/f }'
