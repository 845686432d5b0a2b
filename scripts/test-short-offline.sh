#!/usr/bin/env bash
# Runs `go test -short -count=1 ./...` with no network but loopback (a fresh
# network namespace: unshare -n, then lo up), which shows that -short is
# offline, and prints its wall time. Needs root (or unprivileged user
# namespaces: it falls back to unshare -rn) and iproute2's `ip`. The module
# cache must already hold the dependencies (run `go mod download` first).
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
run='ip link set lo up && start=$(date +%s%N) && go test -short -count=1 ./... && end=$(date +%s%N) && echo "go test -short -count=1 ./... offline: $(( (end - start) / 1000000 )) ms wall"'
if [ "$(id -u)" = 0 ]; then
  unshare -n sh -c "$run"
else
  unshare -rn sh -c "$run"
fi
uptime
