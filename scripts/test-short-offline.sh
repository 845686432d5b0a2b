#!/usr/bin/env bash
# Runs `go test -short -count=1 ./...` with no network but loopback (a fresh
# network namespace: unshare -n, then lo up), which shows that -short is
# offline, and prints its wall time and CPU time (user + system: the number
# to compare on a shared, loaded machine), with the load average before and
# after. Needs root (or unprivileged user namespaces: it falls back to
# unshare -rn) and iproute2's `ip`. The module cache must already hold the
# dependencies (run `go mod download` first).
#
#   scripts/test-short-offline.sh            # the whole run
#   SLOWEST=15 scripts/test-short-offline.sh # also list the 15 slowest tests
set -euo pipefail
cd "$(dirname "$0")/.."
echo "before: $(uptime)"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
timer=()
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f '%e s wall, %U s user, %S s system, %M KB peak RSS (one process)'); fi
run='ip link set lo up && start=$(date +%s%N) && "$@" go test -short -count=1 -json ./... > '"$json"'; rc=$?; end=$(date +%s%N); echo "go test -short -count=1 ./... offline: $(( (end - start) / 1000000 )) ms wall, exit $rc"; exit $rc'
rc=0
if [ "$(id -u)" = 0 ]; then
  unshare -n sh -c "$run" sh "${timer[@]}" || rc=$?
else
  unshare -rn sh -c "$run" sh "${timer[@]}" || rc=$?
fi
echo "after: $(uptime)"
# Failures, and the slowest tests, from the JSON stream.
python3 - "$json" "${SLOWEST:-0}" <<'PY' || true
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
tests, pkgs, failed = [], [], []
for line in open(path):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("Action") not in ("pass", "fail") or "Elapsed" not in e:
        continue
    pkg = e["Package"].split("/fastpath/")[-1]
    if "Test" in e:
        tests.append((e["Elapsed"], pkg, e["Test"]))
    else:
        pkgs.append((e["Elapsed"], pkg))
    if e["Action"] == "fail":
        failed.append(pkg + " " + e.get("Test", ""))
for f in failed:
    print("FAIL", f)
if n:
    print("slowest packages (wall, s):")
    for el, p in sorted(pkgs, reverse=True)[:n]:
        print(f"  {el:7.2f}  {p}")
    print("slowest tests (wall, s):")
    for el, p, t in sorted(tests, reverse=True)[:n]:
        print(f"  {el:7.2f}  {p}  {t}")
PY
exit $rc
