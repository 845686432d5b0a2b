#!/usr/bin/env bash
# Startup and the seed tree, two builds side by side in one run (issue 17:
# "doctor on the seed tree under 5 ms"; docs/speed.md, "GPU host and startup").
#   scripts/bench-startup.sh BASE [NEW] [RUNS]
# BASE and NEW are fastpath binaries (NEW defaults to a build of this tree);
# RUNS (default 10) runs of each, interleaved BASE, NEW, BASE, NEW... so that
# a load that comes and goes hits both alike. For each build it prints:
#   - package init: the sum of GODEBUG=inittrace=1's per-package clock times
#     (median and minimum over RUNS starts of `--version`), and the bytes and
#     allocations of all inits and of fastpath's own packages (these do not
#     depend on the load; internal/layering's TestInitBudget bounds them);
#   - `--version` and `doctor --root SEED --gpu 12.0 --env PATH=...`: medians
#     of wall time, CPU time (user+sys, from wait4's rusage, in milliseconds)
#     and minor page faults, and the median of the rounds' paired
#     differences (new minus base) in wall and CPU time; under each, a Go
#     hello-world timed in the same rounds (the machine's pace right then).
# Each build runs from COPIES (default 3) files of its own, in turns, in one
# page-cache state for all (BENCH_STARTUP_STATE):
#   disk    (default) written, dropped from the page cache, and read back by
#           a first exec: 4 KB pages, as a binary loaded from disk after a
#           reboot, or one the linker has just written, is held;
#   copied  written by a copy in 1 MB writes: large folios, as a file a copy
#           just wrote is held on kernels whose file system caches large
#           folios (ext4 from Linux 6.16, XFS from 5.18);
#   given   the files as given, once each.
# The same bytes start up to 0.5 ms sooner from large folios on the 2-core
# VM, and 4 KB copies differ among themselves by up to 0.4 ms (where their
# pages fall): without copies and one state, that would swamp the difference
# between two builds (docs/speed.md, "The binary's page cache").
# CPU time is the figure to trust on a loaded machine; wall time is an upper
# bound there. Needs python3 (for wait4) and awk. No network.
set -uo pipefail
base=$(realpath "${1:?usage: scripts/bench-startup.sh BASE [NEW] [RUNS]}")
new=${2:-}
runs=${3:-10}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "$new" ]; then
  new="$tmp/fastpath"
  (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -o "$new" ./cmd/fastpath) || exit 2
else
  new=$(realpath "$new")
fi
"$new" demo --write-tree "$tmp/seed" >/dev/null
seedenv='PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
# A Go hello-world, timed in the same rounds: the machine's speed at the
# moment (this VM's drifts by a third within an hour), and the floor of any
# Go program's start. Skipped without a Go toolchain.
hello=""
if command -v go >/dev/null; then
  mkdir -p "$tmp/hello" && printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' > "$tmp/hello/main.go" &&
    (cd "$tmp/hello" && GO111MODULE=off CGO_ENABLED=0 go build -o "$tmp/hello/hello" main.go) && hello="$tmp/hello/hello"
fi

echo "base: $base ($(stat -c %s "$base") bytes)   new: $new ($(stat -c %s "$new") bytes)   runs: $runs"

# Package init: the per-package clock times that the runtime prints.
for pair in "base:$base" "new:$new"; do
  label=${pair%%:*} b=${pair#*:}
  for _ in $(seq "$runs"); do
    GODEBUG=inittrace=1 "$b" --version 2>&1 >/dev/null | awk '/^init /{s += $5} END {printf "%.3f\n", s}'
  done | sort -n | awk -v l="$label" '{a[NR]=$1} END {printf "%-5s package init, ms of CPU clock: median %.2f  min %.2f\n", l, a[int((NR+1)/2)], a[1]}'
  GODEBUG=inittrace=1 "$b" --version 2>&1 >/dev/null | awk -v l="$label" '
    /^init / {b += $8; a += $10; if ($2 ~ /^github.com\/fastpath-dev\/fastpath\//) {ob += $8; oa += $10}}
    END {printf "%-5s package init, allocated: all %d bytes in %d allocs; fastpath'"'"'s own %d bytes in %d allocs\n", l, b, a, ob, oa}'
done

python3 - "$base" "$new" "$runs" "$tmp/seed" "$seedenv" "$tmp" "${BENCH_STARTUP_STATE:-disk}" "${BENCH_STARTUP_COPIES:-3}" "$hello" <<'PY'
import os, shutil, statistics, subprocess, sys, time
# Start the builds as a user's shell or container runtime would: from a
# parent holding no descriptor above 63. A child's descriptor table is as
# large as its parent's highest open descriptor needs, and a run that starts
# with a larger one never pays for growing it (docs/speed.md, "The
# descriptor table"); bash scripts hold 255, some tool harnesses 251.
os.closerange(3, 65536)
base, new, runs, seed, env = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
tmp, state, ncopies, hello = sys.argv[6], sys.argv[7], int(sys.argv[8]), sys.argv[9]
def install(src, label):
    if state == "given":
        return [src]
    paths = []
    for k in range(ncopies):
        dst = os.path.join(tmp, f"{label}.{k}")
        with open(src, "rb") as fi, open(dst, "wb") as fo:
            shutil.copyfileobj(fi, fo, 1 << 20)
            fo.flush()
            os.fsync(fo.fileno())
            if state == "disk":
                os.posix_fadvise(fo.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        os.chmod(dst, 0o755)
        subprocess.run([dst, "--version"], stdout=subprocess.DEVNULL)  # exec reads it back
        paths.append(dst)
    return paths
if state not in ("disk", "copied", "given"):
    sys.exit(f"BENCH_STARTUP_STATE={state}: want disk, copied or given")
# Keyed by role, not path: a build compared with itself shows the noise.
copies = {"base": install(base, "base"), "new": install(new, "new")}
print(f"page-cache state: {state}, {len(copies['base'])} file(s) per build")
cases = [("--version", ["--version"]),
         ("doctor --root seed", ["doctor", "--root", seed, "--gpu", "12.0", "--env", env])]
def once(argv):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt
print(f"{'command':22} {'build':5} {'wall ms':>8} {'cpu ms':>7} {'faults':>7}   (medians of {runs}, interleaved)")
for name, args in cases:
    res = {"base": [], "new": [], "hello": []}
    for r in range(runs):
        # Each round runs both builds back to back, in turns first, so
        # that a slow moment or the order itself falls on both alike.
        for b in (("base", "new") if r % 2 == 0 else ("new", "base")):
            res[b].append(once([copies[b][r % len(copies[b])]] + args))
        if hello:
            res["hello"].append(once([hello]))
    for label in ("base", "new", "hello") if hello else ("base", "new"):
        w, c, f = (statistics.median(x[i] for x in res[label]) for i in range(3))
        print(f"{name:22} {label:5} {w:8.2f} {c:7.2f} {f:7.0f}")
    # The median of the rounds' differences: steadier than the difference
    # of the medians when the machine's speed drifts during the run.
    dw, dc = (statistics.median(n[i] - b_[i] for n, b_ in zip(res["new"], res["base"])) for i in range(2))
    print(f"{name:22} {'new-base, paired':>13} {dw:+7.2f} {dc:+7.2f}")
PY
