#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
A small ONC RPC (RFC 5531) client over TCP for lacunad's tests, and the
checks a hostile or careless client puts lacunad's TCP transport through.

As a module (tests/tools is on sys.path):

    from rpc_client import RpcConn, Compound
    c = RpcConn("127.0.0.1", 2049)
    assert c.null()                      # NULL procedure answered
    rep = c.call(1, Compound().putrootfh().getfh().encode())
    st, ops = Compound.parse_reply(rep.body)

RpcConn sends records with record marking (optionally cut into several
fragments, or written a few bytes at a time) and reads replies matching
them by xid. Compound builds NFSv4 COMPOUND arguments from a few
operations (PUTROOTFH, LOOKUP, GETFH, READ) and parses the per-op status.

As a program:

    rpc_client.py --port P [--host H] [--pid PID] [--read-path a/b/file]
                  [--bench SECONDS] [CHECK...]

runs the named checks (default: all but the stop_* ones), printing "ok - NAME" or
"not ok - NAME: why" (TAP-like), and exits 0 when all passed, 1 when one
failed, 99 when the server cannot be reached. --pid lets the idle check
measure the server's memory; --read-path (a file of at least 1 MiB in the
export, as LOOKUP components from the pseudo root) enables the checks
that need large replies; --bench measures pipelined NULL calls per second.
The stop_drain and stop_stuck checks make the file given with --ready when
the server should be sent SIGTERM (by the caller), and check what the
client then sees: every reply, then the close; or, for a client that reads
nothing, the close within the server's drain time.
"""

import argparse
import os
import random
import resource
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resvport import connect  # noqa: E402
import struct
import sys
import threading
import time

NFS4_PROGRAM = 100003
NFS4_VERSION = 4
RPC_CALL, RPC_REPLY = 0, 1
MSG_ACCEPTED, MSG_DENIED = 0, 1
AUTH_NONE, AUTH_SYS = 0, 1
LAST = 0x80000000

OP_GETFH, OP_LOOKUP, OP_PUTROOTFH, OP_READ = 10, 15, 24, 25
NFS4ERR_DELAY = 10008


def xdr_u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def xdr_u64(v):
    return struct.pack(">Q", v)


def xdr_opaque(b):
    return xdr_u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def auth_sys(uid=0, gid=0, gids=(), machine=b"rpc-client"):
    body = xdr_u32(0) + xdr_opaque(machine) + xdr_u32(uid) + xdr_u32(gid)
    body += xdr_u32(len(gids)) + b"".join(xdr_u32(g) for g in gids)
    return xdr_u32(AUTH_SYS) + xdr_opaque(body)


AUTH_NONE_CRED = xdr_u32(AUTH_NONE) + xdr_u32(0)


def call_record(xid, proc, args=b"", prog=NFS4_PROGRAM, vers=NFS4_VERSION, cred=None):
    """The body of a call record (no record mark)."""
    cred = AUTH_NONE_CRED if cred is None else cred
    hdr = struct.pack(">IIIIII", xid, RPC_CALL, 2, prog, vers, proc)
    return hdr + cred + AUTH_NONE_CRED + args


def mark(body, last=True):
    return xdr_u32((LAST if last else 0) | len(body))


def frame(body, frags=None):
    """@body with record marks; @frags: sizes of the fragments but the last."""
    if not frags:
        return mark(body) + body
    out, pos = b"", 0
    for n in frags:
        out += mark(body[pos:pos + n], last=False) + body[pos:pos + n]
        pos += n
    return out + mark(body[pos:]) + body[pos:]


class Reply:
    """A parsed reply header: xid, stat (MSG_*), accept/reject status, body after it."""

    def __init__(self, rec):
        if len(rec) < 12:
            raise ValueError("short reply (%d bytes)" % len(rec))
        self.xid, mtype, self.stat = struct.unpack(">III", rec[:12])
        if mtype != RPC_REPLY:
            raise ValueError("not a reply (type %d)" % mtype)
        pos = 12
        if self.stat == MSG_ACCEPTED:
            _flavor, vlen = struct.unpack(">II", rec[pos:pos + 8])
            pos += 8 + vlen + (4 - vlen % 4) % 4
            (self.accept,) = struct.unpack(">I", rec[pos:pos + 4])
            pos += 4
        else:
            (self.accept,) = struct.unpack(">I", rec[pos:pos + 4])
            pos += 4
        self.body = rec[pos:]

    @property
    def ok(self):
        return self.stat == MSG_ACCEPTED and self.accept == 0


class RpcConn:
    """One TCP connection speaking record-marked RPC."""

    def __init__(self, host, port, timeout=20.0, source=None, reserved=None):
        """from a reserved port when root (tests/tools/resvport.py)"""
        self.sock = connect(host, port, timeout=timeout, source=source, reserved=reserved)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.xid = random.randrange(1, 1 << 30)

    def close(self):
        self.sock.close()

    def next_xid(self):
        self.xid = (self.xid + 1) & 0xFFFFFFFF
        return self.xid

    def send(self, data, piece=None, delay=0.0):
        """Write @data, in pieces of @piece bytes (spaced by @delay) if asked."""
        if not piece:
            self.sock.sendall(data)
            return
        for i in range(0, len(data), piece):
            self.sock.sendall(data[i:i + piece])
            if delay:
                time.sleep(delay)

    def _fill(self, n):
        while len(self.buf) < n:
            d = self.sock.recv(max(65536, n - len(self.buf)))
            if not d:
                raise EOFError("connection closed by the server")
            self.buf += d

    def recv_record(self):
        """One whole record, its fragments joined."""
        rec = bytearray()
        while True:
            self._fill(4)
            (m,) = struct.unpack(">I", self.buf[:4])
            n = m & 0x7FFFFFFF
            self._fill(4 + n)
            rec += self.buf[4:4 + n]
            del self.buf[:4 + n]
            if m & LAST:
                return bytes(rec)

    def recv_reply(self):
        return Reply(self.recv_record())

    def call(self, proc, args=b"", cred=None, frags=None, **kw):
        xid = self.next_xid()
        self.send(frame(call_record(xid, proc, args, cred=cred), frags), **kw)
        rep = self.recv_reply()
        if rep.xid != xid:
            raise ValueError("reply xid %#x, expected %#x" % (rep.xid, xid))
        return rep

    def null(self, **kw):
        return self.call(0, **kw).ok

    def closed_by_server(self, wait=5.0):
        """Did the server close (or reset) the connection within @wait seconds?"""
        self.sock.settimeout(wait)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


class Compound:
    """NFSv4 COMPOUND arguments, a few operations at a time."""

    def __init__(self, minor=0, tag=b""):
        self.minor, self.tag, self.ops = minor, tag, []

    def putrootfh(self):
        self.ops.append(xdr_u32(OP_PUTROOTFH))
        return self

    def getfh(self):
        self.ops.append(xdr_u32(OP_GETFH))
        return self

    def lookup(self, name):
        self.ops.append(xdr_u32(OP_LOOKUP) + xdr_opaque(name.encode()))
        return self

    def read(self, offset, count, stateid=b"\0" * 16):
        self.ops.append(xdr_u32(OP_READ) + stateid + xdr_u64(offset) + xdr_u32(count))
        return self

    def path(self, path):
        for comp in [p for p in path.split("/") if p]:
            self.lookup(comp)
        return self

    def encode(self):
        return (xdr_opaque(self.tag) + xdr_u32(self.minor) + xdr_u32(len(self.ops)) +
                b"".join(self.ops))

    @staticmethod
    def parse_reply(body):
        """(status, [(op, status), ...]) of a COMPOUND4res; results are not decoded."""
        status, taglen = struct.unpack(">II", body[:8])
        pos = 8 + taglen + (4 - taglen % 4) % 4
        (n,) = struct.unpack(">I", body[pos:pos + 4])
        pos += 4
        ops = []
        if n:
            op, st = struct.unpack(">II", body[pos:pos + 8])
            ops.append((op, st))
        return status, ops


def describe(rep):
    """A reply in a few words, for failure messages."""
    if not rep.ok:
        return "RPC %s status %d" % ("accepted" if rep.stat == MSG_ACCEPTED else "denied",
                                     rep.accept)
    try:
        st, ops = Compound.parse_reply(rep.body)
        return "COMPOUND status %d, first op %r, %d bytes" % (st, ops[:1], len(rep.body))
    except (struct.error, ValueError):
        return "%d bytes of results" % len(rep.body)


def check_read_reply(rep):
    """A whole 1 MiB READ reply (0), or NFS4ERR_DELAY when the server is short of memory (1)."""
    if rep.ok and len(rep.body) > (1 << 20):
        return 0
    if rep.ok and Compound.parse_reply(rep.body)[0] == NFS4ERR_DELAY:
        return 1
    raise AssertionError("bad READ reply: %s" % describe(rep))


def nulls_pipelined(c, count, piece=None):
    """Send @count NULL calls at once, read every reply; True if all matched."""
    xids = [c.next_xid() for _ in range(count)]
    c.send(b"".join(frame(call_record(x, 0)) for x in xids), piece=piece)
    want = set(xids)
    for _ in range(count):
        rep = c.recv_reply()
        if rep.xid not in want or not rep.ok:
            return False
        want.discard(rep.xid)
    return not want


# ---------------------------------------------------------------- checks


class Ctx:
    def __init__(self, args):
        self.host, self.port, self.pid = args.host, args.port, args.pid
        self.read_path = args.read_path
        self.ready_file = args.ready

    def ready(self):
        """Tell whoever waits on --ready that the check is where it wants the signal."""
        if self.ready_file:
            with open(self.ready_file, "w") as f:
                f.write("ready\n")

    def conn(self, **kw):
        return RpcConn(self.host, self.port, **kw)

    def alive(self):
        c = self.conn()
        try:
            return c.null()
        finally:
            c.close()


def check_null(ctx):
    c = ctx.conn()
    assert c.null(), "NULL not answered with SUCCESS"
    assert c.null(cred=auth_sys(1000, 1000, (1, 2, 3))), "NULL with AUTH_SYS"
    c.close()


def check_pipelined(ctx):
    c = ctx.conn()
    assert nulls_pipelined(c, 20000), "replies missing or wrong"
    c.close()


def check_fragmented(ctx):
    c = ctx.conn()
    body = call_record(c.next_xid(), 0, cred=auth_sys())
    assert len(body) > 40
    for frags in ([4], [1, 1, 1, 1], [0, 0, 0, 8], [len(body) - 1], [3] * 10):
        xid = c.next_xid()
        body = call_record(xid, 0, cred=auth_sys())
        c.send(frame(body, frags))
        rep = c.recv_reply()
        assert rep.xid == xid and rep.ok, "fragments %r" % frags
    # one record written a byte at a time, marks split too
    assert c.null(frags=[5, 7], piece=1, delay=0.001), "byte-at-a-time record"
    c.close()


def check_boundaries(ctx):
    # ~2 MiB of calls of varied sizes: marks and bodies straddle the
    # server's receive buffers at every offset modulo 4
    c = ctx.conn()
    rnd = random.Random(7)
    recs, xids = [], []
    size = 0
    while size < 2 << 20:
        xid = c.next_xid()
        pad = rnd.randrange(0, 2000)
        body = call_record(xid, 0, args=b"\xa5" * pad)
        rec = frame(body, [rnd.randrange(1, len(body))] if rnd.random() < 0.3 else None)
        recs.append(rec)
        xids.append(xid)
        size += len(rec)
    data = b"".join(recs)
    # writes of odd sizes, in a thread: replies are read meanwhile
    t = threading.Thread(target=c.send, args=(data,), kwargs={"piece": 65521})
    t.start()
    want = set(xids)
    for _ in xids:
        rep = c.recv_reply()
        assert rep.xid in want and rep.ok, "bad reply"
        want.discard(rep.xid)
    t.join()
    c.close()


def check_empty_record(ctx):
    c = ctx.conn()
    c.send(xdr_u32(LAST))  # a record of 0 bytes: ignored
    c.send(xdr_u32(0) + xdr_u32(0) + xdr_u32(LAST))  # empty fragments: idem
    assert c.null(), "no answer after empty records"
    c.close()


def check_huge_fragment(ctx):
    for m in (0x7FFFFFFF, 0xFFFFFFFF, LAST | (64 << 20)):
        c = ctx.conn()
        c.send(xdr_u32(m) + b"x" * 100)
        assert c.closed_by_server(), "mark %#x: connection not dropped" % m
        c.close()
    # a record growing past max_record over many fragments
    c = ctx.conn()
    try:
        for _ in range(40):
            c.send(mark(b"\0" * 65536, last=False) + b"\0" * 65536)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert c.closed_by_server(), "long record not dropped"
    c.close()
    # more fragments than a record may have
    c = ctx.conn()
    try:
        c.send(xdr_u32(0) * 2000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert c.closed_by_server(), "2000 fragments not dropped"
    c.close()
    assert ctx.alive(), "server dead"


def check_truncated(ctx):
    for cut in (2, 4, 30, 1000):
        c = ctx.conn()
        rec = frame(call_record(c.next_xid(), 0, args=b"\0" * 4000))
        c.send(rec[:cut])
        c.close()
    # pipelined calls, the last one cut short, then a shutdown of our side:
    # the complete ones are answered, then the server closes
    c = ctx.conn()
    xids = [c.next_xid() for _ in range(50)]
    data = b"".join(frame(call_record(x, 0)) for x in xids)
    c.send(data + frame(call_record(c.next_xid(), 0))[:20])
    c.sock.shutdown(socket.SHUT_WR)
    got = set()
    for _ in xids:
        got.add(c.recv_reply().xid)
    assert got == set(xids), "replies before the end of stream lost"
    assert c.closed_by_server(), "not closed after the end of stream"
    c.close()
    assert ctx.alive(), "server dead"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def check_idle(ctx, n=1000):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 200), hard))
    before = rss_kib(ctx.pid) if ctx.pid else 0
    idle = []
    for i in range(n):
        s = socket.create_connection((ctx.host, ctx.port), timeout=10)
        if i % 3 == 0:
            s.sendall(b"\x80")  # a third of them stop inside a record mark
        idle.append(s)
    time.sleep(0.5)
    during = rss_kib(ctx.pid) if ctx.pid else 0
    c = ctx.conn()
    t0 = time.time()
    for _ in range(10):
        assert nulls_pipelined(c, 500), "busy client starved"
    dt = time.time() - t0
    c.close()
    for s in idle:
        s.close()
    assert ctx.alive(), "server dead"
    if ctx.pid:
        per = (during - before) * 1024 / n
        print("# idle: %d connections cost %d KiB RSS (%.0f bytes each); "
              "5000 NULLs meanwhile in %.2f s" % (n, during - before, per, dt))
        assert per < 16384, "an idle connection costs %.0f bytes" % per


def check_large_request_disconnect(ctx):
    # ~1 MiB calls the server must take whole, then the client goes away
    for i in range(20):
        c = ctx.conn()
        body = call_record(c.next_xid(), 0, args=b"\0" * ((1 << 20) - 64))
        try:
            c.send(frame(body) * (1 + i % 3))
        except (BrokenPipeError, ConnectionResetError):
            pass
        if i % 2:  # half of them reset the connection instead
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
    assert ctx.alive(), "server dead"


def read_compound(path, off, count):
    return Compound().putrootfh().path(path).read(off, count).encode()


def need_read(ctx):
    if not ctx.read_path:
        return "skip: needs --read-path"
    c = ctx.conn()
    rep = c.call(1, read_compound(ctx.read_path, 0, 1 << 20), cred=auth_sys())
    c.close()
    st, _ = Compound.parse_reply(rep.body)
    if st or len(rep.body) < (1 << 20):
        return "skip: READ of %s failed (status %d)" % (ctx.read_path, st)
    return None


def check_read_disconnect(ctx):
    why = need_read(ctx)
    if why:
        return why
    # 1 MiB replies the client never reads: the sends stall, then the peer vanishes
    for i in range(10):
        c = ctx.conn()
        args = read_compound(ctx.read_path, 0, 1 << 20)
        data = b"".join(frame(call_record(c.next_xid(), 1, args, cred=auth_sys()))
                        for _ in range(40))
        c.send(data)
        time.sleep(0.2)
        c.sock.recv(100000)  # read a little: the server is mid-reply
        if i % 2:
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
    assert ctx.alive(), "server dead"


def check_slow_reader(ctx):
    why = need_read(ctx)
    if why:
        return why
    # far more 1 MiB replies than the in-flight limit, not read for a while:
    # the server stops receiving, then catches up; every reply arrives whole
    c = ctx.conn(timeout=60)
    args = read_compound(ctx.read_path, 0, 1 << 20)
    xids = [c.next_xid() for _ in range(300)]
    data = b"".join(frame(call_record(x, 1, args, cred=auth_sys())) for x in xids)
    t = threading.Thread(target=c.send, args=(data,))
    t.start()
    time.sleep(2)
    want = set(xids)
    delayed = 0
    for _ in xids:
        rep = c.recv_reply()
        assert rep.xid in want, "unexpected xid %#x" % rep.xid
        delayed += check_read_reply(rep)
        want.discard(rep.xid)
    t.join()
    c.close()
    assert delayed < len(xids), "every READ answered NFS4ERR_DELAY"
    if delayed:
        return "%d of %d READs answered NFS4ERR_DELAY (chunk pool short)" % (delayed, len(xids))


def check_stop_drain(ctx):
    """Run with --ready: the server is sent SIGTERM once the file exists."""
    why = need_read(ctx)
    c = ctx.conn(timeout=30)
    idle = ctx.conn()
    if why:
        ctx.ready()
        return why
    args = read_compound(ctx.read_path, 0, 1 << 20)
    xids = [c.next_xid() for _ in range(100)]
    c.send(b"".join(frame(call_record(x, 1, args, cred=auth_sys())) for x in xids))
    time.sleep(0.2)
    ctx.ready()
    time.sleep(1)  # stopping now, with 100 MiB of replies to send
    want = set(xids)
    for _ in xids:
        rep = c.recv_reply()
        assert rep.xid in want, "unexpected xid %#x" % rep.xid
        check_read_reply(rep)
        want.discard(rep.xid)
    assert c.closed_by_server(), "not closed once its replies were sent"
    assert idle.closed_by_server(1), "idle connection not closed at stop"


def check_stop_stuck(ctx):
    """Run with --ready: SIGTERM while this client reads none of its replies."""
    why = need_read(ctx)
    c = ctx.conn(timeout=30)
    if why:
        ctx.ready()
        return why
    args = read_compound(ctx.read_path, 0, 1 << 20)
    c.send(b"".join(frame(call_record(c.next_xid(), 1, args, cred=auth_sys()))
                    for _ in range(100)))
    time.sleep(0.2)
    ctx.ready()
    time.sleep(8)  # past the server's drain time
    t0 = time.time()
    try:
        while c.sock.recv(1 << 20):
            assert time.time() - t0 < 10, "still sending long after stopping"
    except (ConnectionResetError, BrokenPipeError):
        pass


CHECKS = {
    "idle": check_idle,  # first: the server's memory is measured
    "null": check_null,
    "pipelined": check_pipelined,
    "fragmented": check_fragmented,
    "boundaries": check_boundaries,
    "empty_record": check_empty_record,
    "huge_fragment": check_huge_fragment,
    "truncated": check_truncated,
    "large_request_disconnect": check_large_request_disconnect,
    "read_disconnect": check_read_disconnect,
    "slow_reader": check_slow_reader,
}

# checks that stop the server: run only when named, with --ready
STOP_CHECKS = {
    "stop_drain": check_stop_drain,
    "stop_stuck": check_stop_stuck,
}


def bench(ctx, seconds, nconns=4, window=256):
    """Pipelined NULL calls per second over @nconns connections."""
    counts = [0] * nconns
    stop = time.time() + seconds

    def run(i):
        c = ctx.conn()
        rec = frame(call_record(1, 0))
        c.send(rec * window)
        inflight = window
        while time.time() < stop:
            c.recv_record()
            counts[i] += 1
            inflight -= 1
            if inflight < window // 2:
                c.send(rec * (window - inflight))
                inflight = window
        while inflight:
            c.recv_record()
            inflight -= 1
        c.close()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(nconns)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.time() - t0
    print("# bench: %d NULL calls in %.2f s over %d connections: %.0f calls/s" %
          (sum(counts), dt, nconns, sum(counts) / dt))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, default=0, help="server PID (memory of idle conns)")
    ap.add_argument("--read-path", default="", help="file of >= 1 MiB, from the pseudo root")
    ap.add_argument("--bench", type=float, default=0, help="seconds of NULL throughput")
    ap.add_argument("--ready", default="", help="file made when a stop_* check wants SIGTERM")
    ap.add_argument("checks", nargs="*")
    args = ap.parse_args()
    ctx = Ctx(args)
    try:
        ctx.alive()
    except OSError as e:
        print("ERROR: server at %s:%d: %s" % (args.host, args.port, e))
        return 99
    names = args.checks or ([] if args.bench else list(CHECKS))
    failed = 0
    for name in names:
        check = CHECKS.get(name) or STOP_CHECKS.get(name)
        if not check:
            print("ERROR: no check %s (%s)" % (name, ", ".join(list(CHECKS) + list(STOP_CHECKS))))
            return 99
        try:
            why = check(ctx)
            print("ok - %s%s" % (name, " # " + why if why else ""))
        except (AssertionError, OSError, EOFError, ValueError) as e:
            failed += 1
            print("not ok - %s: %s: %s" % (name, type(e).__name__, e))
    if args.bench:
        bench(ctx, args.bench)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
