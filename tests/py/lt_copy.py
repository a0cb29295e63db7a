#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Server-side COPY (RFC 7862 §15.2) of lacunad, and OFFLOAD_STATUS and
# OFFLOAD_CANCEL, checked with raw minor version 2 COMPOUNDs
# (lt_nfs4raw.py, the layouts and maps of lt_readplus.py):
#
#   lt_copy.py edge PORT DIR BACKING SYNC_MAX
#       the RFC's cases on files made in DIR (the exported lacunafs mount,
#       BACKING the filesystem under it; SYNC_MAX lacunad's copy_sync_max):
#       ca_count 0 (to the end of the source) and a range; no saved
#       handle (NOFILEHANDLE); a directory, a symlink and a FIFO as source
#       or destination (ISDIR, SYMLINK, WRONG_TYPE); a source range past
#       EOF (INVAL); overlapping ranges of one file (INVAL) and disjoint
#       ones (copied); a destination past 2^63 (FBIG); source servers
#       named (NOTSUPP); a read-only open as the destination's stateid
#       (OPENMODE); data of the destination where the source has holes
#       punched; a copy ending in a hole past the destination's end
#       extends it; a copy of more data than SYNC_MAX comes back short
#       (synchronous, consecutive, UNSTABLE4 with WRITE's verifier) and
#       COPYs from where it stopped finish it; OFFLOAD_STATUS and
#       OFFLOAD_CANCEL answer BAD_STATEID; COPY in a 4.1 COMPOUND is
#       OP_ILLEGAL
#   lt_copy.py layouts PORT DIR BACKING [--seed S] [--count N]
#       N random sparse layouts (lt_readplus.py's) copied whole with COPY
#       (count 0, continued while short): the copy has the source's bytes
#       and its map (`lacuna map --json` of the backing files: the
#       SEEK_DATA/SEEK_HOLE map of ext4 or XFS) equals the source's
#
# Output: one "ok - ..." or "not ok - ..." line per check. Exit status 0
# when all passed, 1 when one failed, 2 on a usage error.
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403
import lt_readplus as rp  # noqa: E402
from lt_readplus import (DATA, HOLE, KIB, MIB, Nfs, check, fmt_map, local_map,  # noqa: E402
                         make_layout, mkfile, note, warm)

OP_ILLEGAL = 10044


def copy_op(nfs, src_fh, dst_fh, src_off, dst_off, count, **kw):
    """(status of COPY, its result) for PUTFH src, SAVEFH, PUTFH dst, COPY"""
    st, r = nfs.call([putfh(src_fh), noargs("SAVEFH"), putfh(dst_fh),
                      copy(src_off, dst_off, count, **kw)])
    return (r[-1][1] if r else st), (r[-1][2] if r else None)


def copy_all(nfs, src_fh, dst_fh, src_off, dst_off, count):
    """COPY a range as a client does: again from where a short copy stopped.
    (status, bytes copied, calls)"""
    done, calls = 0, 0
    end = None if count == 0 else src_off + count
    while True:
        left = 0 if end is None else end - (src_off + done)
        st, res = copy_op(nfs, src_fh, dst_fh, src_off + done, dst_off + done, left)
        calls += 1
        if st:
            return st, done, calls
        done += res["count"]
        if res["count"] == 0 or (end is not None and src_off + done >= end):
            return 0, done, calls


def content(path):
    with open(path, "rb") as f:
        return f.read()


def sync(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def edge(port, d, backing, sync_max):
    nfs = Nfs(port)
    rnd = random.Random(7)
    blob = rnd.randbytes(3 * MIB)
    # source: data, a hole, data, a hole at the end
    mkfile(d + "/src", 8 * MIB, [(0, blob[:MIB]), (4 * MIB, blob[MIB:2 * MIB])])
    mkfile(d + "/dst")
    os.mkdir(d + "/dir")
    os.symlink("src", d + "/link")
    os.mkfifo(d + "/fifo")
    src, dst, dirh = nfs.fh("src"), nfs.fh("dst"), nfs.fh("dir")
    fifo = nfs.fh("fifo")
    st, r = nfs.call([noargs("PUTROOTFH"), lookup("link"), noargs("GETFH")])
    link = r[-1][2]

    # ca_count 0: the whole source
    st, res = copy_op(nfs, src, dst, 0, 0, 0)
    check(st == 0 and res["count"] == 8 * MIB,
          "COPY count 0 copies to the end of the source", "%s %s" % (errname(st), res))
    if st == 0:
        check(res["synchronous"] == 1 and res["consecutive"] == 1 and res["callback"] == [],
              "COPY is synchronous and consecutive, with no callback stateid", str(res))
        st2, w = nfs.op(dst, write(9 * MIB, b"x", 0))
        check(st2 == 0 and w["verf"] == res["verf"] and res["committed"] == 0,
              "COPY answers UNSTABLE4 with WRITE's verifier",
              "committed %d, verifier %r vs WRITE's %r" %
              (res["committed"], res["verf"], w and w["verf"]))
        os.truncate(d + "/dst", 8 * MIB)
    check(content(d + "/dst") == content(d + "/src"), "COPY count 0: the bytes are the source's")
    sync(d + "/dst")
    _, sm, _ = local_map(backing + "/src")
    _, dm, _ = local_map(backing + "/dst")
    check(sm == dm, "COPY count 0: the backing file's map is the source's",
          "src %s dst %s" % (fmt_map(sm), fmt_map(dm)))

    # runs of several MiB far apart, into an empty file: every write of the
    # copy extends the destination (where XFS preallocates past the end)
    mkfile(d + "/img", 48 * MIB, [(0, blob[:MIB]), (8 * MIB, blob * 2), (40 * MIB, blob[:MIB])])
    mkfile(d + "/imgcopy")
    st, done, calls = copy_all(nfs, nfs.fh("img"), nfs.fh("imgcopy"), 0, 0, 0)
    check(st == 0 and done == 48 * MIB and content(d + "/img") == content(d + "/imgcopy"),
          "COPY of runs of MiBs far apart: the bytes are the source's",
          "%s, %d bytes" % (errname(st), done))
    sync(d + "/imgcopy")
    _, sm, _ = local_map(backing + "/img")
    _, dm, _ = local_map(backing + "/imgcopy")
    check(sm == dm, "COPY of runs of MiBs far apart: the backing file's map is the source's",
          "src %s dst %s" % (fmt_map(sm), fmt_map(dm)))

    # a range into the middle of a file with data where the source has holes
    mkfile(d + "/full", 10 * MIB, [(0, b"\xa5" * 10 * MIB)])
    full = nfs.fh("full")
    st, res = copy_op(nfs, src, full, MIB // 2, 2 * MIB, 5 * MIB)
    want = bytearray(b"\xa5" * 10 * MIB)
    s = content(d + "/src")
    want[2 * MIB:7 * MIB] = s[MIB // 2:MIB // 2 + 5 * MIB]
    check(st == 0 and res["count"] == 5 * MIB and content(d + "/full") == bytes(want),
          "COPY of a range over data: the range is the source's, the rest kept",
          "%s %s" % (errname(st), res))
    sync(d + "/full")
    _, fm, _ = local_map(backing + "/full")
    # source [1M, 4M) is a hole: destination [2.5M, 5.5M) must be one
    hole = [(k, o, n) for k, o, n in fm if k == HOLE and o <= 2 * MIB + MIB // 2 and
            o + n >= 5 * MIB + MIB // 2]
    check(hole, "COPY punches the destination where the source has a hole", fmt_map(fm))

    # ends in a hole past the destination's end: the size grows
    mkfile(d + "/short")
    sh = nfs.fh("short")
    st, res = copy_op(nfs, src, sh, 4 * MIB, 0, 4 * MIB)
    check(st == 0 and os.stat(d + "/short").st_size == 4 * MIB and
          content(d + "/short") == s[4 * MIB:],
          "COPY ending in a hole past the destination's end extends it",
          "%s size %d" % (errname(st), os.stat(d + "/short").st_size))

    # a source range at EOF copies nothing
    st, res = copy_op(nfs, src, sh, 8 * MIB, 0, 0)
    check(st == 0 and res["count"] == 0, "COPY count 0 at the source's EOF copies 0 bytes",
          "%s %s" % (errname(st), res))

    # errors
    st, r = nfs.call([putfh(dst), copy(0, 0, 0)])
    check(r and r[-1][1] == ERR["NOFILEHANDLE"], "COPY without a saved handle: NOFILEHANDLE",
          str(r))
    for what, sfh, dfh, err in (("source a directory", dirh, dst, "ISDIR"),
                                ("destination a directory", src, dirh, "ISDIR"),
                                ("source a symlink", link, dst, "SYMLINK"),
                                ("destination a FIFO", src, fifo, "WRONG_TYPE")):
        st, _ = copy_op(nfs, sfh, dfh, 0, 0, 0)
        check(st == ERR[err], "COPY with the %s: %s" % (what, err), errname(st))
    for what, args, err in (("source offset past EOF", (8 * MIB + 1, 0, 0), "INVAL"),
                            ("source range past EOF", (MIB, 0, 7 * MIB + 1), "INVAL"),
                            ("source offset past 2^63", (1 << 63, 0, 1), "INVAL"),
                            ("destination past 2^63", (0, (1 << 63) - 10, 4 * KIB), "FBIG")):
        st, _ = copy_op(nfs, src, dst, *args)
        check(st == ERR[err], "COPY with a %s: %s" % (what, err), errname(st))
    st, _ = copy_op(nfs, src, dst, 0, 0, 0, sources=[(1, b"elsewhere.example")])
    check(st == ERR["NOTSUPP"], "COPY from another server: NOTSUPP", errname(st))

    # one file: overlapping ranges are INVAL, disjoint ones copy
    mkfile(d + "/self", 4 * MIB, [(0, blob[:MIB])])
    me = nfs.fh("self")
    for so, do, n in ((0, MIB // 2, MIB), (MIB // 2, 0, MIB), (0, 0, MIB), (0, 4096, 0)):
        st, _ = copy_op(nfs, me, me, so, do, n)
        check(st == ERR["INVAL"],
              "COPY within one file, [%d,+%d) onto %d (overlap): INVAL" % (so, n, do),
              errname(st))
    st, res = copy_op(nfs, me, me, 0, 2 * MIB, MIB)
    c = content(d + "/self")
    check(st == 0 and c[2 * MIB:3 * MIB] == blob[:MIB] and c[:MIB] == blob[:MIB],
          "COPY within one file, disjoint ranges: copied", errname(st))

    # stateids: the destination must be open for writing
    ses = nfs.conn.ses
    owner = b"lt-copy-owner"
    st, r = nfs.call([noargs("PUTROOTFH"),
                      open_(0, owner, ses.clientid, access=SHARE_ACCESS_READ,
                            name=b"dst"),
                      noargs("GETFH")])
    if check(st == 0, "OPEN dst for reading", errname(st)):
        rsid = r[1][2]["sid"]
        st, _ = copy_op(nfs, src, dst, 0, 0, MIB, dst_sid=rsid)
        check(st == ERR["OPENMODE"], "COPY into a read-only open: OPENMODE", errname(st))
        st, _ = copy_op(nfs, dst, sh, 0, 0, MIB, src_sid=rsid)
        check(st == 0, "COPY from a read-only open stateid: copied", errname(st))
        st, _ = copy_op(nfs, src, sh, 0, 0, MIB, src_sid=rsid)
        check(st == ERR["BAD_STATEID"], "COPY with the stateid of another file: BAD_STATEID",
              errname(st))

    # the bound of one synchronous COPY
    big = 3 * sync_max
    mkfile(d + "/big", big + MIB, [(o, rnd.randbytes(MIB)) for o in range(0, big, 2 * MIB)])
    mkfile(d + "/bigcopy")
    bg, bc = nfs.fh("big"), nfs.fh("bigcopy")
    st, res = copy_op(nfs, bg, bc, 0, 0, 0)
    check(st == 0 and 0 < res["count"] < big + MIB,
          "COPY of %d bytes of data with copy_sync_max %d comes back short" %
          (big // 2, sync_max), "%s %s" % (errname(st), res))
    st, done, calls = copy_all(nfs, bg, bc, 0, 0, 0)
    check(st == 0 and done == big + MIB and content(d + "/big") == content(d + "/bigcopy"),
          "COPYs continued from where a short one stopped copy it all (%d calls)" % calls,
          "%s, %d bytes" % (errname(st), done))

    # no asynchronous copy: no stateid is one
    for op in ("OFFLOAD_STATUS", "OFFLOAD_CANCEL"):
        st, _ = nfs.op(dst, (op, b"\0" * 4 + b"\x01" * 12))
        check(st == ERR["BAD_STATEID"], "%s of an unknown stateid: BAD_STATEID" % op,
              errname(st))
    # 4.1 has no COPY
    c41 = Conn(port, minor=1)
    st, r = c41.call([putfh(src), noargs("SAVEFH"), putfh(dst), copy(0, 0, 0)])
    check(r and r[-1][1] == OP_ILLEGAL, "COPY in a 4.1 COMPOUND: OP_ILLEGAL", str(r))


def layouts(port, d, backing, seed, count):
    rng = random.Random(seed)
    nfs = Nfs(port)
    bad = 0
    for i in range(count):
        fails0 = rp.fails
        name, cname = "layout-%d" % i, "copy-%d" % i
        size, wins, desc = make_layout(rng, d + "/" + name)
        warm(backing + "/" + name, wins, size)
        label = "seed %d layout %d (size %d: %s)" % (seed, i, size, desc[:300])
        mkfile(d + "/" + cname)
        sfh, dfh = nfs.fh(name), nfs.fh(cname)
        st, done, calls = copy_all(nfs, sfh, dfh, 0, 0, 0)
        check(st == 0 and done == size, "%s: COPY count 0 copies it (%d calls)" % (label, calls),
              "%s, %d bytes" % (errname(st), done))
        sync(d + "/" + cname)
        _, sm, _ = local_map(backing + "/" + name)
        dsize, dm, _ = local_map(backing + "/" + cname)
        check(dsize == size and dm == sm, "%s: the copy's map is the source's" % label,
              "size %d; src %s copy %s" % (dsize, fmt_map(sm), fmt_map(dm)))
        same = True
        with open(d + "/" + name, "rb") as a, open(d + "/" + cname, "rb") as b:
            for k, o, n in sm:
                if k != DATA:
                    continue
                a.seek(o)
                b.seek(o)
                for x in range(0, n, 4 * MIB):
                    if a.read(min(4 * MIB, n - x)) != b.read(min(4 * MIB, n - x)):
                        same = False
                        break
        check(same, "%s: the copy's data is the source's" % label)
        if fails0 != rp.fails:
            bad += 1
        for n in (name, cname):
            st, _ = nfs.call([noargs("PUTROOTFH"), remove(n)])
            if st:
                os.unlink(d + "/" + n)
    note("seed %d: %d of %d layouts had a failed check" % (seed, bad, count))


def main(argv):
    a = argv[2:]
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "edge" and len(a) == 4:
        edge(int(a[0]), a[1], a[2], int(a[3]))
    elif cmd == "layouts" and len(a) >= 3:
        seed, count = random.randrange(1 << 30), 20
        opts = a[3:]
        while opts:
            if opts[0] == "--seed":
                seed = int(opts[1])
            elif opts[0] == "--count":
                count = int(opts[1])
            else:
                print("lt_copy.py: bad option %s" % opts[0], file=sys.stderr)
                return 2
            opts = opts[2:]
        layouts(int(a[0]), a[1], a[2], seed, count)
    else:
        print("lt_copy.py: bad arguments", file=sys.stderr)
        return 2
    print("# %d checks, %d failed" % (rp.checks, rp.fails))
    return 1 if rp.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
