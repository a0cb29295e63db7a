#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hostile peers of RPC-with-TLS (tests/py/lt_tls.py's clients), for
# tests/integ/nfs_tls_hostile.sh. Each case ends with checks that the
# connection was closed (or the handshake refused), that a new TLS client
# is served, and that the case's reason grew in /metrics
# (lacunad_tls_failures_total{reason}, lacunad_xprtsec_refused_total):
#
#   lt_tls_hostile.py bad CASE PORT METRICS_URL TLSOPTS [--count N]
#                     [--hs-max M] [--guard S]
#     plain      clear-text RPC right after STARTTLS (not_tls; and no
#                clear-text reply)
#     garbage    random bytes instead of a ClientHello (not_tls)
#     stall      the probe, then nothing: closed by the server's
#                handshake timeout (timeout)
#     halfhello  half a ClientHello, then nothing (timeout)
#     tls12      a client offering only TLS 1.2 (version)
#     alpn       a client offering ALPN without "sunrpc" (alpn)
#     keyupdate  N KeyUpdates asking for one back, each followed by a NULL
#                call, then a burst of 200 alone (key_update; the burst
#                may be record: OpenSSL refuses 32 in a row itself), sent
#                with libssl's SSL_key_update through ctypes (Python's ssl
#                has no call for it)
#     abort      N TLS connections reset (SO_LINGER 0) right after sending
#                4 READs of 1 MiB of the file "big": nothing to count, the
#                server must go on (and free what they held: the
#                sanitizer build's leak check at exit)
#     flood      N stalled handshakes while a client that finished its
#                handshake before, and a new plain TCP client, are served;
#                with --hs-max (the server's tls_handshakes_max) the N - M
#                over it refused (busy); all closed in the end
#   lt_tls_hostile.py mtls PORT METRICS_URL TLSOPTS --expired C K --otherca C K
#     on an mtls-only export: a client with a good certificate (TLSOPTS)
#     is served; one without a certificate (NFS4ERR_WRONGSEC,
#     lacunad_xprtsec_refused_total), with an expired one and with one of
#     another CA (verify) are refused
#
# TLSOPTS: --ca CA [--cert CERT --key KEY]. Output as lt_tls.py's. The
# waits (--guard, 30 s) only guard against hangs.
import ctypes
import os
import random
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_tls import *  # noqa: E402,F401,F403
from lt_tls import GUARD, check, cli, connect, note, recv_record  # noqa: E402


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
    word = ctypes.sizeof(ctypes.c_void_p)
    p = ctypes.c_void_p.from_address(id(t._sslobj) + 3 * word).value  # after 2 + 1 words
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
            TlsClient(a.port, None, sock=t).null()
            t.close()
            check("%s: a client offering ALPN without sunrpc is refused" % w, False,
                  "served, ALPN %s" % t.selected_alpn_protocol())
        except (ssl.SSLError, OSError, EOFError, ValueError) as e:
            check("%s: a client offering ALPN without sunrpc is refused (%s)" % (w, e), True)
        check_counted(url, before, fail_re("alpn"), w)
    elif case == "keyupdate":
        t = tls_socket(a.port, ctx)
        check("%s: served before the storm" % w, TlsClient(a.port, None, sock=t).null())
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
    elif case == "abort":
        gone = 0
        for i in range(a.count):
            c = TlsConn(a.port, ctx)
            st, r = c.call([noargs("PUTROOTFH"), lookup("big"), noargs("GETFH")])
            if st:
                check("%s: LOOKUP big" % w, False, errname(st))
                break
            for k in range(4):
                c.client.send(0, [putfh(r[-1][2]), read(k * MIB, MIB)])
            # a reset while the replies are encrypted and sent
            c.client.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.client.s.close()
            gone += 1
        check("%s: %d TLS connections reset with 4 MiB of READ replies on their way" %
              (w, gone), gone == a.count)
    elif case == "flood":
        good = TlsConn(a.port, ctx, minor=2)
        ok = True
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


def _bad_args(p):
    p.add_argument("case")
    p.add_argument("port", type=int)
    p.add_argument("metrics")
    p.add_argument("--count", type=int, default=60)
    p.add_argument("--guard", type=float, default=GUARD)
    p.add_argument("--hs-max", type=int, default=0, help="the server's tls_handshakes_max")


def _mtls_args(p):
    p.add_argument("port", type=int)
    p.add_argument("metrics")
    p.add_argument("--expired", nargs=2, required=True)
    p.add_argument("--otherca", nargs=2, required=True)


if __name__ == "__main__":
    sys.exit(cli("lt_tls_hostile.py", {"bad": (bad, _bad_args), "mtls": (mtls, _mtls_args)},
                 sys.argv[1:]))
