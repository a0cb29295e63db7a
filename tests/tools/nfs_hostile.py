#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
NFSv4 protocol misuse against lacunad, one check at a time, each asserting
the exact answer the RFCs ask for and that the server still serves a
well-behaved client afterwards:

    nfs_hostile.py --port P [--host H] [--stale-path NAME] [CHECK...]
    nfs_hostile.py get-fh --port P PATH      print the handle of PATH (hex)
    nfs_hostile.py check-fh --port P HEX     print "0 FILEID" or the status of PUTFH+GETATTR
    nfs_hostile.py fill --port P NAME        WRITE 1 MiB chunks to NAME until an error, print it

Checks (default: all): rpc_errors (unknown program, version, procedure,
garbage COMPOUND header), minor3, illegal_op, badxdr, ops_10000 (4.0 and
4.1), sequence (bad session, bad slot, misordered seqid, an exact replay
of a retransmission, a retry of an uncached slot seqid), first_op (4.1
ops outside a session), forged_fh, stale_fh (with --stale-path: a file
in the export root that the check's caller removes when told to, via
stdin/stdout handshake "remove NAME" / "removed"), pseudo_root.

Prints "ok - NAME" or "not ok - NAME: why" and exits 0 when all passed.
"""

import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import (RpcConn, xdr_opaque, xdr_u32, xdr_u64,  # noqa: E402
                        auth_sys, call_record, frame)

OP_ACCESS, OP_GETATTR, OP_GETFH, OP_LOOKUP = 3, 9, 10, 15
OP_PUTFH, OP_PUTROOTFH, OP_READ = 22, 24, 25
OP_WRITE = 38
OP_SETCLIENTID = 35
OP_EXCHANGE_ID, OP_CREATE_SESSION, OP_DESTROY_SESSION = 42, 43, 44
OP_SEQUENCE, OP_RECLAIM_COMPLETE = 53, 58
OP_ILLEGAL = 10044

NFS4_OK = 0
NFS4ERR = dict(NOENT=2, STALE=70, BADHANDLE=10001, NOFILEHANDLE=10020, RESOURCE=10018,
               MINOR_VERS_MISMATCH=10021, BADXDR=10036, OP_ILLEGAL=10044,
               BADSESSION=10052, BADSLOT=10053, SEQ_MISORDERED=10063,
               SEQUENCE_POS=10064, RETRY_UNCACHED_REP=10068, TOO_MANY_OPS=10070,
               OP_NOT_IN_SESSION=10071, NOT_ONLY_OP=10081)


class Fail(Exception):
    pass


def expect(what, got, want):
    if got != want:
        raise Fail("%s: got %r, expected %r" % (what, got, want))


def compound(minor, ops, tag=b""):
    return xdr_opaque(tag) + xdr_u32(minor) + xdr_u32(len(ops)) + b"".join(ops)


def parse(body):
    """(status, [(op, status, result bytes of the last op)...]) — results only for the last op."""
    status, taglen = struct.unpack(">II", body[:8])
    pos = 8 + taglen + (4 - taglen % 4) % 4
    (n,) = struct.unpack(">I", body[pos:pos + 4])
    pos += 4
    return status, n, body[pos:]


def op_statuses(rest, n, sizes):
    """Walk n results whose bodies have the fixed sizes in @sizes (op -> bytes, on NFS4_OK)."""
    out, pos = [], 0
    for _ in range(n):
        op, st = struct.unpack(">II", rest[pos:pos + 8])
        pos += 8
        out.append((op, st))
        if st == NFS4_OK:
            if op == OP_GETFH:
                (ln,) = struct.unpack(">I", rest[pos:pos + 4])
                pos += 4 + ln + (4 - ln % 4) % 4
            else:
                pos += sizes.get(op, 0)
    return out


class Client:
    def __init__(self, host, port):
        self.conn = RpcConn(host, port)

    def call(self, args, raw_args=False):
        rep = self.conn.call(1, args, cred=auth_sys())
        if not rep.ok:
            raise Fail("RPC not accepted: stat %d accept %d" % (rep.stat, rep.accept))
        return rep.body

    def c40(self, ops):
        return parse(self.call(compound(0, ops)))

    # ---- 4.1 session
    def session(self, slots=4):
        owner = b"hostile-%d-%d" % (os.getpid(), id(self))
        eid = (xdr_u32(OP_EXCHANGE_ID) + b"\x07" * 8 + xdr_opaque(owner) + xdr_u32(0) +
               xdr_u32(0) + xdr_u32(0))
        st, n, rest = parse(self.call(compound(1, [eid])))
        expect("EXCHANGE_ID", st, NFS4_OK)
        clientid, seq = struct.unpack(">QI", rest[8:20])
        self.clientid = clientid
        attrs = (xdr_u32(0) + xdr_u32(1 << 20) + xdr_u32(1 << 20) + xdr_u32(8192) +
                 xdr_u32(16) + xdr_u32(slots) + xdr_u32(0))
        battrs = (xdr_u32(0) + xdr_u32(4096) + xdr_u32(4096) + xdr_u32(0) + xdr_u32(2) +
                  xdr_u32(1) + xdr_u32(0))
        cs = (xdr_u32(OP_CREATE_SESSION) + xdr_u64(clientid) + xdr_u32(seq) + xdr_u32(0) +
              attrs + battrs + xdr_u32(0x40000000) + xdr_u32(1) + xdr_u32(0))
        st, n, rest = parse(self.call(compound(1, [cs])))
        expect("CREATE_SESSION", st, NFS4_OK)
        self.sid = rest[8:24]
        self.seq = {}
        return self.sid

    def sequence_op(self, slot=0, seqid=None, sid=None, cachethis=False):
        if seqid is None:
            seqid = self.seq.get(slot, 0) + 1
            self.seq[slot] = seqid
        return (xdr_u32(OP_SEQUENCE) + (sid or self.sid) + xdr_u32(seqid) + xdr_u32(slot) +
                xdr_u32(3) + xdr_u32(1 if cachethis else 0))


# ---------------------------------------------------------------- checks

def check_rpc_errors(h, p, a):
    c = RpcConn(h, p)
    xid = c.next_xid()
    c.send(frame(call_record(xid, 0, prog=100005)))
    r = c.recv_reply()
    expect("unknown program: accept_stat", r.accept, 1)        # PROG_UNAVAIL
    xid = c.next_xid()
    c.send(frame(call_record(xid, 0, vers=3)))
    r = c.recv_reply()
    expect("NFSv3: accept_stat", r.accept, 2)                  # PROG_MISMATCH
    expect("NFSv3: versions", struct.unpack(">II", r.body[:8]), (4, 4))
    xid = c.next_xid()
    c.send(frame(call_record(xid, 7)))
    r = c.recv_reply()
    expect("procedure 7: accept_stat", r.accept, 3)            # PROC_UNAVAIL
    xid = c.next_xid()
    c.send(frame(call_record(xid, 1, b"\xff\xff\xff\xff")))    # tag length past the record
    r = c.recv_reply()
    expect("garbage COMPOUND header: accept_stat", r.accept, 4)  # GARBAGE_ARGS
    expect("still serving after garbage", c.null(), True)


def check_minor3(h, p, a):
    st, n, rest = Client(h, p).c40([])  # warm-up: 4.0 empty compound is fine
    expect("empty 4.0 COMPOUND", st, NFS4_OK)
    cl = Client(h, p)
    st, n, rest = parse(cl.call(compound(3, [xdr_u32(OP_PUTROOTFH)])))
    expect("minor version 3", st, NFS4ERR["MINOR_VERS_MISMATCH"])
    expect("minor version 3: results", n, 0)


def check_illegal_op(h, p, a):
    cl = Client(h, p)
    for bad in (0, 1, 2, 40, 9999, 0xFFFFFFFF):
        st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(bad)])
        expect("op %d: status" % bad, st, NFS4ERR["OP_ILLEGAL"])
        ops = op_statuses(rest, n, {})
        expect("op %d: results" % bad, ops, [(OP_PUTROOTFH, 0), (OP_ILLEGAL, NFS4ERR["OP_ILLEGAL"])])


def check_badxdr(h, p, a):
    cl = Client(h, p)
    # LOOKUP whose name length runs past the record
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_LOOKUP) + xdr_u32(1000) + b"ab"])
    expect("LOOKUP past the record", st, NFS4ERR["BADXDR"])
    # fewer ops than announced
    st, n, rest = parse(cl.call(xdr_opaque(b"") + xdr_u32(0) + xdr_u32(3) + xdr_u32(OP_PUTROOTFH)))
    expect("missing ops", st, NFS4ERR["BADXDR"])
    # a GETATTR bitmap longer than allowed
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_GETATTR) + xdr_u32(100000)])
    expect("huge bitmap", st, NFS4ERR["BADXDR"])
    expect("still serving", cl.conn.null(), True)


def check_ops_10000(h, p, a):
    cl = Client(h, p)
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH)] * 10000)
    expect("10,000 ops (4.0)", st, NFS4ERR["RESOURCE"])
    cl.session()
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op()] + [xdr_u32(OP_PUTROOTFH)] * 10000)))
    expect("10,000 ops (4.1)", st, NFS4ERR["TOO_MANY_OPS"])
    expect("still serving", cl.conn.null(), True)


def check_first_op(h, p, a):
    cl = Client(h, p)
    st, n, rest = parse(cl.call(compound(1, [xdr_u32(OP_PUTROOTFH)])))
    expect("PUTROOTFH without SEQUENCE", st, NFS4ERR["OP_NOT_IN_SESSION"])
    cl.session()
    st, n, rest = parse(cl.call(compound(1, [xdr_u32(OP_PUTROOTFH), cl.sequence_op()])))
    expect("SEQUENCE second", st, NFS4ERR["OP_NOT_IN_SESSION"])
    cl.seq[0] = 0  # that SEQUENCE never ran
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(), cl.sequence_op(slot=1)])))
    expect("two SEQUENCEs", st, NFS4ERR["SEQUENCE_POS"])


def check_sequence(h, p, a):
    cl = Client(h, p)
    cl.session(slots=4)
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(sid=b"\x55" * 16, seqid=1)])))
    expect("unknown session", st, NFS4ERR["BADSESSION"])
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(slot=1000, seqid=1)])))
    expect("slot past the table", st, NFS4ERR["BADSLOT"])
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(slot=0, seqid=5)])))
    expect("seqid jumping ahead", st, NFS4ERR["SEQ_MISORDERED"])
    # a retransmission: same slot and seqid, cachethis -> the very same bytes
    op = cl.sequence_op(slot=0, cachethis=True)
    args = compound(1, [op, xdr_u32(OP_PUTROOTFH), xdr_u32(OP_GETFH)])
    first = cl.call(args)
    st, n, rest = parse(first)
    expect("SEQUENCE+PUTROOTFH+GETFH", st, NFS4_OK)
    again = cl.call(args)
    expect("replayed reply identical", again == first, True)
    # a different request on the same slot and seqid is a false retry or a replay: never runs twice
    other = cl.call(compound(1, [op, xdr_u32(OP_PUTROOTFH)]))
    st2, n2, rest2 = parse(other)
    if st2 == NFS4_OK and other != first:
        raise Fail("a retry with other ops ran again")
    # slot 1, not cached: a retry must not run again either
    op1 = cl.sequence_op(slot=1, cachethis=False)
    args1 = compound(1, [op1, xdr_u32(OP_PUTROOTFH), xdr_u32(OP_GETFH)])
    st, n, rest = parse(cl.call(args1))
    expect("uncached request", st, NFS4_OK)
    st, n, rest = parse(cl.call(args1))
    if st not in (NFS4_OK, NFS4ERR["RETRY_UNCACHED_REP"]):
        raise Fail("retry of an uncached request: status %d" % st)
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(slot=0)])))
    expect("next seqid after all that", st, NFS4_OK)


def check_forged_fh(h, p, a):
    cl = Client(h, p)
    for fh in (b"", b"\x00" * 8, os.urandom(64), b"\x01\x01\x00\x00" + os.urandom(20),
               b"\x01\x02\x00\x00" + b"\x00\x00\x00\x63" + b"\x00" * 4, b"\x09" * 129):
        st, n, rest = cl.c40([xdr_u32(OP_PUTFH) + xdr_opaque(fh), xdr_u32(OP_GETFH)])
        if len(fh) > 128:
            # past opaque<NFS4_FHSIZE>: not XDR (nfsd), or a handle this server never made
            if st not in (NFS4ERR["BADXDR"], NFS4ERR["BADHANDLE"]):
                raise Fail("PUTFH of %d bytes: status %d" % (len(fh), st))
        elif st not in (NFS4ERR["BADHANDLE"], NFS4ERR["STALE"]):
            raise Fail("forged handle %s: status %d" % (fh[:16].hex(), st))
    st, n, rest = cl.c40([xdr_u32(OP_GETFH)])
    expect("GETFH without a handle", st, NFS4ERR["NOFILEHANDLE"])
    expect("still serving", cl.conn.null(), True)


def check_stale_fh(h, p, a):
    if not a.stale_path:
        return "skipped: no --stale-path"
    cl = Client(h, p)
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_LOOKUP) + xdr_opaque(a.stale_path.encode()),
                          xdr_u32(OP_GETFH)])
    expect("LOOKUP of the file", st, NFS4_OK)
    ops = op_statuses(rest, n, {})
    pos = 8 * 3  # PUTROOTFH, LOOKUP results, then GETFH op+status
    (ln,) = struct.unpack(">I", rest[pos:pos + 4])
    fh = rest[pos + 4:pos + 4 + ln]
    st, n, rest = cl.c40([xdr_u32(OP_PUTFH) + xdr_opaque(fh), xdr_u32(OP_GETATTR) + xdr_u32(1) + xdr_u32(2)])
    expect("GETATTR before removal", st, NFS4_OK)
    print("remove %s" % a.stale_path, flush=True)
    if sys.stdin.readline().strip() != "removed":
        raise Fail("the caller did not remove the file")
    st, n, rest = cl.c40([xdr_u32(OP_PUTFH) + xdr_opaque(fh), xdr_u32(OP_GETATTR) + xdr_u32(1) + xdr_u32(2)])
    expect("handle of a removed file", st, NFS4ERR["STALE"])


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def check_lease_expiry(h, p, a):
    """A client that stops renewing loses its session and its open file once the lease ends."""
    if not a.lease or not a.pid or not a.open_path:
        return "skipped: needs --lease, --pid and --open-path"
    cl = Client(h, p)
    cl.session()
    # nothing to reclaim: said before the first OPEN (RFC 8881 section 18.51.3)
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(),
                                             xdr_u32(OP_RECLAIM_COMPLETE) + xdr_u32(0)])))
    expect("RECLAIM_COMPLETE", st, NFS4_OK)
    before = fd_count(a.pid)
    op_open = (xdr_u32(18) + xdr_u32(0) + xdr_u32(1) + xdr_u32(0) + xdr_u64(cl.clientid) +
               xdr_opaque(b"lease-owner") + xdr_u32(0) + xdr_u32(0) +
               xdr_opaque(a.open_path.encode()))
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op(), xdr_u32(OP_PUTROOTFH), op_open])))
    expect("OPEN", st, NFS4_OK)
    during = fd_count(a.pid)
    if during <= before:
        raise Fail("the open file holds no fd (%d before, %d after)" % (before, during))
    import time
    time.sleep(a.lease * 2 + 3)
    st, n, rest = parse(cl.call(compound(1, [cl.sequence_op()])))
    expect("SEQUENCE after the lease expired", st, NFS4ERR["BADSESSION"])
    after = fd_count(a.pid)
    if after >= during:
        raise Fail("the expired open still holds its fd (%d during, %d after)" % (during, after))


def check_pseudo_root(h, p, a):
    cl = Client(h, p)
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_LOOKUP) + xdr_opaque(b"no-such-name-here")])
    expect("LOOKUP of a missing name", st, NFS4ERR["NOENT"])
    st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_LOOKUP) + xdr_opaque(b"..")])
    expect("LOOKUP ..", st, 10041)  # BADNAME


CHECKS = [("rpc_errors", check_rpc_errors), ("minor3", check_minor3),
          ("illegal_op", check_illegal_op), ("badxdr", check_badxdr),
          ("ops_10000", check_ops_10000), ("first_op", check_first_op),
          ("sequence", check_sequence), ("forged_fh", check_forged_fh),
          ("stale_fh", check_stale_fh), ("pseudo_root", check_pseudo_root),
          ("lease_expiry", check_lease_expiry)]


def get_fh(h, p, path):
    """The handle of PATH (components from the pseudo root), hex; exits 1 on an error."""
    cl = Client(h, p)
    ops = [xdr_u32(OP_PUTROOTFH)]
    ops += [xdr_u32(OP_LOOKUP) + xdr_opaque(c.encode()) for c in path.split("/") if c]
    ops.append(xdr_u32(OP_GETFH))
    st, n, rest = cl.c40(ops)
    if st != NFS4_OK:
        print("error %d" % st)
        sys.exit(1)
    pos = 8 * (n - 1) + 8
    (ln,) = struct.unpack(">I", rest[pos:pos + 4])
    print(rest[pos + 4:pos + 4 + ln].hex())


def check_fh(h, p, fh_hex):
    """Status of PUTFH + GETATTR(type, fileid) of a handle, as a number, then the fileid."""
    cl = Client(h, p)
    st, n, rest = cl.c40([xdr_u32(OP_PUTFH) + xdr_opaque(bytes.fromhex(fh_hex)),
                          xdr_u32(OP_GETATTR) + xdr_u32(1) + xdr_u32((1 << 1) | (1 << 20))])
    if st != NFS4_OK:
        print(st)
        return
    # PUTFH op+status, GETATTR op+status, bitmap (count + words), attr_vals length
    pos = 16
    (nw,) = struct.unpack(">I", rest[pos:pos + 4])
    pos += 4 + 4 * nw + 4
    ftype, fileid = struct.unpack(">IQ", rest[pos:pos + 12])
    print("0 %d" % fileid)


def fill(h, p, name):
    """WRITE (anonymous stateid, FILE_SYNC) 1 MiB chunks to the existing file NAME until an error."""
    cl = Client(h, p)
    data = b"\xa5" * (1 << 20)
    off = 0
    while off < (64 << 30):
        st, n, rest = cl.c40([xdr_u32(OP_PUTROOTFH), xdr_u32(OP_LOOKUP) + xdr_opaque(name.encode()),
                              xdr_u32(OP_WRITE) + b"\0" * 16 + xdr_u64(off) + xdr_u32(2) +
                              xdr_opaque(data)])
        if st != NFS4_OK:
            print(st)
            return
        off += len(data)
    print("no error after %d bytes" % off)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "fill":
        ap = argparse.ArgumentParser()
        ap.add_argument("mode")
        ap.add_argument("--host", default="127.0.0.1")
        ap.add_argument("--port", type=int, required=True)
        ap.add_argument("arg")
        a = ap.parse_args()
        fill(a.host, a.port, a.arg)
        return
    if len(sys.argv) > 1 and sys.argv[1] in ("get-fh", "check-fh"):
        ap = argparse.ArgumentParser()
        ap.add_argument("mode")
        ap.add_argument("--host", default="127.0.0.1")
        ap.add_argument("--port", type=int, required=True)
        ap.add_argument("arg")
        a = ap.parse_args()
        (get_fh if a.mode == "get-fh" else check_fh)(a.host, a.port, a.arg)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--stale-path")
    ap.add_argument("--lease", type=int, help="the server's lease time (lease_expiry)")
    ap.add_argument("--pid", type=int, help="the server's PID (lease_expiry counts its fds)")
    ap.add_argument("--open-path", help="a file in the export root to OPEN (lease_expiry)")
    ap.add_argument("checks", nargs="*")
    a = ap.parse_args()
    names = a.checks or [n for n, _ in CHECKS]
    failed = 0
    for name, fn in CHECKS:
        if name not in names:
            continue
        try:
            res = fn(a.host, a.port, a)
            print("ok - %s%s" % (name, (" # " + res) if res else ""), flush=True)
        except Exception as e:  # noqa: BLE001 - any failure is a failed check
            failed += 1
            print("not ok - %s: %s: %s" % (name, type(e).__name__, e), flush=True)
    try:
        ok = RpcConn(a.host, a.port).null()
    except OSError as e:
        ok = False
        print("not ok - server alive at the end: %s" % e)
    if not ok:
        failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
