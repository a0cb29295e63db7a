#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) smoke test against a running lacunad, as
# tests/integ/nfs_tls_smoke.sh starts it: the AUTH_TLS probe, then TLS
# 1.3 on the same connection with Python's ssl module, then a NULL call
# and a COMPOUND (PUTROOTFH, GETATTR) inside TLS, and a second probe
# inside TLS refused like any unknown flavor. "off" checks that a server
# without a certificate answers the probe with AUTH_ERROR AUTH_BADCRED.
#
# usage: nfs_tls_smoke.py PORT tls CAFILE [CERT KEY] | PORT off
import os
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lt_nfs4raw as raw  # noqa: E402

AUTH_TLS = 7
PROG, VERS = 100003, 4


def null_call(cl, flavor):
    """send a NULL call with credential @flavor (empty body), return the reply record"""
    cl.xid += 1
    # xid, CALL, rpcvers, prog, vers, proc 0, credential (empty), verifier AUTH_NONE (empty)
    rec = struct.pack(">10I", cl.xid, 0, 2, PROG, VERS, 0, flavor, 0, 0, 0)
    cl.s.sendall(struct.pack(">I", 0x80000000 | len(rec)) + rec)
    data = b""
    while True:
        m = struct.unpack(">I", cl._recvn(4))[0]
        data += cl._recvn(m & 0x7fffffff)
        if m & 0x80000000:
            return data


def words(data, n):
    return struct.unpack(">%dI" % n, data[:4 * n])


def starttls(port, cafile, cert=None, key=None, maxver=None):
    """a connection that made the probe and the handshake; (client, ssl socket)"""
    cl = raw.Client(port)
    rep = null_call(cl, AUTH_TLS)
    xid, mtype, stat, vflav, vlen = words(rep, 5)
    raw.check("probe: accepted reply to the AUTH_TLS NULL call", (mtype, stat) == (1, 0),
              (mtype, stat))
    raw.check("probe: verifier AUTH_NONE holding STARTTLS",
              vflav == 0 and vlen == 8 and rep[20:28] == b"STARTTLS", rep[:32].hex())
    raw.check("probe: accept_stat SUCCESS", len(rep) == 32 and words(rep[28:], 1)[0] == 0,
              rep.hex())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile)
    ctx.check_hostname = False
    if cert:
        ctx.load_cert_chain(cert, key)
    if maxver:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.maximum_version = maxver
    cl.s = ctx.wrap_socket(cl.s, server_hostname="localhost")
    return cl


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "off":
        cl = raw.Client(port)
        rep = null_call(cl, AUTH_TLS)
        _, mtype, stat, rstat, astat = words(rep, 5)
        raw.check("no certificate: the probe gets MSG_DENIED AUTH_ERROR AUTH_BADCRED",
                  (mtype, stat, rstat, astat) == (1, 1, 1, 1), rep.hex())
        st, _ = cl.call(0, [("PUTROOTFH", b""), ("GETATTR", raw.bitmap([raw.A_TYPE]))])
        raw.check("no certificate: the connection still serves COMPOUNDs", st == 0, st)
        cl.close()
        return
    cafile = sys.argv[3]
    cert, key = (sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else (None, None)
    cl = starttls(port, cafile, cert, key)
    raw.check("TLS 1.3 negotiated", cl.s.version() == "TLSv1.3", cl.s.version())
    print("# cipher", cl.s.cipher())
    rep = null_call(cl, raw.AUTH_NONE)
    raw.check("NULL inside TLS: accepted SUCCESS", words(rep, 6)[1:] == (1, 0, 0, 0, 0),
              rep.hex())
    st, res = cl.call(0, [("PUTROOTFH", b""), ("GETATTR", raw.bitmap([raw.A_TYPE]))])
    raw.check("COMPOUND PUTROOTFH GETATTR inside TLS: NFS4_OK", st == 0 and len(res) == 2,
              (st, res))
    rep = null_call(cl, AUTH_TLS)
    raw.check("a second probe inside TLS: AUTH_ERROR AUTH_BADCRED",
              words(rep, 5)[1:] == (1, 1, 1, 1), rep.hex())
    st, _ = cl.call(0, [("PUTROOTFH", b"")])
    raw.check("the TLS connection still serves after it", st == 0, st)
    cl.close()

    # a client that offers only TLS 1.2 is refused
    try:
        starttls(port, cafile, maxver=ssl.TLSVersion.TLSv1_2)
        raw.check("TLS 1.2 refused", False, "handshake succeeded")
    except (ssl.SSLError, OSError) as e:
        raw.check("TLS 1.2 refused", True)
        print("# %s" % e)
    sys.exit(1 if raw.Checks.fails else 0)


if __name__ == "__main__":
    main()
    sys.exit(1 if raw.Checks.fails else 0)
