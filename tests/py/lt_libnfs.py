#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A small NFS client for the tests, driving the system's libnfs (the
# library behind nfs-ls/nfs-cat/nfs-cp) through ctypes, for what the
# libnfs tools cannot do:
#
#   lt_libnfs.py put LOCAL URL [--chunk N]   upload LOCAL, N bytes per WRITE
#   lt_libnfs.py put LOCAL URL --trunc       the same into an existing file,
#                                            opened O_WRONLY|O_TRUNC
#   lt_libnfs.py get URL LOCAL [--chunk N]   download, N bytes per READ
#   lt_libnfs.py size URL                    print the size (GETATTR)
#   lt_libnfs.py locks URL                   two clients, one file: lockf
#                                            F_TLOCK/F_TEST/F_ULOCK, one
#                                            "step=result" line each
#
# Why: libnfs 4.0 (Debian 12) encodes every NFSv4 COMPOUND into a fixed
# 4096-byte buffer (ZDR_ENCODEBUF_MINSIZE, no size hint for COMPOUND), so
# a WRITE carrying more than about 3.9 KB fails inside the client before
# anything is sent: nfs-cp creates the file, then exits 10 with "Failed to
# write to dest file", whatever the server. Writing in chunks of at most
# 3 KiB (the default) goes through, and exercises the server's WRITE path
# with real client traffic. Reads have no such limit. libnfs 4.0 also
# creates every file with an EXCLUSIVE4 OPEN, O_EXCL or not, so creating
# over an existing file fails with NFS4ERR_EXIST as it must: --trunc opens
# the existing file instead.
#
# URLs are libnfs's: nfs://HOST//PATH?version=4&nfsport=PORT (with the
# double slash a file in the export's root resolves as PATH).
# Exit status: 0 done, 1 the NFS operation failed (libnfs's message on
# stderr), 2 bad usage, 77 libnfs cannot be loaded.
import ctypes
import ctypes.util
import os
import sys
import time

CHUNK_DEFAULT = 3072


class NfsUrl(ctypes.Structure):
    _fields_ = [("server", ctypes.c_char_p), ("path", ctypes.c_char_p),
                ("file", ctypes.c_char_p)]


class NfsStat64(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size",
        "blksize", "blocks", "atime", "mtime", "ctime", "atime_nsec",
        "mtime_nsec", "ctime_nsec", "used")]


def load():
    names = ["libnfs.so.13", "libnfs.so.14", "libnfs.so.16",
             ctypes.util.find_library("nfs")]
    for n in names:
        if not n:
            continue
        try:
            lib = ctypes.CDLL(n)
            break
        except OSError:
            continue
    else:
        print("lt_libnfs: SKIP: libnfs not found (package libnfs13)",
              file=sys.stderr)
        sys.exit(77)
    vp = ctypes.c_void_p
    lib.nfs_init_context.restype = vp
    lib.nfs_destroy_context.argtypes = [vp]
    lib.nfs_get_error.restype = ctypes.c_char_p
    lib.nfs_get_error.argtypes = [vp]
    lib.nfs_parse_url_full.restype = ctypes.POINTER(NfsUrl)
    lib.nfs_parse_url_full.argtypes = [vp, ctypes.c_char_p]
    lib.nfs_destroy_url.argtypes = [ctypes.POINTER(NfsUrl)]
    lib.nfs_mount.argtypes = [vp, ctypes.c_char_p, ctypes.c_char_p]
    lib.nfs_create.argtypes = [vp, ctypes.c_char_p, ctypes.c_int,
                               ctypes.c_int, ctypes.POINTER(vp)]
    lib.nfs_open.argtypes = [vp, ctypes.c_char_p, ctypes.c_int,
                             ctypes.POINTER(vp)]
    lib.nfs_close.argtypes = [vp, vp]
    lib.nfs_pwrite.argtypes = [vp, vp, ctypes.c_uint64, ctypes.c_uint64,
                               ctypes.c_void_p]
    lib.nfs_pread.argtypes = [vp, vp, ctypes.c_uint64, ctypes.c_uint64,
                              ctypes.c_void_p]
    lib.nfs_fsync.argtypes = [vp, vp]
    lib.nfs_lockf.argtypes = [vp, vp, ctypes.c_int, ctypes.c_uint64]
    lib.nfs_stat64.argtypes = [vp, ctypes.c_char_p,
                               ctypes.POINTER(NfsStat64)]
    return lib


class Client:
    def __init__(self, lib, url):
        self.lib = lib
        self.ctx = lib.nfs_init_context()
        if not self.ctx:
            self.die("nfs_init_context failed")
        self.url = lib.nfs_parse_url_full(self.ctx, url.encode())
        if not self.url:
            self.die("nfs_parse_url_full(%s)" % url)
        u = self.url.contents
        if lib.nfs_mount(self.ctx, u.server, u.path) != 0:
            self.die("nfs_mount(%s, %s)" % (u.server.decode(), u.path.decode()))
        self.file = u.file

    def err(self):
        e = self.lib.nfs_get_error(self.ctx)
        return e.decode(errors="replace") if e else "?"

    def die(self, what):
        msg = self.err() if getattr(self, "ctx", None) else ""
        print("lt_libnfs: %s failed: %s" % (what, msg), file=sys.stderr)
        sys.exit(1)

    def close(self):
        self.lib.nfs_destroy_url(self.url)
        self.lib.nfs_destroy_context(self.ctx)


def put(lib, local, url, chunk, trunc):
    data = open(local, "rb").read()
    c = Client(lib, url)
    fh = ctypes.c_void_p()
    if trunc:
        if lib.nfs_open(c.ctx, c.file, os.O_WRONLY | os.O_TRUNC,
                        ctypes.byref(fh)) != 0:
            c.die("nfs_open(%s, O_WRONLY|O_TRUNC)" % c.file.decode())
    else:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if lib.nfs_create(c.ctx, c.file, flags, 0o644, ctypes.byref(fh)) != 0:
            c.die("nfs_create(%s)" % c.file.decode())
    buf = ctypes.create_string_buffer(data, len(data) + 1)
    off = 0
    while off < len(data):
        n = min(chunk, len(data) - off)
        r = lib.nfs_pwrite(c.ctx, fh, off, n,
                           ctypes.addressof(buf) + off)
        if r <= 0:
            c.die("nfs_pwrite(offset %d, count %d) returned %d" % (off, n, r))
        off += r
    if lib.nfs_fsync(c.ctx, fh) != 0:
        c.die("nfs_fsync")
    if lib.nfs_close(c.ctx, fh) != 0:
        c.die("nfs_close")
    c.close()
    print("put %d bytes" % off)


def get(lib, url, local, chunk):
    c = Client(lib, url)
    fh = ctypes.c_void_p()
    if lib.nfs_open(c.ctx, c.file, os.O_RDONLY, ctypes.byref(fh)) != 0:
        c.die("nfs_open(%s)" % c.file.decode())
    buf = ctypes.create_string_buffer(chunk)
    off = 0
    with open(local, "wb") as out:
        while True:
            r = lib.nfs_pread(c.ctx, fh, off, chunk, buf)
            if r < 0:
                c.die("nfs_pread(offset %d)" % off)
            if r == 0:
                break
            out.write(buf.raw[:r])
            off += r
    lib.nfs_close(c.ctx, fh)
    c.close()
    print("got %d bytes" % off)


def size(lib, url):
    c = Client(lib, url)
    st = NfsStat64()
    if lib.nfs_stat64(c.ctx, c.file, ctypes.byref(st)) != 0:
        c.die("nfs_stat64(%s)" % c.file.decode())
    print(st.size)
    c.close()


F_LOCK, F_TLOCK, F_ULOCK, F_TEST = 0, 1, 2, 3
TO_EOF = (1 << 64) - 1


def locks(lib, url):
    """Two clients (two libnfs contexts: two client ids, two lock owners)
    take turns at a whole-file lock; each step prints 0 or -errno.
    libnfs 4.0 names its client "Libnfs pid:PID SECONDS": the second
    context is made a second later, or the server rightly takes it for
    the first one rebooted. It also sends lockf's count as the LOCK
    length, where 0 is invalid: all ones is "to the end of the file"."""
    a = Client(lib, url)
    time.sleep(1.1)
    b = Client(lib, url)
    fa, fb = ctypes.c_void_p(), ctypes.c_void_p()
    for c, fh in ((a, fa), (b, fb)):
        if lib.nfs_open(c.ctx, c.file, os.O_RDWR, ctypes.byref(fh)) != 0:
            c.die("nfs_open(%s, O_RDWR)" % c.file.decode())
    # libnfs 4.0 does not advance its open-owner seqid after a LOCK that
    # was DENIED, so the server takes that owner's next LOCK for a
    # retransmission and answers it from its replay cache (DENIED again),
    # as it must: a refused LOCK is each owner's last seqid call.
    steps = [("a_tlock", a, fa, F_TLOCK), ("b_test", b, fb, F_TEST),
             ("a_test", a, fa, F_TEST), ("a_ulock", a, fa, F_ULOCK),
             ("b_tlock", b, fb, F_TLOCK), ("a_test_b", a, fa, F_TEST),
             ("b_ulock", b, fb, F_ULOCK), ("b_tlock_again", b, fb, F_TLOCK),
             ("a_tlock_denied", a, fa, F_TLOCK), ("b_ulock_again", b, fb, F_ULOCK)]
    for name, c, fh, op in steps:
        print("%s=%d" % (name, lib.nfs_lockf(c.ctx, fh, op, TO_EOF)), flush=True)
    # Both opens are left to their leases: libnfs 4.0 does not advance the
    # open-owner seqid after a LOCK that made a new lock owner either, so
    # a CLOSE would carry a seqid the server has already seen (Linux nfsd
    # and lacunad answer it from the replay cache, Ganesha with BAD_SEQID).
    b.close()
    a.close()


def main(argv):
    args = argv[1:]
    chunk = CHUNK_DEFAULT
    trunc = "--trunc" in args
    if trunc:
        args.remove("--trunc")
    if "--chunk" in args:
        i = args.index("--chunk")
        try:
            chunk = int(args[i + 1])
        except (IndexError, ValueError):
            return usage()
        del args[i:i + 2]
        if chunk <= 0:
            return usage()
    if len(args) == 3 and args[0] == "put":
        put(load(), args[1], args[2], chunk, trunc)
    elif len(args) == 3 and args[0] == "get":
        get(load(), args[1], args[2], chunk)
    elif len(args) == 2 and args[0] == "size":
        size(load(), args[1])
    elif len(args) == 2 and args[0] == "locks":
        locks(load(), args[1])
    else:
        return usage()
    return 0


def usage():
    print("usage: lt_libnfs.py put LOCAL URL [--chunk N] [--trunc] | "
          "get URL LOCAL [--chunk N] | size URL | locks URL", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
