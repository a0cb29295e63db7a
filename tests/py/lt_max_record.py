#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What lacunad offers and does for a given max_record (raw COMPOUNDs,
# minor version 2, tests/py/lt_nfs4raw.py):
#
#   lt_max_record.py PORT PATH MAX_RECORD
#
# PATH is the file as clients name it (from the pseudo root). Checked: maxread and maxwrite are
# max_record less 8 KiB in whole pages; a WRITE of maxwrite bytes at an
# unaligned offset (FILE_SYNC4) is accepted whole; READ and READ_PLUS of
# maxread bytes fit the record and give the bytes back; a WRITE larger
# than the record allows is refused by dropping the connection (the
# record is over max_record) and the server goes on serving. Prints one
# "ok ..." or "FAIL ..." line per check; exit 0 all passed, 1 otherwise.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import (NFS4_CONTENT_DATA, Conn, Dec, errname, getattr_, lookup,  # noqa: E402
                        noargs, read, read_plus, write)

A_MAXREAD, A_MAXWRITE = 30, 31
failed = False


def check(cond, what):
    global failed
    print(("ok " if cond else "FAIL ") + what)
    if not cond:
        failed = True


def main():
    port, max_record = int(sys.argv[1]), int(sys.argv[3])
    path = [noargs("PUTROOTFH")] + [lookup(p.encode()) for p in sys.argv[2].split("/") if p]
    want = (max_record - 8192) & ~4095
    c = Conn(port, minor=2, maxresp=max_record, maxreq=max_record)
    st, r = c.call([noargs("PUTROOTFH"), getattr_([A_MAXREAD, A_MAXWRITE])])
    check(st == 0, "GETATTR maxread, maxwrite: NFS4_OK")
    raw = r[1][2][1]
    d = Dec(raw)
    maxread, maxwrite = d.u64(), d.u64()
    check(maxread == want, "maxread %d is max_record %d less 8 KiB in pages (%d)" %
          (maxread, max_record, want))
    check(maxwrite == want, "maxwrite %d is %d" % (maxwrite, want))

    data = bytes((i * 7 + 1) & 0xFF or 1 for i in range(maxwrite))
    off = 4096 * 3 + 212
    st, r = c.call(path + [write(off, data)])
    check(st == 0, "WRITE of maxwrite (%d) bytes at offset %d: %s" % (maxwrite, off, errname(st)))
    if st == 0:
        check(r[-1][2]["count"] == maxwrite, "WRITE wrote all %d bytes" % maxwrite)

    st, r = c.call(path + [read(off, maxread)])
    check(st == 0 and r[-1][2]["data"] == data, "READ of maxread bytes gives them back")
    st, r = c.call(path + [read_plus(off, maxread)])
    got = b""
    if st == 0:
        for kind, o, v in r[-1][2]["segs"]:
            got += v if kind == NFS4_CONTENT_DATA else b"\0" * v
    check(st == 0 and got[:len(data)] == data, "READ_PLUS of maxread bytes gives them back")

    # a record over max_record is the stream's end: dropped, others go on
    big = Conn(port, minor=2, maxresp=max_record, maxreq=2 * max_record)
    dropped = False
    try:
        big.call(path + [write(0, b"x" * (max_record + 1))])
    except (EOFError, ConnectionError, OSError):
        dropped = True
    check(dropped, "a WRITE record over max_record drops its connection")
    st, r = c.call(path + [read(off, 16)])
    check(st == 0 and r[-1][2]["data"] == data[:16], "the other connection is still served")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
