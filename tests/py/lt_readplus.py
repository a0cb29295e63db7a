#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READ_PLUS, SEEK, ALLOCATE and DEALLOCATE (RFC 7862) of lacunad, checked
# with raw minor version 2 COMPOUNDs (lt_nfs4raw.py):
#
#   lt_readplus.py edge PORT DIR BACKING
#       the RFC's edge cases on files made in DIR (the exported lacunafs
#       mount, BACKING the filesystem under it): count 0, offsets at and
#       past EOF, a range inside one hole, a range ending mid-hole, a file
#       all hole, an empty file, a file of 2048 segments, a sparse file
#       of more than 1 TiB, the largest counts, the smallest replies a
#       session allows, several READ_PLUS (and READ) in one COMPOUND;
#       SEEK's virtual hole at EOF, NXIO, eof and unknown sa_what;
#       ALLOCATE and DEALLOCATE looked at in the backing file; the errors
#       (NOSPC, ISDIR, SYMLINK, WRONG_TYPE, INVAL, FBIG, OP_ILLEGAL in
#       4.1); a file read and then removed on the server's side gives its
#       space back
#   lt_readplus.py layouts PORT DIR BACKING [--seed S] [--count N]
#       N random sparse layouts (data runs of random sizes at random,
#       often unaligned offsets, punched holes, zero ranges,
#       preallocations, truncates, files ending in a hole, data past
#       1 TiB) made through DIR and read once whole (so that no later
#       read turns an unwritten extent into data: DESIGN.md): the map
#       over NFS (READ_PLUS, SEEK, `lacuna nfs-map` with READ_PLUS and
#       with --seek), and that of a random range (READ_PLUS, `lacuna
#       nfs-map --offset --length`), equal the local `lacuna map` through
#       the mount; every byte READ_PLUS sends is the file's; `lacuna
#       nfs-get` copies it into BACKING/.copies with the same bytes, every
#       hole of the source a hole of the copy and no more blocks than the
#       data needs. The tools get $LT_READPLUS_TOOL_TIMEOUT seconds (5)
#       per file.
#   lt_readplus.py map PORT NAME [--count N]
#       the map of NAME (relative to the export root) taken with READ_PLUS,
#       printed as `lacuna map --json` prints one (without "atomic",
#       "unstable" and "allocated_bytes")
#   lt_readplus.py trace PORT NAME...
#       READ_PLUS and SEEK calls on each NAME, one line per reply:
#       "xid X op READ_PLUS status S eof E segs K:OFF:LEN,..." or
#       "xid X op SEEK status S eof E offset O" (for nfs_tshark_rp.sh)
#   lt_readplus.py wirecheck TRACE FIELDS
#       compare a trace with tshark's fields of the same replies (FIELDS:
#       "xid|stream|opcodes|statuses|eof|content types|offsets|lengths|
#       data lengths|array lengths" per reply frame, as nfs_tshark_rp.sh
#       writes them)
#   lt_readplus.py wiremap FIELDS STREAM JSON
#       the READ_PLUS replies of TCP stream STREAM in FIELDS make the map
#       `lacuna nfs-map --json` printed into JSON
#
# The lacuna tool is $LACUNA (default: lacuna in PATH). Output: one
# "ok - ..." or "not ok - ..." line per check; "# ..." lines explain.
# Exit status 0 when all checks passed, 1 when one failed, 2 on a usage
# or setup error.
import ctypes
import ctypes.util
import json
import os
import random
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403

LACUNA = os.environ.get("LACUNA", "lacuna")
KIB, MIB, GIB, TIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40
IO_MAX = MIB  # lacunad's maxread (GW_IO_MAX)
# seconds a `lacuna nfs-map` or `nfs-get` may take on one layout
TOOL_TIMEOUT = int(os.environ.get("LT_READPLUS_TOOL_TIMEOUT", "5"))
OP_ILLEGAL = 10044
DATA, HOLE = NFS4_CONTENT_DATA, NFS4_CONTENT_HOLE

fails = checks = 0


def check(cond, what, why=""):
    global fails, checks
    checks += 1
    if cond:
        print("ok - " + what)
    else:
        fails += 1
        print("not ok - " + what + (": " + why if why else ""))
    sys.stdout.flush()
    return cond


def note(s):
    print("# " + s)


# ---------------------------------------------------------------- local files

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 0x01, 0x02, 0x10


def fallocate(fd, mode, off, length):
    if _libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "fallocate(mode %#x, %d, %d): %s" % (mode, off, length, os.strerror(e)))


def local_map(path, extra=()):
    """`lacuna map --json` of path: (size, [(kind, offset, length)], the whole object)"""
    out = subprocess.run([LACUNA, "map", "--json", *extra, path], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError("lacuna map %s: %s" % (path, out.stderr.strip()))
    j = json.loads(out.stdout)
    return j["size"], [(DATA if s["kind"] == "data" else HOLE, s["offset"], s["length"])
                       for s in j["segments"]], j


def map_add(m, kind, off, length):
    """Append a segment to a map as `lacuna map` does: merge with the last
    one of the same kind, drop what a hole reported whole again repeats."""
    if length == 0:
        return
    if m:
        lk, lo, ll = m[-1]
        lend, end = lo + ll, off + length
        if lk == kind and lend == off:
            m[-1] = (lk, lo, ll + length)
            return
        if off < lend:
            if end <= lend:
                return
            if lk == kind:
                m[-1] = (lk, lo, end - lo)
                return
    m.append((kind, off, length))


def fmt_map(m, limit=12):
    s = " ".join("%s@%d+%d" % ("D" if k == DATA else "H", o, n) for k, o, n in m[:limit])
    return s + (" ... (%d segments)" % len(m) if len(m) > limit else "")


def clip(m, end):
    """m cut at end"""
    return [(k, o, min(n, end - o)) for k, o, n in m if o < end]


def holes_of(m):
    return [(o, o + n) for k, o, n in m if k == HOLE]


def covered(ranges, a, b):
    """Is [a, b) inside the union of the sorted, merged ranges?"""
    for lo, hi in ranges:
        if lo <= a < hi:
            if b <= hi:
                return True
            a = hi
    return a >= b


# ---------------------------------------------------------------- NFS helpers

class Nfs:
    def __init__(self, port, maxresp=2 * MIB):
        self.conn = Conn(port, minor=2, maxresp=maxresp)
        self.maxresp = maxresp

    def call(self, ops):
        return self.conn.call(ops)

    def last_len(self):
        return self.conn.client.last_len

    def fh(self, name):
        ops = [noargs("PUTROOTFH")] + [lookup(p) for p in name.split("/") if p]
        st, r = self.call(ops + [noargs("GETFH")])
        if st:
            raise ValueError("no handle for %s: %s" % (name, errname(st)))
        return r[-1][2]

    def size(self, fh):
        st, r = self.call([putfh(fh), getattr_([A_SIZE])])
        if st:
            raise ValueError("GETATTR(size): " + errname(st))
        return struct.unpack(">Q", r[-1][2][1][:8])[0]

    def op(self, fh, op):
        """(status of the op, its result) for PUTFH + op"""
        st, r = self.call([putfh(fh), op])
        return (r[-1][1] if r else st), (r[-1][2] if r else None)

    def read_plus(self, fh, off, count):
        return self.op(fh, read_plus(off, count))

    def seek(self, fh, off, what):
        return self.op(fh, seek(off, what))


def rp_problems(off, count, res, size, content=None, hole_bytes=True):
    """What is wrong with a READ_PLUS reply for [off, off + count) of a file
    of @size that nobody changes (content(o, n): its bytes; with
    hole_bytes, holes are read too, which turns the unwritten extents
    there into data for later maps: DESIGN.md)."""
    segs, eof, p = res["segs"], res["eof"], []
    if off >= size:
        if segs or not eof:
            p.append("at or past EOF: %d segments, eof %d" % (len(segs), eof))
        return p
    if count == 0:
        if segs or eof:
            p.append("count 0: %d segments, eof %d" % (len(segs), eof))
        return p
    if not segs:
        return ["no segment before EOF (no progress)"]
    pos = None
    for i, (k, o, x) in enumerate(segs):
        n = len(x) if k == DATA else x
        if n == 0:
            p.append("segment %d is empty" % i)
        if i == 0:
            if k == DATA and o != off:
                p.append("data segment 0 starts at %d, not at the offset %d" % (o, off))
            if k == HOLE and not (o <= off < o + n):
                p.append("hole segment 0 [%d, +%d) does not hold the offset %d" % (o, n, off))
        elif o != pos:
            p.append("segment %d at %d, not contiguous (previous ends at %d)" % (i, o, pos))
        if o + n > size:
            p.append("segment %d [%d, +%d) runs past EOF %d" % (i, o, n, size))
        if k == DATA:
            if o + n > off + count:
                p.append("data segment %d [%d, +%d) past the range's end %d" %
                         (i, o, n, off + count))
            if content is not None and n and content(o, n) != x:
                p.append("data segment %d [%d, +%d): bytes differ from the file" % (i, o, n))
        elif content is not None and hole_bytes:
            # (the map comparisons look at the rest: the ends of the hole here)
            a, b = max(o, off), min(o + n, off + count, size)
            for x, y in ((a, min(b, a + 256 * KIB)), (max(a, b - 256 * KIB), b)):
                if y > x and content(x, y - x).count(0) != y - x:
                    p.append("hole segment %d [%d, +%d) where the file has data" % (i, o, n))
                    break
        pos = o + n
    if bool(eof) != (pos >= size):
        p.append("eof %d but the segments end at %d of %d" % (eof, pos, size))
    data = sum(len(x) for k, o, x in segs if k == DATA)
    if data > count:
        p.append("%d data bytes for a count of %d" % (data, count))
    return p


def nfs_map(nfs, fh, size, count=IO_MAX, content=None, problems=None, start=0, end=None,
            hole_bytes=True):
    """The map of [start, end) by READ_PLUS calls from offset to offset;
    every reply's problems go to @problems."""
    m, off, calls = [], start, 0
    end = size if end is None else end
    while off < end:
        if end - off < count:
            count = end - off
        st, res = nfs.read_plus(fh, off, count)
        calls += 1
        if st != 0:
            problems.append("READ_PLUS(%d, %d): %s" % (off, count, errname(st)))
            break
        if nfs.last_len() > nfs.maxresp:
            problems.append("READ_PLUS(%d, %d): a reply of %d bytes, the session allows %d" %
                            (off, count, nfs.last_len(), nfs.maxresp))
        pr = rp_problems(off, count, res, size, content, hole_bytes)
        if pr:
            problems.append("READ_PLUS(%d, %d): %s" % (off, count, "; ".join(pr[:3])))
            break
        for k, o, x in res["segs"]:
            map_add(m, k, o, len(x) if k == DATA else x)
        if res["eof"]:
            break
        k, o, x = res["segs"][-1]
        off = o + (len(x) if k == DATA else x)
        if calls > 100000:
            problems.append("READ_PLUS: more than 100000 calls")
            break
    return m


def seek_map(nfs, fh, size, problems):
    """The map by SEEK DATA / SEEK HOLE from offset to offset."""
    m, off, n = [], 0, 0
    while off < size and n < 100000:
        n += 1
        st, r = nfs.seek(fh, off, DATA)
        if st:
            problems.append("SEEK(%d, DATA): %s" % (off, errname(st)))
            return m
        if r["eof"]:
            if r["offset"] < size:
                problems.append("SEEK(%d, DATA): eof with offset %d < size %d" %
                                (off, r["offset"], size))
            map_add(m, HOLE, off, size - off)
            return m
        d = r["offset"]
        if d < off:
            problems.append("SEEK(%d, DATA) went back to %d" % (off, d))
            return m
        map_add(m, HOLE, off, d - off)
        st, r = nfs.seek(fh, d, HOLE)
        if st:
            problems.append("SEEK(%d, HOLE): %s" % (d, errname(st)))
            return m
        h = r["offset"]
        if h <= d or h > size or bool(r["eof"]) != (h >= size):
            problems.append("SEEK(%d, HOLE): offset %d eof %d (size %d)" % (d, h, r["eof"], size))
            return m
        map_add(m, DATA, d, h - d)
        off = h
    return m


def reader(path):
    fd = os.open(path, os.O_RDONLY)

    def content(o, n):
        b = os.pread(fd, n, o)
        return b + b"\0" * (n - len(b))
    return content, fd


# ---------------------------------------------------------------- edge cases

def mkfile(path, size=None, writes=(), punches=()):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if size is not None:
            os.ftruncate(fd, size)
        for off, data in writes:
            os.pwrite(fd, data, off)
        for off, n in punches:
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
    finally:
        os.close(fd)


def hole_to(res, off, end, label):
    """The reply is one hole holding off and ending at end (RFC 7862
    15.10.3: a hole may start before the offset; lacunad sends it from
    the offset to its end)."""
    segs = [(k, o, len(x) if k == DATA else x) for k, o, x in res["segs"]]
    ok = len(segs) == 1 and segs[0][0] == HOLE and segs[0][1] <= off and \
        segs[0][1] + segs[0][2] == end
    check(ok, "%s: one hole segment, from at most the offset to the hole's end %d" % (label, end),
          fmt_map(segs))
    if ok and segs[0][1] < off:
        note("%s: the hole starts at %d, before the offset %d" % (label, segs[0][1], off))


def edge(port, d, backing):
    rnd = random.Random(7862)
    nfs = Nfs(port)

    def rp(name, fh, off, count, size, expect_segs=None, content=None, what=""):
        st, res = nfs.read_plus(fh, off, count)
        label = "READ_PLUS %s (%d, %d)%s" % (name, off, count, what)
        if not check(st == 0, label + ": NFS4_OK", errname(st)):
            return None
        pr = rp_problems(off, count, res, size, content)
        check(not pr, label + ": a legal reply", "; ".join(pr))
        got = [(k, o, len(x) if k == DATA else x) for k, o, x in res["segs"]]
        if expect_segs is not None:
            check(got == expect_segs, label + ": segments " + fmt_map(expect_segs),
                  "got " + fmt_map(got) + " eof %d" % res["eof"])
        return res

    def expect(name, fh, op, err, what):
        st, _ = nfs.op(fh, op)
        errs = err if isinstance(err, tuple) else (err,)
        check(st in [ERR[e] if isinstance(e, str) else e for e in errs],
              "%s %s: %s" % (op[0], name, " or ".join(map(str, errs))) + what,
              "got " + errname(st))

    # an empty file
    mkfile(d + "/empty")
    fh = nfs.fh("empty")
    res = rp("empty", fh, 0, 4096, 0, [])
    check(res is not None and res["eof"] == 1, "READ_PLUS of an empty file: eof")
    res = rp("empty", fh, 0, 0, 0, [])
    check(res is not None and res["eof"] == 1, "READ_PLUS of an empty file, count 0: eof")
    expect("empty", fh, seek(0, DATA), "NXIO", " (offset 0 is EOF)")
    expect("empty", fh, seek(0, HOLE), "NXIO", " (offset 0 is EOF)")

    # a file all hole
    size = 3 * MIB + 123
    mkfile(d + "/allhole", size)
    fh = nfs.fh("allhole")
    res = rp("all hole", fh, 0, 4096, size, [(HOLE, 0, size)])
    check(res is not None and res["eof"] == 1,
          "READ_PLUS of a file all hole: the hole reaches EOF, eof true")
    res = rp("all hole", fh, 5000, 10, size, None, what=" inside the hole")
    if res:
        hole_to(res, 5000, size, "READ_PLUS (5000, 10) of a file all hole")
    st, r = nfs.seek(fh, 0, DATA)
    check(st == 0 and r["eof"] == 1, "SEEK DATA in a file all hole: OK, eof",
          "%s %s" % (errname(st), r))
    st, r = nfs.seek(fh, 10, HOLE)
    check(st == 0 and r["offset"] == 10 and not r["eof"],
          "SEEK HOLE at 10 in a file all hole: 10", "%s %s" % (errname(st), r))
    expect("all hole", fh, seek(size, HOLE), "NXIO", " at EOF")

    # data | hole | data | hole to EOF, holes block-aligned
    a = rnd.randbytes(64 * KIB)
    b = rnd.randbytes(64 * KIB + 77)
    size = 64 * KIB + MIB + len(b) + 2 * MIB + 5
    bstart = 64 * KIB + MIB
    mkfile(d + "/mixed", size, [(0, a), (bstart, b)])
    fh = nfs.fh("mixed")
    content, cfd = reader(d + "/mixed")
    bend_blk = (bstart + len(b) + 4095) // 4096 * 4096
    _, lm, _ = local_map(d + "/mixed")
    check(lm == [(DATA, 0, 64 * KIB), (HOLE, 64 * KIB, MIB), (DATA, bstart, bend_blk - bstart),
                 (HOLE, bend_blk, size - bend_blk)],
          "the local map of the test file is data, hole, data, hole", fmt_map(lm))
    res = rp("mixed", fh, 100 * KIB, 4096, size, None, content, " (a range inside one hole)")
    if res:
        hole_to(res, 100 * KIB, 64 * KIB + MIB, "READ_PLUS (100K, 4K) inside a hole")
    res = rp("mixed", fh, 32 * KIB, 64 * KIB, size, None, content, " (ending mid-hole)")
    if res:
        segs = res["segs"]
        check(len(segs) == 2 and segs[0][0] == DATA and segs[0][1] == 32 * KIB and
              len(segs[0][2]) == 32 * KIB and segs[1][0] == HOLE and
              segs[1][1] == 64 * KIB and segs[1][2] >= 32 * KIB and not res["eof"],
              "READ_PLUS ending mid-hole: 32 KiB of data, then the hole (whole or to the "
              "range's end), eof false",
              fmt_map([(k, o, len(x) if k == DATA else x) for k, o, x in segs]))
        check(len(segs) == 2 and segs[1][2] == MIB,
              "READ_PLUS ending mid-hole: the hole is sent to its end")
    res = rp("mixed", fh, 10, 100, size, [(DATA, 10, 100)], content, " (inside data)")
    check(res is not None and not res["eof"], "READ_PLUS inside data: eof false")
    res = rp("mixed", fh, size - 10, 4096, size, None, content, " (inside the last hole)")
    check(res is not None and res["eof"] == 1, "READ_PLUS inside the last hole: eof true")
    res = rp("mixed", fh, bstart + 5, 2 * MIB, size, None, content, " (data, then the last hole)")
    check(res is not None and res["eof"] == 1 and len(res["segs"]) == 2,
          "READ_PLUS of the last data and hole: both, eof true")
    # count 0, EOF
    res = rp("mixed", fh, 0, 0, size, [])
    check(res is not None and res["eof"] == 0, "READ_PLUS count 0 before EOF: eof false")
    res = rp("mixed", fh, size, 0, size, [])
    check(res is not None and res["eof"] == 1, "READ_PLUS count 0 at EOF: eof true")
    # past the largest off_t too: nothing, and eof (as nfsd; no error)
    for off in (size, size + 1, size + 4096, 1 << 62, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):
        res = rp("mixed", fh, off, 4096, size, [], what=" (at or past EOF)")
        check(res is not None and res["eof"] == 1, "READ_PLUS at %d (size %d): eof" % (off, size))
    # largest counts: capped at maxread, fit the session
    for count in (IO_MAX, IO_MAX + 1, 0xffffffff):
        res = rp("mixed", fh, 0, count, size, None, content, " (huge count)")
        if res:
            check(res["segs"][-1][0] == HOLE or len(res["segs"][-1][2]) <= IO_MAX,
                  "READ_PLUS count %d: no more data than maxread" % count)
            check(nfs.last_len() <= nfs.maxresp,
                  "READ_PLUS count %d: reply within ca_maxresponsesize" % count,
                  "%d > %d" % (nfs.last_len(), nfs.maxresp))
    # SEEK
    for off, what, want, eof in ((0, DATA, 0, 0), (0, HOLE, 64 * KIB, 0),
                                 (64 * KIB, DATA, bstart, 0), (70 * KIB, HOLE, 70 * KIB, 0),
                                 (bstart + 1, DATA, bstart + 1, 0),
                                 (bstart + 1, HOLE, bend_blk, 0),
                                 (bend_blk + 1, DATA, None, 1), (size - 1, HOLE, size - 1, 0)):
        st, r = nfs.seek(fh, off, what)
        check(st == 0 and (want is None or r["offset"] == want) and r["eof"] == eof,
              "SEEK %s at %d: %s, eof %d" % ("DATA" if what == DATA else "HOLE", off,
                                             "no data" if want is None else want, eof),
              "%s %s" % (errname(st), r))
    for off in (size, size + 1, 1 << 62):
        expect("mixed", fh, seek(off, DATA), "NXIO", " at %d (size %d)" % (off, size))
        expect("mixed", fh, seek(off, HOLE), "NXIO", " at %d (size %d)" % (off, size))
    for what in (2, 3, 0xffffffff):
        expect("mixed", fh, seek(0, what), "UNION_NOTSUPP", " (sa_what %d)" % what)
    os.close(cfd)

    # a dense file: the virtual hole at EOF; the largest replies
    dense = rnd.randbytes(3 * MIB + 1000)
    mkfile(d + "/dense", None, [(0, dense)])
    fh = nfs.fh("dense")
    size = len(dense)
    content, cfd = reader(d + "/dense")
    st, r = nfs.seek(fh, 0, HOLE)
    check(st == 0 and r["offset"] == size and r["eof"] == 1,
          "SEEK HOLE in a dense file: the virtual hole at EOF, eof true", "%s %s" %
          (errname(st), r))
    st, r = nfs.seek(fh, size - 1, HOLE)
    check(st == 0 and r["offset"] == size and r["eof"] == 1,
          "SEEK HOLE at the last byte: the virtual hole at EOF", "%s %s" % (errname(st), r))
    st, r = nfs.seek(fh, size - 1, DATA)
    check(st == 0 and r["offset"] == size - 1 and r["eof"] == 0,
          "SEEK DATA at the last byte: itself", "%s %s" % (errname(st), r))
    for count in (IO_MAX, 0xffffffff):
        res = rp("dense", fh, 0, count, size, None, content, " (largest count)")
        if res:
            n = len(res["segs"][0][2]) if res["segs"] and res["segs"][0][0] == DATA else 0
            check(len(res["segs"]) == 1 and MIB - 4 * KIB <= n <= IO_MAX and not res["eof"],
                  "READ_PLUS of a dense file, count %d: one data segment of about 1 MiB" %
                  count, "%d segments, %d bytes" % (len(res["segs"]), n))
            check(nfs.last_len() <= nfs.maxresp, "the reply fits the session",
                  "%d > %d" % (nfs.last_len(), nfs.maxresp))
    probs = []
    m = nfs_map(nfs, fh, size, 0xffffffff, content, probs)
    check(not probs and m == [(DATA, 0, size)], "READ_PLUS reads a dense file to its end",
          "; ".join(probs[:3]) + " " + fmt_map(m))
    # several READ_PLUS in one COMPOUND: each fits what is left, the one
    # that cannot gets REP_TOO_BIG, and the reply stays within the session's
    # ca_maxresponsesize (asking 2 MiB gets lacunad's record limit)
    for maxresp in (300000, 2 * MIB):
        for mk in (read_plus, read):
            s2 = Nfs(port, maxresp=maxresp)
            f2 = s2.fh("dense")
            what = "SEQUENCE, PUTFH, 3 x %s(1 MiB), ca_maxresponsesize %d" % (
                mk.__name__.upper(), maxresp)
            try:
                st, r = s2.call([putfh(f2)] + [mk(i * MIB, IO_MAX) for i in range(3)])
            except (ValueError, EOFError, OSError) as e:
                check(False, what + ": NFS4 results", str(e))
                continue
            stats = [errname(x[1]) for x in r]
            check(stats[-1] in ("OK", "REP_TOO_BIG") and all(x == "OK" for x in stats[:-1]),
                  what + ": OK, then REP_TOO_BIG where nothing fits", " ".join(stats))
            check(s2.last_len() <= maxresp, what + ": the reply fits ca_maxresponsesize",
                  "%d bytes" % s2.last_len())
            s2.conn.client.close()

    # sessions with small replies: the reply is cut to fit, never too big
    for maxresp in (256, 300, 512, 4096, 8192, 65536 + 300):
        small = Nfs(port, maxresp=maxresp)
        fhs = small.fh("dense")
        st, res = small.read_plus(fhs, 1000, IO_MAX)
        if st == ERR["REP_TOO_BIG"]:
            check(small.last_len() <= maxresp, "ca_maxresponsesize %d: REP_TOO_BIG" % maxresp)
            continue
        ok = st == 0 and not rp_problems(1000, IO_MAX, res, size, content)
        check(ok and res["segs"] and small.last_len() <= maxresp,
              "ca_maxresponsesize %d: a short legal READ_PLUS reply that fits (%d bytes)" %
              (maxresp, small.last_len()),
              errname(st) + " " + "; ".join(rp_problems(1000, IO_MAX, res, size, content)
                                             if st == 0 else []))
        if maxresp >= 4096:
            probs = []
            m = nfs_map(small, fhs, size, IO_MAX, content, probs)
            check(not probs and m == [(DATA, 0, size)],
                  "ca_maxresponsesize %d: short replies continue to EOF" % maxresp,
                  "; ".join(probs[:3]))
        small.conn.client.close()
    os.close(cfd)

    # many segments in one reply; small sessions bound them
    size = 8 * MIB
    writes = [(o, bytes([1 + (o // 8192) % 250]) * 100) for o in range(0, size, 8192)]
    mkfile(d + "/striped", size, writes)
    fh = nfs.fh("striped")
    content, cfd = reader(d + "/striped")
    _, lm, _ = local_map(d + "/striped")
    for maxresp, count in ((2 * MIB, IO_MAX), (2 * MIB, 0xffffffff), (8192, IO_MAX),
                           (1024, IO_MAX)):
        s = nfs if maxresp == nfs.maxresp else Nfs(port, maxresp=maxresp)
        f = s.fh("striped")
        st, res = s.read_plus(f, 0, count)
        n = len(res["segs"]) if st == 0 else 0
        check(st == 0 and n >= 1 and s.last_len() <= maxresp,
              "striped file, ca_maxresponsesize %d, count %d: %d segments in %d bytes" %
              (maxresp, count, n, s.last_len()), errname(st))
        probs = []
        m = nfs_map(s, f, size, count, content, probs)
        check(not probs and m == lm,
              "striped file, ca_maxresponsesize %d: the map over READ_PLUS is the local map "
              "(%d segments)" % (maxresp, len(lm)),
              "; ".join(probs[:3]) + " nfs " + fmt_map(m) + " local " + fmt_map(lm))
    probs = []
    m = seek_map(nfs, fh, size, probs)
    check(not probs and m == lm, "striped file: the map by SEEK is the local map",
          "; ".join(probs[:3]) + " seek " + fmt_map(m) + " local " + fmt_map(lm))
    os.close(cfd)

    # more than 1 TiB apparent
    size = 2 * TIB + 12345
    tail = rnd.randbytes(5000)
    mid = rnd.randbytes(10000)
    mkfile(d + "/huge", size, [(TIB + 777, mid), (size - len(tail), tail), (0, b"head")])
    fh = nfs.fh("huge")
    content, cfd = reader(d + "/huge")
    check(nfs.size(fh) == size, "GETATTR size of a 2 TiB sparse file")
    res = rp("huge", fh, 100 * KIB, MIB, size, None, content, " (the hole before 1 TiB)")
    if res:
        hole_to(res, 100 * KIB, TIB, "READ_PLUS (100K, 1M) in the 1 TiB hole")
    rp("huge", fh, TIB + 700, 20000, size, None, content, " (data past 1 TiB)")
    res = rp("huge", fh, TIB + 20000, MIB, size, None, content, " (the hole after it)")
    res = rp("huge", fh, size - 7000, MIB, size, None, content, " (the tail)")
    check(res is not None and res["eof"] == 1, "READ_PLUS of the tail of a 2 TiB file: eof")
    st, r = nfs.seek(fh, 8192, DATA)
    check(st == 0 and r["offset"] == TIB and not r["eof"], "SEEK DATA past the 1 TiB hole",
          "%s %s" % (errname(st), r))
    probs = []
    m = nfs_map(nfs, fh, size, IO_MAX, content, probs)
    _, lm, _ = local_map(d + "/huge")
    check(not probs and m == lm, "the map of a 2 TiB sparse file over READ_PLUS is the local map",
          "; ".join(probs[:3]) + " nfs " + fmt_map(m) + " local " + fmt_map(lm))
    probs = []
    m = seek_map(nfs, fh, size, probs)
    check(not probs and m == lm, "the map of a 2 TiB sparse file by SEEK is the local map",
          "; ".join(probs[:3]) + " nfs " + fmt_map(m) + " local " + fmt_map(lm))
    os.close(cfd)

    # not a regular file
    os.makedirs(d + "/adir", exist_ok=True)
    if not os.path.lexists(d + "/alink"):
        os.symlink("mixed", d + "/alink")
    if not os.path.exists(d + "/afifo"):
        os.mkfifo(d + "/afifo")
    for name, err, aerr in (("adir", "ISDIR", "ISDIR"),
                            ("alink", "SYMLINK", ("SYMLINK", "WRONG_TYPE")),
                            ("afifo", "WRONG_TYPE", "WRONG_TYPE")):
        fh = nfs.fh(name)
        expect(name, fh, read_plus(0, 4096), err, "")
        expect(name, fh, seek(0, DATA), err, "")
        expect(name, fh, allocate(0, 4096), aerr, "")
        expect(name, fh, deallocate(0, 4096), aerr, "")
    fh = nfs.fh("alink")
    st, _ = nfs.op(fh, allocate(0, 4096))
    if st == ERR["WRONG_TYPE"]:
        note("ALLOCATE/DEALLOCATE of a symlink answer WRONG_TYPE where READ_PLUS, SEEK "
             "and WRITE answer SYMLINK")

    alloc_checks(nfs, d, backing, rnd)
    removed_behind(nfs, d, backing)

    # the 4.2 operations do not exist in 4.1
    c1 = Conn(port, minor=1)
    st, r = c1.call([noargs("PUTROOTFH"), lookup("mixed"), read_plus(0, 10)])
    check(r and r[-1][1] == OP_ILLEGAL, "READ_PLUS in minor version 1: OP_ILLEGAL",
          "got %s" % (r[-1][:2] if r else st))
    st, r = c1.call([noargs("PUTROOTFH"), lookup("mixed"), allocate(0, 10)])
    check(r and r[-1][1] == OP_ILLEGAL, "ALLOCATE in minor version 1: OP_ILLEGAL",
          "got %s" % (r[-1][:2] if r else st))


def removed_behind(nfs, d, backing):
    """A file READ_PLUS read and then removed on the server's side (not
    through NFS) gives its blocks back, as with Linux nfsd, whose file
    cache closes idle files within seconds."""
    chunk = b"r" * MIB
    fd = os.open(d + "/removed", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    for i in range(64):
        os.pwrite(fd, chunk, i * MIB)
    os.fsync(fd)
    os.close(fd)
    fh = nfs.fh("removed")
    st, _ = nfs.read_plus(fh, 0, 4096)
    check(st == 0, "READ_PLUS of a 64 MiB file", errname(st))

    def free():
        v = os.statvfs(backing)
        return v.f_bfree * v.f_frsize
    before = free()
    os.unlink(d + "/removed")
    for _ in range(50):
        if free() >= before + 60 * MIB:
            break
        time.sleep(0.1)
    check(free() >= before + 60 * MIB,
          "a file removed on the server's side after a READ_PLUS frees its 64 MiB within 5 s",
          "%d MiB freed (lacunad still holds the file open?)" % ((free() - before) // MIB))


def alloc_checks(nfs, d, backing, rnd):
    body = rnd.randbytes(MIB)
    mkfile(d + "/alloc", None, [(0, body)])
    fh = nfs.fh("alloc")
    bpath = backing + "/alloc"
    _, m0, j0 = local_map(bpath)
    check(m0 == [(DATA, 0, MIB)], "the backing file starts dense", fmt_map(m0))

    st, _ = nfs.op(fh, deallocate(256 * KIB, 128 * KIB))
    check(st == 0, "DEALLOCATE [256K, +128K): OK", errname(st))
    size1, m1, j1 = local_map(bpath)
    check(m1 == [(DATA, 0, 256 * KIB), (HOLE, 256 * KIB, 128 * KIB), (DATA, 384 * KIB, 640 * KIB)],
          "DEALLOCATE: the backing file has the hole", fmt_map(m1))
    check(size1 == MIB, "DEALLOCATE keeps the size", str(size1))
    check(j1["allocated_bytes"] <= j0["allocated_bytes"] - 128 * KIB,
          "DEALLOCATE frees the blocks", "%d -> %d" % (j0["allocated_bytes"],
                                                      j1["allocated_bytes"]))
    st, res = nfs.read_plus(fh, 200 * KIB, 128 * KIB)
    got = [(k, o, len(x) if k == DATA else x) for k, o, x in res["segs"]] if st == 0 else None
    check(got == [(DATA, 200 * KIB, 56 * KIB), (HOLE, 256 * KIB, 128 * KIB)],
          "READ_PLUS sees the new hole", fmt_map(got or []))

    # unaligned: zeros in between, the blocks inside freed
    st, _ = nfs.op(fh, deallocate(1000, 10000))
    check(st == 0, "DEALLOCATE unaligned [1000, +10000): OK", errname(st))
    with open(bpath, "rb") as f:
        now = f.read()
    want = bytearray(body)
    want[256 * KIB:384 * KIB] = bytes(128 * KIB)
    want[1000:11000] = bytes(10000)
    check(now == bytes(want), "DEALLOCATE unaligned: zeros there, the rest untouched")
    _, m2, _ = local_map(bpath)
    check(covered(holes_of(m2), 4096, 8192),
          "DEALLOCATE unaligned: the whole block inside is a hole", fmt_map(m2))

    # past EOF: nothing changes
    st, _ = nfs.op(fh, deallocate(2 * MIB, MIB))
    check(st == 0 and os.stat(bpath).st_size == MIB, "DEALLOCATE past EOF: OK, size kept",
          errname(st))

    # ALLOCATE into the hole: blocks, still zeros
    _, _, ja = local_map(bpath)
    st, _ = nfs.op(fh, allocate(256 * KIB, 128 * KIB))
    check(st == 0, "ALLOCATE into the hole: OK", errname(st))
    _, _, jb = local_map(bpath)
    check(jb["allocated_bytes"] >= ja["allocated_bytes"] + 128 * KIB,
          "ALLOCATE into the hole: the backing file gets the blocks",
          "%d -> %d" % (ja["allocated_bytes"], jb["allocated_bytes"]))
    check(jb["size"] == MIB, "ALLOCATE inside the file keeps the size")

    # ALLOCATE past EOF grows the file
    st, _ = nfs.op(fh, allocate(2 * MIB, MIB))
    check(st == 0, "ALLOCATE [2M, +1M) of a 1 MiB file: OK", errname(st))
    sz, m4, jc = local_map(bpath)
    check(m4 and m4[-1][1] + m4[-1][2] == 3 * MIB, "ALLOCATE past EOF: the map reaches the new EOF",
          fmt_map(m4))
    check(sz == 3 * MIB and nfs.size(fh) == 3 * MIB, "ALLOCATE past EOF grows the file to 3 MiB",
          str(sz))
    check(jc["allocated_bytes"] >= jb["allocated_bytes"] + MIB,
          "ALLOCATE past EOF: the blocks are there",
          "%d -> %d" % (jb["allocated_bytes"], jc["allocated_bytes"]))
    content, cfd = reader(bpath)
    _, lm, _ = local_map(d + "/alloc")
    probs = []
    m = nfs_map(nfs, fh, sz, IO_MAX, content, probs, hole_bytes=False)
    check(not probs and m == lm, "after ALLOCATE and DEALLOCATE: the map over READ_PLUS is the "
          "local map, the bytes the file's", "; ".join(probs[:3]) + " nfs " + fmt_map(m) +
          " local " + fmt_map(lm))
    with open(bpath, "rb") as f:
        f.seek(256 * KIB)
        check(f.read(128 * KIB) == bytes(128 * KIB), "ALLOCATE keeps the zeros")
    os.close(cfd)

    # errors
    for op in (allocate, deallocate):
        st, _ = nfs.op(fh, op(0, 0))
        check(st == ERR["INVAL"], "%s of length 0: INVAL" % op.__name__.upper(), errname(st))
        st, _ = nfs.op(fh, op(1 << 62, 1 << 62))
        check(st == ERR["FBIG"], "%s past 2^63: FBIG" % op.__name__.upper(), errname(st))
    sv = os.statvfs(backing)
    fs_size = sv.f_blocks * sv.f_frsize
    mkfile(d + "/nospc", 0)
    fhn = nfs.fh("nospc")
    st, _ = nfs.op(fhn, allocate(0, 2 * fs_size))
    check(st == ERR["NOSPC"], "ALLOCATE of twice the filesystem's size: NOSPC", errname(st))
    # what a failed fallocate allocated stays: give it back, remove the file
    st, _ = nfs.op(fhn, deallocate(0, 2 * fs_size))
    check(st == 0, "DEALLOCATE of what the failed ALLOCATE left: OK", errname(st))
    st, r = nfs.call([noargs("PUTROOTFH"), remove("nospc")])
    check(st == 0, "REMOVE of the file", errname(st))
    sv2 = os.statvfs(backing)
    check(sv2.f_bfree * sv2.f_frsize >= fs_size // 2,
          "after ALLOCATE NOSPC, DEALLOCATE and REMOVE the space is free again",
          "%d of %d bytes free" % (sv2.f_bfree * sv2.f_frsize, fs_size))


# ---------------------------------------------------------------- layouts

def make_layout(rng, path):
    """A random sparse file at @path; returns (size, windows): every byte
    ever written or allocated lies in one of the windows."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    shape = rng.randrange(10)
    if shape == 0:
        wins = [(0, rng.randint(1, 16 * KIB))]      # tiny
    elif shape < 5:
        wins = [(0, rng.randint(16 * KIB, 512 * KIB))]
    elif shape < 9:
        wins = [(0, rng.randint(512 * KIB, 6 * MIB))]
    else:                                           # data past 1 TiB
        base = TIB + rng.randrange(0, 4 * GIB)
        if rng.randrange(2):
            base &= ~4095
        wins = [(0, 64 * KIB), (base, rng.randint(4 * KIB, 2 * MIB))]

    def pick(win):
        lo, n = win
        al = rng.choice((1, 1, 512, 4096, 4096, 65536))
        off = lo + rng.randrange(n) // al * al
        ln = rng.choice((rng.randint(1, 100), rng.randint(1, 8192), rng.randint(4096, 256 * KIB),
                         rng.randint(1, 4) * 4096))
        return off, min(ln, lo + n - off) or 1

    desc = []
    try:
        if rng.randrange(3):
            # start from a hole of the window's size, so that it may end in one
            os.ftruncate(fd, wins[-1][0] + wins[-1][1])
        for _ in range(rng.randint(0, 14)):
            win = rng.choice(wins)
            off, n = pick(win)
            c = rng.randrange(10)
            if c < 5:
                os.pwrite(fd, rng.randbytes(n) if rng.randrange(4) else b"\x5a" * n, off)
                desc.append("w%d+%d" % (off, n))
            elif c < 7:
                fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
                desc.append("p%d+%d" % (off, n))
            elif c < 8:
                fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, n)
                desc.append("z%d+%d" % (off, n))
            elif c < 9:
                fallocate(fd, FALLOC_FL_KEEP_SIZE if rng.randrange(2) else 0, off, n)
                desc.append("a%d+%d" % (off, n))
            else:
                # cut, then maybe grow again: a tail hole
                cut = off
                os.ftruncate(fd, cut)
                desc.append("t%d" % cut)
                if rng.randrange(2):
                    os.ftruncate(fd, cut + rng.randint(1, 3 * MIB))
                    desc.append("T%d" % os.fstat(fd).st_size)
        if rng.randrange(4) == 0:
            st = os.fstat(fd).st_size
            os.ftruncate(fd, st + rng.randint(1, 2 * MIB))   # ends in a hole
            desc.append("T%d" % os.fstat(fd).st_size)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    return size, wins, " ".join(desc)


def warm(path, wins, size):
    """Read every byte that was ever written or allocated, so that the
    unwritten extents count as data from now on (DESIGN.md: SEEK maps are
    not canonical) and later reads and readahead change no map."""
    fd = os.open(path, os.O_RDONLY)
    if size <= 64 * MIB:
        wins = [(0, size)]  # all of it (XFS preallocates past EOF what a truncate takes in)
    try:
        for lo, n in wins:
            off, end = lo, min(lo + n + MIB, size)
            while off < end:
                b = os.pread(fd, min(4 * MIB, end - off), off)
                if not b:
                    break
                off += len(b)
    finally:
        os.close(fd)


def tool_has(cmd):
    out = subprocess.run([LACUNA, cmd, "--help"], capture_output=True, text=True, timeout=30)
    return out.returncode == 0


def layouts(port, d, backing, seed, count):
    rng = random.Random(seed)
    nfs = Nfs(port)
    have_map, have_get = tool_has("nfs-map"), tool_has("nfs-get")
    if not have_map:
        note("lacuna nfs-map not in %s: its maps are not compared" % LACUNA)
    if not have_get:
        note("lacuna nfs-get not in %s: no copies are checked" % LACUNA)
    copies = backing + "/.copies"
    os.makedirs(copies, exist_ok=True)
    bad = 0
    tail_diff, ranges = [], 0
    slow = set()  # the tools that did not finish in time on a file past 1 TiB

    def tool(label, args):
        """run lacuna ARGS; None when it did not finish in time"""
        if args[0] in slow and size > TIB:
            return None
        try:
            return subprocess.run([LACUNA, *args], capture_output=True, text=True,
                                  timeout=TOOL_TIMEOUT)
        except subprocess.TimeoutExpired:
            check(False, "%s: lacuna %s finishes within %d s" % (label, args[0], TOOL_TIMEOUT),
                  "a file of %d bytes (%d segments)" % (size, len(lm)))
            if size > TIB:
                slow.add(args[0])
                note("lacuna %s is too slow for files past 1 TiB: not run on the next ones" %
                     args[0])
            return None
    for i in range(count):
        fails0 = fails
        name = "layout-%d" % i
        size, wins, desc = make_layout(rng, d + "/" + name)
        warm(backing + "/" + name, wins, size)
        label = "seed %d layout %d (size %d: %s)" % (seed, i, size, desc[:300])
        lsize, lm, _ = local_map(d + "/" + name)
        content, cfd = reader(backing + "/" + name)
        fh = nfs.fh(name)
        probs = []
        count_ = rng.choice((IO_MAX, IO_MAX, 0xffffffff, rng.randint(1, 256 * KIB)))
        m = nfs_map(nfs, fh, size, count_, content, probs)
        check(not probs and lsize == size and m == lm,
                   "%s: READ_PLUS (count %d) map = local map, bytes = the file's" % (label, count_),
                   "; ".join(probs[:3]) + " nfs " + fmt_map(m) + " local " + fmt_map(lm))
        probs = []
        sm = seek_map(nfs, fh, size, probs)
        check(not probs and sm == lm, "%s: SEEK map = local map" % label,
                    "; ".join(probs[:3]) + " seek " + fmt_map(sm) + " local " + fmt_map(lm))
        # a range of it
        if size:
            off = rng.randrange(size)
            ln = rng.randint(1, 4 * MIB)
            probs = []
            rm = nfs_map(nfs, fh, size, IO_MAX, content, probs, off, min(off + ln, size))
            ranges += 1
            _, lr, _ = local_map(d + "/" + name, ("--offset", str(off), "--length", str(ln)))
            # READ_PLUS sends the range's last hole whole; the maps of a range end where it ends
            rm = clip(rm, min(off + ln, size))
            check(not probs and rm == lr,
                        "%s: map of [%d, +%d) over READ_PLUS = local map of it" % (label, off, ln),
                        "; ".join(probs[:3]) + " nfs " + fmt_map(rm) + " local " + fmt_map(lr))
        url = "nfs://127.0.0.1:%d/%s" % (port, name)
        maps = [("", [], lm)]
        if size:
            maps += [(" --seek", ["--seek"], lm),
                     (" --offset %d --length %d" % (off, ln),
                      ["--offset", str(off), "--length", str(ln)], lr)]
        for what, extra, want in maps if have_map else ():
            out = tool(label, ["nfs-map", "--json", *extra, url])
            if out is None:
                break
            try:
                j = json.loads(out.stdout)
                tm = [(DATA if s["kind"] == "data" else HOLE, s["offset"], s["length"])
                      for s in j["segments"]]
                tsize = j["size"]
            except (ValueError, KeyError, TypeError) as e:
                tm, tsize = None, None
                note("lacuna nfs-map: %s; stderr %s" % (e, out.stderr.strip()[:300]))
            check(out.returncode == 0 and tsize == size and tm == want,
                  "%s: lacuna nfs-map%s = lacuna map%s" %
                  (label, what, what.replace(" --seek", "")),
                  "exit %d, size %s, nfs-map %s, local %s" %
                  (out.returncode, tsize, fmt_map(tm or []), fmt_map(want)))
        dest = copies + "/" + name
        if os.path.exists(dest):
            os.unlink(dest)
        out = tool(label, ["nfs-get", url, dest]) if have_get else None
        if out is not None:
            if check(out.returncode == 0 and os.path.exists(dest),
                     "%s: lacuna nfs-get copies it" % label,
                     "exit %d: %s" % (out.returncode, out.stderr.strip()[:300])):
                copy_checks(label, backing + "/" + name, dest, size, lm)
        if fails > fails0:
            bad += 1
        os.close(cfd)
        # keep the filesystem small: drop the file once checked, through NFS
        # (lacunad keeps a file it has open until then: see removed_behind)
        st, _ = nfs.call([noargs("PUTROOTFH"), remove(name)])
        if st:
            os.unlink(d + "/" + name)
        if os.path.exists(dest):
            os.unlink(dest)
    if have_map:
        check(not tail_diff, "lacuna nfs-map --offset --length and lacuna map --offset --length "
              "end a range's last hole at the same place (%d of %d ranges differ)" %
              (len(tail_diff), ranges), "e.g. " + "; ".join(tail_diff[:2]))
    note("seed %d: %d of %d layouts had a failed check" % (seed, bad, count))


def copy_checks(label, src, dest, size, sm):
    ok = True
    dst = os.stat(dest)
    ok &= check(dst.st_size == size, "%s: the copy has the size" % label,
                "%d != %d" % (dst.st_size, size))
    fd = os.open(dest, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    _, dm, _ = local_map(dest)
    dholes = holes_of(dm)
    missing = [(o, n) for k, o, n in sm if k == HOLE and not covered(dholes, o, o + n)]
    ok &= check(not missing, "%s: every hole of the source is a hole of the copy" % label,
                "holes filled in the copy: %s; copy map %s" %
                (missing[:5], fmt_map(dm)))
    # bytes: where the source has data (the holes are holes of both)
    s, dfd = reader(src)
    dc, ddfd = reader(dest)
    diff = [(o, n) for k, o, n in sm if k == DATA and
            any(s(x, min(MIB, o + n - x)) != dc(x, min(MIB, o + n - x))
                for x in range(o, o + n, MIB))]
    ok &= check(not diff, "%s: the copy's bytes are the source's" % label,
                "data differs in %s" % diff[:5])
    if size <= 64 * MIB:
        r = subprocess.run(["cmp", src, dest], capture_output=True, text=True)
        check(r.returncode == 0, "%s: cmp source copy" % label, r.stdout.strip())
    # allocation: no more blocks than the source's data needs
    need = sum(((o + n + 4095) // 4096 - o // 4096) * 4096 for k, o, n in sm if k == DATA)
    alloc = dst.st_blocks * 512
    ok &= check(alloc <= need + 64 * KIB,
                "%s: the copy allocates %d bytes for %d of data blocks" % (label, alloc, need))
    os.close(dfd)
    os.close(ddfd)
    return ok


# ---------------------------------------------------------------- map, trace, wirecheck

def cmd_map(port, name, count):
    nfs = Nfs(port)
    fh = nfs.fh(name)
    size = nfs.size(fh)
    probs = []
    m = nfs_map(nfs, fh, size, count, None, probs)
    if probs:
        print("\n".join(probs), file=sys.stderr)
        return 1
    print(json.dumps(dict(file=name, size=size,
                          data_bytes=sum(n for k, o, n in m if k == DATA),
                          hole_bytes=sum(n for k, o, n in m if k == HOLE),
                          segments=[dict(kind="data" if k == DATA else "hole", offset=o,
                                         length=n) for k, o, n in m]),
                     separators=(",", ":")))
    return 0


def cmd_trace(port, names):
    """A fixed set of READ_PLUS and SEEK calls, one line per reply."""
    nfs = Nfs(port)
    for name in names:
        fh = nfs.fh(name)
        size = nfs.size(fh)
        calls = [("rp", 0, IO_MAX), ("rp", 0, 0), ("rp", 1, 100), ("rp", size // 2, 65536),
                 ("rp", max(size - 5000, 0), 8192), ("rp", size, 4096), ("rp", size + 9999, 10),
                 ("seek", 0, DATA), ("seek", 0, HOLE), ("seek", size // 3, DATA),
                 ("seek", size // 3, HOLE), ("seek", size, DATA), ("seek", 0, 7)]
        off = 0
        # and a whole map, call after call
        while off < size:
            st, res = nfs.read_plus(fh, off, 256 * KIB)
            print_rp(nfs, st, res)
            if st or res["eof"] or not res["segs"]:
                break
            k, o, x = res["segs"][-1]
            off = o + (len(x) if k == DATA else x)
        for kind, off, arg in calls:
            if kind == "rp":
                st, res = nfs.read_plus(fh, off, arg)
                print_rp(nfs, st, res)
            else:
                st, res = nfs.seek(fh, off, arg)
                print("xid %d op SEEK status %d eof %s offset %s" %
                      (nfs.conn.client.xid, st, res["eof"] if st == 0 else "-",
                       res["offset"] if st == 0 else "-"))
    return 0


def print_rp(nfs, st, res):
    segs = ",".join("%d:%d:%d" % (k, o, len(x) if k == DATA else x)
                    for k, o, x in res["segs"]) if st == 0 else ""
    print("xid %d op READ_PLUS status %d eof %s segs %s" %
          (nfs.conn.client.xid, st, res["eof"] if st == 0 else "-", segs or "-"))


def wire_rows(fields):
    """tshark's rows (one per frame): xid|tcp.stream|opcodes|statuses|eof|
    content types|offsets|lengths|data lengths|array lengths"""
    rows = []
    with open(fields) as f:
        for line in f:
            p = line.rstrip("\n").split("|")
            if len(p) != 10:
                continue
            ints = [[int(v, 0) for v in x.split(",") if v != ""] for x in p]
            rows.append(ints)
    return rows


def cmd_wirecheck(trace, fields):
    """Each reply of the trace against tshark's view of the frame holding it."""
    wire = {}
    for r in wire_rows(fields):
        if len(r[0]) == 1:
            wire.setdefault(r[0][0], []).append(r)
    n_rp = n_seek = 0
    with open(trace) as f:
        for line in f:
            t = line.split()
            if len(t) < 10 or t[0] != "xid":
                continue
            xid, op, st, eof = int(t[1]), t[3], int(t[5]), t[7]
            w = wire.get(xid)
            label = "xid %#x %s" % (xid, op)
            if w is None or len(w) != 1:
                check(False, "%s: tshark decodes its reply" % label,
                      "%d frames with that xid" % (len(w) if w else 0))
                continue
            _, _, ops, stats, weof, types, offs, lens, dlens, alen = w[0]
            want_op = 68 if op == "READ_PLUS" else 69
            diff = []
            # SEQUENCE, PUTFH, then the op; the COMPOUND's status, then each op's
            if ops[-1:] != [want_op] or stats[:1] != [st] or stats[-1:] != [st]:
                diff.append("opcodes %s statuses %s" % (ops, stats))
            if st == 0:
                if weof != [int(eof)]:
                    diff.append("eof %s" % weof)
            if st == 0 and op == "READ_PLUS":
                n_rp += 1
                segs = [] if t[9] == "-" else [tuple(int(v) for v in x.split(":"))
                                               for x in t[9].split(",")]
                # (tshark shows no array length for an empty array)
                if alen != [len(segs)] and (segs or alen):
                    diff.append("segment count %s" % alen)
                if types != [k for k, o, n in segs]:
                    diff.append("types %s" % types)
                if offs != [o for k, o, n in segs]:
                    diff.append("offsets %s" % offs)
                if lens != [n for k, o, n in segs if k == HOLE]:
                    diff.append("hole lengths %s" % lens)
                if dlens != [n for k, o, n in segs if k == DATA]:
                    diff.append("data lengths %s" % dlens)
                what = "eof %s, %d segments %s" % (eof, len(segs), t[9][:80])
            elif st == 0:
                n_seek += 1
                if offs != [int(t[9])]:
                    diff.append("offset %s" % offs)
                what = "eof %s, offset %s" % (eof, t[9])
            else:
                what = "status %d" % st
            check(not diff, "%s: tshark decodes the same reply (%s)" % (label, what),
                  "tshark: " + "; ".join(diff))
    check(n_rp > 0 and n_seek > 0, "the trace had READ_PLUS (%d) and SEEK (%d) replies" %
          (n_rp, n_seek))
    return 0


def cmd_wiremap(fields, stream, jsonfile):
    """The READ_PLUS replies of one TCP stream, as tshark decodes them, make
    the map the client printed (lacuna nfs-map --json in jsonfile)."""
    with open(jsonfile) as f:
        j = json.load(f)
    want = [(DATA if x["kind"] == "data" else HOLE, x["offset"], x["length"])
            for x in j["segments"]]
    segs, replies, bad = [], 0, []
    for r in wire_rows(fields):
        xids, streams, ops, stats, weof, types, offs, lens, dlens, alen = r
        if streams != [stream] or 68 not in ops:
            continue
        replies += len(xids)
        if not (len(offs) == len(types) and len(lens) + len(dlens) == len(types) and
                sum(alen) == len(types)):
            bad.append("xids %s: types %s offsets %s lengths %s data lengths %s counts %s" %
                       ([hex(x) for x in xids], types, offs, lens, dlens, alen))
            continue
        h, d = iter(lens), iter(dlens)
        for k, o in zip(types, offs):
            segs.append((k, o, next(h) if k == HOLE else next(d)))
    m = []
    for k, o, n in sorted(segs, key=lambda x: (x[1], -x[2])):
        map_add(m, k, o, n)
    m = clip(m, j["size"])
    check(replies > 0 and not bad, "tshark decodes %d READ_PLUS replies of lacuna nfs-map, "
          "each segment with its offset and length" % replies, "; ".join(bad[:3]))
    check(m == want, "the map in the READ_PLUS replies on the wire is the one lacuna nfs-map "
          "printed (%d segments)" % len(want), "wire %s printed %s" % (fmt_map(m), fmt_map(want)))
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__ or "usage: see the head of lt_readplus.py", file=sys.stderr)
        return 2
    cmd, a = argv[1], argv[2:]

    def opt(name, default):
        if name in a:
            i = a.index(name)
            v = a[i + 1]
            del a[i:i + 2]
            return int(v, 0)
        return default
    if cmd == "edge" and len(a) == 3:
        edge(int(a[0]), a[1], a[2])
    elif cmd == "layouts":
        seed, count = opt("--seed", 1), opt("--count", 20)
        if len(a) != 3:
            return 2
        layouts(int(a[0]), a[1], a[2], seed, count)
    elif cmd == "map" and len(a) >= 2:
        count = opt("--count", IO_MAX)
        return cmd_map(int(a[0]), a[1], count)
    elif cmd == "trace" and len(a) >= 2:
        return cmd_trace(int(a[0]), a[1:])
    elif cmd == "wirecheck" and len(a) == 2:
        cmd_wirecheck(a[0], a[1])
    elif cmd == "wiremap" and len(a) == 3:
        cmd_wiremap(a[0], int(a[1]), a[2])
    else:
        print("lt_readplus.py: bad arguments", file=sys.stderr)
        return 2
    print("# %d checks, %d failed" % (checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
