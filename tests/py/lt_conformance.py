#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# NFSv4 protocol conformance checks of lacunad with raw COMPOUNDs
# (tests/py/lt_nfs4raw.py), each the answer RFC 7530 (4.0), RFC 8881 (4.1)
# or RFC 7862 (4.2) asks for where lacunad once answered otherwise:
#
#   lt_conformance.py CHECK PORT DIR
#
# DIR is the export as the server sees it (root clients see), prepared by
# tests/integ/nfs_conformance.sh: files "file" (root's, 0600), "f-*" for
# the checks that change things, "dir", "link", "sock", "fifo", "cdev",
# "bdev". Prints one "ok DESCRIPTION" or "FAIL DESCRIPTION" line per
# assertion; exits 0 when all passed, 1 otherwise.
import os
import sys

from lt_nfs4raw import (ERR, Checks, check, A_SIZE, A_TYPE, Client, Conn, READ_LT,
                        SHARE_ACCESS_BOTH, SHARE_ACCESS_READ, SHARE_ACCESS_WRITE,
                        WRITE_LT, AUTH_NONE, close, create, deallocate, errname, getattr_,
                        lock_new, locku, lockt, lookup, noargs, open_, open_confirm, opaque,
                        putfh, read, read_plus, setattr_, setclientid, setclientid_confirm, u32,
                        u64, write, NF4DIR, OPEN4_RESULT_CONFIRM, Session)

A_OWNER, A_OWNER_GROUP = 36, 37


def fh_of(conn, name):
    st, r = conn.call([noargs("PUTROOTFH"), lookup(name), noargs("GETFH")])
    if st:
        raise SystemExit("LOOKUP %s: %s" % (name, errname(st)))
    return r[-1][2]


class Owner40:
    """A confirmed 4.0 client ID on @conn and open-owners of it."""

    def __init__(self, conn, name):
        self.c = conn
        st, r = conn.call([setclientid(b"v" * 8, name)])
        if st:
            raise SystemExit("SETCLIENTID: " + errname(st))
        self.clientid, verf = r[0][2]["clientid"], r[0][2]["verf"]
        st, _ = conn.call([setclientid_confirm(self.clientid, verf)])
        if st:
            raise SystemExit("SETCLIENTID_CONFIRM: " + errname(st))
        self.seq = {}

    def next(self, owner):
        s = self.seq.get(owner, 0)
        self.seq[owner] = s + 1
        return s

    def open(self, fh_dir, name, owner, access=SHARE_ACCESS_BOTH, deny=0):
        """(status, stateid)"""
        st, r = self.c.call([putfh(fh_dir), open_(self.next(owner), owner, self.clientid,
                                                   access, deny, name=name), noargs("GETFH")])
        if st:
            return st, None
        res = r[1][2]
        sid = res["sid"]
        if res["rflags"] & OPEN4_RESULT_CONFIRM:
            st, r = self.c.call([putfh(r[2][2]), open_confirm(sid, self.next(owner))])
            if st:
                return st, None
            sid = r[1][2]["sid"]
        return 0, sid


def root_fh(conn):
    st, r = conn.call([noargs("PUTROOTFH"), noargs("GETFH")])
    return r[1][2]


# ---------------------------------------------------------------- the checks
TYPES = ("file", "dir", "link", "sock", "fifo", "cdev", "bdev")


def c_getattr_unknown(port, d):
    for minor in (0, 1, 2):
        conn = Conn(port, minor)
        for name in TYPES:
            fh = fh_of(conn, name)
            st, r = conn.call([putfh(fh), getattr_([A_TYPE, A_SIZE, 1000])])
            got = r[-1][2] if st == 0 else None
            check("4.%d GETATTR of type, size and attribute 1000 of %s: OK, type and size"
                  % (minor, name), st == 0 and got and got[0][:1] == [(1 << A_TYPE) |
                                                                     (1 << A_SIZE)]
                  and not any(got[0][1:]), (errname(st), got and got[0]))
        fh = fh_of(conn, "f-attr")
        st, r = conn.call([putfh(fh), setattr_([1000])])
        check("4.%d SETATTR of attribute 1000: ATTRNOTSUPP" % minor,
              st == ERR["ATTRNOTSUPP"], errname(st))
        conn.client.close()


def c_drc(port, d):
    conn = Conn(port, 0)
    fh = root_fh(conn)
    ops = [putfh(fh), create(NF4DIR, "drc-dir")]
    st, _ = conn.call(ops)
    check("4.0 CREATE of a directory", st == 0, errname(st))
    xid = conn.client.last_xid
    st, _ = conn.client.call(0, ops, xid=xid)
    check("4.0 the same CREATE retransmitted (same xid, connection): the first reply",
          st == 0, errname(st))
    # a new connection from the same address and port (a client reconnecting)
    sport = conn.client.s.getsockname()[1]
    conn.client.reset()
    c2 = Client(port, sport=sport)
    c2.xid = xid + 1000
    st, _ = c2.call(0, ops, xid=xid)
    check("4.0 the same CREATE retransmitted on a new connection: the first reply",
          st == 0, errname(st))
    st, _ = c2.call(0, ops)
    check("4.0 the same CREATE with a new xid: EXIST", st == ERR["EXIST"], errname(st))
    c2.close()
    # an OPEN sent again with the open-owner's last seqid (and a new xid): the
    # owner's last reply (RFC 7530 section 9.1.7), the same stateid
    conn = Conn(port, 0)
    o = Owner40(conn, b"lt-open-replay")
    fh = root_fh(conn)
    st, sid = o.open(fh, "f-attr", b"oo", SHARE_ACCESS_READ)
    seq = o.next(b"oo")
    ops = [putfh(fh), open_(seq, b"oo", o.clientid, SHARE_ACCESS_BOTH, name="f-attr")]
    st, r = conn.call(ops)
    first = r[-1][2]["sid"] if st == 0 else None
    st, r = conn.call(ops)
    again = r[-1][2]["sid"] if st == 0 else None
    check("4.0 OPEN again with the same seqid: the same reply", st == 0 and first == again,
          (errname(st), first, again))


def c_share_own(port, d):
    conn = Conn(port, 0)
    o = Owner40(conn, b"lt-share-own")
    fh = root_fh(conn)
    st, _ = o.open(fh, "f-share", b"oo", SHARE_ACCESS_WRITE, deny=SHARE_ACCESS_READ)
    check("4.0 OPEN for write, deny read", st == 0, errname(st))
    st, _ = o.open(fh, "f-share", b"oo", SHARE_ACCESS_READ)
    check("4.0 OPEN for read by the same owner: SHARE_DENIED", st == ERR["SHARE_DENIED"],
          errname(st))
    st, _ = o.open(fh, "f-share2", b"oo", SHARE_ACCESS_READ, deny=SHARE_ACCESS_WRITE)
    check("4.0 OPEN for read, deny write", st == 0, errname(st))
    st, _ = o.open(fh, "f-share2", b"oo", SHARE_ACCESS_WRITE)
    check("4.0 OPEN for write by the same owner: SHARE_DENIED", st == ERR["SHARE_DENIED"],
          errname(st))
    st, _ = o.open(fh, "f-share2", b"oo", SHARE_ACCESS_READ)
    check("4.0 OPEN for read again by the same owner: OK", st == 0, errname(st))


def as_user(conn, uid, ops):
    conn.client.uid = conn.client.gid = uid
    try:
        return conn.call(ops)
    finally:
        conn.client.uid = conn.client.gid = 0


def c_io_cred(port, d):
    for minor in (0, 2):
        root = Conn(port, minor)
        # the same client (4.1 binds stateids to it), another AUTH_SYS user
        user = Conn.__new__(Conn)
        user.__dict__.update(root.__dict__)
        user.call = lambda ops: as_user(root, 3912, ops)
        fh = fh_of(root, "file")
        if minor == 0:
            o = Owner40(root, b"lt-io-cred")
            st, sid = o.open(root_fh(root), "file", b"root")
        else:
            st, r = root.call([putfh(root_fh(root)),
                               open_(0, b"root", access=SHARE_ACCESS_BOTH, name="file")])
            sid = r[-1][2]["sid"] if st == 0 else None
        check("4.%d root opens its 0600 file" % minor, st == 0, errname(st))
        st, r = root.call([putfh(fh), read(0, 4, sid)])
        check("4.%d root reads it through its open" % minor, st == 0, errname(st))
        tries = [("READ", read(0, 4, sid)), ("WRITE", write(0, b"x", sid=sid)),
                 ("SETATTR size", setattr_([A_SIZE], u64(1), sid=sid))]
        if minor == 2:
            tries += [("READ_PLUS", read_plus(0, 4, sid)), ("DEALLOCATE", deallocate(0, 1, sid))]
        for what, op in tries:
            st, _ = user.call([putfh(fh), op])
            check("4.%d uid 3912 %s with root's open stateid: ACCESS or PERM" % (minor, what),
                  st in (ERR["ACCESS"], ERR["PERM"]), errname(st))
        st = os.stat(os.path.join(d, "file"))
        with open(os.path.join(d, "file"), "rb") as f:
            data = f.read()
        check("4.%d the file is unchanged" % minor, data == b"secret\n", data)


def c_io_owner(port, d):
    """the owner of a file reads and writes what it opened, whatever the mode (nfsd)"""
    user = Conn(port, 2, uid=3913, gid=3913)
    fh_dir = root_fh(user)
    st, r = user.call([putfh(fh_dir), open_(0, b"u", access=SHARE_ACCESS_BOTH, name="f-own"),
                       noargs("GETFH")])
    check("4.2 uid 3913 opens its 0600 file", st == 0, errname(st))
    sid, fh = r[1][2]["sid"], r[2][2]
    os.chmod(os.path.join(d, "f-own"), 0)
    st, _ = user.call([putfh(fh), write(0, b"mine", sid=sid)])
    check("4.2 the owner writes through its open after chmod 0", st == 0, errname(st))
    st, r = user.call([putfh(fh), read(0, 4, sid)])
    check("4.2 the owner reads through its open after chmod 0",
          st == 0 and r[-1][2]["data"] == b"mine", errname(st))


def c_lock_seqid(port, d):
    conn = Conn(port, 0)
    o = Owner40(conn, b"lt-lock-seqid")
    fh_dir = root_fh(conn)
    st, sid = o.open(fh_dir, "f-lock", b"oo")
    fh = fh_of(conn, "f-lock")
    st, r = conn.call([putfh(fh), lock_new(WRITE_LT, 0, 10, o.next(b"oo"), sid, 0, b"lo",
                                           o.clientid)])
    check("4.0 LOCK by a new lock-owner", st == 0, errname(st))
    lsid = r[-1][2]["sid"] if st == 0 else b"\0" * 16
    st, r = conn.call([putfh(fh), locku(WRITE_LT, 1, lsid, 0, 10)])
    check("4.0 LOCKU", st == 0, errname(st))
    st, r = conn.call([putfh(fh), lock_new(WRITE_LT, 0, 10, o.next(b"oo"), sid, 2, b"lo",
                                           o.clientid)])
    check("4.0 LOCK with new_lock_owner of the existing lock-owner, its next seqid",
          st == 0, errname(st))
    if st == 0:
        lsid = r[-1][2]["sid"]
        st, r = conn.call([putfh(fh), locku(WRITE_LT, 3, lsid, 0, 10)])
        check("4.0 and its seqids go on: LOCKU", st == 0, errname(st))


def c_lockt_type(port, d):
    want0 = dict(dir="ISDIR", link="SYMLINK", sock="INVAL", fifo="INVAL", cdev="INVAL",
                 bdev="INVAL")
    for minor in (0, 1):
        conn = Conn(port, minor)
        cid = 0
        if minor == 0:
            cid = Owner40(conn, b"lt-lockt").clientid
        for name, want in want0.items():
            if minor and want == "INVAL":
                want = "WRONG_TYPE"
            st, _ = conn.call([putfh(fh_of(conn, name)), lockt(READ_LT, 0, 1, b"lo", cid)])
            check("4.%d LOCKT on %s: %s" % (minor, name, want), st == ERR[want], errname(st))


def c_owner_empty(port, d):
    conn = Conn(port, 0)
    fh = fh_of(conn, "f-attr")
    for a, what in ((A_OWNER, "owner"), (A_OWNER_GROUP, "owner_group")):
        st, _ = conn.call([putfh(fh), setattr_([a], opaque(b""))])
        check("SETATTR of an empty %s: INVAL" % what, st == ERR["INVAL"], errname(st))
        st, _ = conn.call([putfh(fh), setattr_([a], opaque(b"nobody-here"))])
        check("SETATTR of an unknown %s: BADOWNER" % what, st == ERR["BADOWNER"], errname(st))


def c_close_renamed(port, d):
    for minor in (0, 1):
        conn = Conn(port, minor)
        fh_dir = root_fh(conn)
        name, other = "f-ren%d" % minor, "f-ren%d-new" % minor
        if minor == 0:
            o = Owner40(conn, b"lt-close-renamed")
            st, sid = o.open(fh_dir, name, b"oo")
            seq = lambda: o.next(b"oo")
        else:
            st, r = conn.call([putfh(fh_dir), open_(0, b"oo", name=name)])
            sid = r[-1][2]["sid"]
            seq = lambda: 0
        fh = fh_of(conn, name)
        st, _ = conn.call([putfh(fh_dir), noargs("SAVEFH"),
                           ("RENAME", opaque(other) + opaque(name))])
        check("4.%d RENAME over the open file" % minor, st == 0, errname(st))
        st, r = conn.call([putfh(fh), write(0, b"still", sid=sid)])
        check("4.%d WRITE through the open of the unlinked file" % minor, st == 0, errname(st))
        st, r = conn.call([putfh(fh), read(0, 5, sid)])
        check("4.%d READ through it" % minor, st == 0 and r[-1][2]["data"] == b"still",
              errname(st))
        st, _ = conn.call([putfh(fh), close(seq(), sid)])
        check("4.%d CLOSE of the unlinked file" % minor, st == 0, errname(st))


def c_read_far(port, d):
    conn = Conn(port, 2)
    fh = fh_of(conn, "f-attr")
    for off in ((1 << 64) - 100, (1 << 63) - 1, 1 << 63):
        for what, op in (("READ", read(off, 4096)), ("READ_PLUS", read_plus(off, 4096))):
            st, r = conn.call([putfh(fh), op])
            res = r[-1][2] if st == 0 else {}
            empty = res.get("data", b"") == b"" and not res.get("segs")
            check("%s at offset %d: nothing, eof" % (what, off),
                  st == 0 and res.get("eof") and empty, (errname(st), res))


def create_session(c, flags, maxresp=1 << 20, cached=8192, back_req=4096, back_ops=2):
    owner = b"lt-cs-%d-%d-%d-%d" % (os.getpid(), flags ^ cached, back_req, back_ops)
    st, r = c.call(1, [("EXCHANGE_ID", b"\0" * 8 + opaque(owner) + u32(0x1) + u32(0) + u32(0))])
    ex = r[0][2]
    fore = u32(0) + u32(1 << 20) + u32(maxresp) + u32(cached) + u32(16) + u32(8) + u32(0)
    back = u32(0) + u32(back_req) + u32(4096) + u32(0) + u32(back_ops) + u32(1) + u32(0)
    return c.call(1, [("CREATE_SESSION", u64(ex["clientid"]) + u32(ex["seq"]) + u32(flags) +
                       fore + back + u32(0x40000000) + u32(1) + u32(AUTH_NONE))])


def c_session(port, d):
    c = Client(port)
    st, r = create_session(c, 0x7)
    flags = r[0][2]["flags"] if st == 0 else None
    check("CREATE_SESSION with PERSIST, CONN_BACK_CHAN, CONN_RDMA: OK, none granted",
          st == 0 and flags == 0, (errname(st), flags))
    for flags in (0x8, 0xf, 0xfff0):
        st, r = create_session(c, flags)
        check("CREATE_SESSION with undefined flags %#x: INVAL" % flags, st == ERR["INVAL"],
              errname(st))
    st, r = create_session(c, 0, back_req=10)
    check("CREATE_SESSION with a back channel ca_maxrequestsize of 10: TOOSMALL",
          st == ERR["TOOSMALL"], errname(st))
    st, r = create_session(c, 0, back_ops=1)
    check("CREATE_SESSION with a back channel ca_maxoperations of 1: TOOSMALL",
          st == ERR["TOOSMALL"], errname(st))
    st, r = create_session(c, 0, maxresp=64)
    check("CREATE_SESSION with ca_maxresponsesize 64: TOOSMALL", st == ERR["TOOSMALL"],
          errname(st))
    st, r = create_session(c, 0, cached=200)
    sid = r[0][2]["sessionid"]
    for seq, cachethis in ((1, 1), (2, 0)):
        ops = [("SEQUENCE", sid + u32(seq) + u32(0) + u32(0) + u32(cachethis)),
               noargs("PUTROOTFH"), getattr_([A_TYPE, A_SIZE])]
        st, r = c.call(1, ops)
        if cachethis:
            check("SEQUENCE with sa_cachethis, a reply past ca_maxresponsesize_cached: "
                  "REP_TOO_BIG_TO_CACHE", st == ERR["REP_TOO_BIG_TO_CACHE"], errname(st))
        else:
            check("the same without sa_cachethis: OK", st == 0, errname(st))
    # a cache smaller than any reply: SEQUENCE itself is too big to cache
    st, r = create_session(c, 0, cached=10)
    check("CREATE_SESSION with ca_maxresponsesize_cached 10: OK", st == 0, errname(st))
    sid = r[0][2]["sessionid"] if st == 0 else b"\0" * 16
    for cachethis in (1, 0):
        st, r = c.call(1, [("SEQUENCE", sid + u32(1) + u32(0) + u32(0) + u32(cachethis))])
        if cachethis:
            check("SEQUENCE alone with sa_cachethis: REP_TOO_BIG_TO_CACHE",
                  st == ERR["REP_TOO_BIG_TO_CACHE"], errname(st))
        else:
            check("the same seqid without sa_cachethis (the slot untouched): OK", st == 0,
                  errname(st))


def c_reclaim_complete(port, d):
    """A 4.1 client's OPEN before its RECLAIM_COMPLETE, outside grace too:
    GRACE (RFC 8881 section 18.51.3); after it, OK."""
    c = Client(port)
    for minor in (1, 2):
        ses = Session(c, minor, reclaim_complete=False)
        owner = b"rc-%d" % minor
        ops = [noargs("PUTROOTFH"),
               open_(0, owner, ses.clientid, create=True, name="f-rc%d" % minor)]
        st, _ = ses.call(ops)
        check("4.%d OPEN (create) before RECLAIM_COMPLETE: GRACE" % minor,
              st == ERR["GRACE"], errname(st))
        st, _ = ses.call([("RECLAIM_COMPLETE", u32(0))])
        check("4.%d RECLAIM_COMPLETE" % minor, st == 0, errname(st))
        st, _ = ses.call(ops)
        check("4.%d the OPEN after it: OK" % minor, st == 0, errname(st))
    c.close()


def c_wnd(port, d):
    conn = Conn(port, 1)
    st, r = conn.call([putfh(root_fh(conn)),
                       open_(0, b"oo", access=SHARE_ACCESS_READ | 0x500, name="f-attr")])
    res = r[-1][2] if st == 0 else {}
    check("4.1 OPEN with WANT_CANCEL: OPEN_DELEGATE_NONE_EXT, WND4_CANCELLED (7)",
          st == 0 and res.get("deleg") == 3 and res.get("why") == 7, (errname(st), res))


CHECKS = {k[2:]: v for k, v in globals().items() if k.startswith("c_")}


def main(argv):
    if len(argv) != 4 or argv[1] not in CHECKS:
        sys.exit("usage: lt_conformance.py {%s} PORT DIR" % ",".join(CHECKS))
    CHECKS[argv[1]](int(argv[2]), argv[3])
    return 1 if Checks.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
