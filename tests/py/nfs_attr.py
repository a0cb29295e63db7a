#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# NFSv4.0 attribute checks against a running lacunad, with raw COMPOUNDs
# over TCP (AUTH_SYS as any uid, byte-exact control of what is sent):
#
#   nfs_attr.py PORT DIR
#
# DIR is the exported directory (the root clients see), prepared by
# tests/integ/nfs_attr.sh. Checked: GETATTR of every supported attribute
# of each file type against lstat(2)/statvfs(3) of the same file, the
# fattr4 layout (bitmap of what was asked and supported, an opaque that
# holds exactly the values); write-only and unknown attributes; SETATTR
# of size, mode, owners and times, attrsset on success and on every
# error, and its refusals (BADOWNER, INVAL, ATTRNOTSUPP, BADXDR, ISDIR,
# PERM/ACCESS for another user); ACCESS for three users; VERIFY and
# NVERIFY. Prints one "ok DESCRIPTION" or "FAIL DESCRIPTION" line per
# check; exits 0 when every check passed, 1 otherwise, 99 on a protocol
# error that stops the checks.
import os
import random
import stat
import struct
import sys

from lt_nfs4raw import Checks, check, connect

OP_ACCESS, OP_GETATTR, OP_GETFH, OP_LOOKUP, OP_NVERIFY = 3, 9, 10, 15, 17
OP_PUTROOTFH, OP_SETATTR, OP_VERIFY = 24, 34, 37
NFS4_OK, PERM, ACCESS, ISDIR, INVAL = 0, 1, 13, 21, 22
SAME, NOT_SAME, ATTRNOTSUPP, BADXDR, BADOWNER = 10009, 10027, 10032, 10036, 10039



def p32(v):
    return struct.pack(">I", v & 0xffffffff)


def p64(v):
    return struct.pack(">Q", v & 0xffffffffffffffff)


def pop(b):
    return p32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def bm_of(attrs):
    w = [0, 0, 0]
    for a in attrs:
        w[a // 32] |= 1 << (a % 32)
    while w and not w[-1]:
        w.pop()
    return w


def pbm(words):
    return p32(len(words)) + b"".join(p32(x) for x in words)


class Rd:
    def __init__(self, b):
        self.b, self.p = b, 0

    def u32(self):
        v = struct.unpack_from(">I", self.b, self.p)[0]
        self.p += 4
        return v

    def u64(self):
        v = struct.unpack_from(">Q", self.b, self.p)[0]
        self.p += 8
        return v

    def i64(self):
        v = struct.unpack_from(">q", self.b, self.p)[0]
        self.p += 8
        return v

    def opaque(self):
        n = self.u32()
        v = self.b[self.p:self.p + n]
        if len(v) != n:
            raise struct.error("opaque past the end")
        self.p += n + (4 - n % 4) % 4
        return v

    def bitmap(self):
        return [self.u32() for _ in range(self.u32())]

    def left(self):
        return len(self.b) - self.p


class Conn:
    def __init__(self, port, uid=0, gid=0):
        self.sk = connect("127.0.0.1", port, timeout=30)
        self.uid, self.gid = uid, gid
        self.xid = random.randint(1, 1 << 30)

    def _rx(self, n):
        b = b""
        while len(b) < n:
            c = self.sk.recv(n - len(b))
            if not c:
                raise EOFError("connection closed")
            b += c
        return b

    def compound(self, ops):
        """Returns [(opnum, status, Rd of the op's results)], the results of
        one op read by the caller through the reader before the next."""
        self.xid += 1
        cred = p32(0) + pop(b"nfs_attr") + p32(self.uid) + p32(self.gid) + p32(0)
        msg = p32(self.xid) + p32(0) + p32(2) + p32(100003) + p32(4) + p32(1)
        msg += p32(1) + pop(cred) + p32(0) + p32(0)
        msg += pop(b"") + p32(0) + p32(len(ops)) + b"".join(ops)
        self.sk.sendall(p32(0x80000000 | len(msg)) + msg)
        data = b""
        while True:
            n = struct.unpack(">I", self._rx(4))[0]
            data += self._rx(n & 0x7fffffff)
            if n & 0x80000000:
                break
        r = Rd(data)
        if r.u32() != self.xid or r.u32() != 1 or r.u32() != 0:
            raise RuntimeError("not an accepted reply")
        r.u32()
        r.opaque()
        if r.u32() != 0:
            raise RuntimeError("RPC not executed")
        r.u32()
        r.opaque()
        return r, r.u32()


def putrootfh():
    return p32(OP_PUTROOTFH)


def lookup(name):
    return p32(OP_LOOKUP) + pop(name.encode())


def getattr_w(words):
    return p32(OP_GETATTR) + pbm(words)


def getfh():
    return p32(OP_GETFH)


def access(bits):
    return p32(OP_ACCESS) + p32(bits)


def setattr_w(words, vals):
    return p32(OP_SETATTR) + b"\0" * 16 + pbm(words) + pop(vals)


def verify(attrs, vals, negate=False):
    return p32(OP_NVERIFY if negate else OP_VERIFY) + pbm(bm_of(attrs)) + pop(vals)


def path_ops(path):
    return [putrootfh()] + [lookup(c) for c in path.split("/") if c]


# attribute numbers and how to decode each
U32, U64, BOOL, TIME, STR, BITMAP = "u32", "u64", "bool", "time", "str", "bitmap"
ATTRS = {
    0: ("supported_attrs", BITMAP), 1: ("type", U32), 2: ("fh_expire_type", U32),
    3: ("change", U64), 4: ("size", U64), 5: ("link_support", BOOL),
    6: ("symlink_support", BOOL), 7: ("named_attr", BOOL), 8: ("fsid", "fsid"),
    9: ("unique_handles", BOOL), 10: ("lease_time", U32), 11: ("rdattr_error", U32),
    13: ("aclsupport", U32), 15: ("cansettime", BOOL), 16: ("case_insensitive", BOOL),
    17: ("case_preserving", BOOL), 18: ("chown_restricted", BOOL), 19: ("filehandle", "fh"),
    20: ("fileid", U64), 21: ("files_avail", U64), 22: ("files_free", U64),
    23: ("files_total", U64), 26: ("homogeneous", BOOL), 27: ("maxfilesize", U64),
    28: ("maxlink", U32), 29: ("maxname", U32), 30: ("maxread", U64), 31: ("maxwrite", U64),
    33: ("mode", U32), 34: ("no_trunc", BOOL), 35: ("numlinks", U32), 36: ("owner", STR),
    37: ("owner_group", STR), 41: ("rawdev", "specdata"), 42: ("space_avail", U64),
    43: ("space_free", U64), 44: ("space_total", U64), 45: ("space_used", U64),
    47: ("time_access", TIME), 51: ("time_delta", TIME), 52: ("time_metadata", TIME),
    53: ("time_modify", TIME), 55: ("mounted_on_fileid", U64),
}
WRITE_ONLY = (48, 54)  # time_access_set, time_modify_set


def decode_fattr(r):
    """A fattr4 at r: (bitmap words, {name: value}, bytes left in attr_vals)."""
    words = r.bitmap()
    v = Rd(r.opaque())
    d = {}
    for a in range(32 * len(words)):
        if not words[a // 32] >> (a % 32) & 1:
            continue
        if a not in ATTRS:
            raise RuntimeError("attribute %d returned but not asked for" % a)
        name, kind = ATTRS[a]
        if kind == U32:
            d[name] = v.u32()
        elif kind == U64:
            d[name] = v.u64()
        elif kind == BOOL:
            d[name] = v.u32()
        elif kind == TIME:
            d[name] = (v.i64(), v.u32())
        elif kind == STR:
            d[name] = v.opaque().decode()
        elif kind == BITMAP:
            d[name] = v.bitmap()
        elif kind == "fsid":
            d[name] = (v.u64(), v.u64())
        elif kind == "fh":
            d[name] = v.opaque()
        elif kind == "specdata":
            d[name] = (v.u32(), v.u32())
    return words, d, v.left()


def ops_ok(r, n, upto):
    """Read the results of the first @upto ops, which carry none (PUTROOTFH, LOOKUP)."""
    for _ in range(upto):
        r.u32()
        st = r.u32()
        if st != NFS4_OK:
            return st
    return NFS4_OK


def getattr_of(c, path, attrs):
    ops = path_ops(path)
    r, n = c.compound(ops + [getattr_w(bm_of(attrs)), getfh()])
    st = ops_ok(r, n, len(ops))
    if st != NFS4_OK:
        raise RuntimeError("%s: %d" % (path, st))
    r.u32()
    if r.u32() != NFS4_OK:
        raise RuntimeError("GETATTR %s failed" % path)
    words, d, left = decode_fattr(r)
    r.u32()
    r.u32()
    fh = r.opaque()
    return words, d, left, fh, r.left()


def run_one(c, path, op):
    """Status of @op after the lookups of @path, and a reader at its results."""
    ops = path_ops(path)
    r, n = c.compound(ops + [op])
    st = ops_ok(r, n, len(ops))
    if st != NFS4_OK:
        raise RuntimeError("%s: %d" % (path, st))
    if n != len(ops) + 1:
        raise RuntimeError("%d results for %d ops" % (n, len(ops) + 1))
    r.u32()
    return r.u32(), r


def ftype(mode):
    return {stat.S_IFREG: 1, stat.S_IFDIR: 2, stat.S_IFBLK: 3, stat.S_IFCHR: 4,
            stat.S_IFLNK: 5, stat.S_IFSOCK: 6, stat.S_IFIFO: 7}[stat.S_IFMT(mode)]


def t_getattr(c, root):
    every = sorted(ATTRS)
    vfs = os.statvfs(root)
    fsid = None
    for path in ("", "file", "link", "fifo", "cdev", "sub", "sub/deep"):
        what = "/" + path
        words, d, left, fh, rest = getattr_of(c, path, every)
        st = os.lstat(os.path.join(root, path))
        check("GETATTR %s: nothing after the values in attr_vals" % what, left == 0, left)
        check("GETATTR %s: nothing after the COMPOUND" % what, rest == 0, rest)
        check("GETATTR %s: bitmap is what was asked, supported" % what,
              words == bm_of(every), words)
        check("GETATTR %s: type" % what, d["type"] == ftype(st.st_mode), d["type"])
        check("GETATTR %s: size" % what, d["size"] == st.st_size, (d["size"], st.st_size))
        check("GETATTR %s: fileid" % what, d["fileid"] == st.st_ino)
        check("GETATTR %s: mounted_on_fileid (no mount below the root)" % what,
              d["mounted_on_fileid"] == st.st_ino)
        check("GETATTR %s: mode" % what, d["mode"] == stat.S_IMODE(st.st_mode), oct(d["mode"]))
        check("GETATTR %s: numlinks" % what, d["numlinks"] == st.st_nlink)
        check("GETATTR %s: owner" % what, d["owner"] == str(st.st_uid), d["owner"])
        check("GETATTR %s: owner_group" % what, d["owner_group"] == str(st.st_gid),
              d["owner_group"])
        check("GETATTR %s: rawdev" % what,
              d["rawdev"] == (os.major(st.st_rdev), os.minor(st.st_rdev)), d["rawdev"])
        check("GETATTR %s: space_used" % what, d["space_used"] == st.st_blocks * 512)
        check("GETATTR %s: time_access" % what,
              d["time_access"] == divmod(st.st_atime_ns, 10**9), d["time_access"])
        check("GETATTR %s: time_modify" % what,
              d["time_modify"] == divmod(st.st_mtime_ns, 10**9), d["time_modify"])
        check("GETATTR %s: time_metadata" % what,
              d["time_metadata"] == divmod(st.st_ctime_ns, 10**9), d["time_metadata"])
        check("GETATTR %s: change follows ctime" % what, d["change"] == st.st_ctime_ns)
        check("GETATTR %s: filehandle is GETFH's" % what, d["filehandle"] == fh)
        if fsid is None:
            fsid = d["fsid"]
        check("GETATTR %s: one fsid in the export" % what, d["fsid"] == fsid, d["fsid"])
        check("GETATTR %s: space_total" % what,
              d["space_total"] == vfs.f_blocks * vfs.f_frsize, d["space_total"])
        check("GETATTR %s: files_total" % what, d["files_total"] == vfs.f_files)
        consts = dict(fh_expire_type=0, link_support=1, symlink_support=1, named_attr=0,
                      unique_handles=1, rdattr_error=0, aclsupport=0, cansettime=1,
                      case_insensitive=0, case_preserving=1, chown_restricted=1,
                      homogeneous=1, maxname=255, maxread=1 << 20, maxwrite=1 << 20,
                      no_trunc=1, time_delta=(0, 1))
        bad = {k: d[k] for k in consts if d[k] != consts[k]}
        check("GETATTR %s: constant attributes" % what, not bad, bad)
        check("GETATTR %s: maxlink, maxfilesize" % what,
              d["maxlink"] >= 255 and d["maxfilesize"] >= 1 << 40)
        sup = d["supported_attrs"]
        check("GETATTR %s: supported_attrs holds what was returned, no 4.1 ones" % what,
              all(sup[a // 32] >> (a % 32) & 1 for a in every)
              and (len(sup) < 3 or sup[2] == 0) and not sup[1] >> (62 - 32) & 1, sup)
    lt = int(os.environ.get("NFS_ATTR_LEASE", "0"))
    if lt:
        words, d, _, _, _ = getattr_of(c, "", [10])
        check("GETATTR: lease_time is the server's", d["lease_time"] == lt, d["lease_time"])


def t_getattr_odd(c):
    st, _ = run_one(c, "file", getattr_w(bm_of([4, 54])))
    check("GETATTR of a write-only attribute: INVAL", st == INVAL, st)
    st, r = run_one(c, "file", getattr_w([1 << 4, 0, 1 << 31, 0xffffffff, 0, 0, 0, 1]))
    ok = st == NFS4_OK
    if ok:
        words, d, left = decode_fattr(r)
        ok = words == [1 << 4] and left == 0
    check("GETATTR: unknown attributes are left out", ok, st)
    st, _ = run_one(c, "file", p32(OP_GETATTR) + p32(9) + p32(0) * 9)
    check("GETATTR of a 9-word bitmap: OK (nothing unknown asked is an error)",
          st == NFS4_OK, st)
    st, _ = run_one(c, "file", p32(OP_GETATTR) + p32(1025) + p32(0) * 1025)
    check("GETATTR of a 1025-word bitmap: BADXDR", st == BADXDR, st)


def setattr(c, path, words, vals):
    st, r = run_one(c, path, setattr_w(words, vals))
    try:
        got = r.bitmap()
    except struct.error:
        got = None
    return st, got


def t_setattr(c, u1000, root):
    f = os.path.join(root, "s")
    # size, mode, client atime, server mtime
    vals = p64(10) + p32(0o600) + p32(1) + p64(1000) + p32(5) + p32(0)
    st, got = setattr(c, "s", bm_of([4, 33, 48, 54]), vals)
    s = os.stat(f)
    check("SETATTR size, mode, times: OK", st == NFS4_OK, st)
    check("SETATTR: attrsset is every attribute", got == bm_of([4, 33, 48, 54]), got)
    check("SETATTR: size", s.st_size == 10, s.st_size)
    check("SETATTR: mode", stat.S_IMODE(s.st_mode) == 0o600, oct(s.st_mode))
    check("SETATTR: client time", s.st_atime_ns == 1000 * 10**9 + 5, s.st_atime_ns)
    check("SETATTR: server time", s.st_mtime_ns > 1000 * 10**9 + 5, s.st_mtime_ns)
    st, got = setattr(c, "s", bm_of([36, 37]), pop(b"1234@example.org") + pop(b"55"))
    s = os.stat(f)
    check("SETATTR owner 1234@domain, group 55", st == NFS4_OK and s.st_uid == 1234
          and s.st_gid == 55 and got == bm_of([36, 37]), (st, s.st_uid, s.st_gid))
    st, got = setattr(c, "link", bm_of([33]), p32(0o600))
    check("SETATTR mode of a symlink: OK, ignored", st == NFS4_OK and got == bm_of([33]), st)
    # another user: refused, attrsset empty
    st, got = setattr(u1000, "s", bm_of([33]), p32(0o777))
    check("SETATTR mode by another user: PERM, empty attrsset", st == PERM and got == [],
          (st, got))
    st, got = setattr(u1000, "s", bm_of([4]), p64(0))
    check("SETATTR size by another user: ACCESS, empty attrsset", st == ACCESS and got == [],
          (st, got))
    check("SETATTR by another user changed nothing", os.stat(f).st_size == 10)
    # refusals, each with attrsset
    cases = [
        ("an owner name", bm_of([36]), pop(b"alice"), BADOWNER),
        ("owner 4294967295", bm_of([36]), pop(b"4294967295"), BADOWNER),
        ("a read-only attribute (type)", bm_of([1]), p32(1), INVAL),
        ("a read-only attribute (fileid) with mode", bm_of([20, 33]), p64(1) + p32(0o644),
         INVAL),
        ("nseconds of 10^9", bm_of([54]), p32(1) + p64(1) + p32(10**9), INVAL),
        ("an unsupported attribute (acl)", bm_of([12]), p32(0), ATTRNOTSUPP),
        ("a bit of word 4", [0, 0, 0, 0, 1], b"", ATTRNOTSUPP),
        ("a value cut short", bm_of([4]), p32(0), BADXDR),
        ("bytes after the values", bm_of([33]), p32(0o644) + p32(0), BADXDR),
        ("time_how4 2", bm_of([48]), p32(2), BADXDR),
    ]
    for desc, words, vals, want in cases:
        st, got = setattr(c, "s", words, vals)
        check("SETATTR with %s: %d, empty attrsset" % (desc, want), st == want and got == [],
              (st, got))
    st, got = setattr(c, "sub", bm_of([4]), p64(0))
    check("SETATTR size of a directory: ISDIR", st == ISDIR and got == [], (st, got))
    s = os.stat(f)
    check("refused SETATTRs changed nothing", s.st_size == 10 and s.st_uid == 1234
          and stat.S_IMODE(s.st_mode) == 0o600)


def t_access(c, u1000, u2000):
    R, L, M, E, D, X = 1, 2, 4, 8, 0x10, 0x20
    want = [  # who, path, supported, access
        (c, "root", "file", R | M | E | X, R | M | E),
        (u1000, "u1000", "file", R | M | E | X, R | M | E),
        (u2000, "u2000", "file", R | M | E | X, 0),
        (c, "root", "sub", R | L | M | E | D, R | L | M | E | D),
        (u1000, "u1000", "sub", R | L | M | E | D, R | L),
        (u1000, "u1000", "mine", R | L | M | E | D, R | L | M | E | D),
        (u2000, "u2000", "mine", R | L | M | E | D, 0),
        (c, "root", "exe", R | M | E | X, R | M | E | X),
        (u2000, "u2000", "exe", R | M | E | X, R | X),
    ]
    for conn, who, path, sup, acc in want:
        st, r = run_one(conn, path, access(0x3f))
        got = (r.u32(), r.u32()) if st == NFS4_OK else None
        check("ACCESS of /%s as %s" % (path, who), got == (sup, acc),
              "got %s, want (%#x, %#x)" % (got and tuple(hex(x) for x in got), sup, acc))
    st, _ = run_one(c, "file", access(0x200))
    check("ACCESS with an unknown bit: INVAL", st == INVAL, st)


def t_verify(c, root):
    size = os.stat(os.path.join(root, "file")).st_size
    ops = path_ops("file")
    r, n = c.compound(ops + [verify([4], p64(size)), verify([4], p64(size), True)])
    ops_ok(r, n, len(ops))
    st = [(r.u32(), r.u32()) for _ in range(n - len(ops))]
    check("VERIFY of the size: OK, then NVERIFY: SAME", st == [(OP_VERIFY, NFS4_OK),
                                                            (OP_NVERIFY, SAME)], st)
    r, n = c.compound(ops + [verify([4], p64(size + 1), True), verify([4], p64(size + 1))])
    ops_ok(r, n, len(ops))
    st = [(r.u32(), r.u32()) for _ in range(n - len(ops))]
    check("NVERIFY of another size: OK, then VERIFY: NOT_SAME",
          st == [(OP_NVERIFY, NFS4_OK), (OP_VERIFY, NOT_SAME)], st)
    for desc, attrs, want in (("rdattr_error", [11], INVAL), ("time_modify_set", [54], INVAL),
                              ("acl", [12], ATTRNOTSUPP)):
        st, _ = run_one(c, "file", verify(attrs, p32(0)))
        check("VERIFY of %s: %d" % (desc, want), st == want, st)


def main():
    port, root = int(sys.argv[1]), sys.argv[2]
    c = Conn(port)
    u1000 = Conn(port, 1000, 100)
    u2000 = Conn(port, 2000, 2000)
    try:
        t_getattr(c, root)
        t_getattr_odd(c)
        t_setattr(c, u1000, root)
        t_access(c, u1000, u2000)
        t_verify(c, root)
    except (RuntimeError, EOFError, struct.error, OSError) as e:
        print("FAIL protocol: %s" % e)
        sys.exit(99)
    sys.exit(1 if Checks.fails else 0)


if __name__ == "__main__":
    main()
