#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
What lacunad's resident memory grows by per idle TCP connection and per
NFSv4.1 session (empty, then with every slot's reply cache used):

    bench/rss_state.py --port P --pid PID [--conns N] [--sessions N] [--slots N]

PID is a running lacunad serving 127.0.0.1:P whose export root holds a
regular file "f"; its limits must allow N connections and N sessions
(max_connections_per_client, max_clients, max_sessions,
max_reply_cache). Each figure is (VmRSS after - VmRSS before) / N,
read from /proc/PID/status once lacunad has settled.
"""
import argparse
import os
import socket
import sys
import time

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")
sys.path[:0] = [os.path.join(TESTS, "py"), os.path.join(TESTS, "tools")]
from lt_nfs4raw import (AUTH_NONE, Client, errname, getattr_, lookup, noargs, opaque,  # noqa
                        u32, u64)
from rpc_client import rss_kib  # noqa: E402


def settled(pid):
    time.sleep(1.5)
    return rss_kib(pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--conns", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--slots", type=int, default=64)
    a = ap.parse_args()

    r0 = settled(a.pid)
    socks = [socket.create_connection(("127.0.0.1", a.port)) for _ in range(a.conns)]
    r1 = settled(a.pid)
    for s in socks:
        s.close()
    print("idle connections: %d, RSS %d -> %d KiB: %.2f KiB each" %
          (a.conns, r0, r1, (r1 - r0) / a.conns))

    c = Client(a.port)
    r0 = settled(a.pid)
    sessions = []
    chan = u32(0) + u32(1 << 20) + u32(1 << 20) + u32(8192) + u32(16) + u32(a.slots) + u32(0)
    for i in range(a.sessions):
        st, r = c.call(1, [("EXCHANGE_ID", b"rss-verf" + opaque(b"rss-%d-%d" % (os.getpid(), i)) +
                            u32(1) + u32(0) + u32(0))])
        if st:
            sys.exit("EXCHANGE_ID: %s" % errname(st))
        ex = r[0][2]
        st, r = c.call(1, [("CREATE_SESSION", u64(ex["clientid"]) + u32(ex["seq"]) + u32(0) +
                            chan + chan + u32(0x40000000) + u32(1) + u32(AUTH_NONE))])
        if st:
            sys.exit("CREATE_SESSION %d: %s" % (i, errname(st)))
        sessions.append((r[0][2]["sessionid"], r[0][2]["fore"][5]))
    r1 = settled(a.pid)
    print("sessions: %d of %d slots, RSS %d -> %d KiB: %.2f KiB each" %
          (a.sessions, sessions[0][1], r0, r1, (r1 - r0) / a.sessions))
    for sid, nslots in sessions:
        for slot in range(nslots):
            seq = ("SEQUENCE", sid + u32(1) + u32(slot) + u32(nslots - 1) + u32(1))
            st, _ = c.call(1, [seq, noargs("PUTROOTFH"), lookup("f"), getattr_([1, 4])])
            if st:
                sys.exit("SEQUENCE: %s" % errname(st))
    r2 = settled(a.pid)
    print("the same with every slot's reply cached: RSS %d -> %d KiB: %.2f KiB per session" %
          (r0, r2, (r2 - r0) / a.sessions))
    c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
