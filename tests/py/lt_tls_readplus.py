#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READ_PLUS over RPC-with-TLS (tests/py/lt_tls.py's clients), for
# tests/integ/nfs_tls.sh:
#
#   lt_tls_readplus.py readplus PORT DIR BACKING TLSOPTS [--seed S]
#       sparse files made in DIR (the exported lacunafs mount: all hole,
#       empty, dense, data at both ends, ending in a hole, 40 random data
#       runs at odd offsets, data past 1 GiB) read whole over TLS with
#       READ_PLUS: every byte equal to the backing file's (BACKING) and
#       the map of data and holes equal to SEEK_DATA/SEEK_HOLE's on it
#   lt_tls_readplus.py torture PORT DIR TLSOPTS [--name N] [--seed S]
#                     [--replies N] [--max-replies N] [--expect-torn]
#       regions at odd offsets of the file DIR/N, 1 MiB ones changed by a
#       writer sending WRITEs (FILE_SYNC4) of a whole region over TLS and
#       ones of the mount's write unit (LACUNA_IOC_INFO, at most 1 MiB)
#       written whole (from a buffer at an odd address) and punched by a
#       writer through the mount, each change one byte value; two readers,
#       each over a TLS connection of its own, READ_PLUS whole regions:
#       a reply showing more than one value is torn. At least --replies
#       replies, 0 torn; with --expect-torn (a negative control) a torn
#       reply must come within --max-replies
#   lt_tls_readplus.py pipeline PORT DIR BACKING TLSOPTS [--name N]
#       over one TLS connection (4.2, a session of several slots), as
#       many 1 MiB WRITEs at odd offsets as the session has slots sent
#       back to back before any reply is read, then as many READ_PLUS,
#       then as many READs: every call answered once, the backing file
#       holds what was written, every reply carries it back
#
# TLSOPTS: --ca CA [--cert CERT --key KEY]. Output as lt_tls.py's.
import ctypes
import fcntl
import os
import random
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_tls import *  # noqa: E402,F401,F403
from lt_tls import check, cli, note  # noqa: E402
from lt_readplus import FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, fallocate  # noqa: E402


SEEK_DATA, SEEK_HOLE = 3, 4


def backing_map(path):
    """[(kind, offset, length)] of @path by SEEK_DATA/SEEK_HOLE, holes to EOF included."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        m, off = [], 0
        while off < size:
            try:
                d = os.lseek(fd, off, SEEK_DATA)
            except OSError:
                d = size
            if d > off:
                m.append((NFS4_CONTENT_HOLE, off, d - off))
            if d >= size:
                break
            h = os.lseek(fd, d, SEEK_HOLE)
            m.append((NFS4_CONTENT_DATA, d, h - d))
            off = h
        return size, m
    finally:
        os.close(fd)


def merge(m, kind, off, n):
    if m and m[-1][0] == kind and m[-1][1] + m[-1][2] == off:
        m[-1] = (kind, m[-1][1], m[-1][2] + n)
    elif n:
        m.append((kind, off, n))


def make_sparse(dirpath, rng):
    """Sparse files through the mount: [(name, path)]."""
    files = []

    def mk(name, size, writes):
        p = os.path.join(dirpath, name)
        fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for off, n in writes:
                os.pwrite(fd, os.urandom(n), off)
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        files.append((name, p))

    mk("rp-all-hole", 3 * MIB + 7, [])
    mk("rp-empty", 0, [])
    mk("rp-dense", 2 * MIB + 333, [(0, 2 * MIB + 333)])
    mk("rp-head-tail", 8 * MIB, [(0, 5000), (8 * MIB - 70000, 70000)])
    mk("rp-ends-in-hole", 5 * MIB, [(1 * MIB + 1, 100000)])
    w, off = [], 0
    for _ in range(40):
        off += rng.randrange(1, 700) * 1024 + rng.randrange(4096)
        n = rng.randrange(1, 300000)
        w.append((off, n))
        off += n
    mk("rp-random", off + rng.randrange(2 * MIB), w)
    mk("rp-far", 3 * (1 << 30) + 12345, [(1 << 30, 4096), (3 * (1 << 30), 12345)])
    return files


def readplus(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    rng = random.Random(a.seed)
    note("seed %d" % a.seed)
    files = make_sparse(a.dir, rng)
    c = TlsConn(a.port, ctx, minor=2, maxresp=2 * MIB)
    for name, _p in files:
        bpath = os.path.join(a.backing, name)
        size, want = backing_map(bpath)
        st, r = c.call([noargs("PUTROOTFH"), lookup(name), noargs("GETFH")])
        if st:
            check("%s: LOOKUP over TLS" % name, False, errname(st))
            continue
        fh = r[-1][2]
        fd = os.open(bpath, os.O_RDONLY)
        got, bad, calls, off, holes = [], [], 0, 0, 0
        while off < size or calls == 0:
            st, r = c.call([putfh(fh), read_plus(off, MIB)])
            calls += 1
            if st:
                bad.append("READ_PLUS(%d): %s" % (off, errname(st)))
                break
            res = r[-1][2]
            if not res["segs"]:
                if not res["eof"] or off < size:
                    bad.append("READ_PLUS(%d): no segment, eof %d" % (off, res["eof"]))
                break
            for k, o, x in res["segs"]:
                if k == NFS4_CONTENT_DATA:
                    if o != off:
                        bad.append("data at %d, expected %d" % (o, off))
                    if os.pread(fd, len(x), o) != x:
                        bad.append("data [%d, +%d) differs from the backing file" % (o, len(x)))
                    merge(got, k, o, len(x))
                    off = o + len(x)
                else:
                    if not o <= off < o + x:
                        bad.append("hole [%d, +%d) does not hold %d" % (o, x, off))
                    end = min(o + x, size)
                    merge(got, k, off, end - off)
                    holes += 1
                    off = end
            if bad or res["eof"]:
                break
            if calls > 100000:
                bad.append("more than 100000 calls")
                break
        os.close(fd)
        if size and off < size and not bad:
            bad.append("stopped at %d of %d" % (off, size))
        check("%s (%d bytes): READ_PLUS over TLS sends the backing file's bytes" % (name, size),
              not bad, "; ".join(bad[:3]))
        check("%s: READ_PLUS's map over TLS is the backing file's (%d segments, %d holes)" %
              (name, len(want), sum(1 for s in want if s[0] == NFS4_CONTENT_HOLE)),
              got == want, "over TLS %s, backing %s" % (got[:6], want[:6]))
    c.client.close()


# ---------------------------------------------------------------- torture

class LacunaInfo(ctypes.Structure):
    """struct lacuna_info (include/lacuna/ioctl.h)"""
    _fields_ = [("size", ctypes.c_uint32), ("version", ctypes.c_uint32),
                ("u64s", ctypes.c_uint64 * 6), ("ctl_path", ctypes.c_char * 108),
                ("conn_bytes_max", ctypes.c_uint64), ("conns_max", ctypes.c_uint64),
                ("write_unit", ctypes.c_uint32), ("write_unit_aligned", ctypes.c_uint32),
                ("clone_blksize", ctypes.c_uint64)]


# _IOWR(0xAC, 1, struct lacuna_info)
LACUNA_IOC_INFO = (3 << 30) | (ctypes.sizeof(LacunaInfo) << 16) | (0xAC << 8) | 1


def uniform(b):
    return not b or b.count(b[:1]) == len(b)


def torture(a):
    """Regions of 1 MiB at unaligned offsets; writers fill a whole region
    with one byte value per change, readers READ_PLUS whole regions."""
    ctx = client_ctx(a.ca, a.cert, a.key)
    path = os.path.join(a.dir, a.name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    # the mount's write unit: a write through the mount beyond it is atomic per piece only
    info = LacunaInfo(size=ctypes.sizeof(LacunaInfo))
    try:
        fcntl.ioctl(fd, LACUNA_IOC_INFO, info)
        wunit = info.write_unit
    except OSError as e:
        note("LACUNA_IOC_INFO: %s" % e)
        wunit = 0
    # regions at odd offsets, 4 KiB + 1000 bytes apart: 3 of 1 MiB for the
    # NFS writer, 3 of the mount's write unit (at most 1 MiB) for the mount's
    rlen, mlen = MIB, min(MIB, wunit or 4096)
    nfs_regs, mount_regs, off = [], [], 3 * 4096 + 511
    for i in range(6):
        n = rlen if i % 2 == 0 else mlen
        (nfs_regs if i % 2 == 0 else mount_regs).append((off, n))
        os.pwrite(fd, b"\x01" * n, off)
        off += n + 4096 + 1000
    os.ftruncate(fd, off)
    os.fsync(fd)
    regs = nfs_regs + mount_regs
    note("torture: regions %s; the mount's write unit %d" % (regs, wunit))
    stop = threading.Event()
    stats = dict(replies=0, torn=0, nfs_writes=0, mount_writes=0, punches=0, errors=[])
    lock = threading.Lock()
    first_torn = []

    def nfs_writer():
        try:
            c = TlsConn(a.port, ctx, minor=2, maxreq=2 * MIB)
            st, r = c.call([noargs("PUTROOTFH"), lookup(a.name), noargs("GETFH")])
            fh = r[-1][2]
            v = 2
            while not stop.is_set():
                off, n = random.choice(nfs_regs)
                v = v % 250 + 2
                st, r = c.call([putfh(fh), write(off, bytes([v]) * n, stable=2)])
                if st or r[-1][2]["count"] != n:
                    raise ValueError("WRITE: %s" % errname(st))
                with lock:
                    stats["nfs_writes"] += 1
        except Exception as e:
            with lock:
                stats["errors"].append("NFS writer: %r" % e)
            stop.set()

    def mount_writer():
        try:
            wfd = os.open(path, os.O_RDWR)
            rng = random.Random(a.seed)
            v = 2
            while not stop.is_set():
                off, n = rng.choice(mount_regs)
                v = v % 250 + 2
                if rng.random() < 0.2:
                    fallocate(wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
                    with lock:
                        stats["punches"] += 1
                else:
                    # one write(2) of the region from a buffer at an odd address
                    buf = bytearray(n + 1)
                    buf[1:] = bytes([v]) * n
                    os.pwrite(wfd, memoryview(buf)[1:], off)
                    with lock:
                        stats["mount_writes"] += 1
            os.close(wfd)
        except Exception as e:
            with lock:
                stats["errors"].append("mount writer: %r" % e)
            stop.set()

    def reader(i):
        try:
            c = TlsConn(a.port, ctx, minor=2, maxresp=2 * MIB)
            st, r = c.call([noargs("PUTROOTFH"), lookup(a.name), noargs("GETFH")])
            fh = r[-1][2]
            rng = random.Random(a.seed + i)
            while not stop.is_set():
                off, n = rng.choice(regs)
                st, r = c.call([putfh(fh), read_plus(off, n)])
                if st:
                    raise ValueError("READ_PLUS: %s" % errname(st))
                b = b""
                for k, o, x in r[-1][2]["segs"]:
                    if k == NFS4_CONTENT_DATA:
                        b += x
                    else:
                        b += b"\0" * (min(o + x, off + n) - max(o, off))
                ok = len(b) == n and uniform(b)
                with lock:
                    stats["replies"] += 1
                    if not ok:
                        stats["torn"] += 1
                        if not first_torn:
                            vals = sorted(set(b))
                            first_torn.append("region at %d: %d bytes, values %s" %
                                              (off, len(b), vals[:8]))
                    n = stats["replies"]
                if (a.expect_torn and stats["torn"]) or n >= a.max_replies:
                    stop.set()
                if not a.expect_torn and n >= a.replies:
                    stop.set()
        except Exception as e:
            with lock:
                stats["errors"].append("reader %d: %r" % (i, e))
            stop.set()

    ts = [threading.Thread(target=nfs_writer), threading.Thread(target=mount_writer)]
    ts += [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(600)
    os.close(fd)
    note("torture: %(replies)d replies, %(nfs_writes)d NFS WRITEs, %(mount_writes)d mount "
         "writes, %(punches)d punches, %(torn)d torn" % stats)
    check("torture over TLS: no client error", not stats["errors"], "; ".join(stats["errors"]))
    check("torture over TLS: both writers wrote", stats["nfs_writes"] > 0 and
          stats["mount_writes"] + stats["punches"] > 0,
          "%(nfs_writes)d NFS WRITEs, %(mount_writes)d mount writes, %(punches)d punches" % stats)
    if a.expect_torn:
        check("torture over TLS (negative control): a torn reply is caught within %d replies" %
              a.max_replies, stats["torn"] > 0, "%d replies, none torn" % stats["replies"])
        if first_torn:
            note("first torn: " + first_torn[0])
    else:
        check("torture over TLS: %d READ_PLUS replies checked" % stats["replies"],
              stats["replies"] >= a.replies, stats["replies"])
        check("torture over TLS: 0 torn", stats["torn"] == 0,
              "%d torn; first: %s" % (stats["torn"], first_torn[:1]))



# ---------------------------------------------------------------- pipelining

def pipeline(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    path = os.path.join(a.dir, a.name)
    c = TlsConn(a.port, ctx, minor=2, maxresp=2 * MIB, maxreq=2 * MIB)
    ses = c.ses
    depth = min(16, ses.fore[5])
    note("pipeline: %d slots" % depth)
    check("pipeline: the session has several slots", depth > 1, depth)
    offs = [4096 * 3 + 777 + i * (MIB + 1001) for i in range(depth)]
    data = [os.urandom(MIB) for _ in range(depth)]
    with open(path, "wb") as f:
        f.truncate(offs[-1] + MIB)
    st, r = c.call([noargs("PUTROOTFH"), lookup(a.name), noargs("GETFH")])
    if st:
        check("pipeline: LOOKUP " + a.name, False, errname(st))
        return
    fh = r[-1][2]
    seqs = [ses.seq] + [1] * (depth - 1)  # slot 0 was Session's

    def batch(what, op_of):
        """send one call per slot, then read the replies: {slot: (status, results)}"""
        sent = {}
        for i in range(depth):
            seq = ("SEQUENCE", ses.sid + u32(seqs[i]) + u32(i) + u32(depth - 1) + u32(0))
            seqs[i] += 1
            sent[c.client.send(2, [seq, putfh(fh), op_of(i)])] = i
        got = {}
        try:
            for _ in range(depth):
                st, r = c.client._reply()
                got[sent.get(c.client.reply_xid, -1)] = (st, r)
        except (OSError, EOFError, ValueError) as e:
            check("pipeline: %d %s sent back to back are answered" % (depth, what), False, repr(e))
            return {}
        check("pipeline: %d %s sent back to back are each answered once" % (depth, what),
              sorted(got) == list(range(depth)), sorted(got))
        bad = [(i, errname(st)) for i, (st, r) in got.items() if st]
        check("pipeline: the %s all succeed" % what, not bad, bad[:3])
        return {i: r[-1][2] for i, (st, r) in got.items() if not st}

    res = batch("WRITEs of 1 MiB", lambda i: write(offs[i], data[i], stable=2))
    check("pipeline: every WRITE wrote 1 MiB", all(res[i]["count"] == MIB for i in res))
    fd = os.open(os.path.join(a.backing, a.name), os.O_RDONLY)
    check("pipeline: the backing file holds what the WRITEs carried",
          all(os.pread(fd, MIB, offs[i]) == data[i] for i in range(depth)))
    os.close(fd)
    res = batch("READ_PLUS of 1 MiB", lambda i: read_plus(offs[i], MIB))
    same = [i for i in res if b"".join(x for k, o, x in res[i]["segs"]
                                       if k == NFS4_CONTENT_DATA) == data[i]]
    check("pipeline: every READ_PLUS reply carries what was written", len(same) == depth,
          "%d of %d" % (len(same), depth))
    res = batch("READs of 1 MiB", lambda i: read(offs[i], MIB))
    same = [i for i in res if res[i]["data"] == data[i]]
    check("pipeline: every READ reply carries what was written", len(same) == depth,
          "%d of %d" % (len(same), depth))
    c.client.close()


def _pipeline_args(p):
    p.add_argument("port", type=int)
    p.add_argument("dir")
    p.add_argument("backing")
    p.add_argument("--name", default="tls-pipeline")


def _readplus_args(p):
    p.add_argument("port", type=int)
    p.add_argument("dir")
    p.add_argument("backing")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))


def _torture_args(p):
    p.add_argument("port", type=int)
    p.add_argument("dir")
    p.add_argument("--name", default="tls-torture")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    p.add_argument("--replies", type=int, default=1000)
    p.add_argument("--max-replies", type=int, default=20000)
    p.add_argument("--expect-torn", action="store_true")


if __name__ == "__main__":
    sys.exit(cli("lt_tls_readplus.py", {"readplus": (readplus, _readplus_args),
                                        "torture": (torture, _torture_args),
                                        "pipeline": (pipeline, _pipeline_args)}, sys.argv[1:]))
