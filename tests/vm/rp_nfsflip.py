#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Regions that flip between data and hole through NFS, from a second client.

  rp_nfsflip.py PORT FILE REGION STOPFILE GOFILE PART/PARTS [split]

A raw NFSv4.2 client (tests/py/lt_nfs4raw.py) with its own client ID and
session to lacunad on 127.0.0.1:PORT. FILE is the path of the file from
lacunad's pseudo root (its export path and name). Once GOFILE exists and
until STOPFILE exists, it picks a run of 1 to 4 adjacent regions of FILE
(REGION bytes each, the file's size a multiple of it) inside part PART
of PARTS equal parts of the file (0-based: another flipper may own the
others), and either writes the run with one WRITE (every byte one value,
1..255, new each time: 64 KiB to 4 regions long) or DEALLOCATEs it with
one DEALLOCATE. The data of each WRITE sits at a different offset of the
request, never page aligned (a COMPOUND tag of 0 to 256 bytes and 0 to
12 extra PUTFHs ahead of it: offsets in 4-byte steps over several hundred
bytes of lacunad's receive buffer); stable_how cycles through
UNSTABLE4, DATA_SYNC4 and FILE_SYNC4; the stateid is an OPEN's or the
anonymous one. Prints "flips=N writes=W deallocs=D bytes=B".

With "split" (a negative control) each region is written as two WRITEs of
half a region 2 ms apart, in two COMPOUNDs, and a deallocation is two
DEALLOCATEs of the halves of each region: the file then holds torn regions for a while,
which a reader must see.

lacunad applies every WRITE and DEALLOCATE through lacunafs's atomic
paths: a reader must see each region of a run whole in one state.
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from lt_nfs4raw import (A_SIZE, ANON_STATEID, CLAIM_FH, ERR, OP, Conn,  # noqa: E402
                        deallocate, errname, getattr_, lookup, noargs, open_, putfh, u32,
                        write)


class Flipper:
    def __init__(self, port, path):
        self.conn = Conn(port, minor=2)
        self.ses = self.conn.ses
        ops = [noargs("PUTROOTFH")] + [lookup(p) for p in path.split("/") if p]
        st, r = self.call(ops + [noargs("GETFH"), getattr_([A_SIZE])])
        if st:
            sys.exit("nfsflip: no handle for %s: %s" % (path, errname(st)))
        self.fh = r[-2][2]
        self.size = int.from_bytes(r[-1][2][1][:8], "big")
        st, r = self.call([putfh(self.fh),
                           open_(0, b"rp-nfsflip", self.ses.clientid, claim=CLAIM_FH)])
        if st:
            sys.exit("nfsflip: OPEN: " + errname(st))
        self.open_sid = r[-1][2]["sid"]

    def call(self, ops, tag=b""):
        """ops after SEQUENCE, in a COMPOUND with @tag: (status, results of @ops)"""
        s = self.ses
        seq = ("SEQUENCE", s.sid + u32(s.seq) + u32(0) + u32(0) + u32(0))
        s.seq += 1
        st, r = s.c.call(s.minor, [seq] + ops, tag=tag)
        if r and r[0][0] == OP["SEQUENCE"] and r[0][1] == 0:
            r = r[1:]
        return st, r

    def do(self, what, op, tag=b"", count=None, pad=0):
        for _ in range(600):
            st, r = self.call([putfh(self.fh)] * (1 + pad) + [op], tag)
            if st != ERR["DELAY"]:
                break
            time.sleep(0.1)
        if st:
            sys.exit("nfsflip: %s: %s" % (what, errname(st)))
        if count is not None and r[-1][2]["count"] != count:
            sys.exit("nfsflip: short WRITE: %d of %d" % (r[-1][2]["count"], count))

    def write(self, off, data, stable, sid, shift=False):
        tag, pad = b"", 0
        if shift:
            tag, pad = b"t" * (4 * random.randrange(65)), random.randrange(13)
        self.do("WRITE", write(off, data, stable, sid), tag, len(data), pad)

    def dealloc(self, off, length, sid):
        self.do("DEALLOCATE", deallocate(off, length, sid))


def main():
    a = sys.argv[1:]
    if len(a) not in (6, 7) or "/" not in a[5] or a[6:] not in ([], ["split"]):
        sys.exit(__doc__)
    port, path, region, stopfile, gofile = int(a[0]), a[1], int(a[2]), a[3], a[4]
    part, parts = (int(x) for x in a[5].split("/"))
    split = a[6:] == ["split"]
    while not os.path.exists(gofile) and not os.path.exists(stopfile):
        time.sleep(0.05)
    f = Flipper(port, path)  # now: a session idle for longer than a lease would expire
    n = f.size // region
    mine = list(range(part * n // parts, (part + 1) * n // parts))
    if not mine:
        sys.exit("nfsflip: no region in part %d of %d of %s" % (part, parts, path))
    flips = writes = deallocs = nbytes = 0
    val = 128
    h = region // 2
    while not os.path.exists(stopfile):
        i = random.randrange(len(mine))
        run = mine[i:i + random.randint(1, 4)]
        off, length = run[0] * region, len(run) * region
        sid = f.open_sid if flips % 2 else ANON_STATEID
        stable = flips % 3
        if random.random() < 0.5:
            val = val % 255 + 1
            if split:
                for r in run:
                    f.write(r * region, bytes([val]) * h, stable, sid)
                    time.sleep(0.002)
                    f.write(r * region + h, bytes([val]) * (region - h), stable, sid)
            else:
                f.write(off, bytes([val]) * length, stable, sid, True)
            writes += 1
            nbytes += length
        else:
            if split:
                for r in run:
                    f.dealloc(r * region, h, sid)
                    time.sleep(0.002)
                    f.dealloc(r * region + h, region - h, sid)
            else:
                f.dealloc(off, length, sid)
            deallocs += 1
        flips += 1
    print(f"flips={flips} writes={writes} deallocs={deallocs} bytes={nbytes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
