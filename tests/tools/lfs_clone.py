#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs's clone ioctl (LACUNA_IOC_CLONE_RANGE, include/lacuna/ioctl.h)
# driven directly through a mount with fcntl.ioctl:
#
#   lfs_clone.py info FILE
#       print the mount's clone_blksize (LACUNA_IOC_INFO; 0: no reflink)
#   lfs_clone.py clone DST SRC_BACKING [--src-off N] [--dst-off N] [--len N]
#                [--rdonly] [--bad-version] [--handle-of PATH]
#       clone into DST (a file of the mount, opened for writing, or
#       read-only with --rdonly) from the file whose backing path is
#       SRC_BACKING (named by its name_to_handle_at(2) handle, or by the
#       handle of PATH with --handle-of). Prints "ok cloned N size M" or
#       "error ERRNO-NAME"; exit 0 or 1.
#   lfs_clone.py torture SRC DST DST_BACKING [--rounds N] [--len L]
#       a writer process keeps replacing [0, L) of SRC (on the mount) with
#       one byte value, new each time, by one LACUNA_IOC_WRITE of L bytes
#       from an arena (applied by the daemon in several backing writes,
#       under one hold of the range lock), while this process clones
#       SRC[0, L) into DST[0, L) N times and reads DST_BACKING (the backing
#       file of DST) after each clone: every clone must be one whole
#       write's state, all of it one value. Prints the counts; exit 0 when
#       no clone was torn, 1 when one was (--expect-torn inverts it: exit 0
#       only when a torn clone was seen, proof that the check sees a race).
#
# Exit 2 on a usage error.
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import struct
import sys

ABI = 1
FH_BYTES = 112


def iowr(nr, size):
    return (3 << 30) | (size << 16) | (0xAC << 8) | nr


INFO_FMT = "=IIQQQQQQ108sxxxxQQIIQ"
INFO_SIZE = struct.calcsize(INFO_FMT)
IOC_INFO = iowr(1, INFO_SIZE)
WRITE_FMT = "=IIIIQQQQQQQQQQ"
WRITE_SIZE = struct.calcsize(WRITE_FMT)
IOC_WRITE = iowr(4, WRITE_SIZE)
CLONE_FMT = "=IIIIII%dsQQQQQQQQQ" % FH_BYTES
CLONE_SIZE = struct.calcsize(CLONE_FMT)
IOC_CLONE = iowr(6, CLONE_SIZE)
CTL_FMT = "=IIIiQQQQQ"
CTL_SIZE = struct.calcsize(CTL_FMT)
assert (INFO_SIZE, WRITE_SIZE, CLONE_SIZE, CTL_SIZE) == (200, 96, 208, 56)


def info(fd):
    """(clone_blksize, ctl_path) of the mount holding fd"""
    buf = bytearray(struct.pack(INFO_FMT, INFO_SIZE, *([0] * 7), b"", 0, 0, 0, 0, 0))
    fcntl.ioctl(fd, IOC_INFO, buf)
    v = struct.unpack(INFO_FMT, bytes(buf))
    return v[13], v[8].split(b"\0")[0].decode()


class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * FH_BYTES)]


def handle_of(path):
    """(handle_type, bytes) of path, by name_to_handle_at(2)"""
    libc = ctypes.CDLL(None, use_errno=True)
    fh = FileHandle()
    fh.handle_bytes = FH_BYTES
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, os.fsencode(path), ctypes.byref(fh),
                              ctypes.byref(mount_id), 0) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)
    return fh.handle_type, bytes(fh.f_handle[:fh.handle_bytes])


def clone(dfd, handle, src_off, dst_off, length, version=ABI):
    """(cloned, destination size) or OSError"""
    htype, hbytes = handle
    buf = bytearray(struct.pack(CLONE_FMT, CLONE_SIZE, version, 0, htype, len(hbytes), 0,
                                hbytes.ljust(FH_BYTES, b"\0"), src_off, dst_off, length,
                                0, 0, 0, 0, 0, 0))
    fcntl.ioctl(dfd, IOC_CLONE, buf)
    v = struct.unpack(CLONE_FMT, bytes(buf))
    return v[10], v[11]


def opt(args, name, default, conv=int):
    if name in args:
        i = args.index(name)
        val = conv(args[i + 1])
        del args[i:i + 2]
        return val
    return default


def flag(args, name):
    if name in args:
        args.remove(name)
        return True
    return False


def cmd_clone(args):
    src_off = opt(args, "--src-off", 0)
    dst_off = opt(args, "--dst-off", 0)
    length = opt(args, "--len", 0)
    other = opt(args, "--handle-of", None, str)
    rdonly = flag(args, "--rdonly")
    version = ABI + 1 if flag(args, "--bad-version") else ABI
    if len(args) != 2:
        return usage()
    dst, src = args
    try:
        h = handle_of(other or src)
        fd = os.open(dst, os.O_RDONLY if rdonly else os.O_WRONLY)
        try:
            n, size = clone(fd, h, src_off, dst_off, length, version)
        finally:
            os.close(fd)
    except OSError as e:
        name = "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else \
            errno.errorcode.get(e.errno, str(e.errno))
        print("error %s" % name)
        return 1
    print("ok cloned %d size %d" % (n, size))
    return 0


class Arena:
    """A memfd registered on the mount's control socket, mapped here too"""

    def __init__(self, fd, length):
        _, path = info(fd)
        self.mfd = os.memfd_create("lfs-clone-arena", os.MFD_ALLOW_SEALING)
        os.ftruncate(self.mfd, length)
        fcntl.fcntl(self.mfd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.map = mmap.mmap(self.mfd, length)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect("\0" + path[1:] if path.startswith("@") else path)
        socket.send_fds(self.sock, [struct.pack(CTL_FMT, CTL_SIZE, ABI, 1, 0, length,
                                                0, 0, 0, 0)], [self.mfd])
        v = struct.unpack(CTL_FMT, self.sock.recv(CTL_SIZE))
        if v[3]:
            raise OSError(-v[3], "arena registration: " + os.strerror(-v[3]))
        self.token = v[5:7]

    def write(self, fd, off, length):
        buf = bytearray(struct.pack(WRITE_FMT, WRITE_SIZE, ABI, 0, 0, off, length,
                                    self.token[0], self.token[1], 0, 0, 0, 0, 0, 0))
        fcntl.ioctl(fd, IOC_WRITE, buf)
        return struct.unpack(WRITE_FMT, bytes(buf))[9]


def writer(src, length, stop_r):
    """Child: whole writes of one value each over [0, length) of src until stop_r closes"""
    fd = os.open(src, os.O_WRONLY)
    arena = Arena(fd, length)
    os.set_blocking(stop_r, False)
    v = 0
    while True:
        try:
            if os.read(stop_r, 1) == b"":
                break
        except BlockingIOError:
            pass
        v = v % 255 + 1
        arena.map[:length] = bytes([v]) * length
        if arena.write(fd, 0, length) != length:
            os._exit(3)
    os._exit(0)


def cmd_torture(args):
    rounds = opt(args, "--rounds", 200)
    length = opt(args, "--len", 8 << 20)
    expect_torn = flag(args, "--expect-torn")
    if len(args) != 3:
        return usage()
    src, dst, dst_backing = args
    with open(src, "wb") as f:
        f.write(b"\1" * length)
    open(dst, "wb").close()
    h = handle_of(src_backing_of(src, dst, dst_backing))
    stop_r, stop_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(stop_w)
        try:
            writer(src, length, stop_r)
        except Exception as e:  # noqa: BLE001
            print("writer: %s" % e, file=sys.stderr)
            os._exit(4)
    os.close(stop_r)
    dfd = os.open(dst, os.O_WRONLY)
    torn = states = 0
    values = set()
    try:
        for i in range(rounds):
            clone(dfd, h, 0, 0, length)
            with open(dst_backing, "rb") as f:
                d = f.read(length)
            first = d[0]
            if d.count(first) != len(d):
                torn += 1
                if torn <= 3:
                    print("# round %d: clone torn: bytes %s" % (i, sorted(set(d))[:8]))
            else:
                states += 1
                values.add(first)
    finally:
        os.close(dfd)
        os.close(stop_w)
        _, status = os.waitpid(pid, 0)
    print("# %d clones: %d whole writes (%d distinct), %d torn; writer status %d" %
          (rounds, states, len(values), torn, status))
    if status:
        print("not ok - the writer failed (status %d)" % status)
        return 1
    if expect_torn:
        ok = torn > 0
        print("%s - a torn clone is seen (%d of %d)" % ("ok" if ok else "not ok", torn, rounds))
    else:
        ok = torn == 0
        print("%s - every clone is one whole write (%d torn of %d)" %
              ("ok" if ok else "not ok", torn, rounds))
    return 0 if ok else 1


def src_backing_of(src, dst, dst_backing):
    """The backing path of src: beside dst's, the same name"""
    return os.path.join(os.path.dirname(dst_backing), os.path.basename(src))


def cmd_info(args):
    if len(args) != 1:
        return usage()
    fd = os.open(args[0], os.O_RDONLY)
    try:
        print(info(fd)[0])
    finally:
        os.close(fd)
    return 0


def usage():
    print("usage: lfs_clone.py info FILE | clone DST SRC_BACKING [options] | "
          "torture SRC DST DST_BACKING [options]", file=sys.stderr)
    return 2


def main(argv):
    cmds = {"info": cmd_info, "clone": cmd_clone, "torture": cmd_torture}
    if len(argv) < 2 or argv[1] not in cmds:
        return usage()
    return cmds[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
