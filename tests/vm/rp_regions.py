#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Regions that flip between data and hole, and a reader that checks them.

  rp_regions.py flip FILE REGION STOPFILE GOFILE [PART/PARTS] [split]
      once GOFILE exists and until STOPFILE exists: pick a random region
      of FILE (REGION bytes each, the file's size a multiple of it; with
      PART/PARTS only in part PART, 0-based, of PARTS equal parts) and
      either write it whole with one pwrite (every byte one value, 1..255,
      new each time) or punch it (FALLOC_FL_PUNCH_HOLE). Prints
      "flips=N writes=W punches=P". With "split" (a negative control) each
      write is two pwrites of half a region 2 ms apart: the file itself
      then holds torn regions for a while, which a reader must see.
  rp_regions.py check FILE REGION READS READSIZE [PARTS]
      READS reads of READSIZE bytes with O_DIRECT (page-aligned buffer),
      at offsets walking the file in READSIZE steps, and for every region
      inside each read: all zero (a hole), all one value (one write), or
      torn (anything else). Prints the first torn regions, with PARTS the
      counts of each of PARTS equal parts of the file
      ("part=K regions=R holes=H datas=D torn=T"), and last
      "reads=N regions=R holes=H datas=D torn=T". Exit 0 when none is torn,
      1 when one is.

The flipper runs where the file's filesystem is (the host, through the
lacunafs mount), the reader where the client is (the guest, through NFS).
rp_nfsflip.py flips another part of the file through lacunad.
"""

import ctypes
import mmap
import os
import random
import sys
import time

FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2


def flip(path, region, stopfile, gofile, part, parts, split):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    fd = os.open(path, os.O_RDWR)
    n = os.fstat(fd).st_size // region
    lo, hi = part * n // parts, (part + 1) * n // parts
    buf = mmap.mmap(-1, region)
    flips = writes = punches = 0
    val = 0
    while not os.path.exists(gofile) and not os.path.exists(stopfile):
        time.sleep(0.05)
    while not os.path.exists(stopfile):
        r = random.randrange(lo, hi)
        if random.random() < 0.5:
            val = val % 255 + 1
            buf.seek(0)
            buf.write(bytes([val]) * region)
            if split:
                h = region // 2
                ok = os.pwrite(fd, buf[:h], r * region) == h
                time.sleep(0.002)
                ok = ok and os.pwrite(fd, buf[h:], r * region + h) == region - h
            else:
                ok = os.pwrite(fd, buf, r * region) == region
            if not ok:
                sys.exit("flip: short pwrite")
            writes += 1
        else:
            if libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      r * region, region) != 0:
                sys.exit("flip: fallocate: " + os.strerror(ctypes.get_errno()))
            punches += 1
        flips += 1
    os.close(fd)
    print(f"flips={flips} writes={writes} punches={punches}")


def check(path, region, reads, readsize, parts):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size
    n = size // region
    buf = mmap.mmap(-1, readsize)
    # per part: [regions, holes, datas, torn]
    cnt = [[0, 0, 0, 0] for _ in range(parts)]
    off = 0
    for _ in range(reads):
        got = os.preadv(fd, [buf], off)
        view = buf[:got]
        for o in range(0, got - got % region, region):
            r = view[o:o + region]
            c = cnt[min((off + o) // region * parts // n, parts - 1)]
            c[0] += 1
            if r.count(r[0:1]) != region:
                c[3] += 1
                if sum(x[3] for x in cnt) <= 5:
                    vals = sorted(set(r))
                    print(f"torn: offset {off + o}: byte values {vals[:8]}")
            elif r[0] == 0:
                c[1] += 1
            else:
                c[2] += 1
        off += readsize
        if off >= size:
            off = 0
    os.close(fd)
    if parts > 1:
        for k, c in enumerate(cnt):
            print(f"part={k} regions={c[0]} holes={c[1]} datas={c[2]} torn={c[3]}")
    t = [sum(c[i] for c in cnt) for i in range(4)]
    print(f"reads={reads} regions={t[0]} holes={t[1]} datas={t[2]} torn={t[3]}")
    return 1 if t[3] else 0


def main():
    a = sys.argv[1:]
    if len(a) >= 5 and a[0] == "flip":
        part, parts, rest = 0, 1, a[5:]
        if rest and "/" in rest[0]:
            part, parts = (int(x) for x in rest.pop(0).split("/"))
        if rest in ([], ["split"]):
            flip(a[1], int(a[2]), a[3], a[4], part, parts, rest == ["split"])
            return 0
    if len(a) in (5, 6) and a[0] == "check":
        return check(a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]) if a[5:] else 1)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
