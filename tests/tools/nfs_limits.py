#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
Resource attacks on lacunad's TCP transport, each bounded in count and
time, while a well-behaved client keeps working beside them:

    nfs_limits.py --port P --pid PID [--stats FILE] [--p99 S] [--rss-mib N]
                  [--fds N] [ATTACK...]

The well-behaved client (the prober) connects from 127.0.0.2 and, in a
loop, makes a NULL call on a new connection, then a GETATTR, a 1 MiB
READ of "big" and a 900 KiB FILE_SYNC WRITE of "wfile" (both files in
the export root, "big" at least 1 MiB) on its own connection (made
again if the server closed it). A reply of NFS4ERR_DELAY is retried;
the time of an operation counts its retries. Every operation must
complete, and the 99th percentile of each kind must stay under --p99
seconds, during each attack and after it.

Attacks (default: all), from 127.0.0.1 and other loopback addresses:

  idle       connections that send nothing, from 8 addresses, more than
             the server's limits allow; the server's fds stay under
             --fds and they are gone after its idle_timeout
  noread     connections each sending 200 1 MiB READs and never reading
             a reply; lacunad's RSS stays under --rss-mib
  slowrec    connections each sending the mark of a 1,000,000-byte
             record and a few bytes of it, never the rest
  pipeline   connections keeping 256 GETATTRs each in flight (they read
             their replies): one cannot starve the others
  state      --state-clients NFSv4.1 clients with a session and an open
             each, more than the server's max_clients: the ones past it
             are refused (NFS4ERR_DELAY: clients holding state are not
             reclaimed), and a client from 127.200.0.1 (an address
             the exports must not list) gets NFS4ERR_PERM for EXCHANGE_ID

After each attack its sockets are closed and service must be back to
normal: the prober's p99 in a quiet window, and the server's open
connections back to a handful within --settle seconds. With --stats,
the counters the server writes there are printed with each attack.
Prints "ok - NAME" or "not ok - NAME: why"; exits 0 when all passed,
1 when one failed, 99 when the server cannot be reached.
"""

import argparse
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import (RpcConn, Compound, auth_sys, call_record, frame,  # noqa: E402
                        xdr_opaque, xdr_u32, xdr_u64)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import lt_nfs4raw as raw  # noqa: E402
from resvport import connect  # noqa: E402

OP_GETATTR, OP_WRITE = 9, 38
NFS4ERR_DELAY = 10008
PROBER_ADDR = "127.0.0.2"
ATTACK_ADDR = "127.0.0.1"
MIB = 1 << 20


class Conn(RpcConn):
    """RpcConn from a chosen source address."""

    def __init__(self, host, port, source=None, timeout=20.0):
        super().__init__(host, port, timeout=timeout, source=source)
        self.xid = 1


def getattr_args(name):
    c = Compound().putrootfh().lookup(name)
    c.ops.append(xdr_u32(OP_GETATTR) + xdr_u32(1) + xdr_u32((1 << 1) | (1 << 4)))
    return c.encode()


def read_args(name, count):
    return Compound().putrootfh().lookup(name).read(0, count).encode()


def write_args(name, data):
    c = Compound().putrootfh().lookup(name)
    c.ops.append(xdr_u32(OP_WRITE) + b"\0" * 16 + xdr_u64(0) + xdr_u32(2) + xdr_opaque(data))
    return c.encode()


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def stats(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k = line.split()
                if len(k) == 2 and k[1].isdigit():
                    out[k[0]] = int(k[1])
    except OSError:
        pass
    return out


class Prober:
    """The well-behaved client, in a thread of its own."""

    KINDS = ("NULL", "GETATTR", "READ", "WRITE")

    def __init__(self, args):
        self.a = args
        self.lock = threading.Lock()
        self.lat = {k: [] for k in self.KINDS}
        self.errors = []
        self.stop = False
        self.conn = None
        self.wdata = os.urandom(900 * 1024)
        self.t = threading.Thread(target=self.run, daemon=True)

    def window(self):
        """Start a new measuring window; returns the last one's latencies and errors."""
        with self.lock:
            lat, err = self.lat, self.errors
            self.lat, self.errors = {k: [] for k in self.KINDS}, []
        return lat, err

    def note(self, kind, dt, err=None):
        with self.lock:
            self.lat[kind].append(dt)
            if err:
                self.errors.append("%s: %s" % (kind, err))

    def call(self, kind, args, check):
        t0 = time.time()
        while True:
            try:
                if not self.conn:
                    self.conn = Conn(self.a.host, self.a.port, PROBER_ADDR, self.a.hang)
                rep = self.conn.call(1, args, cred=auth_sys())
                st, _ = Compound.parse_reply(rep.body)
                if st == NFS4ERR_DELAY and time.time() - t0 < self.a.hang:
                    time.sleep(0.05)
                    continue
                if st or not check(rep):
                    raise ValueError("status %d, %d bytes" % (st, len(rep.body)))
                self.note(kind, time.time() - t0)
                return
            except (OSError, EOFError, ValueError) as e:
                if self.conn:
                    self.conn.close()
                self.conn = None
                # a closed idle connection is made again, as real clients do
                if isinstance(e, (EOFError, ConnectionResetError, BrokenPipeError)) and \
                        time.time() - t0 < self.a.hang:
                    continue
                self.note(kind, time.time() - t0,
                          "timed out" if isinstance(e, socket.timeout) else repr(e))
                return

    def null(self):
        t0 = time.time()
        try:
            c = Conn(self.a.host, self.a.port, PROBER_ADDR, self.a.hang)
            ok = c.null()
            c.close()
            self.note("NULL", time.time() - t0, None if ok else "NULL refused")
        except (OSError, EOFError, ValueError) as e:
            self.note("NULL", time.time() - t0,
                      "timed out" if isinstance(e, socket.timeout) else repr(e))

    def run(self):
        while not self.stop:
            self.null()
            self.call("GETATTR", getattr_args("big"), lambda r: True)
            self.call("READ", read_args("big", MIB), lambda r: len(r.body) > MIB)
            self.call("WRITE", write_args("wfile", self.wdata), lambda r: True)
            time.sleep(0.05)


def p99(v):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * 0.99))]


def judge(name, prober, args, failures):
    lat, errs = prober.window()
    parts = []
    for k in Prober.KINDS:
        p = p99(lat[k])
        if p is None:
            failures.append("%s: no %s completed" % (name, k))
            continue
        parts.append("%s n=%d p99=%.3fs max=%.3fs" % (k, len(lat[k]), p, max(lat[k])))
        if p > args.p99:
            failures.append("%s: %s p99 %.3f s over %.1f s" % (name, k, p, args.p99))
    for e in errs[:5]:
        failures.append("%s: %s" % (name, e))
    print("# %s: %s" % (name, "; ".join(parts)))


def settle(name, args, failures):
    """After an attack: the connections go, service is normal again."""
    t0 = time.time()
    while time.time() - t0 < args.settle:
        st = stats(args.stats) if args.stats else {}
        if not args.stats or st.get("conns_open", 0) <= 4:
            break
        time.sleep(0.5)
    else:
        failures.append("%s: %d connections still open %d s after the attack" %
                        (name, stats(args.stats).get("conns_open", -1), args.settle))


def open_many(args, n, addrs, send=b""):
    socks = []
    for i in range(n):
        try:
            s = socket.create_connection((args.host, args.port), timeout=5,
                                         source_address=(addrs[i % len(addrs)], 0))
            if send:
                s.sendall(send)
            socks.append(s)
        except OSError:
            pass
    return socks


def close_all(socks):
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        except OSError:
            pass


def attack_idle(args, measure):
    addrs = ["127.0.1.%d" % i for i in range(1, 9)]
    # a newcomer from an address of its own that has not sent its first
    # call when the flood arrives: the flood must cost the flooding
    # addresses their connections, not this one
    # (it calls once 400 have come, more than max_connections: well
    # within idle_timeout)
    newcomer = Conn(args.host, args.port, PROBER_ADDR, 20.0)
    first = min(400, args.idle_conns)
    socks = open_many(args, first, addrs)
    try:
        newcomer_ok = newcomer.null()
    except (OSError, EOFError, ValueError) as e:
        newcomer_ok = repr(e)
    newcomer.close()
    socks += open_many(args, args.idle_conns - first, addrs)
    fds = [fd_count(args.pid)]
    for _ in range(int(args.duration)):
        time.sleep(1)
        fds.append(fd_count(args.pid))
    measure()
    close_all(socks)
    print("# idle: %d connections made; lacunad's fds at most %d" % (len(socks), max(fds)))
    if newcomer_ok is not True:
        return "a connection made before the flood lost its NULL call: %s" % newcomer_ok
    if max(fds) > args.fds:
        return "lacunad held %d fds, over %d" % (max(fds), args.fds)
    return None


def attack_noread(args, measure):
    socks = []
    rec = frame(call_record(1, 1, read_args("big", MIB), cred=auth_sys()))
    rss = [proc_status(args.pid, "VmRSS")]

    def flood(i):
        try:
            s = socket.create_connection((args.host, args.port), timeout=args.duration + 10,
                                         source_address=(ATTACK_ADDR, 0))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            socks.append(s)
            s.sendall(rec * 200)
        except OSError:
            pass  # the server closed it (send_timeout): what it should do

    ts = [threading.Thread(target=flood, args=(i,), daemon=True)
          for i in range(args.noread_conns)]
    for t in ts:
        t.start()
    for _ in range(int(args.duration)):
        time.sleep(1)
        rss.append(proc_status(args.pid, "VmRSS"))
    measure()
    close_all(socks)
    print("# noread: %d connections; lacunad's RSS %d MiB before, at most %d MiB" %
          (args.noread_conns, rss[0] // 1024, max(rss) // 1024))
    if max(rss) // 1024 > args.rss_mib:
        return "lacunad's RSS reached %d MiB, over %d" % (max(rss) // 1024, args.rss_mib)
    return None


def attack_slowrec(args, measure):
    addrs = [ATTACK_ADDR, "127.0.2.1", "127.0.2.2", "127.0.2.3"]
    mark = xdr_u32(0x80000000 | 1000000) + b"\0" * 64
    socks = open_many(args, args.slowrec_conns, addrs, send=mark)
    time.sleep(args.duration)
    measure()
    close_all(socks)
    print("# slowrec: %d connections each began a 1,000,000-byte record" % len(socks))
    return None


def attack_pipeline(args, measure):
    stop = []
    args_ga = getattr_args("big")

    def flood(i):
        try:
            c = Conn(args.host, args.port, "127.0.3.%d" % (i + 1), args.hang)
            window = 256
            c.send(b"".join(frame(call_record(c.next_xid(), 1, args_ga, cred=auth_sys()))
                            for _ in range(window)))
            while not stop:
                c.recv_record()
                c.send(frame(call_record(c.next_xid(), 1, args_ga, cred=auth_sys())))
            c.close()
        except (OSError, EOFError):
            pass

    ts = [threading.Thread(target=flood, args=(i,), daemon=True) for i in range(4)]
    for t in ts:
        t.start()
    time.sleep(args.duration)
    measure()
    stop.append(1)
    for t in ts:
        t.join(args.hang)
    return None


def raw_client(args, source):
    """A tests/py/lt_nfs4raw.py Client from address @source."""
    cl = raw.Client.__new__(raw.Client)
    cl.s = connect(args.host, args.port, timeout=args.hang, source=source)
    cl.xid, cl.uid, cl.gid = 1000, 0, 0
    return cl


def attack_state(args, measure):
    made, refused, other, keep = 0, 0, [], []
    for i in range(args.state_clients):
        cl = raw_client(args, "127.0.4.%d" % (1 + i % 8))
        try:
            ses = raw.Session(cl, minor=1)
            st, _ = ses.call([raw.noargs("PUTROOTFH"),
                              raw.open_(0, b"oo", ses.clientid, create=True,
                                        name=b"state-%d" % i)])
            if st:
                raise ValueError("OPEN: " + raw.errname(st))
            keep.append(ses)
            made += 1
        except ValueError as e:
            if "DELAY" in str(e) or str(NFS4ERR_DELAY) in str(e):
                refused += 1
            else:
                other.append(str(e))
            cl.close()
    time.sleep(args.duration)  # the sessions are held meanwhile
    measure()
    cl = raw_client(args, "127.200.0.1")
    st, _ = cl.call(1, [("EXCHANGE_ID", b"\0" * 8 + raw.opaque(b"unlisted") + raw.u32(1) +
                         raw.u32(0) + raw.u32(0))])
    cl.close()
    for s in keep:
        s.c.close()
    print("# state: %d clients with a session made, %d refused; EXCHANGE_ID from an "
          "unlisted address: %s" % (made, refused, raw.errname(st)))
    if other:
        return "unexpected errors: %s" % other[:3]
    if made > args.max_clients or not refused:
        return "%d clients made, over max_clients %d" % (made, args.max_clients)
    if st != raw.ERR["PERM"]:
        return "EXCHANGE_ID from an unlisted address: %s, not PERM" % raw.errname(st)
    return None


ATTACKS = {
    "idle": attack_idle,
    "noread": attack_noread,
    "slowrec": attack_slowrec,
    "pipeline": attack_pipeline,
    "state": attack_state,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--stats", default="", help="the server's stats_file")
    ap.add_argument("--p99", type=float, default=2.0, help="bound on each p99 (seconds)")
    ap.add_argument("--hang", type=float, default=30.0, help="an operation taking this long hung")
    ap.add_argument("--duration", type=float, default=6.0, help="seconds of each attack")
    ap.add_argument("--settle", type=int, default=20, help="seconds to recover after one")
    ap.add_argument("--rss-mib", type=int, default=400, help="bound on lacunad's RSS")
    ap.add_argument("--fds", type=int, default=400, help="bound on lacunad's open fds")
    ap.add_argument("--idle-conns", type=int, default=600)
    ap.add_argument("--noread-conns", type=int, default=40)
    ap.add_argument("--slowrec-conns", type=int, default=150)
    ap.add_argument("--state-clients", type=int, default=50)
    ap.add_argument("--max-clients", type=int, default=30, help="the server's max_clients")
    ap.add_argument("attacks", nargs="*")
    args = ap.parse_args()
    soft, hard = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)
    __import__("resource").setrlimit(__import__("resource").RLIMIT_NOFILE, (hard, hard))
    try:
        c = Conn(args.host, args.port, PROBER_ADDR, 10)
        c.null()
        c.close()
    except OSError as e:
        print("ERROR: server at %s:%d: %s" % (args.host, args.port, e))
        return 99
    prober = Prober(args)
    prober.t.start()
    time.sleep(2)
    base = []
    judge("baseline", prober, args, base)
    print(("ok - baseline" if not base else "not ok - baseline: " + "; ".join(base)))
    failed = 1 if base else 0
    for name in args.attacks or list(ATTACKS):
        failures = []
        prober.window()
        why = ATTACKS[name](args, lambda: judge(name + " (during)", prober, args, failures))
        if why:
            failures.append(why)
        settle(name, args, failures)
        prober.window()
        time.sleep(2)
        judge(name + " (after)", prober, args, failures)
        if args.stats:
            st = stats(args.stats)
            print("# %s: stats: %s" % (name, " ".join(
                "%s=%d" % (k, st[k]) for k in sorted(st)
                if k.startswith("conn") or k == "client_stalls")))
        if failures:
            failed += 1
            print("not ok - %s: %s" % (name, "; ".join(failures)))
        else:
            print("ok - %s" % name)
        sys.stdout.flush()
    prober.stop = True
    prober.t.join(args.hang * 4)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
