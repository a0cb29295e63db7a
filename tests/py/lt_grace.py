#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Raw-RPC checks of lacunad's grace period and client records, in phases
# that tests/integ/nfs_grace.sh runs around restarts of lacunad:
#
#   hold PORT MINOR NAME FILE JSON   client NAME (4.0 or 4.1+) creates FILE
#                                    in the export root, writes to it
#                                    through its open and locks bytes
#                                    0-4095; what the next phases need
#                                    goes to JSON
#   reclaim PORT JSON                after a restart, in grace: unknown
#                                    clients get GRACE and RECLAIM_BAD,
#                                    NAME reclaims its open and lock,
#                                    finishes (4.1 RECLAIM_COMPLETE, 4.0
#                                    its first new OPEN), grace ends, the
#                                    lock holds against another client
#   no-reclaim PORT JSON             no grace (grace off, record lost):
#                                    reclaim is NO_GRACE, new opens pass
#   reclaim-only PORT JSON           NAME reclaims and finishes; another
#                                    client's OPEN is still GRACE
#   new-open PORT                    a new client's OPEN: prints its status
#
# Each check prints "ok - ..." or "not ok - ..."; the exit status is the
# number of failed checks (capped at 100).
import json
import sys

from lt_nfs4raw import (ANON_STATEID, CLAIM_NULL, CLAIM_PREVIOUS, ERR, OPEN4_RESULT_CONFIRM,
                        READ_LT, WRITE_LT, Client, Session, errname, getattr_, lockt,
                        lock_new, noargs, open_, open_confirm, putfh, read, setclientid,
                        setclientid_confirm, write)

FAILED = 0
DATA = b"held by its owner across the restart\n"
# 4.0 results that leave an owner's seqid alone (RFC 7530 §9.1.7)
NOT_MUTATING = {ERR["STALE_CLIENTID"], ERR["STALE_STATEID"], ERR["BAD_STATEID"], 10026,
                ERR["BADXDR"], ERR["RESOURCE"], ERR["NOFILEHANDLE"], 10019}


def check(what, want, got):
    global FAILED
    if isinstance(want, bool):
        print("%s - %s" % ("ok" if want == got else "not ok", what))
        FAILED += want != got
    elif want == got:
        print("ok - %s (%s)" % (what, errname(got)))
    else:
        FAILED += 1
        print("not ok - %s: want %s, got %s" % (what, errname(want), errname(got)))


class StateClient:
    """A client ID (SETCLIENTID for 4.0, EXCHANGE_ID + session for 4.1+)
    with one open-owner and one lock-owner, keeping their 4.0 seqids. A
    4.1+ client that is not @reclaiming sends RECLAIM_COMPLETE at once, as
    it must before its first new OPEN (RFC 8881 section 18.51.3)."""

    def __init__(self, port, minor, name, reclaiming=False):
        self.minor, self.name = minor, name
        self.c = Client(port)
        self.oseq = 0
        self.last_confirm = False
        if minor == 0:
            st, r = self.c.call(0, [setclientid(b"lt-verf1", name)])
            if st:
                raise ValueError("SETCLIENTID: " + errname(st))
            self.clientid = r[0][2]["clientid"]
            st, _ = self.c.call(0, [setclientid_confirm(self.clientid, r[0][2]["verf"])])
            if st:
                raise ValueError("SETCLIENTID_CONFIRM: " + errname(st))
            self.ses = None
        else:
            self.ses = Session(self.c, minor, owner=name, reclaim_complete=not reclaiming)
            self.clientid = self.ses.clientid

    def call(self, ops):
        if self.ses:
            return self.ses.call(ops)
        return self.c.call(0, ops)

    def _bump(self, res, opname):
        """4.0: count the seqid when the op ran with a seqid-mutating status"""
        from lt_nfs4raw import OP
        for op, st, _ in res:
            if op == OP[opname] and st not in NOT_MUTATING:
                self.oseq += 1

    def open(self, first_ops, **kw):
        """first_ops set the current FH; returns (status, stateid)"""
        st, r = self.call(first_ops + [open_(self.oseq, b"oo-" + self.name, self.clientid,
                                             **kw), noargs("GETFH")])
        self._bump(r, "OPEN")
        if st:
            return st, None
        res, fh = r[-2][2], r[-1][2]
        sid = res["sid"]
        self.last_confirm = bool(res["rflags"] & OPEN4_RESULT_CONFIRM)
        if res["rflags"] & OPEN4_RESULT_CONFIRM:
            st, r = self.call([putfh(fh), open_confirm(sid, self.oseq)])
            self._bump(r, "OPEN_CONFIRM")
            if st:
                return st, None
            sid = r[-1][2]["sid"]
        return 0, sid

    def lock(self, fh, sid, type_, off, length, reclaim=False):
        st, r = self.call([putfh(fh), lock_new(type_, off, length, self.oseq, sid, 0,
                                              b"lo-" + self.name, self.clientid, reclaim)])
        self._bump(r, "LOCK")
        return st


def _opaque(b):
    from lt_nfs4raw import opaque
    return opaque(b)


def phase_hold(port, minor, name, fname, out):
    a = StateClient(port, minor, name)
    st, sid = a.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=fname)
    check("hold: OPEN (create) %s" % fname.decode(), 0, st)
    st, r = a.call([noargs("PUTROOTFH"), ("LOOKUP", _opaque(fname)), noargs("GETFH")])
    check("hold: LOOKUP", 0, st)
    fh = r[-1][2]
    st, _ = a.call([putfh(fh), write(0, DATA, 2, sid)])
    check("hold: WRITE through the open", 0, st)
    check("hold: LOCK bytes 0-4095", 0, a.lock(fh, sid, WRITE_LT, 0, 4096))
    with open(out, "w") as f:
        json.dump(dict(port=port, minor=minor, name=name.decode(), file=fname.decode(),
                       fh=fh.hex()), f)


def load(path):
    with open(path) as f:
        j = json.load(f)
    return j["minor"], j["name"].encode(), j["file"].encode(), bytes.fromhex(j["fh"])


def reclaim_open_lock(a, fh):
    st, sid = a.open([putfh(fh)], claim=CLAIM_PREVIOUS)
    check("reclaim: OPEN CLAIM_PREVIOUS by the recorded client", 0, st)
    if a.minor == 0:
        check("reclaim: a 4.0 reclaim needs no OPEN_CONFIRM", False, a.last_confirm)
    if st:
        return None
    check("reclaim: LOCK reclaim of bytes 0-4095", 0,
          a.lock(fh, sid, WRITE_LT, 0, 4096, reclaim=True))
    return sid


def finish(a, port):
    if a.minor:
        st, _ = a.call([("RECLAIM_COMPLETE", b"\0\0\0\0")])
        check("reclaim: RECLAIM_COMPLETE", 0, st)
    else:
        st, _ = a.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL,
                       name=b"after-" + a.name)
        check("reclaim: 4.0 client's first new OPEN ends its reclaim (and grace)", 0, st)


def phase_reclaim(port, path):
    minor, name, fname, fh = load(path)
    b = StateClient(port, minor, b"unknown-" + name)
    st, _ = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-b")
    check("grace: a new OPEN is refused", ERR["GRACE"], st)
    st, _ = b.call([putfh(fh), lockt(WRITE_LT, 0, 10, b"lo-b", b.clientid)])
    check("grace: LOCKT is refused", ERR["GRACE"], st)
    st, _ = b.open([putfh(fh)], claim=CLAIM_PREVIOUS)
    check("grace: a reclaim by a client without a record", ERR["RECLAIM_BAD"], st)
    st, _ = b.call([putfh(fh), write(0, b"x", 2, ANON_STATEID)])
    check("grace: a WRITE without an open is refused", ERR["GRACE"], st)

    a = StateClient(port, minor, name, reclaiming=True)
    if minor:
        st, _ = a.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-a")
        check("grace: a new OPEN by the recorded client is refused too", ERR["GRACE"], st)
    sid = reclaim_open_lock(a, fh)
    st, _ = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-b")
    check("grace: goes on while a recorded client has not finished", ERR["GRACE"], st)
    finish(a, port)

    st, bsid = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-b")
    check("after grace: a new OPEN is granted", 0, st)
    st, bsid = b.open([noargs("PUTROOTFH")], claim=CLAIM_NULL, name=fname)
    check("after grace: another client opens the reclaimed file", 0, st)
    if bsid:
        check("after grace: the reclaimed lock still holds against it", ERR["DENIED"],
              b.lock(fh, bsid, WRITE_LT, 100, 100))
        st, _ = b.call([putfh(fh), lockt(READ_LT, 0, 1, b"lo-b", b.clientid)])
        check("after grace: LOCKT sees the reclaimed lock", ERR["DENIED"], st)
    st, _ = a.open([putfh(fh)], claim=CLAIM_PREVIOUS)
    check("after grace: a reclaim", ERR["NO_GRACE"], st)
    if sid:
        st, r = a.call([putfh(fh), read(0, 4096, sid)])
        check("the reclaimed open reads what its owner wrote", True,
              st == 0 and r[-1][2]["data"] == DATA)
        st, _ = a.call([putfh(fh), write(len(DATA), b"more\n", 2, sid)])
        check("the reclaimed open writes", 0, st)


def phase_no_reclaim(port, path):
    minor, name, fname, fh = load(path)
    a = StateClient(port, minor, name, reclaiming=True)
    st, _ = a.open([putfh(fh)], claim=CLAIM_PREVIOUS)
    check("no grace: a reclaim", ERR["NO_GRACE"], st)
    b = StateClient(port, minor, b"unknown-" + name)
    st, _ = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-b")
    check("no grace: a new OPEN is granted at once", 0, st)


def phase_reclaim_only(port, path):
    minor, name, fname, fh = load(path)
    a = StateClient(port, minor, name, reclaiming=True)
    reclaim_open_lock(a, fh)
    finish(a, port)
    b = StateClient(port, minor, b"unknown-" + name)
    st, _ = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"new-b")
    check("grace: goes on while another recorded client has not come back", ERR["GRACE"], st)


def phase_new_open(port):
    b = StateClient(port, 1, b"prober")
    st, _ = b.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=b"probe")
    print(errname(st))
    return 0


def main(argv):
    if len(argv) >= 7 and argv[1] == "hold":
        phase_hold(int(argv[2]), int(argv[3]), argv[4].encode(), argv[5].encode(), argv[6])
    elif len(argv) == 4 and argv[1] == "reclaim":
        phase_reclaim(int(argv[2]), argv[3])
    elif len(argv) == 4 and argv[1] == "no-reclaim":
        phase_no_reclaim(int(argv[2]), argv[3])
    elif len(argv) == 4 and argv[1] == "reclaim-only":
        phase_reclaim_only(int(argv[2]), argv[3])
    elif len(argv) == 3 and argv[1] == "new-open":
        return phase_new_open(int(argv[2]))
    else:
        sys.stderr.write(__doc__ or "usage: see the header of lt_grace.py\n")
        return 2
    return min(FAILED, 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
