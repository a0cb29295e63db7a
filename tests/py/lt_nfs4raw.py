#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A raw NFSv4 client for the tests: COMPOUNDs built byte by byte and sent
# over one TCP connection with AUTH_SYS credentials, so that a test can
# send what no real client sends (empty or oversized handles, "." as a
# name, cookies 1 and 2, a READDIR maxcount of 10 bytes...) and check the
# status of every operation. Minor version 0 needs no state for the
# namespace operations; for 1 and 2, Session makes a client ID and a
# session (EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE) and puts
# SEQUENCE in front of every COMPOUND.
#
# Only the results of the operations the tests look at are decoded (see
# parse_res); decoding stops at the first operation that failed, as the
# reply does.
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from resvport import connect  # noqa: E402

OP = dict(ACCESS=3, CREATE=6, GETATTR=9, GETFH=10, LINK=11, LOOKUP=15, LOOKUPP=16,
          PUTFH=22, PUTPUBFH=23, PUTROOTFH=24, READDIR=26, READLINK=27, REMOVE=28,
          RENAME=29, RESTOREFH=31, SAVEFH=32, SECINFO=33, EXCHANGE_ID=42,
          CREATE_SESSION=43, DESTROY_SESSION=44, SECINFO_NO_NAME=52, SEQUENCE=53,
          DESTROY_CLIENTID=57, RECLAIM_COMPLETE=58, READ=25, ALLOCATE=59, DEALLOCATE=62,
          READ_PLUS=68, SEEK=69, WRITE=38, CLOSE=4, LOCK=12, LOCKT=13, LOCKU=14, OPEN=18,
          OPEN_CONFIRM=20, RENEW=30, SETCLIENTID=35, SETCLIENTID_CONFIRM=36, SETATTR=34, COPY=60,
          OFFLOAD_CANCEL=66, OFFLOAD_STATUS=67, CLONE=71, GETXATTR=72, SETXATTR=73,
          LISTXATTRS=74, REMOVEXATTR=75)
OPNAME = {v: k for k, v in OP.items()}

ERR = dict(OK=0, PERM=1, NOENT=2, NXIO=6, ACCESS=13, EXIST=17, XDEV=18, NOTDIR=20,
           ISDIR=21, INVAL=22, FBIG=27, NOSPC=28, ROFS=30, NAMETOOLONG=63, NOTEMPTY=66,
           STALE=70, BADHANDLE=10001,
           BAD_COOKIE=10003, NOTSUPP=10004, TOOSMALL=10005, SERVERFAULT=10006,
           BADTYPE=10007, WRONGSEC=10016, RESOURCE=10018, NOFILEHANDLE=10020,
           NOT_SAME=10027, SYMLINK=10029, RESTOREFH=10030, ATTRNOTSUPP=10032,
           BADXDR=10036, BADNAME=10041, REP_TOO_BIG=10066, WRONG_TYPE=10083,
           OP_NOT_IN_SESSION=10071, UNION_NOTSUPP=10090, DENIED=10010, EXPIRED=10011,
           GRACE=10013, SHARE_DENIED=10015, STALE_CLIENTID=10022, STALE_STATEID=10023,
           BAD_STATEID=10025, NO_GRACE=10033, RECLAIM_BAD=10034, BADSESSION=10052,
           COMPLETE_ALREADY=10054, DELAY=10008, IO=5, BAD_SEQID=10026, BADOWNER=10039,
           REP_TOO_BIG_TO_CACHE=10067, OPENMODE=10038,
           OFFLOAD_DENIED=10091, OFFLOAD_NO_REQS=10094, NOXATTR=10095, XATTR2BIG=10096)
ERRNAME = {v: k for k, v in ERR.items()}

NF4REG, NF4DIR, NF4BLK, NF4CHR, NF4LNK, NF4SOCK, NF4FIFO = 1, 2, 3, 4, 5, 6, 7
AUTH_NONE, AUTH_SYS = 0, 1

# data_content4 (READ_PLUS segments, SEEK's sa_what)
NFS4_CONTENT_DATA, NFS4_CONTENT_HOLE = 0, 1
# the anonymous stateid (all zeros)
ANON_STATEID = b"\0" * 16

# attribute numbers used by the tests
A_TYPE, A_SIZE, A_RDATTR_ERROR, A_FILEHANDLE, A_FILEID = 1, 4, 11, 19, 20
A_MODE, A_NUMLINKS, A_TIME_ACCESS_SET, A_MOUNTED_ON_FILEID = 33, 35, 48, 55


# ---------------------------------------------------------------- checks
class Checks:
    """Counts the checks' failures (fails)."""
    fails = 0


def check(desc, cond, detail=""):
    """Print "ok DESC", or "FAIL DESC: DETAIL" and count it in Checks.fails."""
    if cond:
        print("ok " + desc)
    else:
        Checks.fails += 1
        print("FAIL " + desc + (": " + str(detail) if detail != "" else ""))


def errname(st):
    return ERRNAME.get(st, str(st))


def u32(v):
    return struct.pack(">I", v & 0xffffffff)


def u64(v):
    return struct.pack(">Q", v & 0xffffffffffffffff)


def opaque(b, fixed=False):
    if isinstance(b, str):
        b = b.encode()
    pad = b"\0" * ((4 - len(b) % 4) % 4)
    return (b"" if fixed else u32(len(b))) + b + pad


def bitmap(bits):
    bits = list(bits)
    words = [0] * max([3] + [b // 32 + 1 for b in bits])
    for b in bits:
        words[b // 32] |= 1 << (b % 32)
    n = len(words)
    while n and not words[n - 1]:
        n -= 1
    return u32(n) + b"".join(u32(w) for w in words[:n])


def bits_of(words):
    return {32 * i + b for i, w in enumerate(words) for b in range(32) if w >> b & 1}


class Dec:
    def __init__(self, b):
        self.b, self.p = b, 0

    def u32(self):
        v = struct.unpack_from(">I", self.b, self.p)[0]
        self.p += 4
        return v

    def u64(self):
        v = struct.unpack_from(">Q", self.b, self.p)[0]
        self.p += 8
        return v

    def fixed(self, n):
        v = self.b[self.p:self.p + n]
        if len(v) != n:
            raise ValueError("reply truncated")
        self.p += n + (4 - n % 4) % 4
        return v

    def opaque(self):
        return self.fixed(self.u32())

    def bitmap(self):
        return [self.u32() for _ in range(self.u32())]

    def fattr(self):
        return self.bitmap(), self.opaque()

    def cinfo(self):
        return (self.u32(), self.u64(), self.u64())


def parse_res(op, d):
    name = OPNAME.get(op)
    if name == "GETFH":
        return d.opaque()
    if name == "READDIR":
        verf, ents = d.fixed(8), []
        while d.u32():
            cookie = d.u64()
            nm = d.opaque()
            ents.append((cookie, nm, d.fattr()))
        return dict(verf=verf, entries=ents, eof=d.u32())
    if name == "CREATE":
        return dict(cinfo=d.cinfo(), attrset=d.bitmap())
    if name in ("REMOVE", "LINK"):
        return d.cinfo()
    if name == "RENAME":
        return (d.cinfo(), d.cinfo())
    if name == "READLINK":
        return d.opaque()
    if name in ("SECINFO", "SECINFO_NO_NAME"):
        flavors = []
        for _ in range(d.u32()):
            f = d.u32()
            if f == 6:  # RPCSEC_GSS: oid, qop, service
                d.opaque()
                d.u32()
                d.u32()
            flavors.append(f)
        return flavors
    if name == "GETATTR":
        return d.fattr()
    if name == "EXCHANGE_ID":
        return dict(clientid=d.u64(), seq=d.u32())
    if name == "CREATE_SESSION":
        # fore: headerpad, maxreq, maxresp, maxresp_cached, maxops, maxreqs
        sid, seq, flags = d.fixed(16), d.u32(), d.u32()
        return dict(sessionid=sid, seq=seq, seqid=seq, flags=flags,
                    fore=[d.u32() for _ in range(6)])
    if name == "SETATTR":
        return d.bitmap()
    if name == "SEQUENCE":
        return (d.fixed(16), d.u32(), d.u32(), d.u32(), d.u32(), d.u32())
    if name == "READ":
        eof = d.u32()
        return dict(eof=eof, data=d.opaque())
    if name == "READ_PLUS":
        # segments as (kind, offset, bytes) for data, (kind, offset, length) for holes
        eof, segs = d.u32(), []
        for _ in range(d.u32()):
            kind = d.u32()
            if kind == NFS4_CONTENT_DATA:
                segs.append((kind, d.u64(), d.opaque()))
            elif kind == NFS4_CONTENT_HOLE:
                segs.append((kind, d.u64(), d.u64()))
            else:
                raise ValueError("READ_PLUS: segment of unknown kind %d" % kind)
        return dict(eof=eof, segs=segs)
    if name == "SEEK":
        return dict(eof=d.u32(), offset=d.u64())
    if name == "WRITE":
        return dict(count=d.u32(), committed=d.u32(), verf=d.fixed(8))
    if name == "ACCESS":
        return dict(supported=d.u32(), access=d.u32())
    if name == "GETXATTR":
        return d.opaque()
    if name in ("SETXATTR", "REMOVEXATTR"):
        return d.cinfo()
    if name == "LISTXATTRS":
        cookie = d.u64()
        names = [d.opaque() for _ in range(d.u32())]
        return dict(cookie=cookie, names=names, eof=d.u32())
    if name == "COPY":
        cb = [d.fixed(16) for _ in range(d.u32())]
        return dict(callback=cb, count=d.u64(), committed=d.u32(), verf=d.fixed(8),
                    consecutive=d.u32(), synchronous=d.u32())
    if name == "OPEN":
        sid = d.fixed(16)
        d.cinfo()
        rflags = d.u32()
        d.bitmap()
        deleg, why = d.u32(), None
        if deleg == 3:  # OPEN_DELEGATE_NONE_EXT: why_no_delegation4
            why = d.u32()
        return dict(sid=sid, rflags=rflags, deleg=deleg, why=why)
    if name in ("OPEN_CONFIRM", "CLOSE", "LOCK", "LOCKU"):
        return dict(sid=d.fixed(16))
    if name == "SETCLIENTID":
        return dict(clientid=d.u64(), verf=d.fixed(8))
    return None


def parse_denied(d):
    """LOCK4denied, the result of a LOCK or LOCKT that is DENIED"""
    return dict(offset=d.u64(), length=d.u64(), type=d.u32(), clientid=d.u64(),
                owner=d.opaque())


def recv_exact(sock, n):
    """@n bytes from @sock (EOFError when the server closes first)"""
    b = b""
    while len(b) < n:
        c = sock.recv(n - len(b))
        if not c:
            raise EOFError("server closed the connection")
        b += c
    return b


def recv_record(sock):
    """One RPC record from @sock, its fragments joined, record marks left out"""
    data = b""
    while True:
        m = struct.unpack(">I", recv_exact(sock, 4))[0]
        data += recv_exact(sock, m & 0x7fffffff)
        if m & 0x80000000:
            return data


class Client:
    """One TCP connection; call() sends a COMPOUND and returns
    (status, [[opnum, status, results], ...])."""

    def __init__(self, port, host="127.0.0.1", uid=0, gid=0, sport=0, source=None,
                 reserved=None):
        """sport: connect from this local port (0: a reserved one when root,
        see tests/tools/resvport.py); source: from this address (default
        @host); reserved: as resvport.connect()"""
        if sport:
            self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.s.settimeout(60)
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.s.bind((source or host, sport))
            self.s.connect((host, port))
        else:
            self.s = connect(host, port, timeout=60, source=source or host, reserved=reserved)
        # a random first xid, as clients do: a connection that gets the
        # port of an earlier one is not taken for its retransmissions
        self.xid = struct.unpack(">I", os.urandom(4))[0] >> 2
        self.uid, self.gid = uid, gid

    def close(self):
        self.s.close()

    def reset(self):
        """close with a reset, leaving no TIME_WAIT: the port can be used again"""
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.s.close()

    def call(self, minor, ops, tag=b"", xid=None):
        """xid: send with this one (a retransmission), else the next"""
        self.send(minor, ops, tag, xid)
        return self._reply()

    def send(self, minor, ops, tag=b"", xid=None):
        """Send a COMPOUND as call() does without waiting for its reply
        (pipelining: _reply() reads the next one, its xid in reply_xid);
        returns its xid."""
        if xid is None:
            self.xid += 1
        self.last_xid = self.xid if xid is None else xid
        cred = u32(0) + opaque(b"lt") + u32(self.uid) + u32(self.gid) + u32(0)
        rec = (u32(self.last_xid) + u32(0) + u32(2) + u32(100003) + u32(4) + u32(1) +
               u32(1) + opaque(cred) + u32(0) + u32(0))
        rec += opaque(tag) + u32(minor) + u32(len(ops))
        for name, a in ops:
            rec += u32(OP[name] if isinstance(name, str) else name) + a
        self.s.sendall(u32(0x80000000 | len(rec)) + rec)
        return self.last_xid

    def _recvn(self, n):
        return recv_exact(self.s, n)

    def _reply(self):
        data = recv_record(self.s)
        self.last_len = len(data)  # the reply's size, record marks left out
        d = Dec(data)
        self.reply_xid = d.u32()
        if d.u32() != 1 or d.u32() != 0:
            raise ValueError("not an accepted reply")
        d.u32()
        d.opaque()  # verifier
        astat = d.u32()
        if astat != 0:
            raise ValueError("RPC accept_stat %d" % astat)
        status = d.u32()
        d.opaque()  # tag
        res = []
        for _ in range(d.u32()):
            op, st = d.u32(), d.u32()
            if st == 0:
                r = parse_res(op, d)
            elif st == ERR["DENIED"] and OPNAME.get(op) in ("LOCK", "LOCKT"):
                r = parse_denied(d)
            else:
                r = None
            res.append([op, st, r])
            if st != 0:
                break
        return status, res


class Session:
    """Minor version 1 or 2: a client ID and a session; call(ops) puts
    SEQUENCE first and returns the results of @ops only."""

    def __init__(self, c, minor=1, maxresp=1 << 20, maxreq=1 << 20, owner=None,
                 reclaim_complete=True, verf=b"\0" * 8):
        self.c, self.minor = c, minor
        if owner is None:
            owner = b"lt-nfs4raw-%d-%d" % (os.getpid(), id(self))
        st, r = c.call(minor, [("EXCHANGE_ID", verf + opaque(owner) + u32(0x1) + u32(0) +
                                u32(0))])
        if st:
            raise ValueError("EXCHANGE_ID: " + errname(st))
        ex = r[0][2]
        chan = u32(0) + u32(maxreq) + u32(maxresp) + u32(8192) + u32(16) + u32(8) + u32(0)
        st, r = c.call(minor, [("CREATE_SESSION", u64(ex["clientid"]) + u32(ex["seq"]) + u32(0) +
                                chan + chan + u32(0x40000000) + u32(1) + u32(AUTH_NONE))])
        if st:
            raise ValueError("CREATE_SESSION: " + errname(st))
        self.sid, self.seq = r[0][2]["sessionid"], 1
        self.fore = r[0][2]["fore"]  # the fore channel's attributes granted
        self.clientid = ex["clientid"]
        if reclaim_complete:
            self.call([("RECLAIM_COMPLETE", u32(0))])

    def call(self, ops):
        seq = ("SEQUENCE", self.sid + u32(self.seq) + u32(0) + u32(0) + u32(0))
        self.seq += 1
        st, r = self.c.call(self.minor, [seq] + ops)
        if r and r[0][0] == OP["SEQUENCE"] and r[0][1] == 0:
            r = r[1:]
        return st, r


class Conn:
    """call(ops) for minor version 0 (plain) or 1+ (through a Session)."""

    def __init__(self, port, minor=0, uid=0, gid=0, maxresp=1 << 20, maxreq=1 << 20):
        self.client = Client(port, uid=uid, gid=gid)
        self.minor = minor
        self.ses = Session(self.client, minor, maxresp, maxreq) if minor else None

    def call(self, ops):
        if self.ses:
            return self.ses.call(ops)
        return self.client.call(0, ops)


# ---------------------------------------------------------------- argument builders
def noargs(name):
    return (name, b"")


def putfh(fh):
    return ("PUTFH", opaque(fh))


def lookup(name):
    return ("LOOKUP", opaque(name))


def readdir(cookie=0, verf=b"\0" * 8, dircount=0, maxcount=32768, attrs=(A_TYPE, A_FILEID)):
    return ("READDIR", u64(cookie) + opaque(verf, True) + u32(dircount) + u32(maxcount) +
            bitmap(attrs))


def create(type_, name, link=None, spec=(0, 0), mode=None):
    a = u32(type_)
    if type_ == NF4LNK:
        a += opaque(link)
    elif type_ in (NF4BLK, NF4CHR):
        a += u32(spec[0]) + u32(spec[1])
    a += opaque(name)
    if mode is None:
        a += bitmap([]) + opaque(b"")
    else:
        a += bitmap([A_MODE]) + opaque(u32(mode))
    return ("CREATE", a)


def remove(name):
    return ("REMOVE", opaque(name))


def rename(old, new):
    return ("RENAME", opaque(old) + opaque(new))


def link(name):
    return ("LINK", opaque(name))


def secinfo(name):
    return ("SECINFO", opaque(name))


def secinfo_no_name(style):
    return ("SECINFO_NO_NAME", u32(style))


def getattr_(bits):
    return ("GETATTR", bitmap(bits))


def read(offset, count, sid=ANON_STATEID):
    return ("READ", sid + u64(offset) + u32(count))


def read_plus(offset, count, sid=ANON_STATEID):
    return ("READ_PLUS", sid + u64(offset) + u32(count))


def seek(offset, what, sid=ANON_STATEID):
    return ("SEEK", sid + u64(offset) + u32(what))


def allocate(offset, length, sid=ANON_STATEID):
    return ("ALLOCATE", sid + u64(offset) + u64(length))


def write(offset, data, stable=2, sid=ANON_STATEID):
    """stable: 0 UNSTABLE4, 1 DATA_SYNC4, 2 FILE_SYNC4"""
    return ("WRITE", sid + u64(offset) + u32(stable) + opaque(data))


def copy(src_off, dst_off, count, src_sid=ANON_STATEID, dst_sid=ANON_STATEID,
         consecutive=True, synchronous=True, sources=()):
    """COPY (SAVED_FH: the source, CURRENT_FH: the destination); @sources:
    netloc4 entries as (type, bytes) for an inter-server copy"""
    nl = b"".join(u32(t) + opaque(v) for t, v in sources)
    return ("COPY", src_sid + dst_sid + u64(src_off) + u64(dst_off) + u64(count) +
            u32(int(consecutive)) + u32(int(synchronous)) + u32(len(sources)) + nl)


def clone(src_off, dst_off, count, src_sid=ANON_STATEID, dst_sid=ANON_STATEID):
    """CLONE (SAVED_FH: the source, CURRENT_FH: the destination)"""
    return ("CLONE", src_sid + dst_sid + u64(src_off) + u64(dst_off) + u64(count))


SETXATTR4_EITHER, SETXATTR4_CREATE, SETXATTR4_REPLACE = 0, 1, 2


def getxattr(name):
    return ("GETXATTR", opaque(name))


def setxattr(name, value, option=SETXATTR4_EITHER):
    return ("SETXATTR", u32(option) + opaque(name) + opaque(value))


def listxattrs(cookie=0, maxcount=65536):
    return ("LISTXATTRS", u64(cookie) + u32(maxcount))


def removexattr(name):
    return ("REMOVEXATTR", opaque(name))


def access(bits):
    return ("ACCESS", u32(bits))


def deallocate(offset, length, sid=ANON_STATEID):
    return ("DEALLOCATE", sid + u64(offset) + u64(length))


# ---------------------------------------------------------------- state (OPEN, LOCK, 4.0 client ID)
SHARE_ACCESS_READ, SHARE_ACCESS_WRITE, SHARE_ACCESS_BOTH = 1, 2, 3
READ_LT, WRITE_LT = 1, 2
CLAIM_NULL, CLAIM_PREVIOUS, CLAIM_FH = 0, 1, 4
OPEN4_RESULT_CONFIRM = 0x2


def open_(seqid, owner, clientid=0, access=SHARE_ACCESS_BOTH, deny=0, create=False,
          claim=CLAIM_NULL, name=b""):
    """OPEN; claim CLAIM_NULL opens @name in the current directory,
    CLAIM_PREVIOUS (a reclaim) and CLAIM_FH the current filehandle."""
    a = u32(seqid) + u32(access) + u32(deny) + u64(clientid) + opaque(owner)
    a += (u32(1) + u32(0) + bitmap([]) + opaque(b"")) if create else u32(0)
    a += u32(claim)
    if claim == CLAIM_NULL:
        a += opaque(name)
    elif claim == CLAIM_PREVIOUS:
        a += u32(0)  # no delegation
    return ("OPEN", a)


def open_confirm(sid, seqid):
    return ("OPEN_CONFIRM", sid + u32(seqid))


def close(seqid, sid):
    return ("CLOSE", u32(seqid) + sid)


def lock_new(type_, offset, length, open_seqid, open_sid, lock_seqid, owner, clientid=0,
             reclaim=False):
    """LOCK by a new lock-owner (open_to_lock_owner4)"""
    return ("LOCK", u32(type_) + u32(reclaim) + u64(offset) + u64(length) + u32(1) +
            u32(open_seqid) + open_sid + u32(lock_seqid) + u64(clientid) + opaque(owner))


def lock_old(type_, offset, length, lock_sid, lock_seqid):
    """LOCK by a lock-owner that has a lock stateid (exist_lock_owner4)"""
    return ("LOCK", u32(type_) + u32(0) + u64(offset) + u64(length) + u32(0) + lock_sid +
            u32(lock_seqid))


def locku(type_, seqid, lock_sid, offset, length):
    return ("LOCKU", u32(type_) + u32(seqid) + lock_sid + u64(offset) + u64(length))


def setattr_(attrs, values=b"", sid=ANON_STATEID):
    """SETATTR of @attrs (numbers) whose XDR values, in order, are @values"""
    return ("SETATTR", sid + bitmap(attrs) + opaque(values))


def lockt(type_, offset, length, owner, clientid=0):
    return ("LOCKT", u32(type_) + u64(offset) + u64(length) + u64(clientid) + opaque(owner))


def setclientid(verf, name):
    # no callback: an empty netid and address, program 0
    return ("SETCLIENTID", verf + opaque(name) + u32(0) + opaque(b"tcp") + opaque(b"") + u32(0))


def setclientid_confirm(clientid, verf):
    return ("SETCLIENTID_CONFIRM", u64(clientid) + verf)


def lock_exist(type_, offset, length, lock_sid, lock_seqid, reclaim=False):
    """LOCK by a lock-owner that has a lock stateid on the file (exist_lock_owner4)"""
    return ("LOCK", u32(type_) + u32(reclaim) + u64(offset) + u64(length) + u32(0) +
            lock_sid + u32(lock_seqid))


def locku(type_, seqid, lock_sid, offset, length):
    return ("LOCKU", u32(type_) + u32(seqid) + lock_sid + u64(offset) + u64(length))
