#!/usr/bin/env python3
"""Where a fastpath run waited on system calls, from Go's execution trace.

    CGO_ENABLED=0 go build -tags fastpath_trace -o fastpath-trace ./cmd/fastpath
    FASTPATH_GOTRACE=run.trace ./fastpath-trace doctor       # on the machine to study
    python3 scripts/trace-waits.py run.trace [SLOW_US] [ROWS] # here (needs go on PATH)

A cold doctor spends its time waiting for the disk, spread over some sixty
goroutines; `doctor --timings` gives each collector's wall time and reads,
not which reads waited. This reads every system call in the trace (`go tool
trace -d=parsed`), with the stack that made it, and prints:

  1. the calls that took at least SLOW_US microseconds (default 80: a page
     cache hit takes 1 to 20), grouped by the call and the fastpath
     functions that made it, with their count, total, median and 90th
     percentile;
  2. a timeline in 10 ms steps: how many slow calls were in flight on
     average, by collector ("exec" is waiting for a child such as
     nvidia-smi; "+fatbin" is a fatbin walk inside that collector), and how
     many completed: the storage's random-read rate at that depth.

docs/speed.md ("A cold doctor's disk waits") shows what it found on the H200.
Standard library only. It reads the text `go tool trace -d=parsed` prints
(Go 1.26); TestTraceBuild (cmd/fastpath) runs it on a real trace, so a Go
release that changes that text fails there first.
"""
import collections
import re
import subprocess
import sys

TRANSITION = re.compile(r"StateTransition Time=(\d+) GoID=(\d+) (\w+)->(\w+)")
STEP_MS = 10


def frames_after(lines, i):
    """The function names of the stack printed after line i."""
    out = []
    j = i + 1
    while j < len(lines) and not lines[j].startswith("\t"):
        if lines[j].startswith("M=") or lines[j] == "":
            return out
        j += 1
    while j < len(lines) and lines[j].startswith("\t"):
        if not lines[j].startswith("\t\t"):
            out.append(lines[j].strip().split(" @")[0])
        j += 1
    return out


def short(fn):
    return fn.split("/")[-1]


def collector_of(frames):
    kind = "other"
    for f in frames:
        if "Waitid" in f:
            return "exec"
        m = re.search(r"internal/collect/(\w+)", f)
        if m:
            kind = m.group(1)
            break
    if any("fatbin." in f for f in frames):
        # fatbin.prefetch's readers are goroutines of their own: their
        # stacks end in fatbin (torch's libraries, or a big extension).
        kind = "fatbin-prefetch" if kind == "other" else kind + "+fatbin"
    return kind


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    slow_us = float(sys.argv[2]) if len(sys.argv) > 2 else 80
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    dump = subprocess.run(["go", "tool", "trace", "-d=parsed", sys.argv[1]],
                          capture_output=True, text=True, check=True).stdout
    lines = dump.split("\n")
    started = {}
    calls = []  # (start ms, end ms, group, collector)
    t0 = None
    for i, line in enumerate(lines):
        m = TRANSITION.search(line)
        if not m:
            continue
        t, g, a, b = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        if t0 is None:
            t0 = t
        if b == "Syscall":
            fr = frames_after(lines, i)
            ours = [short(f) for f in fr[1:] if "fastpath-dev/fastpath" in f and
                    not re.search(r"source\.(retryEINTR|\(\*rawFile\)|\(\*countedFile\)|\(\*prefixFile\))", f)]
            group = short(fr[0]) if fr else "?"
            group += " <- " + " <- ".join(ours[:3])
            started[g] = (t, group, collector_of(fr))
        elif a == "Syscall" and g in started:
            ts, group, kind = started.pop(g)
            calls.append(((ts - t0) / 1e6, (t - t0) / 1e6, group, kind))
    if not calls:
        sys.exit("no system calls in the trace")
    span = max(c[1] for c in calls)
    slow = [c for c in calls if (c[1] - c[0]) * 1000 >= slow_us]
    print(f"{len(calls)} system calls over {span:.1f} ms; {len(slow)} took {slow_us:.0f} us or more, "
          f"{sum(c[1] - c[0] for c in slow):.0f} ms in all (summed over goroutines)\n")

    by = collections.defaultdict(list)
    for s, e, group, _ in slow:
        by[group].append(e - s)
    print(f"{'calls':>6} {'total ms':>9} {'median us':>9} {'p90 us':>7}  call <- fastpath functions that made it")
    for group, ds in sorted(by.items(), key=lambda kv: -sum(kv[1]))[:rows]:
        ds.sort()
        print(f"{len(ds):6d} {sum(ds):9.1f} {ds[len(ds) // 2] * 1000:9.0f} {ds[int(len(ds) * 0.9)] * 1000:7.0f}  {group[:150]}")

    steps = int(span // STEP_MS) + 1
    depth = [collections.Counter() for _ in range(steps)]
    done = [0] * steps
    for s, e, _, kind in slow:
        done[min(int(e // STEP_MS), steps - 1)] += kind != "exec"
        k = int(s // STEP_MS)
        while k < steps and k * STEP_MS < e:
            lo, hi = max(s, k * STEP_MS), min(e, (k + 1) * STEP_MS)
            depth[k][kind] += (hi - lo) / STEP_MS
            k += 1
    print(f"\n{'ms':>5} {'in flight':>9} {'done':>5}  slow calls in flight on average, by collector (exec: waiting for a child)")
    for k in range(steps):
        c = depth[k]
        io = sum(v for kind, v in c.items() if kind != "exec")
        parts = " ".join(f"{kind}={v:.1f}" for kind, v in sorted(c.items()) if v >= 0.05)
        print(f"{k * STEP_MS:5d} {io:9.1f} {done[k]:5d}  {parts}")


if __name__ == "__main__":
    main()
