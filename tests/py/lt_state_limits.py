#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Raw-RPC checks of lacunad's bounds on NFSv4 state (lacunad.conf(5),
# LIMITS), for tests/integ/nfs_state_limits.sh:
#
#   opens PORT MINOR   with max_opens_per_client 4, max_opens 6,
#                      max_lock_owners_per_client 2 and
#                      max_locks_per_client 3: client A's fifth OPEN, third
#                      lock-owner and fourth lock (or a LOCKU that would
#                      split a range into a fourth) are refused, RESOURCE in
#                      4.0 and DELAY in 4.1+, while client B still opens
#                      and locks; CLOSE and LOCKU give the budget back; B
#                      is refused once all clients hold max_opens
#   unconfirmed PORT MINOR
#                      with max_unconfirmed_clients 3 and max_clients 6
#                      (2 clients holding opens made by "opens" before):
#                      of 8 clients made and never confirmed, the 3 newest
#                      can still confirm and the older ones are gone
#                      (STALE_CLIENTID); then 2 more are made, the second
#                      one past max_clients reclaiming the one record
#                      still unconfirmed, and a seventh reclaims the
#                      confirmed client holding nothing whose lease is
#                      oldest
#   drc PORT           with max_reply_cache 64K: a session asking for 1 MiB
#                      of cached reply per slot gets 8 KiB; one asking for
#                      64 slots of 8 KiB gets what is left (4 slots); while
#                      both clients hold an open the next one gets none
#                      (DELAY) until one is destroyed; a session of a
#                      client holding nothing is reclaimed for a new one
#
# Each check prints "ok - ..." or "not ok - ..."; the exit status is the
# number of failed checks (capped at 100).
import sys

from lt_grace import StateClient, check
from lt_nfs4raw import (AUTH_NONE, CLAIM_NULL, ERR, OP, WRITE_LT, Client, close, lock_exist,
                        lock_new, locku, noargs, opaque, open_, putfh, setclientid,
                        setclientid_confirm, u32, u64)


class Holder(StateClient):
    """StateClient keeping the files it opened and its lock stateids."""

    def __init__(self, port, minor, name):
        super().__init__(port, minor, name)
        self.files = {}  # name: (fh, open stateid)
        self.lsid = {}   # lock-owner: [lock stateid, seqid]

    def open_file(self, fname):
        st, sid = self.open([noargs("PUTROOTFH")], create=True, claim=CLAIM_NULL, name=fname)
        if st == 0:
            st2, r = self.call([noargs("PUTROOTFH"), ("LOOKUP", opaque(fname)),
                                noargs("GETFH")])
            self.files[fname] = (r[-1][2], sid)
        return st

    def close_file(self, fname):
        fh, sid = self.files.pop(fname)
        st, r = self.call([putfh(fh), close(self.oseq, sid)])
        self._bump(r, "CLOSE")
        return st

    def lock(self, fname, lo, off, length):
        fh, sid = self.files[fname]
        if lo in self.lsid:
            lsid, seq = self.lsid[lo]
            st, r = self.call([putfh(fh), lock_exist(WRITE_LT, off, length, lsid, seq + 1)])
            if r and r[-1][0] == OP["LOCK"] and (st == 0 or st == ERR["DENIED"]):
                self.lsid[lo][1] = seq + 1
        else:
            st, r = self.call([putfh(fh), lock_new(WRITE_LT, off, length, self.oseq, sid, 0,
                                                  lo, self.clientid)])
            self._bump(r, "LOCK")
            if st == 0:
                self.lsid[lo] = [None, 0]
        if st == 0:
            self.lsid[lo][0] = r[-1][2]["sid"]
        return st

    def unlock(self, fname, lo, off, length):
        fh, _ = self.files[fname]
        lsid, seq = self.lsid[lo]
        st, r = self.call([putfh(fh), locku(WRITE_LT, seq + 1, lsid, off, length)])
        if st == 0:
            self.lsid[lo] = [r[-1][2]["sid"], seq + 1]
        return st


def phase_opens(port, minor):
    full = ERR["DELAY"] if minor else ERR["RESOURCE"]
    tag = "4.%d: " % minor
    a = Holder(port, minor, b"a-%d" % minor)
    b = Holder(port, minor, b"b-%d" % minor)
    for i in range(4):
        check(tag + "A opens file %d of its 4" % i, 0, a.open_file(b"a%d-%d" % (minor, i)))
    check(tag + "A's fifth OPEN: max_opens_per_client", full, a.open_file(b"a%d-x" % minor))
    check(tag + "B still opens", 0, b.open_file(b"b%d-0" % minor))
    check(tag + "A closes one", 0, a.close_file(b"a%d-0" % minor))
    check(tag + "then A opens again", 0, a.open_file(b"a%d-x" % minor))
    check(tag + "B opens a second file (6 opens in all)", 0, b.open_file(b"b%d-1" % minor))
    check(tag + "B's third OPEN: max_opens (6) reached", full, b.open_file(b"b%d-2" % minor))

    f1, f2, f3 = (b"a%d-%d" % (minor, i) for i in (1, 2, 3))
    check(tag + "A locks bytes 0-99 (lock-owner 1)", 0, a.lock(f1, b"lo1", 0, 100))
    check(tag + "A locks byte 200", 0, a.lock(f1, b"lo1", 200, 1))
    check(tag + "A locks byte 300 (3 locks)", 0, a.lock(f1, b"lo1", 300, 1))
    check(tag + "A's fourth lock: max_locks_per_client", full, a.lock(f1, b"lo1", 400, 1))
    check(tag + "A's LOCKU splitting bytes 0-99 in two: one lock too many", full,
          a.unlock(f1, b"lo1", 50, 1))
    check(tag + "B still locks", 0, b.lock(b"b%d-0" % minor, b"lo-b", 0, 1))
    check(tag + "A unlocks byte 200", 0, a.unlock(f1, b"lo1", 200, 1))
    check(tag + "then A's LOCKU splitting bytes 0-99 passes", 0, a.unlock(f1, b"lo1", 50, 1))
    check(tag + "A unlocks bytes 0-99 (1 lock left)", 0, a.unlock(f1, b"lo1", 0, 100))
    check(tag + "A's second lock-owner", 0, a.lock(f2, b"lo2", 0, 1))
    check(tag + "A's third lock-owner: max_lock_owners_per_client", full,
          a.lock(f3, b"lo3", 0, 1))
    check(tag + "B's second lock-owner", 0, b.lock(b"b%d-1" % minor, b"lo-b2", 0, 1))
    check(tag + "A's third lock (another owner)", 0, a.lock(f2, b"lo2", 10, 1))
    check(tag + "A's fourth lock (another owner): max_locks_per_client", full,
          a.lock(f2, b"lo2", 20, 1))
    check(tag + "closing A's file frees lock-owner 2's locks", 0, a.close_file(f2))
    check(tag + "then A's lock-owner 1 locks again", 0, a.lock(f1, b"lo1", 400, 1))
    if minor:
        # 4.1 owners go with their last stateid; 4.0 ones stay until the lease ends
        check(tag + "and A's third lock-owner passes", 0, a.lock(f3, b"lo3", 0, 1))
    a.c.close()
    b.c.close()


def make_client(c, minor, name):
    """EXCHANGE_ID or SETCLIENTID: (status, what confirming it takes)"""
    if minor:
        st, r = c.call(minor, [("EXCHANGE_ID", b"lt-verf1" + opaque(name) + u32(1) + u32(0) +
                                u32(0))])
        return st, (r[0][2]["clientid"], r[0][2]["seq"]) if st == 0 else None
    st, r = c.call(0, [setclientid(b"lt-verf1", name)])
    return st, (r[0][2]["clientid"], r[0][2]["verf"]) if st == 0 else None


def confirm_client(c, minor, how):
    """CREATE_SESSION or SETCLIENTID_CONFIRM: its status"""
    if minor:
        chan = u32(0) + u32(65536) + u32(65536) + u32(4096) + u32(8) + u32(4) + u32(0)
        st, _ = c.call(minor, [("CREATE_SESSION", u64(how[0]) + u32(how[1]) + u32(0) + chan +
                                chan + u32(0x40000000) + u32(1) + u32(AUTH_NONE))])
        return st
    st, _ = c.call(0, [setclientid_confirm(how[0], how[1])])
    return st


def phase_unconfirmed(port, minor):
    tag = "4.%d: " % minor
    c = Client(port)
    made = []
    for i in range(8):
        st, how = make_client(c, minor, b"unconfirmed-%d-%d" % (minor, i))
        check(tag + "unconfirmed client %d made" % i, 0, st)
        made.append(how)
    for i in range(7):
        if made[i] is None:
            continue
        want = 0 if i >= 5 else ERR["STALE_CLIENTID"]
        check(tag + "unconfirmed client %d %s" % (i, "confirms" if not want else
                                                  "was forgotten (3 newest kept)"),
              want, confirm_client(c, minor, made[i]))
    # A and B (holding opens), 5 and 6 confirmed, 7 unconfirmed: 5 of max_clients 6
    late = []
    for i in range(2):
        st, how = make_client(c, minor, b"late-%d-%d" % (minor, i))
        check(tag + "client late-%d made (%d of 6 records)" % (i, 6 + i), 0, st)
        late.append(how)
    if made[7]:
        check(tag + "client 7, unconfirmed, was reclaimed first for late-1: max_clients",
              ERR["STALE_CLIENTID"], confirm_client(c, minor, made[7]))
    for i, how in enumerate(late):
        if how:
            check(tag + "client late-%d confirms" % i, 0, confirm_client(c, minor, how))
    st, _ = make_client(c, minor, b"one-too-many-%d" % minor)
    check(tag + "a seventh client is made: max_clients", 0, st)
    if made[5]:
        check(tag + "by reclaiming the confirmed client holding nothing with the oldest lease "
              "(5)", ERR["STALE_CLIENTID"], confirm_client(c, minor, made[5]))
    if made[6]:
        check(tag + "client 6 is still there (its confirmation again)", 0,
              confirm_client(c, minor, made[6]))
    c.close()


def create_session(c, clientid, seq, slots, cached):
    chan = u32(0) + u32(65536) + u32(65536) + u32(cached) + u32(8) + u32(slots) + u32(0)
    st, r = c.call(1, [("CREATE_SESSION", u64(clientid) + u32(seq) + u32(0) + chan + chan +
                        u32(0x40000000) + u32(1) + u32(AUTH_NONE))])
    return st, r[0][2] if st == 0 else None


def open_in_session(c, sid, clientid, name):
    """4.1: SEQUENCE (slot 0, seqid 1), RECLAIM_COMPLETE (nothing to
    reclaim: OPEN is GRACE before it), OPEN creating @name: the status"""
    st, _ = c.call(1, [("SEQUENCE", sid + u32(1) + u32(0) + u32(0) + u32(0)),
                       ("RECLAIM_COMPLETE", u32(0)), noargs("PUTROOTFH"), open_(0, b"oo-" + name, clientid, create=True,
                                                 claim=CLAIM_NULL, name=name)])
    return st


def sequence(c, sid, seqid):
    st, _ = c.call(1, [("SEQUENCE", sid + u32(seqid) + u32(0) + u32(0) + u32(0))])
    return st


def phase_drc(port):
    c = Client(port)
    ids = []
    for i in range(4):
        st, how = make_client(c, 1, b"drc-%d" % i)
        check("EXCHANGE_ID %d" % i, 0, st)
        ids.append(how)
    st, r = create_session(c, ids[0][0], ids[0][1], 4, 1 << 20)
    check("a session asking for 1 MiB of cached reply per slot", 0, st)
    if r:
        print("# granted: maxresp_cached %d, slots %d" % (r["fore"][3], r["fore"][5]))
        check("its ca_maxresponsesize_cached is clamped to 8 KiB", True, r["fore"][3] == 8192)
        check("it gets its 4 slots", True, r["fore"][5] == 4)
    s0 = r["sessionid"] if r else None
    st, r = create_session(c, ids[1][0], ids[1][1], 64, 8192)
    check("a session asking for 64 slots of 8 KiB", 0, st)
    if r:
        print("# granted: maxresp_cached %d, slots %d" % (r["fore"][3], r["fore"][5]))
        check("it gets the 4 slots left of max_reply_cache", True, r["fore"][5] == 4)
    s1 = r["sessionid"] if r else None
    # clients holding an open keep their sessions
    if s0 and s1:
        check("the first client opens a file", 0, open_in_session(c, s0, ids[0][0], b"drc-0"))
        check("the second client opens a file", 0, open_in_session(c, s1, ids[1][0], b"drc-1"))
    st, _ = create_session(c, ids[2][0], ids[2][1], 1, 0)
    check("a third session: no reply cache left, both holders hold state", ERR["DELAY"], st)
    if s0:
        st, _ = c.call(1, [("DESTROY_SESSION", s0)])
        check("the first session is destroyed", 0, st)
    st, r = create_session(c, ids[2][0], ids[2][1], 64, 0)
    check("then the third session is made", 0, st)
    if r:
        print("# granted: maxresp_cached %d, slots %d" % (r["fore"][3], r["fore"][5]))
        check("with slots of 2 KiB from the 32 KiB given back: 16", True, r["fore"][5] == 16)
    s2 = r["sessionid"] if r else None
    st, r = create_session(c, ids[3][0], ids[3][1], 1, 0)
    check("a fourth session: the third client, holding nothing, is reclaimed for it", 0, st)
    if s2:
        check("the third client's session is gone", ERR["BADSESSION"], sequence(c, s2, 1))
    if s1:
        check("the second client's, holding an open, is not", 0, sequence(c, s1, 2))
    c.close()


def main(argv):
    if len(argv) == 4 and argv[1] == "opens":
        phase_opens(int(argv[2]), int(argv[3]))
    elif len(argv) == 3 and argv[1] == "drc":
        phase_drc(int(argv[2]))
    elif len(argv) == 4 and argv[1] == "unconfirmed":
        phase_unconfirmed(int(argv[2]), int(argv[3]))
    else:
        sys.stderr.write("usage: see the header of lt_state_limits.py\n")
        return 2
    return min(check.__globals__["FAILED"], 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
