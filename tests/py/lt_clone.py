#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# CLONE (RFC 7862 §15.13) and the clone_blksize attribute of lacunad,
# checked with raw minor version 2 COMPOUNDs (lt_nfs4raw.py):
#
#   lt_clone.py PORT XFS_DIR XFS_BACKING EXT4_DIR EXT4_BACKING
#
# XFS_DIR and EXT4_DIR are lacunafs mounts exported by one lacunad at
# their own paths (XFS made with reflink=1; the BACKING directories the
# filesystems under them). On XFS: clone_blksize is supported and is the
# block size; a sparse file cloned whole (count 0) has the source's bytes
# (sha256), the source's SEEK_DATA/SEEK_HOLE map on the backing
# filesystem and extents shared with it (filefrag -v); a range cloned
# into the middle of a file replaces that range only; a count reaching an
# unaligned end of the source is allowed; unaligned offsets or counts
# are INVAL, as are a source range past EOF and overlapping ranges of one
# file (disjoint ones clone); a destination past 2^63 is FBIG; a
# directory is ISDIR; no saved handle is NOFILEHANDLE; a read-only open
# as the destination's stateid is OPENMODE; a user who cannot read the
# source gets ACCESS; source and destination on two exports is XDEV; 4.1
# has no CLONE (OP_ILLEGAL). On ext4: clone_blksize is not supported and
# not returned, and CLONE is NOTSUPP.
#
# Output: one "ok - ..." or "not ok - ..." line per check. Exit status 0
# when all passed, 1 when one failed, 2 on a usage error.
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403
import lt_readplus as rp  # noqa: E402
from lt_readplus import MIB, Nfs, check, fmt_map, local_map, mkfile  # noqa: E402

OP_ILLEGAL = 10044
A_SUPPORTED_ATTRS, A_CLONE_BLKSIZE = 0, 77


def clone_op(nfs, src_fh, dst_fh, src_off, dst_off, count, **kw):
    st, r = nfs.call([putfh(src_fh), noargs("SAVEFH"), putfh(dst_fh),
                      clone(src_off, dst_off, count, **kw)])
    return r[-1][1] if r else st


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def attrs(nfs, fh, bits):
    """{attribute: value bytes} of GETATTR; the values are split for the
    two attributes this test asks for (supported_attrs, clone_blksize)"""
    st, r = nfs.call([putfh(fh), getattr_(bits)])
    if st:
        raise ValueError("GETATTR: " + errname(st))
    words, vals = r[-1][2]
    got = [b for b in range(32 * len(words)) if words[b // 32] >> (b % 32) & 1]
    out, pos = {}, 0
    for b in got:
        if b == A_SUPPORTED_ATTRS:
            n = struct.unpack(">I", vals[pos:pos + 4])[0]
            out[b] = [struct.unpack(">I", vals[pos + 4 + 4 * i:pos + 8 + 4 * i])[0]
                      for i in range(n)]
            pos += 4 + 4 * n
        elif b == A_CLONE_BLKSIZE:
            out[b] = struct.unpack(">I", vals[pos:pos + 4])[0]
            pos += 4
    return out


def has_bit(words, b):
    return len(words) > b // 32 and words[b // 32] >> (b % 32) & 1


def sparse_source(path):
    """8 MiB: data at 0 (1 MiB), 3 MiB (512 KiB), 7 MiB (1 MiB), holes between"""
    r = os.urandom
    mkfile(path, 8 * MIB, [(0, r(MIB)), (3 * MIB, r(MIB // 2)), (7 * MIB, r(MIB))])


def shared(path):
    out = subprocess.run(["filefrag", "-v", path], capture_output=True, text=True, timeout=60)
    return "shared" in out.stdout


def xfs(nfs, d, b, ext4_dir, port):
    p = d.lstrip("/") + "/"
    sparse_source(d + "/src")
    mkfile(d + "/dst")
    src, dst = nfs.fh(p + "src"), nfs.fh(p + "dst")
    a = attrs(nfs, src, [A_SUPPORTED_ATTRS, A_CLONE_BLKSIZE])
    check(has_bit(a.get(A_SUPPORTED_ATTRS, []), A_CLONE_BLKSIZE),
          "xfs: clone_blksize is a supported attribute", str(a))
    check(a.get(A_CLONE_BLKSIZE) == os.statvfs(b).f_bsize,
          "xfs: clone_blksize is the block size (%d)" % os.statvfs(b).f_bsize, str(a))

    st = clone_op(nfs, src, dst, 0, 0, 0)
    check(st == 0, "xfs: CLONE of a whole sparse file (count 0)", errname(st))
    check(sha(d + "/dst") == sha(d + "/src"), "xfs: the clone's bytes are the source's (sha256)")
    _, sm, _ = local_map(b + "/src")
    _, dm, _ = local_map(b + "/dst")
    check(sm == dm, "xfs: the clone keeps the source's holes (backing map)",
          "src %s dst %s" % (fmt_map(sm), fmt_map(dm)))
    check(shared(b + "/dst"), "xfs: the clone's extents are shared (filefrag -v)")

    # a range into the middle of a file of 0xa5
    mkfile(d + "/mid", None, [(0, b"\xa5" * 4 * MIB)])
    mid = nfs.fh(p + "mid")
    st = clone_op(nfs, src, mid, 0, MIB, MIB)
    s = open(d + "/src", "rb").read()
    m = open(d + "/mid", "rb").read()
    check(st == 0 and m[MIB:2 * MIB] == s[:MIB] and m[:MIB] == b"\xa5" * MIB and
          m[2 * MIB:] == b"\xa5" * 2 * MIB and len(m) == 4 * MIB,
          "xfs: CLONE into the middle replaces that range only", errname(st))
    check(shared(b + "/mid"), "xfs: the middle's extents are shared (filefrag -v)")

    # an unaligned end of the source may be the end of the range
    mkfile(d + "/odd", None, [(0, os.urandom(2 * MIB + 100))])
    mkfile(d + "/oddcopy")
    st = clone_op(nfs, nfs.fh(p + "odd"), nfs.fh(p + "oddcopy"), MIB, 0, 0)
    check(st == 0 and open(d + "/oddcopy", "rb").read() == open(d + "/odd", "rb").read()[MIB:],
          "xfs: CLONE to an unaligned end of the source", errname(st))

    for what, args, err in (("an unaligned source offset", (100, 0, 4096), "INVAL"),
                            ("an unaligned destination offset", (0, 100, 4096), "INVAL"),
                            ("an unaligned count inside the source", (0, 0, 1000), "INVAL"),
                            ("a source range past EOF", (4 * MIB, 0, 4 * MIB + 4096), "INVAL"),
                            ("a source offset past EOF", (9 * MIB, 0, 0), "INVAL"),
                            ("a destination past 2^63", (0, (1 << 63) - 4096, MIB), "FBIG")):
        st = clone_op(nfs, src, dst, *args)
        check(st == ERR[err], "xfs: CLONE with %s: %s" % (what, err), errname(st))
    st = clone_op(nfs, src, src, 0, MIB // 2, MIB)
    check(st == ERR["INVAL"], "xfs: CLONE within one file, overlapping: INVAL", errname(st))
    st = clone_op(nfs, src, src, 0, 4 * MIB, MIB)
    check(st == 0 and open(d + "/src", "rb").read(MIB) ==
          open(d + "/src", "rb").read()[4 * MIB:5 * MIB],
          "xfs: CLONE within one file, disjoint ranges", errname(st))

    os.mkdir(d + "/dir")
    st = clone_op(nfs, nfs.fh(p + "dir"), dst, 0, 0, 0)
    check(st == ERR["ISDIR"], "xfs: CLONE from a directory: ISDIR", errname(st))
    st, r = nfs.call([putfh(dst), clone(0, 0, 0)])
    check(r and r[-1][1] == ERR["NOFILEHANDLE"], "xfs: CLONE without a saved handle: "
          "NOFILEHANDLE", str(r))

    # stateids: the destination must be open for writing
    ses = nfs.conn.ses
    st, r = nfs.call([putfh(nfs.fh(d.lstrip("/"))),
                      open_(0, b"lt-clone-owner", ses.clientid, access=SHARE_ACCESS_READ,
                            name=b"dst"), noargs("GETFH")])
    if check(st == 0, "xfs: OPEN dst for reading", errname(st)):
        st = clone_op(nfs, src, dst, 0, 0, 0, dst_sid=r[1][2]["sid"])
        check(st == ERR["OPENMODE"], "xfs: CLONE into a read-only open: OPENMODE", errname(st))

    # a user who may not read the source
    os.chmod(d + "/src", 0o600)
    mkfile(d + "/theirs")
    os.chown(d + "/theirs", 65534, 65534)
    them = Conn(port, minor=2, uid=65534, gid=65534)
    st, r = them.call([putfh(src), noargs("SAVEFH"), putfh(nfs.fh(p + "theirs")),
                       clone(0, 0, 0)])
    st = r[-1][1] if r else st
    check(st == ERR["ACCESS"], "xfs: CLONE by a user who cannot read the source: ACCESS",
          errname(st))
    os.chmod(d + "/src", 0o644)

    # two exports
    e = ext4_dir.lstrip("/") + "/"
    mkfile(ext4_dir + "/x")
    st = clone_op(nfs, src, nfs.fh(e + "x"), 0, 0, 0)
    check(st == ERR["XDEV"], "CLONE from one export to another: XDEV", errname(st))

    c41 = Conn(port, minor=1)
    st, r = c41.call([putfh(src), noargs("SAVEFH"), putfh(dst), clone(0, 0, 0)])
    check(r and r[-1][1] == OP_ILLEGAL, "CLONE in a 4.1 COMPOUND: OP_ILLEGAL", str(r))


def ext4(nfs, d):
    p = d.lstrip("/") + "/"
    sparse_source(d + "/src")
    mkfile(d + "/dst")
    src, dst = nfs.fh(p + "src"), nfs.fh(p + "dst")
    a = attrs(nfs, src, [A_SUPPORTED_ATTRS, A_CLONE_BLKSIZE])
    check(not has_bit(a.get(A_SUPPORTED_ATTRS, []), A_CLONE_BLKSIZE),
          "ext4: clone_blksize is not a supported attribute", str(a))
    check(A_CLONE_BLKSIZE not in a, "ext4: GETATTR of clone_blksize returns none", str(a))
    st = clone_op(nfs, src, dst, 0, 0, 0)
    check(st == ERR["NOTSUPP"], "ext4: CLONE is NOTSUPP", errname(st))
    check(os.path.getsize(d + "/dst") == 0, "ext4: the destination is unchanged")


def main(argv):
    if len(argv) != 6:
        print("usage: lt_clone.py PORT XFS_DIR XFS_BACKING EXT4_DIR EXT4_BACKING",
              file=sys.stderr)
        return 2
    port = int(argv[1])
    nfs = Nfs(port)
    xfs(nfs, argv[2], argv[3], argv[4], port)
    ext4(nfs, argv[4])
    print("# %d checks, %d failed" % (rp.checks, rp.fails))
    return 1 if rp.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
