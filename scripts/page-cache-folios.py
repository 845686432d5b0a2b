#!/usr/bin/env python3
"""How the page cache holds each FILE: in 4 KB pages or in large folios.

    sudo python3 scripts/page-cache-folios.py FILE...

Maps each file, touches every page (which brings it into the page cache the
way a read fault does if it is not there yet), and looks each page's frame up
in /proc/self/pagemap and /proc/kpageflags (root only). docs/speed.md, "The
binary's page cache", says why this matters: a fastpath binary the linker just
wrote, or one exec read from disk, sits in 4 KB pages and starts up to 0.5 ms
slower on the 2-core VM than the same bytes written by a copy.
"""
import mmap
import os
import struct
import sys

KPF_COMPOUND_HEAD = 1 << 15
KPF_COMPOUND_TAIL = 1 << 16
PAGE = os.sysconf("SC_PAGE_SIZE")


def folios(path):
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, 0, 0
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    os.close(fd)
    for off in range(0, size, PAGE):
        m[off]
    real = os.path.realpath(path)
    start = None
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith(real):
                start = int(line.split()[0].split("-")[0], 16)
                break
    heads = tails = small = 0
    with open("/proc/self/pagemap", "rb") as pm, open("/proc/kpageflags", "rb") as kf:
        for i in range((size + PAGE - 1) // PAGE):
            pm.seek(((start // PAGE) + i) * 8)
            entry = struct.unpack("<Q", pm.read(8))[0]
            if not entry >> 63:  # not present
                continue
            kf.seek((entry & ((1 << 55) - 1)) * 8)
            flags = struct.unpack("<Q", kf.read(8))[0]
            if flags & KPF_COMPOUND_HEAD:
                heads += 1
            elif flags & KPF_COMPOUND_TAIL:
                tails += 1
            else:
                small += 1
    m.close()
    return heads, tails, small


for path in sys.argv[1:]:
    heads, tails, small = folios(path)
    large = heads + tails
    avg = f"{large / heads * PAGE // 1024:.0f} KB" if heads else "none"
    print(f"{path}: {small} pages in 4 KB folios, {large} in {heads} large folios (average {avg})")
