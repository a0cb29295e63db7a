#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Raw-RPC checks that one address cannot take lacunad's NFSv4 client
# table (lacunad.conf(5), LIMITS: max_clients, max_clients_per_address,
# max_sessions), for tests/integ/nfs_client_table.sh. The flooder
# connects from 127.0.0.1, the other client binds its socket to
# 127.0.0.2 (both reach the server listening on 127.0.0.1).
#
#   flood PORT         with max_clients 30 and max_clients_per_address
#                      20: 127.0.0.1 makes 160 clients (4.1 with a
#                      session, 4.1 never confirmed, 4.0 confirmed and
#                      not, a few holding an open), every one admitted
#                      by reclaiming its own older clients that hold
#                      nothing, while 127.0.0.2 makes a client and a
#                      session every 16 of them; at most 20 of the
#                      flooder's confirmed clients are left, the clients
#                      with an open among them; a reclaimed client gets
#                      BADSESSION (4.1) or STALE_CLIENTID (4.0) and comes
#                      back with a new client ID; once all 20 hold an
#                      open, the flooder is refused (DELAY in 4.1,
#                      RESOURCE in 4.0) and 127.0.0.2 still is not
#   many PORT N        with max_clients N and lease_time 15 (renewed every
#                      3 s meanwhile): N clients of one address, half
#                      4.0 and half 4.1, each holding an open; then a new
#                      client is refused (all hold state) until K of them
#                      close their file: then K new clients are admitted
#                      (the K reclaimed) and the next is refused again
#   idle PORT STATS    with unconfirmed_timeout 2: an unconfirmed 4.1
#                      record, an unconfirmed 4.0 one and a 4.1 client
#                      whose only session was destroyed are forgotten
#                      (state_clients_idle_expired in the stats file
#                      STATS), a client with a session is not
#   rush PORT N        no check: N clients with a session from 127.0.0.1
#                      as fast as they come, then a client from
#                      127.0.0.2 tries until it has a session; prints how
#                      long that took and what it was answered
#
# Each check prints "ok - ..." or "not ok - ..."; the exit status is the
# number of failed checks (capped at 100).
import os
import socket
import struct
import sys
import time

from lt_grace import NOT_MUTATING, check
from lt_nfs4raw import (AUTH_NONE, CLAIM_NULL, ERR, OP, OPEN4_RESULT_CONFIRM, Client, close,
                        errname, noargs, open_, open_confirm, opaque, putfh, setclientid,
                        setclientid_confirm, u32, u64)

FLOODER, OTHER = "127.0.0.1", "127.0.0.2"


def connect(port, src):
    """A Client whose socket is bound to @src and connected to 127.0.0.1:@port."""
    c = Client.__new__(Client)
    c.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.s.settimeout(60)
    c.s.bind((src, 0))
    c.s.connect((FLOODER, port))
    c.xid = struct.unpack(">I", os.urandom(4))[0] >> 2
    c.uid = c.gid = 0
    return c


class Cl:
    """A client ID on connection @c: 4.0 (SETCLIENTID, CONFIRM) or 4.1
    (EXCHANGE_ID, CREATE_SESSION), confirmed or not; one open-owner."""

    def __init__(self, c, minor, name, confirm=True):
        self.c, self.minor, self.name = c, minor, name
        self.sid, self.seq, self.oseq, self.files = None, 1, 0, {}
        self.clientid = None
        if minor:
            self.st, r = c.call(1, [("EXCHANGE_ID", b"lt-verf1" + opaque(name) + u32(1) +
                                     u32(0) + u32(0))])
            if self.st:
                return
            self.clientid, csseq = r[0][2]["clientid"], r[0][2]["seq"]
            if confirm:
                chan = u32(0) + u32(65536) + u32(65536) + u32(2048) + u32(8) + u32(2) + u32(0)
                self.st, r = c.call(1, [("CREATE_SESSION", u64(self.clientid) + u32(csseq) +
                                         u32(0) + chan + chan + u32(0x40000000) + u32(1) +
                                         u32(AUTH_NONE))])
                if self.st == 0:
                    self.sid = r[0][2]["sessionid"]
                    # nothing to reclaim: OPEN is GRACE until this (RFC 8881 §18.51.3)
                    self.st, _ = self.call([("RECLAIM_COMPLETE", u32(0))])
        else:
            self.st, r = c.call(0, [setclientid(b"lt-verf1", name)])
            if self.st:
                return
            self.clientid = r[0][2]["clientid"]
            if confirm:
                self.st, _ = c.call(0, [setclientid_confirm(self.clientid, r[0][2]["verf"])])

    def call(self, ops):
        if self.minor:
            seq = ("SEQUENCE", self.sid + u32(self.seq) + u32(0) + u32(0) + u32(0))
            st, r = self.c.call(1, [seq] + ops)
            if r and r[0][1] == 0:
                self.seq += 1
            return st, r
        return self.c.call(0, ops)

    def alive(self):
        """SEQUENCE (4.1) or RENEW (4.0): the status"""
        if self.minor:
            return self.call([])[0]
        return self.c.call(0, [("RENEW", u64(self.clientid))])[0]

    def bump(self, r, op):
        if self.minor == 0 and any(o == OP[op] and s not in NOT_MUTATING for o, s, _ in r):
            self.oseq += 1

    def open_file(self, fname):
        owner = b"oo-" + self.name
        st, r = self.call([noargs("PUTROOTFH"), open_(self.oseq, owner, self.clientid,
                                                      create=True, claim=CLAIM_NULL,
                                                      name=fname), noargs("GETFH")])
        self.bump(r, "OPEN")
        if st:
            return st
        res, fh = r[-2][2], r[-1][2]
        sid = res["sid"]
        if res["rflags"] & OPEN4_RESULT_CONFIRM:
            st, r = self.call([putfh(fh), open_confirm(sid, self.oseq)])
            self.bump(r, "OPEN_CONFIRM")
            if st:
                return st
            sid = r[-1][2]["sid"]
        self.files[fname] = (fh, sid)
        return 0

    def close_file(self, fname):
        fh, sid = self.files.pop(fname)
        st, r = self.call([putfh(fh), close(self.oseq, sid)])
        self.bump(r, "CLOSE")
        return st


def full(minor):
    return ERR["DELAY"] if minor else ERR["RESOURCE"]


def other_session(port, tag):
    """127.0.0.2 makes a client ID and a session: the status"""
    c = connect(port, OTHER)
    cl = Cl(c, 1, b"other-" + tag)
    return cl.st, cl


def phase_flood(port):
    fc = connect(port, FLOODER)
    kinds = [(1, True), (1, False), (0, True), (0, False)]
    made, holders, others, refused = [], [], [], 0
    for i in range(160):
        minor, confirm = kinds[i % 4]
        cl = Cl(fc, minor, b"flood-%d" % i, confirm)
        if cl.st:
            refused += 1
            print("# flood client %d (4.%d%s): %s" % (i, minor, "" if confirm else
                                                      ", unconfirmed", errname(cl.st)))
        elif confirm:
            made.append(cl)
            if i % 32 in (0, 2):  # a few hold an open: they must stay
                st = cl.open_file(b"flood-%d" % i)
                if st:
                    print("# flood client %d: OPEN %s" % (i, errname(st)))
                    refused += 1
                else:
                    holders.append(cl)
        if i % 16 == 15:
            st, o = other_session(port, b"%d" % i)
            check("127.0.0.2 gets a client ID and a session during the flood (after %d)" %
                  (i + 1), 0, st)
            others.append(o)
    check("each of the flooder's 160 clients is admitted, reclaiming its own", 0, refused)
    live = [cl for cl in made if cl.alive() == 0]
    print("# %d of the flooder's %d confirmed clients left" % (len(live), len(made)))
    check("at most 20 of the flooder's clients are left (max_clients_per_address)", True,
          len(live) <= 20)
    check("its clients holding an open are all left", True, all(h in live for h in holders))
    check("127.0.0.2's sessions all still work", True, all(o.alive() == 0 for o in others))
    first41 = next(cl for cl in made if cl.minor == 1 and cl not in holders)
    first40 = next(cl for cl in made if cl.minor == 0 and cl not in holders)
    check("the flooder's first 4.1 client was reclaimed: BADSESSION", ERR["BADSESSION"],
          first41.alive())
    check("its first 4.0 client was reclaimed: STALE_CLIENTID", ERR["STALE_CLIENTID"],
          first40.alive())
    again = Cl(fc, 1, first41.name)
    check("the reclaimed 4.1 client comes back with a new client ID", True,
          again.st == 0 and again.clientid != first41.clientid)
    check("and its new session works", 0, again.alive() if again.st == 0 else again.st)
    again0 = Cl(fc, 0, first40.name)
    check("the reclaimed 4.0 client comes back too", 0, again0.st)
    # the flooder fills its share with clients that hold an open
    n = len(holders)
    for i in range(40):
        if n >= 20:
            break
        cl = Cl(fc, i % 2, b"holder-%d" % i)
        if cl.st == 0 and cl.open_file(b"holder-%d" % i) == 0:
            holders.append(cl)
            n += 1
    check("the flooder holds 20 clients with an open", True, n == 20)
    for minor in (1, 0):
        cl = Cl(fc, minor, b"one-too-many-%d" % minor)
        check("4.%d: its next client is refused (all 20 hold state)" % minor, full(minor),
              cl.st)
    st, o = other_session(port, b"after")
    check("127.0.0.2 still gets a client ID and a session", 0, st)
    check("the flooder's clients holding an open still work", True,
          all(h.alive() == 0 for h in holders))
    fc.close()


def phase_many(port, n, k=10):
    c = connect(port, FLOODER)
    cls, bad = [], 0
    renewed = time.monotonic()
    for i in range(n):
        if time.monotonic() - renewed > 3:  # no lease may end (lease_time 15)
            for cl in cls:
                cl.alive()
            renewed = time.monotonic()
        cl = Cl(c, i % 2, b"many-%d" % i)
        st = cl.st or cl.open_file(b"m%d" % i)
        if st:
            bad += 1
            if bad < 5:
                print("# client %d: %s" % (i, errname(st)))
        cls.append(cl)
    check("%d clients each holding an open" % n, 0, bad)
    # leases must not end in what follows: renew them all
    check("all renewed", True, all(cl.alive() == 0 for cl in cls))
    for minor in (1, 0):
        cl = Cl(c, minor, b"many-new-%d" % minor)
        check("4.%d: a new client is refused while all hold an open" % minor, full(minor),
              cl.st)
    for cl in cls[:k]:
        check("client %s closes its file" % cl.name.decode(), 0,
              cl.close_file(next(iter(cl.files))))
    for i in range(k):
        cl = Cl(c, i % 2, b"many-late-%d" % i)
        st = cl.st or cl.open_file(b"late-%d" % i)
        check("new client %d admitted: one holding nothing is reclaimed" % i, 0, st)
    for minor in (1, 0):
        cl = Cl(c, minor, b"many-last-%d" % minor)
        check("4.%d: the next new client is refused again" % minor, full(minor), cl.st)
    check("a client that closed its file was reclaimed", True,
          cls[0].alive() in (ERR["BADSESSION"], ERR["STALE_CLIENTID"]))
    check("the clients holding an open are all left", True,
          all(cl.alive() == 0 for cl in cls[k:]))
    c.close()


def stat_of(stats, key):
    try:
        with open(stats) as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k == key:
                    return int(v)
    except OSError:
        pass
    return 0


def phase_idle(port, stats):
    c = connect(port, FLOODER)
    base = stat_of(stats, "state_clients_idle_expired")
    a = Cl(c, 1, b"idle-a", confirm=False)
    b_st, b_how = c.call(0, [setclientid(b"lt-verf1", b"idle-b")])
    cl = Cl(c, 1, b"idle-c")
    check("a 4.1 client makes a session and destroys it", 0,
          cl.st or c.call(1, [("DESTROY_SESSION", cl.sid)])[0])
    d = Cl(c, 1, b"idle-d")
    check("unconfirmed 4.1, unconfirmed 4.0 and a confirmed 4.1 client with a session made",
          True, a.st == 0 and b_st == 0 and d.st == 0)
    t0 = time.monotonic()
    while stat_of(stats, "state_clients_idle_expired") < base + 3:
        if time.monotonic() - t0 > 120:
            print("# state_clients_idle_expired %d after 120 s (timed out)" %
                  stat_of(stats, "state_clients_idle_expired"))
            break
        time.sleep(0.5)
    chan = u32(0) + u32(65536) + u32(65536) + u32(2048) + u32(8) + u32(2) + u32(0)

    def cs(clientid, seq):
        return c.call(1, [("CREATE_SESSION", u64(clientid) + u32(seq) + u32(0) + chan + chan +
                           u32(0x40000000) + u32(1) + u32(AUTH_NONE))])[0]
    check("the unconfirmed 4.1 client is forgotten after unconfirmed_timeout",
          ERR["STALE_CLIENTID"], cs(a.clientid, 1))
    if b_st == 0:
        check("so is the unconfirmed 4.0 one", ERR["STALE_CLIENTID"],
              c.call(0, [setclientid_confirm(b_how[0][2]["clientid"],
                                             b_how[0][2]["verf"])])[0])
    check("and the 4.1 client left without a session", ERR["STALE_CLIENTID"],
          cs(cl.clientid, 2))
    check("the client with a session stays", 0, d.alive())
    c.close()


def rush(port, n):
    c = connect(port, FLOODER)
    t0 = time.monotonic()
    answers = {}
    for i in range(n):
        cl = Cl(c, 1, b"rush-%d-%d" % (os.getpid(), i))
        answers[errname(cl.st)] = answers.get(errname(cl.st), 0) + 1
    print("# %d clients from %s in %.1f s: %s" % (n, FLOODER, time.monotonic() - t0, answers))
    t0 = time.monotonic()
    tries = 0
    while True:
        tries += 1
        st, _ = other_session(port, b"rush-%d" % os.getpid())
        if st == 0 or time.monotonic() - t0 > 120:
            break
        time.sleep(1)
    print("# %s: %s after %d tries, %.1f s" % (OTHER, errname(st), tries,
                                               time.monotonic() - t0))
    c.close()


def main(argv):
    if len(argv) == 3 and argv[1] == "flood":
        phase_flood(int(argv[2]))
    elif len(argv) == 4 and argv[1] == "many":
        phase_many(int(argv[2]), int(argv[3]))
    elif len(argv) == 4 and argv[1] == "idle":
        phase_idle(int(argv[2]), argv[3])
    elif len(argv) == 4 and argv[1] == "rush":
        rush(int(argv[2]), int(argv[3]))
        return 0
    else:
        sys.stderr.write("usage: see the header of lt_client_table.py\n")
        return 2
    return min(check.__globals__["FAILED"], 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
