#!/usr/bin/env bash
# The descriptor-table growth on the H200 (internal/source/readers.go):
# what the open of descriptor 64 costs there, and doctor's wall time started
# from a parent that holds no high descriptor (Python, `bash -c`, ssh, a
# container runtime: the child starts with a 64-entry table) against one
# started from a shell script (bash keeps the script on descriptor 255, so
# its children start with 256 entries and never grow it).
#   bash scripts/device/fdtable.sh            # from the repo root, on the device
# Stage first, here:
#   CGO_ENABLED=0 go build -o .device/fdtable/fdprobe scripts/device/fdprobe.go
#   CGO_ENABLED=0 go build -o .device/fdtable/fastpath ./cmd/fastpath; gzip .device/fdtable/fastpath
#   (and a build to compare as .device/fdtable/fastpath-base.gz)
# Writes $OUT/fdtable.log.
set -u
D=${FDTABLE_DIR:-.device/fdtable}; T=$(mktemp -d); log=${OUT:-/tmp}/fdtable.log
for b in fastpath fastpath-base; do gunzip -c $D/$b.gz > $T/$b 2>/dev/null && chmod +x $T/$b; done
cp $D/fdprobe $T/fdprobe; chmod +x $T/fdprobe
$T/fastpath demo --write-tree $T/seed >/dev/null
py=/opt/torch/.venv/bin/python3; [ -x $py ] || py=python3
{
echo "== $(uname -r), $(nproc) CPUs"
timeout 600 python3 - "$T" "$py" <<'PY'
import os, statistics, subprocess, sys, time
T, py = sys.argv[1], sys.argv[2]
def once(argv, script_parent, extra=None):
    # A parent holding descriptor 255 (as bash does for a script) gives its
    # children a 256-entry table; without it they start with 64.
    if script_parent:
        os.dup2(0, 255)
    e = dict(os.environ); e.update(extra or {})
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE if argv[0].endswith("fdprobe") else subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e)
    out = p.stdout.read().decode() if p.stdout else ""
    _, st, ru = os.wait4(p.pid, 0)
    w = (time.perf_counter() - t0) * 1e3
    if script_parent:
        os.close(255)
    return w, (ru.ru_utime + ru.ru_stime) * 1e3, out
print("== fdprobe: the cost of each open in a threaded process")
for sp in (False, True):
    for _ in range(5):
        print("  from a script parent" if sp else "  from a fresh parent ", once([T + "/fdprobe"], sp)[2].strip())
def table(label, argv_for, n, extra=None):
    print(f"== {label}: medians of {n}, builds and parents interleaved")
    res = {}
    for _ in range(n):
        for b in ("fastpath-base", "fastpath"):
            if not os.path.exists(T + "/" + b):
                continue
            for sp in (False, True):
                res.setdefault((b, sp), []).append(once(argv_for(b), sp, extra))
    for (b, sp), r in res.items():
        w = sorted(x[0] for x in r)
        print(f"  {b:14} {'script parent' if sp else 'fresh parent ':13}  wall {statistics.median(w):7.2f} ms (min {w[0]:6.2f}, max {w[-1]:6.2f})  cpu {statistics.median(x[1] for x in r):6.2f} ms")
seedenv = "PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the seed container's venv
table("doctor --root SEED", lambda b: [T + "/" + b, "doctor", "--root", T + "/seed", "--gpu", "12.0", "--env", seedenv], 15)
table("doctor on this host (warm)", lambda b: [T + "/" + b, "doctor"], 10, {"PATH": os.path.dirname(py) + ":" + os.environ.get("PATH", ""), "VIRTUAL_ENV": os.path.dirname(os.path.dirname(py))})
PY
} 2>&1 | tee "$log"
