#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Is a WRITE that a client sends as one NFS WRITE ever seen half done by
# READ_PLUS? One writer and one reader on the same range of one file:
#
#   lt_rp_uniform.py PATH HOST PORT NAME [--replies N] [--until-torn M]
#
# The writer works on PATH, a file on a kernel NFS mount of the server:
# it keeps writing one byte value g (1..255, a new one each time) with
# O_DIRECT pwrite from a page-aligned buffer over an extent of the region
# [1 MiB, 2 MiB) of the file, then punching that extent again
# (fallocate PUNCH_HOLE|KEEP_SIZE, which an NFSv4.2 mount sends as
# DEALLOCATE). The extent follows from g (g % 3): the whole region (1 MiB
# at a 1 MiB offset), 1 MiB - 1000 bytes at offset 1 MiB + 1000, and
# 777,777 bytes at offset 1 MiB + 4095; each fits one NFS WRITE (wsize
# 1 MiB), which the NFS WRITE count of the mount (/proc/self/mountstats)
# is compared with.
#
# The reader is its own NFSv4.2 client of the same server over TCP
# (HOST:PORT, lt_nfs4raw.py, a session of its own): it looks up NAME (the
# file's path on the server, from the root of its pseudo filesystem) and
# keeps reading the region with READ_PLUS. Since the writer never has two
# extents written at once, every reply must be all zeros/holes, or value
# g over exactly g's extent and zeros/holes elsewhere. Anything else
# (several values, g over part of its extent, a reply that does not cover
# the region) is a torn reply.
#
# It stops after N replies (default 1000), the writer having written at
# least 20 times; with --until-torn M, at the first torn reply or after M
# replies. Timeouts are only for hangs: 120 s for one READ_PLUS, one write
# or one punch.
#
# Output: key=value lines (replies, torn, hole_replies, data_replies,
# writes, write_bytes, punches, nfs_writes, nfs_deallocates, ...), "# "
# lines describing the first torn replies, errors on stderr. Exit 0 when
# the run completed and no reply was torn (with --until-torn: when one
# was), 1 when not, 2 on a usage, set-up or I/O error, 3 when the NFS
# client or the server hung ("timed out").
import ctypes
import ctypes.util
import mmap
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import (NFS4_CONTENT_DATA, Client, Session, errname,  # noqa: E402
                        lookup, noargs, putfh, read_plus)

MIB = 1 << 20
BASE, REGION = MIB, MIB
# g % 3 -> (offset, length) of the extent that value g is written over
EXTENTS = [(BASE, MIB), (BASE + 1000, MIB - 1000), (BASE + 4095, 777777)]
MIN_WRITES = 20
HANG_S = 120

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def extent_of(g):
    return EXTENTS[g % 3]


def nfs_ops(path, ops):
    """{op: count} of the NFS mount that holds @path (/proc/self/mountstats)"""
    mnt = os.path.realpath(path)
    best, sect, cur = "", {}, None
    with open("/proc/self/mountstats") as f:
        for line in f:
            w = line.split()
            if w[:1] == ["device"]:
                m = w[4] if len(w) > 4 else ""
                inside = mnt == m or mnt.startswith(m.rstrip("/") + "/")
                cur = {} if inside and "nfs" in line and len(m) > len(best) else None
                if cur is not None:
                    best, sect = m, cur
            elif cur is not None and w and w[0].rstrip(":") in ops and len(w) > 1:
                cur[w[0].rstrip(":")] = int(w[1])
    return {o: sect.get(o, 0) for o in ops}


class Writer(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.stop = threading.Event()
        self.writes = self.write_bytes = self.punches = 0
        self.kinds = [0, 0, 0]
        self.error = None
        self.busy_since = None  # when the current write or punch began
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(fd, BASE + 2 * MIB)
        os.close(fd)
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.buf = mmap.mmap(-1, MIB)  # page-aligned
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.buf))

    def run(self):
        g = 0
        try:
            while not self.stop.is_set():
                g = g % 255 + 1
                off, n = extent_of(g)
                ctypes.memset(self.addr, g, n)
                self.busy_since = _now()
                done = os.pwrite(self.fd, memoryview(self.buf)[:n], off)
                if done != n:
                    raise OSError(0, "pwrite of %d bytes at %d wrote %d" % (n, off, done))
                self.writes += 1
                self.write_bytes += n
                self.kinds[g % 3] += 1
                if _libc.fallocate(self.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                   off, n) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, "fallocate(PUNCH_HOLE) %d+%d: %s" %
                                  (off, n, os.strerror(e)))
                self.punches += 1
                self.busy_since = None
        except OSError as e:
            self.error = str(e)
        self.busy_since = None

    def hung(self):
        t = self.busy_since
        return t is not None and _now() - t > HANG_S


def _now():
    return time.monotonic()


ZEROS = bytes(REGION)


def region_of(res):
    """The region as the READ_PLUS result shows it (holes as zeros), or
    why the segments do not cover it."""
    parts, pos = [], BASE
    for k, o, x in res["segs"]:
        n = len(x) if k == NFS4_CONTENT_DATA else x
        if o > pos or (o + n <= pos and n):
            return None, "segment at %d+%d does not continue from %d" % (o, n, pos)
        end = min(o + n, BASE + REGION)
        if k == NFS4_CONTENT_DATA:
            parts.append(x[pos - o:end - o])
        else:
            parts.append(ZEROS[:max(0, end - pos)])
        pos = max(pos, o + n)
    if pos < BASE + REGION:
        return None, "the segments end at %d, before the region's end %d" % (pos, BASE + REGION)
    return b"".join(parts), ""


def written(g):
    """The region holding value g over its extent"""
    off, n = extent_of(g)
    return ZEROS[:off - BASE] + bytes([g]) * n + ZEROS[:BASE + REGION - off - n]


def verdict(res):
    """(kind, value, detail): kind "hole", "data" (one value over exactly
    its extent, zeros elsewhere) or "torn"; detail says what a torn reply
    held."""
    region, why = region_of(res)
    if region is None:
        return "torn", 0, why
    if region == ZEROS:
        return "hole", 0, ""
    for off, n in EXTENTS:
        g = region[off - BASE]
        if g and extent_of(g) == (off, n) and region == written(g):
            return "data", g, ""
    first = REGION - len(region.lstrip(b"\0"))
    last = len(region.rstrip(b"\0"))
    g = region[first]
    off, n = extent_of(g)
    vals = sorted(set(region[first:last]) - {0})
    return "torn", g, ("non-zero bytes at %d..%d: values %s; value %d (%d bytes of them) "
                       "belongs at %d+%d" % (BASE + first, BASE + last,
                                             ",".join(map(str, vals[:8])), g,
                                             region.count(g, first, last), off, n))


class FastClient(Client):
    """lt_nfs4raw's Client receiving into one buffer per read (a 1 MiB
    reply in one copy, not in a growing string)"""

    def _recvn(self, n):
        b = bytearray(n)
        v, got = memoryview(b), 0
        while got < n:
            k = self.s.recv_into(v[got:], n - got)
            if not k:
                raise EOFError("server closed the connection")
            got += k
        return b


def main(argv):
    args, opts = [], {"--replies": 1000, "--until-torn": 0}
    it = iter(argv)
    for a in it:
        if a in opts:
            opts[a] = int(next(it, "0"))
        else:
            args.append(a)
    if len(args) != 4 or opts["--replies"] < 1 or opts["--until-torn"] < 0:
        print("usage: lt_rp_uniform.py PATH HOST PORT NAME [--replies N] [--until-torn M]",
              file=sys.stderr)
        return 2
    path, host, port, name = args[0], args[1], int(args[2]), args[3]
    # Every reply makes a few 1 MiB buffers: kept on the heap and reused,
    # not mapped and faulted in afresh each time (measured: 100 times
    # faster, what lets a test VM under TCG read a reply in tens of ms)
    _libc.mallopt(M_MMAP_THRESHOLD, 64 * MIB)
    _libc.mallopt(M_TRIM_THRESHOLD, 256 * MIB)
    until_torn = opts["--until-torn"]
    want = until_torn or opts["--replies"]

    try:
        c = FastClient(port, host=host)
        c.s.settimeout(HANG_S)
        ses = Session(c, minor=2, maxresp=2 * MIB)
        w = Writer(path)
        st, r = ses.call([noargs("PUTROOTFH")] + [lookup(p) for p in name.split("/") if p] +
                         [noargs("GETFH")])
        if st:
            raise OSError(0, "LOOKUP %s: %s" % (name, errname(st)))
        fh = r[-1][2]
    except (OSError, ValueError) as e:
        print("lt_rp_uniform: set-up: %s" % e, file=sys.stderr)
        return 2
    ops0 = nfs_ops(path, ("WRITE", "DEALLOCATE"))

    n = {"hole": 0, "data": 0, "torn": 0}
    seen, by_extent, shown, rc = set(), [0, 0, 0], 0, 0
    w.start()
    try:
        while n["hole"] + n["data"] + n["torn"] < want:
            if w.error or not w.is_alive():
                break
            if w.hung():
                print("lt_rp_uniform: timed out: a write or punch took more than %d s" % HANG_S,
                      file=sys.stderr)
                rc = 3
                break
            st, r = ses.call([putfh(fh), read_plus(BASE, REGION)])
            if st:
                raise OSError(0, "READ_PLUS: %s" % errname(st))
            kind, g, why = verdict(r[-1][2])
            n[kind] += 1
            if kind == "torn":
                if shown < 5:
                    print("# torn reply %d: %s" % (sum(n.values()), why))
                    shown += 1
                if until_torn:
                    break
            elif kind == "data":
                seen.add(g)
                by_extent[g % 3] += 1
            if not until_torn and sum(n.values()) >= want and w.writes < MIN_WRITES:
                want += 100  # the writer has not had its turns yet
    except TimeoutError:
        print("lt_rp_uniform: timed out: no READ_PLUS reply in %d s" % HANG_S, file=sys.stderr)
        rc = 3
    except (OSError, ValueError, EOFError) as e:
        print("lt_rp_uniform: reader: %s" % e, file=sys.stderr)
        rc = 2
    w.stop.set()
    w.join(HANG_S)
    if w.is_alive():
        print("lt_rp_uniform: timed out: the writer did not stop within %d s" % HANG_S,
              file=sys.stderr)
        rc = 3
    if w.error:
        print("lt_rp_uniform: writer: %s" % w.error, file=sys.stderr)
        rc = rc or 2
    ops1 = nfs_ops(path, ("WRITE", "DEALLOCATE"))

    print("replies=%d" % sum(n.values()))
    print("torn=%d" % n["torn"])
    print("hole_replies=%d" % n["hole"])
    print("data_replies=%d" % n["data"])
    print("data_replies_by_extent=%s" % ",".join(map(str, by_extent)))
    print("values_seen=%d" % len(seen))
    print("writes=%d" % w.writes)
    print("writes_by_extent=%s" % ",".join(map(str, w.kinds)))
    print("write_bytes=%d" % w.write_bytes)
    print("punches=%d" % w.punches)
    print("nfs_writes=%d" % (ops1["WRITE"] - ops0["WRITE"]))
    print("nfs_deallocates=%d" % (ops1["DEALLOCATE"] - ops0["DEALLOCATE"]))
    if rc:
        return rc
    if until_torn:
        return 0 if n["torn"] else 1
    return 0 if n["torn"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
