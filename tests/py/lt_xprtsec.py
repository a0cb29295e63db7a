#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exports(5)'s xprtsec= over the wire (tests/integ/nfs_xprtsec.sh): over
# one kind of transport (plain TCP, TLS without a client certificate, TLS
# with one), the status each export's file gets, and what SECINFO says.
#
#   lt_xprtsec.py PORT [--tls CA [--cert CERT --key KEY]] CHECK...
#
# CHECK is PATH=EXPECT: PATH the LOOKUP components from the root of the
# pseudo filesystem to a file right in an export's root (a/b/export/file),
# or "/" for the root itself; EXPECT "ok" (served) or "wrongsec"
# (NFS4ERR_WRONGSEC). For each minor version (0 and 2, a session made
# over the same transport) and each CHECK:
#   PUTROOTFH, LOOKUP..., READ       the COMPOUND's status is EXPECT's
#   PUTROOTFH, LOOKUP... up to the export's root, then SECINFO of the file
#   (4.0) or SECINFO_NO_NAME of the current handle (4.2)
#                                    served whatever EXPECT: SECINFO tells
#                                    the flavors whatever the transport, as
#                                    Linux nfsd's does
# For "/": PUTROOTFH, GETATTR, and PUTROOTFH, SECINFO_NO_NAME (4.2).
#
# --tls CA: start RPC-with-TLS (RFC 9289) on each connection first: the
# AUTH_TLS probe (a NULL call, credential flavor 7), whose reply must carry
# the verifier "STARTTLS", then a TLS 1.3 handshake verifying the server
# against CA; --cert/--key: present that client certificate (mutual TLS).
#
# Prints "ok ..." or "FAIL ..." per check; exits 0 when all passed, 1
# otherwise, 99 when it cannot run.
import os
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import (A_SIZE, A_TYPE, ERR, Checks, Client, Dec, Session, check,  # noqa: E402
                        errname, getattr_, lookup, noargs, read, secinfo, secinfo_no_name,
                        u32)

AUTH_TLS = 7


def recv_record(s):
    data = b""
    while True:
        hdr = b""
        while len(hdr) < 4:
            c = s.recv(4 - len(hdr))
            if not c:
                raise EOFError("server closed the connection")
            hdr += c
        m = struct.unpack(">I", hdr)[0]
        n = m & 0x7fffffff
        while n:
            c = s.recv(n)
            if not c:
                raise EOFError("server closed the connection")
            data += c
            n -= len(c)
        if m & 0x80000000:
            return data


def start_tls(s, ca, cert, key):
    """The AUTH_TLS probe on the plain socket, then TLS 1.3 on it."""
    xid = struct.unpack(">I", os.urandom(4))[0]
    call = (u32(xid) + u32(0) + u32(2) + u32(100003) + u32(4) + u32(0) +
            u32(AUTH_TLS) + u32(0) + u32(0) + u32(0))
    s.sendall(u32(0x80000000 | len(call)) + call)
    d = Dec(recv_record(s))
    if d.u32() != xid or d.u32() != 1 or d.u32() != 0:
        raise ValueError("AUTH_TLS probe: not an accepted reply to it")
    flavor, verf = d.u32(), d.opaque()
    if d.u32() != 0:
        raise ValueError("AUTH_TLS probe: not SUCCESS")
    if flavor != 0 or verf != b"STARTTLS":
        raise ValueError("AUTH_TLS probe: verifier %d %r, not STARTTLS" % (flavor, verf))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False
    ctx.load_verify_locations(ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx.wrap_socket(s)


def conn(port, minor, tls):
    cl = Client(port)
    if tls:
        cl.s = start_tls(cl.s, *tls)
    if minor == 0:
        return lambda ops: cl.call(0, ops)
    return Session(cl, minor).call


def status(res):
    st, ops = res
    return st, "%s (op %s)" % (errname(st), ops[-1][0] if ops else None)


def run(port, minor, tls, checks):
    call = conn(port, minor, tls)
    for path, expect in checks:
        want = 0 if expect == "ok" else ERR["WRONGSEC"]
        names = [n.encode() for n in path.split("/") if n]
        if not names:
            st, why = status(call([noargs("PUTROOTFH"), getattr_((A_TYPE, A_SIZE))]))
            check("4.%d root: PUTROOTFH, GETATTR: %s" % (minor, expect), st == want, why)
            if minor:
                st, why = status(call([noargs("PUTROOTFH"), secinfo_no_name(0)]))
                check("4.%d root: SECINFO_NO_NAME answered" % minor, st == 0, why)
            continue
        walk = [noargs("PUTROOTFH")] + [lookup(n) for n in names]
        st, why = status(call(walk + [read(0, 64)]))
        check("4.%d %s: PUTROOTFH, LOOKUP..., READ: %s" % (minor, path, expect),
              st == want, why)
        if minor == 0:
            st, why = status(call(walk[:-1] + [secinfo(names[-1])]))
            check("4.0 %s: SECINFO answered" % path, st == 0, why)
        else:
            st, why = status(call(walk[:-1] + [secinfo_no_name(0)]))
            check("4.%d %s: SECINFO_NO_NAME answered" % (minor, path), st == 0, why)


def main():
    a = sys.argv[1:]
    tls = None
    opt = {}
    for o in ("--tls", "--cert", "--key"):
        if o in a:
            i = a.index(o)
            opt[o] = a[i + 1]
            del a[i:i + 2]
    if "--tls" in opt:
        tls = (opt["--tls"], opt.get("--cert"), opt.get("--key"))
    checks = []
    for c in a[1:]:
        path, _, expect = c.rpartition("=")
        if expect not in ("ok", "wrongsec") or not path:
            print("usage: lt_xprtsec.py PORT [--tls CA [--cert C --key K]] PATH=ok|wrongsec...",
                  file=sys.stderr)
            return 2
        checks.append((path, expect))
    if not a or not checks:
        print("usage: lt_xprtsec.py PORT [--tls CA [--cert C --key K]] PATH=ok|wrongsec...",
              file=sys.stderr)
        return 2
    for minor in (0, 2):
        try:
            run(int(a[0]), minor, tls, checks)
        except (OSError, EOFError, ValueError, ssl.SSLError, socket.timeout) as e:
            check("4.%d: the connection works" % minor, False, repr(e))
    return 1 if Checks.fails else 0


if __name__ == "__main__":
    sys.exit(main())
