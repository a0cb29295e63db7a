#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Regions that flip between data and hole, and a reader that checks them.

  rp_regions.py flip FILE REGION STOPFILE GOFILE [split]
      once GOFILE exists and until STOPFILE exists: pick a random region
      of FILE (REGION bytes each, the file's size a multiple of it) and
      either write it whole with one pwrite (every byte one value, 1..255,
      new each time) or punch it (FALLOC_FL_PUNCH_HOLE). Prints
      "flips=N writes=W punches=P". With "split" (a negative control) each
      write is two pwrites of half a region 2 ms apart: the file itself
      then holds torn regions for a while, which a reader must see.
  rp_regions.py check FILE REGION READS READSIZE
      READS reads of READSIZE bytes with O_DIRECT (page-aligned buffer),
      at offsets walking the file in READSIZE steps, and for every region
      inside each read: all zero (a hole), all one value (one write), or
      torn (anything else). Prints "reads=N holes=H datas=D torn=T" and the
      first torn regions. Exit 0 when none is torn, 1 when one is.

The flipper runs where the file's filesystem is (the host, through the
lacunafs mount), the reader where the client is (the guest, through NFS).
"""

import ctypes
import mmap
import os
import random
import sys
import time

FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2


def flip(path, region, stopfile, gofile, split):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    fd = os.open(path, os.O_RDWR)
    n = os.fstat(fd).st_size // region
    buf = mmap.mmap(-1, region)
    flips = writes = punches = 0
    val = 0
    while not os.path.exists(gofile) and not os.path.exists(stopfile):
        time.sleep(0.05)
    while not os.path.exists(stopfile):
        r = random.randrange(n)
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


def check(path, region, reads, readsize):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size
    buf = mmap.mmap(-1, readsize)
    holes = datas = torn = 0
    off = 0
    for _ in range(reads):
        got = os.preadv(fd, [buf], off)
        view = buf[:got]
        for o in range(0, got - got % region, region):
            r = view[o:o + region]
            if r.count(r[0:1]) != region:
                torn += 1
                if torn <= 5:
                    vals = sorted(set(r))
                    print(f"torn: offset {off + o}: byte values {vals[:8]}")
            elif r[0] == 0:
                holes += 1
            else:
                datas += 1
        off += readsize
        if off >= size:
            off = 0
    os.close(fd)
    print(f"reads={reads} holes={holes} datas={datas} torn={torn}")
    return 1 if torn else 0


def main():
    a = sys.argv[1:]
    if len(a) in (5, 6) and a[0] == "flip":
        flip(a[1], int(a[2]), a[3], a[4], a[5:] == ["split"])
        return 0
    if len(a) == 5 and a[0] == "check":
        return check(a[1], int(a[2]), int(a[3]), int(a[4]))
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
