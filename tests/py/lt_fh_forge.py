#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Handles a client makes up, for tests/integ/nfs_handles.sh (raw NFSv4.0
# RPCs, and lacunafs's lookup by handle):
#
#   lt_fh_forge.py forge PORT BACKROOT TARGET [v1]
#       a handle in lacunad's layout, taken from the export root's
#       handle (BACKROOT: the backing directory of the export, whose
#       backing handle ends it), with the backing handle of TARGET (a file
#       anywhere on the backing filesystem) in place of the root's; v1:
#       in the layout of version 1 (no tag). PUTFH + GETATTR and PUTFH +
#       READ of it; prints "GETATTR-STATUS READ-STATUS read|noread",
#       read when the READ returned TARGET's first bytes.
#   lt_fh_forge.py flip PORT PATH
#       the handle of PATH (from the export root) with each byte in turn
#       inverted, then cut short by one byte: PUTFH + GETATTR of each;
#       prints one line per status seen, "STATUS COUNT", sorted.
#   lt_fh_forge.py lfs-lookup MNT TARGET
#       as root, stat MNT/.lacuna-fh-<handle of TARGET>: prints "found" or
#       the errno's name.
#   lt_fh_forge.py handle PATH
#       TARGET's backing handle as lacunafs's lookup name wants it.
import ctypes
import errno
import os
import struct
import sys

from lt_nfs4raw import A_FILEID, A_TYPE, Client, errname, getattr_, lookup, noargs, putfh, read


class FileHandle(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("h", ctypes.c_ubyte * 128)]


def backing_handle(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fh, mnt = FileHandle(), ctypes.c_int()
    fh.bytes = 128
    if libc.name_to_handle_at(-100, path.encode(), ctypes.byref(fh), ctypes.byref(mnt), 0):
        sys.exit("name_to_handle_at %s: errno %d" % (path, ctypes.get_errno()))
    return fh.type & 0xffffffff, bytes(fh.h[:fh.bytes])


def get_fh(c, path):
    ops = [noargs("PUTROOTFH")] + [lookup(x.encode()) for x in path.split("/") if x]
    st, r = c.call(0, ops + [noargs("GETFH")])
    if st:
        sys.exit("GETFH %s: %s" % (path, errname(st)))
    return r[-1][2]


def forge(port, backroot, target, v1):
    c = Client(port)
    root = get_fh(c, "")
    _, rh = backing_handle(backroot)
    if not root.endswith(rh):
        sys.exit("the root handle %s does not end in its backing handle %s" % (root.hex(), rh.hex()))
    hdr = root[:len(root) - len(rh)]
    ttype, th = backing_handle(target)
    if v1:
        fh = b"\x01\x01\x00\x00" + hdr[4:8] + struct.pack(">I", ttype) + th
    else:
        fh = hdr[:8] + struct.pack(">I", ttype) + hdr[12:] + th
    secret = None
    if not os.path.isdir(target):
        with open(target, "rb") as f:
            secret = f.read(64)
    st_attr, _ = c.call(0, [putfh(fh), getattr_([A_TYPE, A_FILEID])])
    st_read, r = c.call(0, [putfh(fh), read(0, 4096)])
    leak = st_read == 0 and secret is not None and secret in r[-1][2]["data"]
    print("%s %s %s" % (errname(st_attr), errname(st_read), "read" if leak else "noread"))
    return 0


def flip(port, path):
    c = Client(port)
    fh = get_fh(c, path)
    seen = {}
    variants = [fh[:i] + bytes([fh[i] ^ 0xff]) + fh[i + 1:] for i in range(len(fh))]
    variants.append(fh[:-1])
    for v in variants:
        st, _ = c.call(0, [putfh(v), getattr_([A_TYPE, A_FILEID])])
        seen[errname(st)] = seen.get(errname(st), 0) + 1
    st, _ = c.call(0, [putfh(fh), getattr_([A_TYPE, A_FILEID])])
    seen["unchanged:" + errname(st)] = 1
    for k in sorted(seen):
        print("%s %d" % (k, seen[k]))
    return 0


def lfs_name(target):
    t, h = backing_handle(target)
    return ".lacuna-fh-%08x%s" % (t, h.hex())


def lfs_lookup(mnt, target):
    try:
        os.stat(os.path.join(mnt, lfs_name(target)), follow_symlinks=False)
        print("found")
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)))
    return 0


def main(argv):
    if len(argv) in (5, 6) and argv[1] == "forge":
        return forge(int(argv[2]), argv[3], argv[4], len(argv) == 6 and argv[5] == "v1")
    if len(argv) == 4 and argv[1] == "flip":
        return flip(int(argv[2]), argv[3])
    if len(argv) == 4 and argv[1] == "lfs-lookup":
        return lfs_lookup(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "handle":
        print(lfs_name(argv[2]))
        return 0
    sys.stderr.write("usage: lt_fh_forge.py forge PORT BACKROOT TARGET [v1] | flip PORT PATH | "
                     "lfs-lookup MNT TARGET | handle PATH\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
