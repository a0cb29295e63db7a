#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Extended attributes (RFC 8276) of lacunad, checked with raw minor
# version 2 COMPOUNDs (lt_nfs4raw.py):
#
#   lt_xattr.py PORT DIR BACKING
#       on files made in DIR (the exported lacunafs mount, BACKING the
#       filesystem under it): SETXATTR lands as user.NAME on the backing
#       file, and user.NAME set there is what GETXATTR reads; the RFC's
#       errors (NOXATTR for a missing name, EXIST for SETXATTR4_CREATE of an
#       existing one, NOXATTR for SETXATTR4_REPLACE or REMOVEXATTR of a
#       missing one, XATTR2BIG for a name of more than 250 bytes or a value
#       of more than 64 KiB, INVAL for an empty name); LISTXATTRS lists
#       the user attributes only (not trusted.*), pages through 40 names
#       with small maxcounts and cookies (each name once), BAD_COOKIE past
#       the end, TOOSMALL when not even one name fits; change_info
#       changes; a directory holds xattrs too; another user may read but
#       not write a root's file's xattrs; xattr_support (attribute 82) is
#       true and listed in supported_attrs in 4.2 only; ACCESS answers the
#       XAREAD/XAWRITE/XALIST bits in 4.2 only; the operations in a 4.1
#       COMPOUND are OP_ILLEGAL
#
# Output: one "ok - ..." or "not ok - ..." line per check. Exit status 0
# when all passed, 1 when one failed, 2 on a usage error.
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403
import lt_readplus as rp  # noqa: E402
from lt_readplus import Nfs, check  # noqa: E402

OP_ILLEGAL = 10044
A_SUPPORTED_ATTRS, A_XATTR_SUPPORT = 0, 82
XAREAD, XAWRITE, XALIST = 0x40, 0x80, 0x100


def st_of(nfs, fh, op):
    st, r = nfs.call([putfh(fh), op])
    return (r[-1][1] if r else st), (r[-1][2] if r else None)


def list_all(nfs, fh, maxcount):
    """every name, paging with cookies; (status, names, calls)"""
    names, cookie, calls = [], 0, 0
    while calls < 1000:
        st, res = st_of(nfs, fh, listxattrs(cookie, maxcount))
        calls += 1
        if st:
            return st, names, calls
        names += res["names"]
        cookie = res["cookie"]
        if res["eof"]:
            break
    return 0, names, calls


def main(port, d, backing):
    nfs = Nfs(port)
    with open(d + "/f", "wb") as f:
        f.write(b"data")
    os.chmod(d + "/f", 0o644)
    os.mkdir(d + "/dir")
    fh, dh = nfs.fh("f"), nfs.fh("dir")

    st, ci = st_of(nfs, fh, setxattr(b"colour", b"blue"))
    check(st == 0, "SETXATTR", errname(st))
    check(ci is not None and ci[1] != ci[2], "SETXATTR: change_info changes", str(ci))
    check(os.getxattr(backing + "/f", "user.colour") == b"blue",
          "SETXATTR lands as user.colour on the backing file")
    st, v = st_of(nfs, fh, getxattr(b"colour"))
    check(st == 0 and v == b"blue", "GETXATTR reads it back", "%s %r" % (errname(st), v))
    os.setxattr(backing + "/f", "user.local", b"\0\1binary\xff")
    st, v = st_of(nfs, fh, getxattr(b"local"))
    check(st == 0 and v == b"\0\1binary\xff", "GETXATTR reads user.local set on the backing file",
          "%s %r" % (errname(st), v))
    st, _ = st_of(nfs, fh, getxattr(b"missing"))
    check(st == ERR["NOXATTR"], "GETXATTR of a missing name: NOXATTR", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"colour", b"red", SETXATTR4_CREATE))
    check(st == ERR["EXIST"], "SETXATTR4_CREATE of an existing name: EXIST", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"missing", b"x", SETXATTR4_REPLACE))
    check(st == ERR["NOXATTR"], "SETXATTR4_REPLACE of a missing name: NOXATTR", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"colour", b"green", SETXATTR4_REPLACE))
    st2, v = st_of(nfs, fh, getxattr(b"colour"))
    check(st == 0 and v == b"green", "SETXATTR4_REPLACE replaces", "%s %r" % (errname(st), v))
    st, _ = st_of(nfs, fh, setxattr(b"new", b"", SETXATTR4_CREATE))
    st2, v = st_of(nfs, fh, getxattr(b"new"))
    check(st == 0 and st2 == 0 and v == b"", "SETXATTR4_CREATE of a new name, empty value",
          "%s %s %r" % (errname(st), errname(st2), v))
    big = bytes(range(256)) * 12
    st, _ = st_of(nfs, fh, setxattr(b"big", big))
    st2, v = st_of(nfs, fh, getxattr(b"big"))
    check(st == 0 and v == big, "a value of %d bytes" % len(big), errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"n" * 251, b"x"))
    check(st == ERR["XATTR2BIG"], "SETXATTR of a name of 251 bytes: XATTR2BIG", errname(st))
    st, _ = st_of(nfs, fh, getxattr(b"n" * 251))
    check(st == ERR["XATTR2BIG"], "GETXATTR of a name of 251 bytes: XATTR2BIG", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"n" * 250, b"x"))
    check(st == 0 or st == ERR["NOSPC"], "SETXATTR of a name of 250 bytes: taken", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"toobig", b"v" * (65536 + 1)))
    check(st == ERR["XATTR2BIG"], "SETXATTR of a value of 64 KiB + 1: XATTR2BIG", errname(st))
    st, _ = st_of(nfs, fh, setxattr(b"", b"x"))
    check(st == ERR["INVAL"], "SETXATTR of an empty name: INVAL", errname(st))
    st, ci = st_of(nfs, fh, removexattr(b"new"))
    check(st == 0 and b"user.new" not in [n.encode() for n in os.listxattr(backing + "/f")],
          "REMOVEXATTR removes it from the backing file", errname(st))
    st, _ = st_of(nfs, fh, removexattr(b"new"))
    check(st == ERR["NOXATTR"], "REMOVEXATTR of a missing name: NOXATTR", errname(st))

    # LISTXATTRS: user attributes only, paged
    os.setxattr(backing + "/f", "trusted.hidden", b"x")
    want = {n[5:].encode() for n in os.listxattr(backing + "/f") if n.startswith("user.")}
    st, names, calls = list_all(nfs, fh, 65536)
    check(st == 0 and set(names) == want and len(names) == len(want),
          "LISTXATTRS lists the user attributes (%d), not trusted.*" % len(want),
          "%s %r" % (errname(st), names))
    many = {b"attr-%015d" % i for i in range(40)}
    for n in many:
        os.setxattr(backing + "/dir", "user." + n.decode(), b"v")
    for maxcount in (8 + 4 + 4 + 4 + 20, 100, 333, 4096):
        st, names, calls = list_all(nfs, dh, maxcount)
        check(st == 0 and sorted(names) == sorted(many),
              "LISTXATTRS of 40 names with maxcount %d: each once (%d calls)" % (maxcount, calls),
              "%s, %d names, %d distinct" % (errname(st), len(names), len(set(names))))
    st, _ = st_of(nfs, dh, listxattrs(0, 20))
    check(st == ERR["TOOSMALL"], "LISTXATTRS with a maxcount no name fits: TOOSMALL", errname(st))
    st, _ = st_of(nfs, dh, listxattrs(41, 4096))
    check(st == ERR["BAD_COOKIE"], "LISTXATTRS with a cookie past the end: BAD_COOKIE",
          errname(st))
    st, res = st_of(nfs, dh, listxattrs(40, 4096))
    check(st == 0 and res["names"] == [] and res["eof"] == 1,
          "LISTXATTRS with the cookie of the end: no names, eof", "%s %s" % (errname(st), res))

    # another user: may read, may not write a root's 0644 file's xattrs
    other = Nfs.__new__(Nfs)
    other.conn, other.maxresp = Conn(port, minor=2, uid=1000, gid=1000), 1 << 21
    st, v = st_of(other, fh, getxattr(b"colour"))
    check(st == 0 and v == b"green", "another user reads the xattr", errname(st))
    st, _ = st_of(other, fh, setxattr(b"colour", b"black"))
    check(st in (ERR["ACCESS"], ERR["PERM"]), "another user may not set it: ACCESS or PERM",
          errname(st))
    st, acc = st_of(other, fh, access(XAREAD | XAWRITE | XALIST))
    check(st == 0 and acc["supported"] == XAREAD | XAWRITE | XALIST and
          acc["access"] == XAREAD | XALIST,
          "ACCESS for another user: XAREAD and XALIST, not XAWRITE", "%s %s" % (errname(st), acc))
    st, acc = st_of(nfs, fh, access(XAREAD | XAWRITE | XALIST))
    check(st == 0 and acc["access"] == XAREAD | XAWRITE | XALIST,
          "ACCESS for the owner: XAREAD, XAWRITE, XALIST", "%s %s" % (errname(st), acc))

    # the attribute, and 4.1
    st, fa = st_of(nfs, fh, getattr_([A_SUPPORTED_ATTRS, A_XATTR_SUPPORT]))
    ok = st == 0 and fa is not None
    if ok:
        words, vals = fa
        ok = A_XATTR_SUPPORT in bits_of(words) and struct.unpack(">I", vals[-4:])[0] == 1
    check(ok, "xattr_support is true in 4.2", "%s %r" % (errname(st), fa))
    c41 = Conn(port, minor=1)
    st, r = c41.call([putfh(fh), getattr_([A_SUPPORTED_ATTRS])])
    supp = r[-1][2] if r and r[-1][1] == 0 else None
    check(supp is not None and A_XATTR_SUPPORT not in bits_of_supported(supp[1]),
          "xattr_support is not among 4.1's supported attributes", str(supp))
    st, r = c41.call([putfh(fh), access(XAREAD | XAWRITE | XALIST | 1)])
    check(r and r[-1][1] == 0 and r[-1][2]["supported"] == 1,
          "ACCESS in 4.1 does not answer the xattr bits", str(r))
    st, r = c41.call([putfh(fh), getxattr(b"colour")])
    check(r and r[-1][1] == OP_ILLEGAL, "GETXATTR in a 4.1 COMPOUND: OP_ILLEGAL", str(r))


def bits_of_supported(vals):
    """the attribute numbers in a supported_attrs value (a bitmap4)"""
    n = struct.unpack(">I", vals[:4])[0]
    words = struct.unpack(">%dI" % n, vals[4:4 + 4 * n])
    return bits_of(words)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: lt_xattr.py PORT DIR BACKING", file=sys.stderr)
        sys.exit(2)
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
    print("# %d checks, %d failed" % (rp.checks, rp.fails))
    sys.exit(1 if rp.fails else 0)
