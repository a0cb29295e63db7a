#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# File handles across restarts, for tests/integ/nfs_reboot.sh: take the
# handles of some paths of an export, and later check that each still
# resolves to the same object with nothing cached (raw NFSv4.0 RPCs).
#
#   lt_handles.py PORT save JSON PATH...   PATHs relative to the export
#                                          root: handle, type, fileid and
#                                          content (a file's SHA-256, a
#                                          symlink's target) into JSON
#   lt_handles.py PORT check JSON          PUTFH + GETATTR of each handle
#                                          (same type and fileid), READ or
#                                          READLINK (same content); prints
#                                          "ok - ..." / "not ok - ..."
#   lt_handles.py PORT status JSON         the status PUTFH + GETATTR + READ
#                                          of the first regular file gives
#                                          now (a name: OK, DELAY, ...)
#
# The exit status of check is the number of failures (capped at 100).
import hashlib
import json
import struct
import sys

from lt_nfs4raw import (A_FILEID, A_TYPE, NF4DIR, NF4LNK, NF4REG, Client, errname, getattr_,
                        lookup, noargs, putfh, read)

READ_MAX = 1 << 20


def attrs(res):
    """type and fileid from a GETATTR(TYPE, FILEID) result"""
    _, vals = res
    return struct.unpack(">IQ", vals[:12])


def content(c, fh, ftype):
    if ftype == NF4REG:
        h, off = hashlib.sha256(), 0
        while True:
            st, r = c.call(0, [putfh(fh), read(off, READ_MAX)])
            if st:
                return "READ: " + errname(st)
            data = r[-1][2]["data"]
            h.update(data)
            off += len(data)
            if r[-1][2]["eof"] or not data:
                return h.hexdigest()
    if ftype == NF4LNK:
        st, r = c.call(0, [putfh(fh), noargs("READLINK")])
        return r[-1][2].decode() if st == 0 else "READLINK: " + errname(st)
    return ""


def save(port, out, paths):
    c = Client(port)
    ents = []
    for p in paths:
        ops = [noargs("PUTROOTFH")] + [lookup(x.encode()) for x in p.split("/") if x]
        st, r = c.call(0, ops + [noargs("GETFH"), getattr_([A_TYPE, A_FILEID])])
        if st:
            sys.exit("save %s: %s" % (p, errname(st)))
        fh = r[-2][2]
        ftype, fileid = attrs(r[-1][2])
        ents.append(dict(path=p, fh=fh.hex(), type=ftype, fileid=fileid,
                         content=content(c, fh, ftype)))
    with open(out, "w") as f:
        json.dump(ents, f)
    return 0


def check(port, path):
    with open(path) as f:
        ents = json.load(f)
    c = Client(port)
    failed = 0
    for e in ents:
        fh = bytes.fromhex(e["fh"])
        kind = {NF4REG: "file", NF4DIR: "directory", NF4LNK: "symlink"}.get(e["type"], "object")
        st, r = c.call(0, [putfh(fh), getattr_([A_TYPE, A_FILEID])])
        if st:
            print("not ok - %s %s: PUTFH + GETATTR: %s" % (kind, e["path"], errname(st)))
            failed += 1
            continue
        got = attrs(r[-1][2])
        if got != (e["type"], e["fileid"]):
            print("not ok - %s %s: type/fileid %s, was %s" % (kind, e["path"], got,
                                                            (e["type"], e["fileid"])))
            failed += 1
            continue
        now = content(c, fh, e["type"])
        if now != e["content"]:
            print("not ok - %s %s: content %s, was %s" % (kind, e["path"], now, e["content"]))
            failed += 1
            continue
        print("ok - %s %s: resolves to the same %s%s" % (
            kind, e["path"], kind, ", same bytes" if e["type"] == NF4REG else
            ", same target" if e["type"] == NF4LNK else ""))
    return min(failed, 100)


def status(port, path):
    with open(path) as f:
        ents = json.load(f)
    e = next(x for x in ents if x["type"] == NF4REG)
    c = Client(port)
    st, _ = c.call(0, [putfh(bytes.fromhex(e["fh"])), getattr_([A_TYPE, A_FILEID]),
                       read(0, 4096)])
    print(errname(st))
    return 0


def main(argv):
    if len(argv) >= 5 and argv[2] == "save":
        return save(int(argv[1]), argv[3], argv[4:])
    if len(argv) == 4 and argv[2] == "check":
        return check(int(argv[1]), argv[3])
    if len(argv) == 4 and argv[2] == "status":
        return status(int(argv[1]), argv[3])
    sys.stderr.write("usage: lt_handles.py PORT save JSON PATH... | check JSON | status JSON\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
