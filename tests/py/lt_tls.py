#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) raw clients for the tests, and the checks of the
# protocol itself. A connection sends the AUTH_TLS probe (a NULL call,
# credential flavor AUTH_TLS, verifier AUTH_NONE), expects MSG_ACCEPTED
# SUCCESS with an AUTH_NONE verifier whose body is "STARTTLS", then wraps
# the socket with Python's ssl (TLS 1.3 unless told otherwise) and
# carries RPC records inside TLS; TlsClient and TlsConn are lt_nfs4raw's
# Client and Conn over such a connection, so every COMPOUND builder of
# lt_nfs4raw.py works over TLS unchanged. WireTls does the same over
# memory BIOs and keeps what the server sent below TLS. tls_counters()
# reads the lacunad_tls_* and lacunad_xprtsec_* samples of /metrics.
# lt_tls_readplus.py and lt_tls_hostile.py build on this module.
#
#   lt_tls.py minors PORT TLSOPTS
#       for minor versions 0, 1 and 2, each over a TLS connection of its
#       own: the probe's STARTTLS verifier, TLS 1.3, a NULL call inside
#       TLS, then real work: 4.0 SETCLIENTID/SETCLIENTID_CONFIRM, 4.1 and
#       4.2 EXCHANGE_ID/CREATE_SESSION/SEQUENCE; OPEN (create), WRITE,
#       READ back, CLOSE, CREATE of a directory, READDIR, REMOVE; all the
#       server sent after the handshake is TLS application_data records,
#       without the data written and read in clear; ALPN "sunrpc"
#       selected when offered; the probe, a handshake and calls sent a
#       few bytes at a time, 50 calls in one TLS record; a ClientHello
#       sent with the probe, before STARTTLS came back
#   lt_tls.py reload PORT PID LOG CERT KEY NEWCERT NEWKEY TLSOPTS
#       lacunad (PID, logging to LOG) serves the certificate CERT (key
#       KEY) of its configuration file; a client connects over TLS, then
#       NEWCERT and NEWKEY replace CERT and KEY (renamed into place) and
#       lacunad gets SIGHUP: the client is still served on its
#       connection, a new client gets NEWCERT; then CERT is replaced by
#       something that is no certificate and SIGHUP again: refused and
#       logged, and a new client still gets NEWCERT
#
# TLSOPTS: --ca CA [--cert CERT --key KEY] (the client's certificate).
# Output: "ok ..." or "FAIL ..." per check, "# ..." notes; exit status 1
# when a check failed, 2 on a usage or setup error. No check is judged by
# the clock: waits are guards against a hang only.
import argparse
import os
import random
import re
import socket
import ssl
import struct
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import *  # noqa: E402,F401,F403
from lt_nfs4raw import Checks, check, connect, recv_record  # noqa: E402,F401

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
    """A TCP connection to @port that did the probe and the TLS handshake
    (alpn: the protocols to offer, set on @ctx)."""
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

    def __init__(self, port, ctx, uid=0, gid=0, reserved=None, sock=None):
        """sock: a TLS connection already made (tls_socket(), WireTls)"""
        self.s = sock or tls_socket(port, ctx, reserved=reserved)
        self.xid = struct.unpack(">I", os.urandom(4))[0] >> 2
        self.uid, self.gid = uid, gid

    def null(self):
        """A NULL call inside TLS; True when accepted with SUCCESS."""
        self.xid += 1
        self.s.sendall(null_call(self.xid))
        r = parse_accepted(recv_record(self.s))
        return r[0] == self.xid and r[3] == 0


def drip_send(sock, data):
    """Send @data in pieces of 1 to 7 bytes, the first 1 byte long, each in
    a segment of its own (TCP_NODELAY) as far as the kernel keeps them
    apart (a pause after the first one lets it arrive alone: the server
    must take a record header cut anywhere, the first byte alone too)."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rng, off, n = random.Random(len(data)), 0, 1
    while off < len(data):
        sock.sendall(data[off:off + n])
        if off == 0:
            time.sleep(0.05)
        off += n
        n = rng.randrange(1, 8)


class WireTls:
    """TLS over memory BIOs on the connected socket @sock: a socket for
    lt_nfs4raw's Client (sendall, recv, close) that keeps in @raw every
    byte the server sent after the handshake, for wire_problems()."""

    def __init__(self, sock, ctx, drip=False):
        """drip: send everything a few bytes at a time (drip_send)"""
        self.sock, self.inc, self.out = sock, ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname="localhost")
        self.raw = bytearray()
        self.drip = drip
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
        if d and self.drip:
            drip_send(self.sock, d)
        elif d:
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
        c = TlsClient(a.port, ctx, sock=t)
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
    c = TlsClient(a.port, None, sock=t)
    check("ALPN: NULL inside TLS", c.null())
    c.close()
    drip(a, ctx)
    eager(a, ctx)


def drip(a, ctx):
    """The probe, the handshake and the calls a few bytes at a time, then
    many calls in one TLS record."""
    s = connect("127.0.0.1", a.port, timeout=GUARD)
    xid = random.getrandbits(31)
    drip_send(s, null_call(xid, AUTH_TLS))
    r = parse_accepted(recv_record(s))
    check("drip: the probe sent a few bytes at a time is answered with STARTTLS",
          r[0] == xid and is_starttls(r), r)
    try:
        t = WireTls(s, ctx, drip=True)
    except (OSError, EOFError, ssl.SSLError) as e:
        check("drip: a handshake sent a few bytes at a time (the first byte alone) completes",
              False, repr(e))
        s.close()
        return
    c = TlsClient(a.port, None, sock=t)
    check("drip: NULL inside TLS, sent a few bytes at a time", c.null())
    st, r = c.call(0, [noargs("PUTROOTFH"), noargs("GETFH")])
    check("drip: a COMPOUND sent a few bytes at a time", st == 0, errname(st))
    t.drip = False
    n = 50
    t.sendall(b"".join(null_call(7000 + i) for i in range(n)))  # one TLS record
    xids = sorted(parse_accepted(recv_record(t))[0] for _ in range(n))
    check("drip: %d calls in one TLS record get %d replies" % (n, n),
          xids == list(range(7000, 7000 + n)), xids[:5])
    c.close()


def eager(a, ctx):
    """The ClientHello sent with the probe, in the same segment, before
    STARTTLS came back: the STARTTLS reply first, then the handshake."""
    s = connect("127.0.0.1", a.port, timeout=GUARD)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    xid = random.getrandbits(31)
    s.sendall(null_call(xid, AUTH_TLS) + out.read())
    r = parse_accepted(recv_record(s))
    check("eager: the probe sent with the ClientHello is answered with STARTTLS",
          r[0] == xid and is_starttls(r), r)
    try:
        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                s.sendall(out.read())
                d = s.recv(65536)
                if not d:
                    raise EOFError("server closed the connection")
                inc.write(d)
        s.sendall(out.read())
        check("eager: the handshake of a ClientHello sent with the probe completes", True)
    except (OSError, EOFError, ssl.SSLError) as e:
        check("eager: the handshake of a ClientHello sent with the probe completes", False,
              repr(e))
    s.close()


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


# ---------------------------------------------------------------- reload

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



# ---------------------------------------------------------------- command line

def tlsopts(p):
    p.add_argument("--ca", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")


def cli(prog, commands, argv):
    """Run the command of @argv: @commands maps a name to (function,
    a function adding its arguments); TLSOPTS are added to each."""
    ap = argparse.ArgumentParser(prog=prog)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, (_fn, args) in commands.items():
        p = sub.add_parser(name)
        args(p)
        tlsopts(p)
    a = ap.parse_args(argv)
    commands[a.cmd][0](a)
    return 1 if Checks.fails else 0


def _reload_args(p):
    p.add_argument("port", type=int)
    p.add_argument("pid", type=int)
    p.add_argument("log")
    p.add_argument("srv_cert")
    p.add_argument("srv_key")
    p.add_argument("new_cert")
    p.add_argument("new_key")


if __name__ == "__main__":
    sys.exit(cli("lt_tls.py", {
        "minors": (minors, lambda p: p.add_argument("port", type=int)),
        "reload": (reload_, _reload_args)}, sys.argv[1:]))
