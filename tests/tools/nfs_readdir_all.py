#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
List a whole directory with raw NFSv4 READDIRs (tests/py/lt_nfs4raw.py) and
check what came back:

    nfs_readdir_all.py --port P --dir NAME --count N [--minor M]

READDIR of export-root directory NAME, asking for type, fileid and
filehandle, from cookie 0 until eof, each call going on from the last
cookie with the verifier the server gave. Every call must succeed (a
NFS4ERR_DELAY is a failure: it is what a server short of fds answered),
the names must be exactly f0 .. f{N-1}, each once, with distinct
fileids, and a LOOKUP of a few of them must give the same handle and
fileid as READDIR did. Prints a summary and "ok" or "not ok: why";
exits 0 or 1.
"""
import argparse
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import lt_nfs4raw as raw  # noqa: E402


def attr_vals(fattr):
    """fileid and filehandle out of a fattr4 of (type, filehandle, fileid)."""
    words, vals = fattr
    bits = raw.bits_of(words)
    d = raw.Dec(vals)
    out = {}
    for b in sorted(bits):
        if b == raw.A_TYPE:
            out["type"] = d.u32()
        elif b == raw.A_FILEHANDLE:
            out["fh"] = d.opaque()
        elif b == raw.A_FILEID:
            out["fileid"] = d.u64()
        else:
            raise ValueError("unexpected attribute %d" % b)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--minor", type=int, default=1)
    a = ap.parse_args()
    conn = raw.Conn(a.port, minor=a.minor)
    attrs = (raw.A_TYPE, raw.A_FILEHANDLE, raw.A_FILEID)
    cookie, verf, calls, seen = 0, b"\0" * 8, 0, {}
    t0 = time.time()
    while True:
        st, r = conn.call([raw.noargs("PUTROOTFH"), raw.lookup(a.dir),
                           raw.readdir(cookie, verf, maxcount=65536, attrs=attrs)])
        calls += 1
        if st:
            print("not ok: READDIR %d (cookie %d, %d entries so far): %s" %
                  (calls, cookie, len(seen), raw.errname(st)))
            return 1
        res = r[2][2]
        verf = res["verf"]
        for ck, name, fattr in res["entries"]:
            name = name.decode()
            if name in seen:
                print("not ok: %s listed twice (READDIR %d)" % (name, calls))
                return 1
            seen[name] = attr_vals(fattr)
            cookie = ck
        if res["eof"]:
            break
        if not res["entries"]:
            print("not ok: READDIR %d returned no entry and no eof" % calls)
            return 1
    dt = time.time() - t0
    want = {"f%d" % i for i in range(a.count)}
    print("# %d entries in %d READDIRs, %.1f s" % (len(seen), calls, dt))
    if set(seen) != want:
        missing = sorted(want - set(seen))[:5]
        extra = sorted(set(seen) - want)[:5]
        print("not ok: names differ: missing %s, unexpected %s" % (missing, extra))
        return 1
    if len({v["fileid"] for v in seen.values()}) != len(seen):
        print("not ok: fileids not distinct")
        return 1
    for name in ("f0", "f%d" % (a.count // 2), "f%d" % (a.count - 1)):
        st, r = conn.call([raw.noargs("PUTROOTFH"), raw.lookup(a.dir), raw.lookup(name),
                           raw.noargs("GETFH"), raw.getattr_((raw.A_FILEID,))])
        if st:
            print("not ok: LOOKUP %s: %s" % (name, raw.errname(st)))
            return 1
        fh = r[3][2]
        words, vals = r[4][2]
        fileid = struct.unpack(">Q", vals[:8])[0]
        if fh != seen[name]["fh"] or fileid != seen[name]["fileid"]:
            print("not ok: %s: READDIR and LOOKUP disagree on handle or fileid" % name)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
