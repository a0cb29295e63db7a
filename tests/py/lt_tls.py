#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) raw clients and the checks of tests/integ/nfs_tls*.sh.
# A connection sends the AUTH_TLS probe (a NULL call, credential flavor
# AUTH_TLS, verifier AUTH_NONE), expects MSG_ACCEPTED SUCCESS with an
# AUTH_NONE verifier whose body is "STARTTLS", then wraps the socket with
# Python's ssl (TLS 1.3 unless told otherwise) and carries RPC records
# inside TLS; TlsClient is lt_nfs4raw's Client over such a connection, so
# every COMPOUND builder of lt_nfs4raw.py works over TLS unchanged.
#
#   lt_tls.py minors PORT TLSOPTS
#       for minor versions 0, 1 and 2, each over a TLS connection of its
#       own: the probe's STARTTLS verifier, TLS 1.3, a NULL call inside
#       TLS, then real work: 4.0 SETCLIENTID/SETCLIENTID_CONFIRM, 4.1 and
#       4.2 EXCHANGE_ID/CREATE_SESSION/SEQUENCE; OPEN (create), WRITE,
#       READ back, CLOSE, CREATE of a directory, READDIR, REMOVE; all the
#       server sent after the handshake is TLS application_data records,
#       without the data written and read in clear; ALPN "sunrpc"
#       selected when offered
#   lt_tls.py readplus PORT DIR BACKING TLSOPTS
#       sparse files made in DIR (the exported lacunafs mount) read whole
#       over TLS with READ_PLUS: every byte equal to the backing file's
#       and the map of data and holes equal to SEEK_DATA/SEEK_HOLE's on
#       the backing file
#   lt_tls.py torture PORT DIR TLSOPTS [--replies N] [--max-replies N]
#                     [--expect-torn]
#       READ_PLUS readers over TLS against a writer sending 1 MiB WRITEs
#       (FILE_SYNC4) over TLS at unaligned offsets and a writer writing
#       and punching through the mount: each reply of a region must show
#       one write whole (0 torn); with --expect-torn (a negative control),
#       a torn reply must be seen within --max-replies
#   lt_tls.py reload PORT PID LOG CERT KEY NEWCERT NEWKEY TLSOPTS
#       lacunad (PID, logging to LOG) serves the certificate CERT (key
#       KEY) of its configuration file; a client connects over TLS, then
#       NEWCERT and NEWKEY replace CERT and KEY (renamed into place) and
#       lacunad gets SIGHUP: the client is still served on its
#       connection, a new client gets NEWCERT; then CERT is replaced by
#       something that is no certificate and SIGHUP again: logged, and a
#       new client still gets NEWCERT
#   lt_tls.py bad CASE PORT METRICS_URL TLSOPTS
#       a hostile peer (CASE below), then: the connection was closed, the
#       server still serves a fresh TLS client, and a lacunad_tls_*
#       counter of /metrics moved
#   lt_tls.py mtls PORT METRICS_URL TLSOPTS --expired C K --otherca C K
#       on an mtls-only export: a client with a good certificate is
#       served; one without a certificate, with an expired one and with
#       one of another CA is refused, and each refusal is counted
#
# TLSOPTS: --ca CA [--cert CERT --key KEY] (the client's certificate).
# CASE: plain (clear-text RPC right after STARTTLS), garbage (random bytes
# instead of a ClientHello), stall (the probe, then nothing: closed by the
# server's handshake timeout), halfhello (half a ClientHello, then
# nothing), flood N (N stalled handshakes while an established client is
# served), tls12 (a client that offers only TLS 1.2), keyupdate (a storm
# of KeyUpdate messages, sent with libssl's SSL_key_update through
# ctypes: Python's ssl has no call for it).
#
# Output: "ok ..." or "FAIL ..." per check, "# ..." notes; exit status 1
# when a check failed, 2 on a usage or setup error. No check is judged by
# the clock: waits are guards against a hang only.
import argparse
import ctypes
import fcntl
import os
import random
import re
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403
from lt_nfs4raw import Checks, check, connect, recv_record  # noqa: E402
from lt_readplus import FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, fallocate  # noqa: E402

AUTH_TLS = 7
KIB, MIB = 1 << 10, 1 << 20
# how long a client waits for what must come (a guard, not a check)
GUARD = float(os.environ.get("LT_TLS_GUARD", "30"))


def note(s):
    print("# " + s)
    sys.stdout.flush()


# ---------------------------------------------------------------- the probe

def rpc_record(body):
    return struct.pack(">I", 0x80000000 | len(body)) + body


def null_call(xid, flavor=AUTH_NONE):
    """A NULL call of NFSv4 with credential @flavor (empty body), verifier AUTH_NONE."""
    return rpc_record(struct.pack(">10I", xid, 0, 2, 100003, 4, 0, flavor, 0, AUTH_NONE, 0))


def parse_accepted(rec):
    """(xid, verifier flavor, verifier body, accept_stat) of a reply, or
    raise ValueError when it is no accepted reply."""
    d = Dec(rec)
    xid = d.u32()
    if d.u32() != 1:
        raise ValueError("not a reply")
    if d.u32() != 0:
        raise ValueError("reply denied")
    vflav = d.u32()
    vbody = d.opaque()
    return xid, vflav, vbody, d.u32()


def probe(s):
    """Send the AUTH_TLS probe on the plain socket @s; return the reply
    (xid, verifier flavor, verifier body, accept_stat)."""
    xid = random.getrandbits(31)
    s.sendall(null_call(xid, AUTH_TLS))
    r = parse_accepted(recv_record(s))
    if r[0] != xid:
        raise ValueError("probe reply for xid %#x, not %#x" % (r[0], xid))
    return r


def is_starttls(r):
    return r[1] == AUTH_NONE and r[2] == b"STARTTLS" and r[3] == 0


def client_ctx(ca, cert=None, key=None, tls12=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    if tls12:
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def tls_socket(port, ctx, host="127.0.0.1", reserved=None, alpn=None):
    """A TCP connection to @port that did the probe and the TLS handshake."""
    s = connect(host, port, timeout=GUARD, reserved=reserved)
    try:
        r = probe(s)
        if not is_starttls(r):
            raise ValueError("probe answered verifier %d %r, accept_stat %d" %
                             (r[1], r[2], r[3]))
        if alpn:
            ctx.set_alpn_protocols(alpn)
        return ctx.wrap_socket(s, server_hostname="localhost")
    except BaseException:
        s.close()
        raise


class TlsClient(Client):
    """lt_nfs4raw's Client over RPC-with-TLS."""

    def __init__(self, port, ctx, uid=0, gid=0, reserved=None):
        self.s = tls_socket(port, ctx, reserved=reserved)
        self.xid = struct.unpack(">I", os.urandom(4))[0] >> 2
        self.uid, self.gid = uid, gid

    def null(self):
        """A NULL call inside TLS; True when accepted with SUCCESS."""
        self.xid += 1
        self.s.sendall(null_call(self.xid))
        r = parse_accepted(recv_record(self.s))
        return r[0] == self.xid and r[3] == 0


class WireTls:
    """TLS over memory BIOs on the connected socket @sock: a socket for
    lt_nfs4raw's Client (sendall, recv, close) that keeps in @raw every
    byte the server sent after the handshake, for wire_problems()."""

    def __init__(self, sock, ctx):
        self.sock, self.inc, self.out = sock, ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname="localhost")
        self.raw = bytearray()
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                self._fill(False)
        self._flush()

    def _flush(self):
        d = self.out.read()
        if d:
            self.sock.sendall(d)

    def _fill(self, keep=True):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError("server closed the connection")
        if keep:
            self.raw += d
        self.inc.write(d)

    def sendall(self, data):
        self.obj.write(data)
        self._flush()

    def recv(self, n):
        while True:
            try:
                return self.obj.read(n)
            except ssl.SSLWantReadError:
                self._fill()
            except ssl.SSLZeroReturnError:
                return b""

    def close(self):
        self.sock.close()

    def wire_problems(self, secret):
        """What is wrong with the bytes the server sent after the handshake:
        anything but whole TLS 1.3 application_data records (type 23,
        legacy version 3.3, at most 2^14 + 256 bytes), or any 64 bytes of
        @secret (data the connection carried) in clear."""
        p, off, raw = [], 0, bytes(self.raw)
        while off + 5 <= len(raw):
            typ, ver, n = struct.unpack_from(">BHH", raw, off)
            if typ != 23 or ver != 0x0303 or n > 16384 + 256:
                p.append("a record of type %d, version %#x, %d bytes at %d" % (typ, ver, n, off))
                break
            off += 5 + n
        if off != len(raw):
            p.append("%d bytes, records end at %d" % (len(raw), off))
        for i in range(0, len(secret) - 64, 4096):
            if secret[i:i + 64] in raw:
                p.append("bytes %d..%d of the data in clear" % (i, i + 64))
                break
        return p


class TlsConn(Conn):
    """lt_nfs4raw's Conn over RPC-with-TLS."""

    def __init__(self, port, ctx, minor=0, maxresp=1 << 20, maxreq=1 << 20, reserved=None):
        self.client = TlsClient(port, ctx, reserved=reserved)
        self.minor = minor
        self.ses = Session(self.client, minor, maxresp, maxreq) if minor else None


def served(port, ctx, minor=0):
    """Does the server serve a new TLS client? (True, "") or (False, why)."""
    try:
        c = TlsConn(port, ctx, minor=minor)
        try:
            if not c.client.null():
                return False, "NULL inside TLS not accepted"
            st, r = c.call([noargs("PUTROOTFH"), noargs("GETFH")])
            if st:
                return False, "PUTROOTFH + GETFH: " + errname(st)
            return True, ""
        finally:
            c.client.close()
    except (OSError, EOFError, ValueError, ssl.SSLError) as e:
        return False, repr(e)


def closed_by_server(s, guard=GUARD, got=None):
    """Wait (at most @guard seconds, a hang guard) for the server to close
    @s; returns "eof", "reset", "alert ..." or "open" (still open then).
    What the server sent meanwhile goes into the bytearray @got."""
    s.settimeout(guard)
    end = time.monotonic() + guard
    try:
        while time.monotonic() < end:
            d = s.recv(65536)
            if not d:
                return "eof"
            if got is not None:
                got += d
    except ssl.SSLError as e:
        return "alert " + str(e.reason or e)
    except (ConnectionResetError, BrokenPipeError):
        return "reset"
    except socket.timeout:
        return "open"
    except OSError as e:
        return "error " + str(e)
    return "open"


# ---------------------------------------------------------------- counters

def failures(reason):
    """The sample of lacunad_tls_failures_total for @reason"""
    return 'lacunad_tls_failures_total{reason="%s"}' % reason


def fail_re(*reasons):
    """A pattern for check_counted: the failures for any of @reasons"""
    return "^(%s)$" % "|".join(re.escape(failures(r)) for r in reasons)


def tls_counters(url):
    """The lacunad_tls_* and lacunad_xprtsec_* samples of the page at
    @url: {"name{labels}": value}."""
    with urllib.request.urlopen(url, timeout=GUARD) as r:
        page = r.read().decode()
    out = {}
    for line in page.splitlines():
        if line.startswith(("lacunad_tls_", "lacunad_xprtsec_")):
            k, _, v = line.rpartition(" ")
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def grown(before, after):
    return {k: after[k] - before.get(k, 0) for k in after if after[k] > before.get(k, 0)}


def wait_counter(url, before, pattern, guard=GUARD):
    """Wait until a sample matching @pattern (a regex) grew past @before;
    returns the samples that grew (all of them, for the message)."""
    end = time.monotonic() + guard
    while True:
        g = grown(before, tls_counters(url))
        if any(re.search(pattern, k) for k in g) or time.monotonic() > end:
            return g
        time.sleep(0.1)


def check_counted(url, before, pattern, what):
    g = wait_counter(url, before, pattern)
    hit = sorted(k for k in g if re.search(pattern, k))
    check("%s: counted (%s)" % (what, ", ".join(hit) or pattern), bool(hit),
          "grown: %s" % (g or "nothing"))


# ---------------------------------------------------------------- minors

def minors(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    for minor in (0, 1, 2):
        w = "4.%d over TLS" % minor
        s = connect("127.0.0.1", a.port, timeout=GUARD)
        try:
            r = probe(s)
        except (OSError, EOFError, ValueError) as e:
            check("%s: the AUTH_TLS probe is answered" % w, False, repr(e))
            s.close()
            continue
        check("%s: the AUTH_TLS probe is answered with the STARTTLS verifier" % w,
              is_starttls(r), "verifier %d %r accept_stat %d" % (r[1], r[2], r[3]))
        t = WireTls(s, ctx)
        check("%s: TLS 1.3" % w, t.obj.version() == "TLSv1.3", t.obj.version())
        note("%s: %s %s, ALPN %s" % (w, t.obj.version(), t.obj.cipher()[0],
                                     t.obj.selected_alpn_protocol()))
        c = TlsClient.__new__(TlsClient)
        c.s, c.uid, c.gid = t, 0, 0
        c.xid = struct.unpack(">I", os.urandom(4))[0] >> 2
        check("%s: NULL inside TLS" % w, c.null())
        data = work(c, minor, w)
        c.close()
        bad = t.wire_problems(data)
        check("%s: the server sent only TLS application_data records after the handshake "
              "(%d bytes), none holding the file's bytes in clear" % (w, len(t.raw)),
              not bad, "; ".join(bad[:3]))
    t = tls_socket(a.port, client_ctx(a.ca, a.cert, a.key), alpn=["h2", "sunrpc"])
    check("ALPN: the server selects sunrpc when a client offers it",
          t.selected_alpn_protocol() == "sunrpc", t.selected_alpn_protocol())
    c = TlsClient.__new__(TlsClient)
    c.s, c.uid, c.gid, c.xid = t, 0, 0, 1
    check("ALPN: NULL inside TLS", c.null())
    c.close()


def work(c, minor, w):
    """OPEN (create), WRITE, READ back, CLOSE, CREATE a directory, READDIR, REMOVE."""
    name = b"tls-m%d-%d" % (minor, os.getpid())
    data = os.urandom(100000)
    owner = b"lt-tls-%d" % os.getpid()
    if minor == 0:
        verf = os.urandom(8)
        st, r = c.call(0, [setclientid(verf, b"lt-tls-%d" % os.getpid())])
        check("%s: SETCLIENTID" % w, st == 0, errname(st))
        if st:
            return data
        cid, cverf = r[0][2]["clientid"], r[0][2]["verf"]
        st, r = c.call(0, [setclientid_confirm(cid, cverf)])
        check("%s: SETCLIENTID_CONFIRM" % w, st == 0, errname(st))

        def call(ops):
            return c.call(0, ops)
    else:
        try:
            ses = Session(c, minor)
            check("%s: EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE" % w, True)
        except ValueError as e:
            check("%s: EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE" % w, False, e)
            return data
        cid = 0
        call = ses.call
    st, r = call([noargs("PUTROOTFH"), open_(0, owner, cid, create=True, name=name),
                  noargs("GETFH")])
    check("%s: OPEN (create) %s" % (w, name.decode()), st == 0, errname(st))
    if st:
        return data
    sid, fh = r[1][2]["sid"], r[2][2]
    if minor == 0 and r[1][2]["rflags"] & OPEN4_RESULT_CONFIRM:
        st, r = call([putfh(fh), open_confirm(sid, 1)])
        check("%s: OPEN_CONFIRM" % w, st == 0, errname(st))
        sid = r[1][2]["sid"] if st == 0 else sid
    st, r = call([putfh(fh), write(12345, data, sid=sid)])
    check("%s: WRITE of %d bytes" % (w, len(data)),
          st == 0 and r[1][2]["count"] == len(data), errname(st))
    st, r = call([putfh(fh), read(12345, len(data), sid=sid)])
    check("%s: READ gives back what WRITE wrote" % w,
          st == 0 and r[1][2]["data"] == data, errname(st))
    st, r = call([putfh(fh), close(2 if minor == 0 else 0, sid)])
    check("%s: CLOSE" % w, st == 0, errname(st))
    d = name + b".d"
    st, r = call([noargs("PUTROOTFH"), create(NF4DIR, d), getattr_([A_TYPE])])
    check("%s: CREATE of a directory" % w, st == 0 and r[-1][2][1] == u32(NF4DIR),
          errname(st))
    st, r = call([noargs("PUTROOTFH"), readdir()])
    names = [e[1] for e in r[1][2]["entries"]] if st == 0 else []
    check("%s: READDIR lists the file and the directory" % w,
          st == 0 and name in names and d in names, "%s %s" % (errname(st), names[:10]))
    st, r = call([noargs("PUTROOTFH"), remove(name), remove(d)])
    check("%s: REMOVE both" % w, st == 0, errname(st))
    return data


# ---------------------------------------------------------------- READ_PLUS

SEEK_DATA, SEEK_HOLE = 3, 4


def backing_map(path):
    """[(kind, offset, length)] of @path by SEEK_DATA/SEEK_HOLE, holes to EOF included."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        m, off = [], 0
        while off < size:
            try:
                d = os.lseek(fd, off, SEEK_DATA)
            except OSError:
                d = size
            if d > off:
                m.append((NFS4_CONTENT_HOLE, off, d - off))
            if d >= size:
                break
            h = os.lseek(fd, d, SEEK_HOLE)
            m.append((NFS4_CONTENT_DATA, d, h - d))
            off = h
        return size, m
    finally:
        os.close(fd)


def merge(m, kind, off, n):
    if m and m[-1][0] == kind and m[-1][1] + m[-1][2] == off:
        m[-1] = (kind, m[-1][1], m[-1][2] + n)
    elif n:
        m.append((kind, off, n))


def make_sparse(dirpath, rng):
    """Sparse files through the mount: [(name, path)]."""
    files = []

    def mk(name, size, writes):
        p = os.path.join(dirpath, name)
        fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for off, n in writes:
                os.pwrite(fd, os.urandom(n), off)
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
        files.append((name, p))

    mk("rp-all-hole", 3 * MIB + 7, [])
    mk("rp-empty", 0, [])
    mk("rp-dense", 2 * MIB + 333, [(0, 2 * MIB + 333)])
    mk("rp-head-tail", 8 * MIB, [(0, 5000), (8 * MIB - 70000, 70000)])
    mk("rp-ends-in-hole", 5 * MIB, [(1 * MIB + 1, 100000)])
    w, off = [], 0
    for _ in range(40):
        off += rng.randrange(1, 700) * 1024 + rng.randrange(4096)
        n = rng.randrange(1, 300000)
        w.append((off, n))
        off += n
    mk("rp-random", off + rng.randrange(2 * MIB), w)
    mk("rp-far", 3 * (1 << 30) + 12345, [(1 << 30, 4096), (3 * (1 << 30), 12345)])
    return files


def readplus(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    rng = random.Random(a.seed)
    note("seed %d" % a.seed)
    files = make_sparse(a.dir, rng)
    c = TlsConn(a.port, ctx, minor=2, maxresp=2 * MIB)
    for name, _p in files:
        bpath = os.path.join(a.backing, name)
        size, want = backing_map(bpath)
        st, r = c.call([noargs("PUTROOTFH"), lookup(name), noargs("GETFH")])
        if st:
            check("%s: LOOKUP over TLS" % name, False, errname(st))
            continue
        fh = r[-1][2]
        fd = os.open(bpath, os.O_RDONLY)
        got, bad, calls, off, holes = [], [], 0, 0, 0
        while off < size or calls == 0:
            st, r = c.call([putfh(fh), read_plus(off, MIB)])
            calls += 1
            if st:
                bad.append("READ_PLUS(%d): %s" % (off, errname(st)))
                break
            res = r[-1][2]
            if not res["segs"]:
                if not res["eof"] or off < size:
                    bad.append("READ_PLUS(%d): no segment, eof %d" % (off, res["eof"]))
                break
            for k, o, x in res["segs"]:
                if k == NFS4_CONTENT_DATA:
                    if o != off:
                        bad.append("data at %d, expected %d" % (o, off))
                    if os.pread(fd, len(x), o) != x:
                        bad.append("data [%d, +%d) differs from the backing file" % (o, len(x)))
                    merge(got, k, o, len(x))
                    off = o + len(x)
                else:
                    if not o <= off < o + x:
                        bad.append("hole [%d, +%d) does not hold %d" % (o, x, off))
                    end = min(o + x, size)
                    merge(got, k, off, end - off)
                    holes += 1
                    off = end
            if bad or res["eof"]:
                break
            if calls > 100000:
                bad.append("more than 100000 calls")
                break
        os.close(fd)
        if size and off < size and not bad:
            bad.append("stopped at %d of %d" % (off, size))
        check("%s (%d bytes): READ_PLUS over TLS sends the backing file's bytes" % (name, size),
              not bad, "; ".join(bad[:3]))
        check("%s: READ_PLUS's map over TLS is the backing file's (%d segments, %d holes)" %
              (name, len(want), sum(1 for s in want if s[0] == NFS4_CONTENT_HOLE)),
              got == want, "over TLS %s, backing %s" % (got[:6], want[:6]))
    c.client.close()


# ---------------------------------------------------------------- torture

class LacunaInfo(ctypes.Structure):
    """struct lacuna_info (include/lacuna/ioctl.h)"""
    _fields_ = [("size", ctypes.c_uint32), ("version", ctypes.c_uint32),
                ("u64s", ctypes.c_uint64 * 6), ("ctl_path", ctypes.c_char * 108),
                ("conn_bytes_max", ctypes.c_uint64), ("conns_max", ctypes.c_uint64),
                ("write_unit", ctypes.c_uint32), ("write_unit_aligned", ctypes.c_uint32),
                ("clone_blksize", ctypes.c_uint64)]


# _IOWR(0xAC, 1, struct lacuna_info)
LACUNA_IOC_INFO = (3 << 30) | (ctypes.sizeof(LacunaInfo) << 16) | (0xAC << 8) | 1


def uniform(b):
    return not b or b.count(b[:1]) == len(b)


def torture(a):
    """Regions of 1 MiB at unaligned offsets; writers fill a whole region
    with one byte value per change, readers READ_PLUS whole regions."""
    ctx = client_ctx(a.ca, a.cert, a.key)
    path = os.path.join(a.dir, a.name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    # the mount's write unit: a write through the mount beyond it is atomic per piece only
    info = LacunaInfo(size=ctypes.sizeof(LacunaInfo))
    try:
        fcntl.ioctl(fd, LACUNA_IOC_INFO, info)
        wunit = info.write_unit
    except OSError as e:
        note("LACUNA_IOC_INFO: %s" % e)
        wunit = 0
    # regions at odd offsets, 4 KiB + 1000 bytes apart: 3 of 1 MiB for the
    # NFS writer, 3 of the mount's write unit (at most 1 MiB) for the mount's
    rlen, mlen = MIB, min(MIB, wunit or 4096)
    nfs_regs, mount_regs, off = [], [], 3 * 4096 + 511
    for i in range(6):
        n = rlen if i % 2 == 0 else mlen
        (nfs_regs if i % 2 == 0 else mount_regs).append((off, n))
        os.pwrite(fd, b"\x01" * n, off)
        off += n + 4096 + 1000
    os.ftruncate(fd, off)
    os.fsync(fd)
    regs = nfs_regs + mount_regs
    note("torture: regions %s; the mount's write unit %d" % (regs, wunit))
    stop = threading.Event()
    stats = dict(replies=0, torn=0, nfs_writes=0, mount_writes=0, punches=0, errors=[])
    lock = threading.Lock()
    first_torn = []

    def nfs_writer():
        try:
            c = TlsConn(a.port, ctx, minor=2, maxreq=2 * MIB)
            st, r = c.call([noargs("PUTROOTFH"), lookup(a.name), noargs("GETFH")])
            fh = r[-1][2]
            v = 2
            while not stop.is_set():
                off, n = random.choice(nfs_regs)
                v = v % 250 + 2
                st, r = c.call([putfh(fh), write(off, bytes([v]) * n, stable=2)])
                if st or r[-1][2]["count"] != n:
                    raise ValueError("WRITE: %s" % errname(st))
                with lock:
                    stats["nfs_writes"] += 1
        except Exception as e:
            with lock:
                stats["errors"].append("NFS writer: %r" % e)
            stop.set()

    def mount_writer():
        try:
            wfd = os.open(path, os.O_RDWR)
            rng = random.Random(a.seed)
            v = 2
            while not stop.is_set():
                off, n = rng.choice(mount_regs)
                v = v % 250 + 2
                if rng.random() < 0.2:
                    fallocate(wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
                    with lock:
                        stats["punches"] += 1
                else:
                    # one write(2) of the region from a buffer at an odd address
                    buf = bytearray(n + 1)
                    buf[1:] = bytes([v]) * n
                    os.pwrite(wfd, memoryview(buf)[1:], off)
                    with lock:
                        stats["mount_writes"] += 1
            os.close(wfd)
        except Exception as e:
            with lock:
                stats["errors"].append("mount writer: %r" % e)
            stop.set()

    def reader(i):
        try:
            c = TlsConn(a.port, ctx, minor=2, maxresp=2 * MIB)
            st, r = c.call([noargs("PUTROOTFH"), lookup(a.name), noargs("GETFH")])
            fh = r[-1][2]
            rng = random.Random(a.seed + i)
            while not stop.is_set():
                off, n = rng.choice(regs)
                st, r = c.call([putfh(fh), read_plus(off, n)])
                if st:
                    raise ValueError("READ_PLUS: %s" % errname(st))
                b = b""
                for k, o, x in r[-1][2]["segs"]:
                    if k == NFS4_CONTENT_DATA:
                        b += x
                    else:
                        b += b"\0" * (min(o + x, off + n) - max(o, off))
                ok = len(b) == n and uniform(b)
                with lock:
                    stats["replies"] += 1
                    if not ok:
                        stats["torn"] += 1
                        if not first_torn:
                            vals = sorted(set(b))
                            first_torn.append("region at %d: %d bytes, values %s" %
                                              (off, len(b), vals[:8]))
                    n = stats["replies"]
                if (a.expect_torn and stats["torn"]) or n >= a.max_replies:
                    stop.set()
                if not a.expect_torn and n >= a.replies:
                    stop.set()
        except Exception as e:
            with lock:
                stats["errors"].append("reader %d: %r" % (i, e))
            stop.set()

    ts = [threading.Thread(target=nfs_writer), threading.Thread(target=mount_writer)]
    ts += [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(600)
    os.close(fd)
    note("torture: %(replies)d replies, %(nfs_writes)d NFS WRITEs, %(mount_writes)d mount "
         "writes, %(punches)d punches, %(torn)d torn" % stats)
    check("torture over TLS: no client error", not stats["errors"], "; ".join(stats["errors"]))
    check("torture over TLS: both writers wrote", stats["nfs_writes"] > 0 and
          stats["mount_writes"] + stats["punches"] > 0,
          "%(nfs_writes)d NFS WRITEs, %(mount_writes)d mount writes, %(punches)d punches" % stats)
    if a.expect_torn:
        check("torture over TLS (negative control): a torn reply is caught within %d replies" %
              a.max_replies, stats["torn"] > 0, "%d replies, none torn" % stats["replies"])
        if first_torn:
            note("first torn: " + first_torn[0])
    else:
        check("torture over TLS: %d READ_PLUS replies checked" % stats["replies"],
              stats["replies"] >= a.replies, stats["replies"])
        check("torture over TLS: 0 torn", stats["torn"] == 0,
              "%d torn; first: %s" % (stats["torn"], first_torn[:1]))


# ---------------------------------------------------------------- hostile peers

def client_hello(ctx):
    """The bytes of a ClientHello that @ctx would send."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


_libssl = None


def ssl_ptr(t):
    """The SSL * of the SSLSocket @t: the field after the socket weakref in
    CPython's PySSLSocket (PyObject_HEAD, PyObject *Socket, SSL *ssl),
    checked against SSL_get_fd() before use."""
    global _libssl
    if _libssl is None:
        _libssl = ctypes.CDLL("libssl.so.3")
        _libssl.SSL_key_update.argtypes = [ctypes.c_void_p, ctypes.c_int]
        _libssl.SSL_do_handshake.argtypes = [ctypes.c_void_p]
        _libssl.SSL_get_fd.argtypes = [ctypes.c_void_p]
        _libssl.SSL_version.argtypes = [ctypes.c_void_p]
    p = ctypes.c_void_p.from_address(id(t._sslobj) + 2 * ctypes.sizeof(ctypes.c_void_p) +
                                     ctypes.sizeof(ctypes.c_void_p)).value
    if not p or _libssl.SSL_get_fd(p) != t.fileno() or _libssl.SSL_version(p) != 0x0304:
        raise RuntimeError("cannot find the SSL object of a Python SSLSocket")
    return p


def key_update_storm(t, n, interleave=False):
    """Send up to @n KeyUpdate messages (update_requested), each followed
    by a NULL call when @interleave (application data between them resets
    the count of consecutive KeyUpdates OpenSSL itself refuses past 32);
    returns how many went out before the server closed the connection."""
    p = ssl_ptr(t)
    t.setblocking(True)
    sent = 0
    try:
        for i in range(n):
            if _libssl.SSL_key_update(p, 1) != 1:
                break
            if _libssl.SSL_do_handshake(p) != 1:
                break
            sent += 1
            if interleave:
                t.sendall(null_call(100000 + i))
    except (ssl.SSLError, OSError):
        pass
    return sent


def cn(t):
    """The common name of the certificate of the server on @t"""
    for rdn in t.getpeercert().get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return None


def wait_log(path, text, count, guard=GUARD):
    """Wait until @text is in the log @path @count times; True when it is."""
    end = time.monotonic() + guard
    while time.monotonic() < end:
        with open(path, errors="replace") as f:
            if f.read().count(text) >= count:
                return True
        time.sleep(0.1)
    return False


def replace_file(dst, data):
    tmp = dst + ".new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dst)


def reload_(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    old = open(a.srv_cert, "rb").read()
    t = tls_socket(a.port, ctx)
    first = cn(t)
    t.close()
    c = TlsConn(a.port, ctx, minor=2)

    def still(what):
        try:
            ok = all(c.call([noargs("PUTROOTFH"), noargs("GETFH")])[0] == 0 for _ in range(3))
            check("reload: the connection made before %s is still served" % what, ok)
        except (OSError, EOFError, ValueError) as e:
            check("reload: the connection made before %s is still served" % what, False, repr(e))
    still("the reload")
    replace_file(a.srv_key, open(a.new_key, "rb").read())
    replace_file(a.srv_cert, open(a.new_cert, "rb").read())
    loaded = "tls: certificate reloaded"
    n = 0
    with open(a.log, errors="replace") as f:
        n = f.read().count(loaded)
    os.kill(a.pid, 1)
    check("reload: lacunad says it reloaded the certificate", wait_log(a.log, loaded, n + 1))
    still("the reload")
    t = tls_socket(a.port, ctx)
    new = cn(t)
    t.close()
    check("reload: a new client gets the new certificate (%s, was %s)" % (new, first),
          new != first and new is not None)
    replace_file(a.srv_cert, b"no certificate\n" + old[:100])
    with open(a.log, errors="replace") as f:
        n = len(f.read())
    os.kill(a.pid, 1)
    said = ("tls: the new certificate could not be used: the previous one stays",
            "reload: configuration refused, keeping the one in use")
    end, text = time.monotonic() + GUARD, ""
    while time.monotonic() < end and not any(x in text for x in said):
        time.sleep(0.1)
        with open(a.log, errors="replace") as f:
            text = f.read()[n:]
    check("reload: a certificate that does not load is refused, the previous one stays (%s)" %
          next((x for x in said if x in text), "nothing logged"), any(x in text for x in said))
    still("the failed reload")
    try:
        t = tls_socket(a.port, ctx)
        check("reload: after a certificate that does not load, a new client still gets %s" %
              new, cn(t) == new, cn(t))
        t.close()
    except (OSError, EOFError, ValueError, ssl.SSLError) as e:
        check("reload: after a certificate that does not load, new clients are still served",
              False, repr(e))
    c.client.close()


def bad(a):
    ctx = client_ctx(a.ca, a.cert, a.key)
    url = a.metrics
    case = a.case
    before = tls_counters(url)
    note("%s: lacunad_tls_* before: %s" % (case, before))
    w = case
    if case in ("plain", "garbage", "stall", "halfhello"):
        s = connect("127.0.0.1", a.port, timeout=GUARD)
        r = probe(s)
        check("%s: the probe is answered with STARTTLS" % w, is_starttls(r), r)
        if case == "plain":
            xid = random.getrandbits(31)
            s.sendall(null_call(xid))
        elif case == "garbage":
            s.sendall(bytes(random.Random(7).randrange(256) for _ in range(4096)))
        elif case == "halfhello":
            ch = client_hello(ctx)
            s.sendall(ch[: len(ch) // 2])
        got = bytearray()
        how = closed_by_server(s, a.guard, got)
        check("%s: the server closes the connection (%s)" % (w, how), how != "open")
        if case == "plain":
            check("%s: the clear-text call is not answered (%d bytes back%s)" %
                  (w, len(got), ", a TLS alert" if got[:1] == b"\x15" else ""),
                  struct.pack(">II", xid, 1) not in got, bytes(got[:64]))
        s.close()
        pattern = {"plain": fail_re("not_tls"), "garbage": fail_re("not_tls"),
                   "stall": fail_re("timeout"), "halfhello": fail_re("timeout")}[case]
        check_counted(url, before, pattern, w)
    elif case == "tls12":
        s = connect("127.0.0.1", a.port, timeout=GUARD)
        r = probe(s)
        check("%s: the probe is answered with STARTTLS" % w, is_starttls(r), r)
        ctx12 = client_ctx(a.ca, tls12=True)
        try:
            t = ctx12.wrap_socket(s, server_hostname="localhost")
            check("%s: a TLS 1.2-only handshake is refused" % w, False,
                  "negotiated %s" % t.version())
            t.close()
        except (ssl.SSLError, OSError, EOFError) as e:
            check("%s: a TLS 1.2-only handshake is refused (%s)" % (w, e), True)
        s.close()
        check_counted(url, before, fail_re("version"), w)
    elif case == "alpn":
        try:
            t = tls_socket(a.port, client_ctx(a.ca, a.cert, a.key), alpn=["http/1.1"])
            c = TlsClient.__new__(TlsClient)
            c.s, c.uid, c.gid, c.xid = t, 0, 0, 1
            ok = c.null()
            check("%s: a client offering ALPN without sunrpc is refused" % w, False,
                  "served, ALPN %s" % t.selected_alpn_protocol())
        except (ssl.SSLError, OSError, EOFError, ValueError) as e:
            check("%s: a client offering ALPN without sunrpc is refused (%s)" % (w, e), True)
        check_counted(url, before, fail_re("alpn"), w)
    elif case == "keyupdate":
        t = tls_socket(a.port, ctx)
        c = TlsClient.__new__(TlsClient)
        c.s, c.uid, c.gid, c.xid = t, 0, 0, 1000
        check("%s: served before the storm" % w, c.null())
        sent = key_update_storm(t, a.count, interleave=True)
        note("%s: %d KeyUpdate messages sent, each followed by a NULL call" % (w, sent))
        how = closed_by_server(t, a.guard)
        check("%s: the server closes the connection (%s) after %d KeyUpdates" % (w, how, sent),
              how != "open")
        t.close()
        check_counted(url, before, fail_re("key_update"), w)
        # a burst without application data between the KeyUpdates
        before = tls_counters(url)
        t = tls_socket(a.port, ctx)
        sent = key_update_storm(t, 200)
        how = closed_by_server(t, a.guard)
        check("%s: a burst of KeyUpdates: the server closes the connection (%s) after %d" %
              (w, how, sent), how != "open")
        t.close()
        check_counted(url, before, fail_re("key_update", "record"), w + " (burst)")
    elif case == "flood":
        good = TlsConn(a.port, ctx, minor=2)
        ok, why = True, ""
        stalled = []
        for i in range(a.count):
            try:
                s = connect("127.0.0.1", a.port, timeout=GUARD, reserved=False)
                s.sendall(null_call(random.getrandbits(31), AUTH_TLS))
                stalled.append(s)
            except OSError as e:
                note("flood: connection %d: %r" % (i, e))
                break
        # every stalled one got its STARTTLS or was refused; none sends more
        answered = refused = 0
        for s in stalled:
            try:
                s.settimeout(a.guard)
                r = parse_accepted(recv_record(s))
                answered += is_starttls(r)
            except (OSError, EOFError, ValueError):
                refused += 1
        note("flood: %d connections: %d got STARTTLS, %d refused or closed" %
             (len(stalled), answered, refused))
        check("flood: %d stalled handshakes opened" % len(stalled), len(stalled) == a.count)
        for _ in range(5):
            st, r = good.call([noargs("PUTROOTFH"), noargs("GETFH")])
            ok = ok and st == 0
        check("flood: an established TLS client is served while %d handshakes stall" %
              len(stalled), ok)
        try:
            plain = Conn(a.port)
            st, r = plain.call([noargs("PUTROOTFH"), noargs("GETFH")])
            plain.client.close()
            check("flood: a new plain TCP client is served meanwhile", st == 0, errname(st))
        except (OSError, EOFError, ValueError) as e:
            check("flood: a new plain TCP client is served meanwhile", False, repr(e))
        check_counted(url, before, fail_re("busy"), w + " (beyond the limit)")
        if a.hs_max:
            # (a handshake timed out meanwhile frees its place for one more)
            now = tls_counters(url)
            busy, tmo = failures("busy"), failures("timeout")
            n = now.get(busy, 0) - before.get(busy, 0)
            late = now.get(tmo, 0) - before.get(tmo, 0)
            check("flood: the %d handshakes over tls_handshakes_max=%d refused (%d counted busy, "
                  "%d timed out meanwhile)" % (a.count - a.hs_max, a.hs_max, n, late),
                  n >= a.count - a.hs_max - late)
        # all of them are closed by the handshake timeout, at the latest
        open_left = sum(closed_by_server(s, a.guard) == "open" for s in stalled)
        check("flood: the server closed every stalled handshake", open_left == 0,
              "%d still open" % open_left)
        for s in stalled:
            s.close()
        good.client.close()
    else:
        raise SystemExit("unknown case " + case)
    ok, why = served(a.port, ctx)
    check("%s: afterwards a new TLS client is served" % w, ok, why)


def mtls(a):
    url = a.metrics
    good = client_ctx(a.ca, a.cert, a.key)
    ok, why = served(a.port, good)
    check("mtls: a client with a certificate of the CA is served", ok, why)
    cases = [("no certificate", client_ctx(a.ca), r"^lacunad_xprtsec_refused_total$"),
             ("an expired certificate", client_ctx(a.ca, *a.expired), fail_re("verify")),
             ("a certificate of another CA", client_ctx(a.ca, *a.otherca), fail_re("verify"))]
    for what, ctx, pattern in cases:
        before = tls_counters(url)
        ok, why = served(a.port, ctx)
        check("mtls: a client with %s is refused (%s)" % (what, why), not ok,
              "it was served")
        check_counted(url, before, pattern, "mtls, " + what)
    ok, why = served(a.port, good)
    check("mtls: afterwards a client with a good certificate is served", ok, why)


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(prog="lt_tls.py")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def tlsopts(p):
        p.add_argument("--ca", required=True)
        p.add_argument("--cert")
        p.add_argument("--key")
    p = sub.add_parser("minors")
    p.add_argument("port", type=int)
    tlsopts(p)
    p = sub.add_parser("readplus")
    p.add_argument("port", type=int)
    p.add_argument("dir")
    p.add_argument("backing")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    tlsopts(p)
    p = sub.add_parser("torture")
    p.add_argument("port", type=int)
    p.add_argument("dir")
    p.add_argument("--name", default="tls-torture")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    p.add_argument("--replies", type=int, default=1000)
    p.add_argument("--max-replies", type=int, default=20000)
    p.add_argument("--expect-torn", action="store_true")
    tlsopts(p)
    p = sub.add_parser("reload")
    p.add_argument("port", type=int)
    p.add_argument("pid", type=int)
    p.add_argument("log")
    p.add_argument("srv_cert")
    p.add_argument("srv_key")
    p.add_argument("new_cert")
    p.add_argument("new_key")
    tlsopts(p)
    p = sub.add_parser("bad")
    p.add_argument("case")
    p.add_argument("port", type=int)
    p.add_argument("metrics")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--guard", type=float, default=GUARD)
    p.add_argument("--hs-max", type=int, default=0, help="the server's tls_handshakes_max")
    tlsopts(p)
    p = sub.add_parser("mtls")
    p.add_argument("port", type=int)
    p.add_argument("metrics")
    p.add_argument("--expired", nargs=2, required=True)
    p.add_argument("--otherca", nargs=2, required=True)
    tlsopts(p)
    a = ap.parse_args(argv)
    {"minors": minors, "readplus": readplus, "torture": torture, "bad": bad,
     "mtls": mtls, "reload": reload_}[a.cmd](a)
    return 1 if Checks.fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
