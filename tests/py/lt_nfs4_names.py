#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Checks of lacunad's namespace operations with raw COMPOUNDs
# (lt_nfs4raw.py), each answer compared with what RFC 7530 / RFC 8881 and
# Linux nfsd give, and each change looked at in the exported directory:
#
#   lt_nfs4_names.py names   PORT DIR [--minor N]   file handles, LOOKUP,
#       LOOKUPP, SECINFO, CREATE (every type), READLINK, REMOVE, RENAME, LINK
#   lt_nfs4_names.py readdir PORT DIR [--minor N] [--files N]   READDIR of a
#       directory of N files (default 5000): continuation from cookies at
#       several maxcount and dircount values, verifier, bad cookies, limits
#   lt_nfs4_names.py pseudo  PORT PARENT EXP OTHER [--minor N]   a server
#       exporting PARENT/EXP to this client and PARENT/OTHER to another
#       address only: the pseudo directories on the way
#
# DIR is the exported directory as this machine sees it, served as the
# root (lacunad --export DIR): the checks make their files there. Output
# is one "ok - ..." or "not ok - ..." line per check; exit status 0 when
# all passed, 1 when one failed.
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403

fails = checks = 0


def check(cond, what):
    global fails, checks
    checks += 1
    if cond:
        print("ok - " + what)
    else:
        fails += 1
        print("not ok - " + what)


class T:
    def __init__(self, port, minor, uid=0, gid=0):
        self.c = Conn(port, minor, uid, gid)
        self.port, self.minor = port, minor

    def call(self, ops):
        return self.c.call(ops)

    def expect(self, ops, err, what):
        st, r = self.call(ops)
        got = r[-1][1] if r else st
        check(got == ERR[err], "%s: %s (got %s)" % (what, err, errname(got)))
        return st, r

    def fh(self, path):
        ops = [noargs("PUTROOTFH")] + [lookup(p) for p in path.split("/") if p]
        st, r = self.call(ops + [noargs("GETFH")])
        if st:
            raise ValueError("no handle for %s: %s" % (path, errname(st)))
        return r[-1][2]


def fresh(D, *names):
    for n in names:
        p = os.path.join(D, n)
        if os.path.isdir(p) and not os.path.islink(p):
            os.system("rm -rf '%s'" % p)
        elif os.path.lexists(p):
            os.unlink(p)


# ---------------------------------------------------------------- names
def names(t, D):
    v41 = t.minor >= 1
    fresh(D, "sub", "file", "slink", "full")
    os.makedirs(D + "/sub/deeper")
    with open(D + "/file", "w") as f:
        f.write("hello")
    os.symlink("file", D + "/slink")
    os.makedirs(D + "/full")
    open(D + "/full/x", "w").close()
    root = t.fh("")
    sub = t.fh("sub")

    # PUTFH, PUTPUBFH, GETFH, SAVEFH, RESTOREFH
    t.expect([putfh(b"")], "BADHANDLE", "PUTFH of an empty handle")
    t.expect([putfh(b"x" * 129)], "BADHANDLE", "PUTFH of a 129-byte handle")
    t.expect([putfh(b"\x07" * 20)], "BADHANDLE", "PUTFH of garbage")
    bogus = bytearray(root)
    bogus[4] ^= 0xff
    # another export id: a handle lacunad never made (its tag does not match)
    t.expect([putfh(bytes(bogus))], "BADHANDLE", "PUTFH of a handle with another export id")
    st, r = t.call([putfh(root), noargs("GETFH")])
    check(st == 0 and r[-1][2] == root, "PUTFH then GETFH gives the handle back")
    st, r = t.call([noargs("PUTPUBFH"), noargs("GETFH")])
    check(st == 0 and r[-1][2] == root, "PUTPUBFH is the root")
    t.expect([noargs("RESTOREFH")], "RESTOREFH", "RESTOREFH without SAVEFH")
    t.expect([noargs("SAVEFH")], "NOFILEHANDLE", "SAVEFH without a file handle")
    t.expect([noargs("GETFH")], "NOFILEHANDLE", "GETFH without a file handle")
    st, r = t.call([putfh(root), noargs("SAVEFH"), lookup("sub"), noargs("RESTOREFH"),
                    noargs("GETFH")])
    check(st == 0 and r[-1][2] == root, "RESTOREFH gives back the saved handle")

    # LOOKUP, LOOKUPP
    t.expect([putfh(root), lookup("")], "INVAL", "LOOKUP of an empty name")
    t.expect([putfh(root), lookup(".")], "BADNAME", "LOOKUP of '.'")
    t.expect([putfh(root), lookup("..")], "BADNAME", "LOOKUP of '..'")
    t.expect([putfh(root), lookup("sub/deeper")], "BADNAME", "LOOKUP of a name with '/'")
    t.expect([putfh(root), lookup("a" * 256)], "NAMETOOLONG", "LOOKUP of a 256-byte name")
    t.expect([putfh(root), lookup("a" * 255)], "NOENT", "LOOKUP of a missing 255-byte name")
    t.expect([putfh(root), lookup("file"), lookup("x")], "NOTDIR", "LOOKUP in a file")
    t.expect([putfh(root), lookup("slink"), lookup("x")], "SYMLINK", "LOOKUP in a symlink")
    st, r = t.call([putfh(root), lookup("sub"), lookup("deeper"), noargs("LOOKUPP"),
                    noargs("GETFH")])
    check(st == 0 and r[-1][2] == sub, "LOOKUP, LOOKUP, LOOKUPP")
    t.expect([putfh(root), noargs("LOOKUPP")], "NOENT", "LOOKUPP at the root")
    t.expect([putfh(root), lookup("file"), noargs("LOOKUPP")], "NOTDIR", "LOOKUPP of a file")
    t.expect([putfh(root), lookup("slink"), noargs("LOOKUPP")], "SYMLINK",
             "LOOKUPP of a symlink")

    # SECINFO, SECINFO_NO_NAME
    st, r = t.call([putfh(root), secinfo("sub"), noargs("GETFH")])
    check(len(r) >= 2 and r[1][1] == 0 and r[1][2] == [AUTH_SYS],
          "SECINFO gives AUTH_SYS (%s)" % (r[1][2] if len(r) > 1 else errname(st)))
    if v41:
        check(r[-1][0] == OP["GETFH"] and r[-1][1] == ERR["NOFILEHANDLE"],
              "4.1: SECINFO consumes the current file handle")
        st, r = t.call([putfh(root), secinfo_no_name(0), noargs("GETFH")])
        check(r[1][1] == 0 and r[1][2] == [AUTH_SYS] and r[2][1] == ERR["NOFILEHANDLE"],
              "SECINFO_NO_NAME (current) gives AUTH_SYS and consumes the file handle")
        st, r = t.call([putfh(sub), secinfo_no_name(1)])
        check(st == 0 and r[-1][2] == [AUTH_SYS], "SECINFO_NO_NAME (parent)")
        t.expect([putfh(root), secinfo_no_name(1)], "NOENT", "SECINFO_NO_NAME parent of root")
        t.expect([putfh(root), secinfo_no_name(7)], "INVAL", "SECINFO_NO_NAME style 7")
    else:
        check(r[-1][0] == OP["GETFH"] and r[-1][1] == 0 and r[-1][2] == root,
              "4.0: SECINFO keeps the current file handle")
    t.expect([putfh(root), secinfo("nope")], "NOENT", "SECINFO of a missing name")
    t.expect([putfh(root), secinfo("..")], "BADNAME", "SECINFO of '..'")
    t.expect([putfh(root), lookup("file"), secinfo("x")], "NOTDIR", "SECINFO in a file")

    # CREATE
    fresh(D, "nd", "sgid", "lnk", "fifo", "sock", "chr", "blk", "nomode", "reg")
    st, r = t.call([putfh(root), create(NF4DIR, "nd", mode=0o751), noargs("GETFH")])
    check(st == 0, "CREATE of a directory (%s)" % errname(st))
    if st == 0:
        check(stat.S_IMODE(os.stat(D + "/nd").st_mode) == 0o751,
              "CREATE: the mode is the client's, no umask")
        check(A_MODE in bits_of(r[1][2]["attrset"]), "CREATE: mode in attrset")
        check(r[2][2] == t.fh("nd"), "CREATE: the new directory is the current file handle")
        ci = r[1][2]["cinfo"]
        check(ci[1] != ci[2], "CREATE: the directory's change attribute moved")
    st, r = t.call([putfh(root), create(NF4DIR, "sgid", mode=0o2775)])
    check(st == 0 and stat.S_IMODE(os.stat(D + "/sgid").st_mode) == 0o2775,
          "CREATE of a directory with mode 02775")
    t.expect([putfh(root), create(NF4DIR, "nd", mode=0o755)], "EXIST", "CREATE of an existing name")
    t.expect([putfh(root), create(NF4DIR, "file", mode=0o755)], "EXIST", "CREATE over a file")
    t.expect([putfh(root), create(NF4REG, "reg", mode=0o644)], "BADTYPE", "CREATE of NF4REG")
    t.expect([putfh(root), create(9, "reg", mode=0o644)], "BADTYPE", "CREATE of NF4NAMEDATTR")
    t.expect([putfh(root), create(NF4DIR, "..", mode=0o755)], "BADNAME", "CREATE of '..'")
    t.expect([putfh(root), create(NF4DIR, "", mode=0o755)], "INVAL", "CREATE of an empty name")
    t.expect([putfh(root), lookup("file"), create(NF4DIR, "x", mode=0o755)], "NOTDIR",
             "CREATE in a file")
    st, r = t.call([putfh(root), create(NF4LNK, "lnk", link="some/where/../x"),
                    noargs("READLINK")])
    check(st == 0 and r[-1][2] == b"some/where/../x", "CREATE of a symlink, READLINK of it")
    check(os.path.islink(D + "/lnk") and os.readlink(D + "/lnk") == "some/where/../x",
          "the symlink is in the directory")
    t.expect([putfh(root), create(NF4LNK, "lnk2", link="")], "INVAL",
             "CREATE of a symlink to ''")
    st, r = t.call([putfh(root), create(NF4FIFO, "fifo", mode=0o640)])
    check(st == 0 and stat.S_ISFIFO(os.lstat(D + "/fifo").st_mode) and
          stat.S_IMODE(os.lstat(D + "/fifo").st_mode) == 0o640, "CREATE of a FIFO")
    st, r = t.call([putfh(root), create(NF4SOCK, "sock", mode=0o600)])
    check(st == 0 and stat.S_ISSOCK(os.lstat(D + "/sock").st_mode), "CREATE of a socket")
    st, r = t.call([putfh(root), create(NF4CHR, "chr", spec=(1, 3), mode=0o600)])
    check(st == 0 and stat.S_ISCHR(os.lstat(D + "/chr").st_mode) and
          os.lstat(D + "/chr").st_rdev == os.makedev(1, 3), "CREATE of a character device 1,3")
    st, r = t.call([putfh(root), create(NF4BLK, "blk", spec=(7, 0), mode=0o600)])
    check(st == 0 and stat.S_ISBLK(os.lstat(D + "/blk").st_mode), "CREATE of a block device")
    st, r = t.call([putfh(root), create(NF4DIR, "nomode")])
    check(st == 0 and stat.S_IMODE(os.stat(D + "/nomode").st_mode) == 0,
          "CREATE without a mode gives mode 0 (as nfsd)")

    # READLINK
    bad = "WRONG_TYPE" if v41 else "INVAL"
    t.expect([putfh(root), noargs("READLINK")], bad, "READLINK of a directory")
    t.expect([putfh(root), lookup("file"), noargs("READLINK")], bad, "READLINK of a file")
    st, r = t.call([putfh(root), lookup("slink"), noargs("READLINK")])
    check(st == 0 and r[-1][2] == b"file", "READLINK of a symlink")

    # REMOVE
    fresh(D, "victim")
    open(D + "/victim", "w").close()
    vfh = t.fh("victim")
    st, r = t.call([putfh(root), remove("victim")])
    check(st == 0 and not os.path.lexists(D + "/victim"), "REMOVE of a file")
    t.expect([putfh(vfh), noargs("GETFH")], "STALE", "the removed file's handle is stale")
    t.expect([putfh(root), remove("victim")], "NOENT", "REMOVE of a missing name")
    t.expect([putfh(root), remove("full")], "NOTEMPTY", "REMOVE of a non-empty directory")
    t.expect([putfh(root), remove("nd")], "OK", "REMOVE of an empty directory")
    check(not os.path.exists(D + "/nd"), "the directory is gone")
    t.expect([putfh(root), remove(".")], "BADNAME", "REMOVE of '.'")
    t.expect([putfh(root), remove("lnk")], "OK", "REMOVE of a symlink")
    t.expect([putfh(root), lookup("file"), remove("x")], "NOTDIR", "REMOVE in a file")

    # RENAME
    fresh(D, "r1", "r2", "rd1", "rd2", "rdfull", "hl1")
    with open(D + "/r1", "w") as f:
        f.write("r1")
    for n in ("rd1", "rd2", "rdfull"):
        os.mkdir(D + "/" + n)
    open(D + "/rdfull/y", "w").close()
    t.expect([putfh(root), rename("r1", "r2")], "NOFILEHANDLE", "RENAME without a saved handle")
    st, r = t.call([putfh(root), noargs("SAVEFH"), rename("r1", "r2")])
    check(st == 0 and os.path.exists(D + "/r2") and not os.path.exists(D + "/r1"),
          "RENAME of a file")
    t.expect([putfh(root), noargs("SAVEFH"), rename("rd1", "r2")], "EXIST",
             "RENAME of a directory onto a file")
    t.expect([putfh(root), noargs("SAVEFH"), rename("r2", "rd1")], "EXIST",
             "RENAME of a file onto a directory")
    t.expect([putfh(root), noargs("SAVEFH"), rename("rd1", "rdfull")], "EXIST",
             "RENAME of a directory onto a non-empty one")
    t.expect([putfh(root), noargs("SAVEFH"), rename("rd1", "rd2")], "OK",
             "RENAME of a directory onto an empty one")
    check(os.path.isdir(D + "/rd2") and not os.path.exists(D + "/rd1"), "rd1 replaced rd2")
    t.expect([putfh(root), noargs("SAVEFH"), rename("rd2", "..")], "BADNAME", "RENAME to '..'")
    t.expect([putfh(root), noargs("SAVEFH"), rename("..", "x")], "BADNAME", "RENAME from '..'")
    t.expect([putfh(root), noargs("SAVEFH"), rename("nonexist", "zz")], "NOENT",
             "RENAME of a missing name")
    t.expect([putfh(root), noargs("SAVEFH"), putfh(sub), rename("r2", "r2")], "OK",
             "RENAME into another directory")
    check(os.path.exists(D + "/sub/r2"), "the file moved")
    t.expect([putfh(sub), noargs("SAVEFH"), putfh(root), rename("r2", "r1")], "OK",
             "RENAME back")
    os.link(D + "/r1", D + "/hl1")
    st, r = t.call([putfh(root), noargs("SAVEFH"), rename("r1", "hl1")])
    check(st == 0 and os.path.exists(D + "/r1") and os.path.exists(D + "/hl1"),
          "RENAME onto another link of the same file does nothing")
    if st == 0:
        (_, b1, a1), (_, b2, a2) = r[-1][2]
        check(b1 == a1 and b2 == a2, "... and the change attributes do not move")
    st, r = t.call([putfh(root), noargs("SAVEFH"), rename("r1", "r1")])
    check(st == 0 and os.path.exists(D + "/r1"), "RENAME onto itself")
    t.expect([putfh(root), lookup("file"), noargs("SAVEFH"), putfh(root), rename("a", "b")],
             "NOTDIR", "RENAME from a file as source directory")
    t.expect([putfh(root), noargs("SAVEFH"), putfh(sub), rename("sub", "inside")], "INVAL",
             "RENAME of a directory into itself")

    # LINK
    fresh(D, "l1", "l2", "ls")
    t.expect([putfh(root), link("l1")], "NOFILEHANDLE", "LINK without a saved handle")
    st, r = t.call([putfh(root), lookup("file"), noargs("SAVEFH"), putfh(root), link("l1"),
                    noargs("GETFH")])
    check(st == 0 and os.stat(D + "/l1").st_ino == os.stat(D + "/file").st_ino,
          "LINK of a file")
    check(st == 0 and r[-1][2] == root, "LINK leaves the directory current")
    t.expect([putfh(root), lookup("file"), noargs("SAVEFH"), putfh(root), link("l1")], "EXIST",
             "LINK to an existing name")
    t.expect([putfh(root), lookup("sub"), noargs("SAVEFH"), putfh(root), link("l2")], "ISDIR",
             "LINK of a directory")
    st, r = t.call([putfh(root), lookup("slink"), noargs("SAVEFH"), putfh(root), link("ls")])
    check(st == 0 and os.path.islink(D + "/ls") and
          os.lstat(D + "/ls").st_ino == os.lstat(D + "/slink").st_ino,
          "LINK of a symlink links the symlink itself")
    t.expect([putfh(root), lookup("file"), noargs("SAVEFH"), putfh(root), link("..")],
             "BADNAME", "LINK to '..'")
    t.expect([putfh(root), lookup("file"), noargs("SAVEFH"), link("z")], "NOTDIR",
             "LINK into a file")


# ---------------------------------------------------------------- readdir
def readdir_checks(t, D, nfiles):
    big = D + "/many"
    os.makedirs(big, exist_ok=True)
    want = set()
    for i in range(nfiles):
        n = "f%05d_%s" % (i, "x" * (i % 40))
        want.add(n)
        if not os.path.exists(os.path.join(big, n)):
            open(os.path.join(big, n), "w").close()
    for n in os.listdir(big):
        if n not in want:
            os.unlink(os.path.join(big, n))
    dfh = t.fh("many")

    def walk(maxcount, dircount=0, attrs=(A_TYPE, A_FILEID)):
        cookie, verf, names, cookies, calls = 0, b"\0" * 8, [], [], 0
        while calls < 100000:
            st, r = t.call([putfh(dfh), readdir(cookie, verf, dircount, maxcount, attrs)])
            calls += 1
            if st:
                return None, errname(st), calls
            res = r[-1][2]
            verf = res["verf"]
            for ck, nm, fa in res["entries"]:
                names.append(nm.decode())
                cookies.append(ck)
            if res["eof"]:
                return names, cookies, calls
            if not res["entries"]:
                return None, "neither entries nor eof", calls
            cookie = res["entries"][-1][0]
        return None, "no end", calls

    for mc in (1000, 8192, 32768, 1000000):
        got, cookies, calls = walk(mc)
        check(got is not None and len(got) == nfiles and set(got) == want,
              "READDIR, maxcount %d: all %d names once, in %d calls (%s)" %
              (mc, nfiles, calls, "" if got else cookies))
        if got:
            check(all(ck > 2 for ck in cookies) and len(set(cookies)) == len(cookies),
                  "READDIR, maxcount %d: cookies past 2, all different" % mc)
    got, _, calls = walk(32768, dircount=512)
    check(got is not None and set(got) == want, "READDIR, dircount 512 (%d calls)" % calls)
    got, _, calls = walk(32768, attrs=())
    check(got is not None and set(got) == want, "READDIR without attributes (%d calls)" % calls)
    got, _, calls = walk(65536, attrs=(A_TYPE, A_RDATTR_ERROR, A_SIZE, A_FILEHANDLE, A_FILEID,
                                       A_MODE, A_NUMLINKS, 36, 37, 53, A_MOUNTED_ON_FILEID))
    check(got is not None and set(got) == want,
          "READDIR with the attributes of a Linux client (%d calls)" % calls)

    st, r = t.call([putfh(dfh), readdir(0, b"\0" * 8, 0, 4000)])
    res = r[-1][2]
    first = [e[1] for e in res["entries"]]
    mid = len(first) // 2
    st, r = t.call([putfh(dfh), readdir(res["entries"][mid][0], res["verf"], 0, 4000)])
    check(st == 0 and [e[1] for e in r[-1][2]["entries"]][:3] == first[mid + 1:mid + 4],
          "READDIR from a cookie goes on after its entry")
    verf, ck = res["verf"], res["entries"][mid][0]
    check(verf != b"\0" * 8, "the cookie verifier is not zero")
    st, r = t.call([putfh(dfh), readdir(0, b"\0" * 8, 0, 4000)])
    check(st == 0 and r[-1][2]["verf"] == verf, "the cookie verifier is stable")
    t.expect([putfh(dfh), readdir(ck, bytes([verf[0] ^ 1]) + verf[1:], 0, 4000)], "NOT_SAME",
             "READDIR with another verifier")
    t.expect([putfh(dfh), readdir(ck, b"\0" * 8, 0, 4000)], "OK",
             "READDIR with a cookie and a zero verifier")
    for bad in (1, 2, 0x8000000000000005):
        t.expect([putfh(dfh), readdir(bad, b"\0" * 8, 0, 4000)], "BAD_COOKIE",
                 "READDIR from cookie %#x" % bad)
    t.expect([putfh(dfh), readdir(0, b"\0" * 8, 0, 40)], "TOOSMALL", "READDIR, maxcount 40")
    t.expect([putfh(dfh), readdir(0, b"\0" * 8, 0, 10)], "TOOSMALL", "READDIR, maxcount 10")
    st, r = t.call([putfh(dfh), readdir(0, b"\0" * 8, 1, 100000)])
    check(st == 0 and len(r[-1][2]["entries"]) == 1, "READDIR, dircount 1: one entry")
    t.expect([putfh(dfh), readdir(0, b"\0" * 8, 0, 4000, attrs=(A_TIME_ACCESS_SET,))], "INVAL",
             "READDIR asking for time_access_set")
    t.expect([putfh(dfh), lookup(sorted(want)[0]), readdir()], "NOTDIR", "READDIR of a file")
    os.makedirs(D + "/emptydir", exist_ok=True)
    st, r = t.call([noargs("PUTROOTFH"), lookup("emptydir"), readdir(0, b"\0" * 8, 0, 16)])
    check(st == 0 and r[-1][2]["entries"] == [] and r[-1][2]["eof"] == 1,
          "READDIR of an empty directory with maxcount 16: eof")
    got, cookies, _ = walk(1000000)
    if got:
        st, r = t.call([putfh(dfh), readdir(cookies[-1], b"\0" * 8, 0, 4000)])
        check(st == 0 and r[-1][2]["entries"] == [] and r[-1][2]["eof"] == 1,
              "READDIR from the last cookie: eof, no entries")
    # entries the caller cannot look up: rdattr_error, or the READDIR fails
    fresh(D, "noexec")
    os.mkdir(D + "/noexec")
    open(D + "/noexec/a", "w").close()
    os.chmod(D + "/noexec", 0o444)
    u = T(t.port, t.minor, uid=4242, gid=4242)
    st, r = u.call([noargs("PUTROOTFH"), lookup("noexec"),
                    readdir(attrs=(A_TYPE, A_RDATTR_ERROR, A_FILEID))])
    check(st == 0 and [(e[1], e[2][1]) for e in r[-1][2]["entries"]] ==
          [(b"a", u32(ERR["ACCESS"]))],
          "READDIR without search permission: rdattr_error ACCESS (%s)" % errname(st))
    u.expect([noargs("PUTROOTFH"), lookup("noexec"), readdir(attrs=(A_TYPE, A_FILEID))],
             "ACCESS", "... and without rdattr_error the READDIR fails")
    st, r = u.call([noargs("PUTROOTFH"), lookup("noexec"), readdir(attrs=())])
    check(st == 0 and [e[1] for e in r[-1][2]["entries"]] == [b"a"],
          "... and without attributes the names are listed")
    os.chmod(D + "/noexec", 0o755)
    if t.minor >= 1:
        s = T(t.port, t.minor)
        s.c = Conn(t.port, t.minor, maxresp=4096)
        st, r = s.call([putfh(dfh), readdir(0, b"\0" * 8, 0, 1000000)])
        check(st == 0 and 0 < len(r[-1][2]["entries"]) < nfiles and not r[-1][2]["eof"],
              "READDIR, maxcount 1000000 in a session of 4096-byte replies: a short list")


# ---------------------------------------------------------------- pseudo
def pseudo(t, parent, expname, other):
    comps = [p for p in parent.split("/") if p]

    def ls(path, attrs=(A_TYPE, A_FILEID, A_MOUNTED_ON_FILEID), mc=4096):
        ops = [noargs("PUTROOTFH")] + [lookup(p) for p in path]
        st, r = t.call(ops + [readdir(0, b"\0" * 8, 0, mc, attrs)])
        if st:
            return errname(st)
        return sorted(e[1].decode() for e in r[-1][2]["entries"]), r[-1][2]["eof"]

    for i, c in enumerate(comps):
        got = ls(comps[:i])
        check(got == ([c], 1), "pseudo directory /%s lists %s (%s)" %
              ("/".join(comps[:i]), c, got))
    top = comps[0]
    check(ls(comps) == ([expname], 1),
          "a pseudo directory lists the exports the client may reach, not %s (%s)" %
          (other, ls(comps)))
    check(ls(comps, attrs=()) == ([expname], 1), "... also without attributes")
    check(ls(comps, mc=20) == "TOOSMALL", "... and says TOOSMALL for maxcount 20")
    down = [noargs("PUTROOTFH")] + [lookup(p) for p in comps]
    st, r = t.call(down + [lookup(expname)] + [noargs("LOOKUPP")] * (len(comps) + 1) +
                   [noargs("GETFH")])
    st2, r2 = t.call([noargs("PUTROOTFH"), noargs("GETFH")])
    check(st == 0 and r[-1][2] == r2[-1][2],
          "LOOKUPP from an export's root goes up the pseudo tree to the root")
    t.expect([noargs("PUTROOTFH"), noargs("LOOKUPP")], "NOENT", "LOOKUPP at the pseudo root")
    t.expect([noargs("PUTROOTFH"), create(NF4DIR, "x", mode=0o755)], "ROFS",
             "CREATE in a pseudo directory")
    t.expect([noargs("PUTROOTFH"), remove(top)], "ROFS", "REMOVE in a pseudo directory")
    t.expect([noargs("PUTROOTFH"), noargs("SAVEFH"), rename(top, "y")], "ROFS",
             "RENAME in a pseudo directory")
    t.expect([noargs("PUTROOTFH"), lookup("nothere")], "NOENT",
             "LOOKUP of a missing pseudo name")
    t.expect([noargs("PUTROOTFH"), lookup(".")], "BADNAME", "LOOKUP of '.' in the pseudo root")
    st, r = t.call([noargs("PUTROOTFH"), secinfo(top)])
    check(st == 0 and AUTH_SYS in r[-1][2], "SECINFO in the pseudo root (%s)" %
          (r[-1][2] if st == 0 else errname(st)))
    st, r = t.call(down + [secinfo(expname)])
    check(st == 0 and r[-1][2] == [AUTH_SYS], "SECINFO of an export from its pseudo parent")
    t.expect(down + [secinfo(other)], "ACCESS", "SECINFO of an export the client may not reach")
    t.expect(down + [lookup(expname), readdir()], "OK",
             "READDIR of an export's root reached through the pseudo tree")


def main(argv):
    minor = 0
    args = list(argv[1:])
    if "--minor" in args:
        i = args.index("--minor")
        minor = int(args[i + 1])
        del args[i:i + 2]
    nfiles = 5000
    if "--files" in args:
        i = args.index("--files")
        nfiles = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 3:
        print(__doc__ or "usage: see the header", file=sys.stderr)
        return 2
    t = T(int(args[1]), minor)
    if args[0] == "names":
        names(t, args[2])
    elif args[0] == "readdir":
        readdir_checks(t, args[2], nfiles)
    elif args[0] == "pseudo" and len(args) == 5:
        pseudo(t, args[2], args[3], args[4])
    else:
        print("usage: lt_nfs4_names.py names|readdir PORT DIR | pseudo PORT PARENT EXP OTHER",
              file=sys.stderr)
        return 2
    print("# %d checks, %d failed" % (checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
