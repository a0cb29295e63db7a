#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A short fsx (file system exerciser) for an NFS mount in the test VM:
# random writes, truncates (down and up), reads and fsyncs on one file,
# each read compared with an in-memory model of what the file must hold,
# with the file closed and reopened now and then and, at the end, the
# page cache dropped and the whole file read once more.
#
#   fsx_mini.py FILE [OPS] [SEED] [MAXLEN]
#
# Prints ops=N, size=BYTES, sha256=HEX (of the final contents, for the
# host to compare with the backing file) and fsx=ok, or fsx=FAIL and the
# first mismatch (offset, operation number, the last operations) with
# exit status 1.
import hashlib, os, random, sys

path = sys.argv[1]
nops = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
maxlen = int(sys.argv[4]) if len(sys.argv) > 4 else 4 << 20
rnd = random.Random(seed)
model = bytearray()
log = []


def fail(why):
    print("fsx=FAIL %s (seed %d)" % (why, seed))
    for line in log[-10:]:
        print("# last op: %s" % line)
    sys.exit(1)


def check(fd, off, n, what):
    got = os.pread(fd, n, off)
    want = bytes(model[off:off + n])
    if got != want:
        for i in range(min(len(got), len(want))):
            if got[i] != want[i]:
                fail("%s: byte %d is %d, want %d" % (what, off + i, got[i], want[i]))
        fail("%s: read %d bytes at %d, want %d" % (what, len(got), off, len(want)))


fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(nops):
    op = rnd.random()
    if op < 0.45:
        off = rnd.randrange(maxlen)
        n = rnd.randrange(1, 65537)
        n = min(n, maxlen - off)
        data = rnd.randbytes(n)
        log.append("%d write %d+%d" % (i, off, n))
        if os.pwrite(fd, data, off) != n:
            fail("short write")
        if off > len(model):
            model.extend(bytes(off - len(model)))
        model[off:off + n] = data
    elif op < 0.55:
        size = rnd.randrange(maxlen)
        log.append("%d truncate %d" % (i, size))
        os.ftruncate(fd, size)
        if size < len(model):
            del model[size:]
        else:
            model.extend(bytes(size - len(model)))
    elif op < 0.90:
        if not model:
            continue
        off = rnd.randrange(len(model))
        n = rnd.randrange(1, 131073)
        log.append("%d read %d+%d" % (i, off, n))
        check(fd, off, n, "op %d read" % i)
    elif op < 0.95:
        log.append("%d fsync" % i)
        os.fsync(fd)
    else:
        log.append("%d close, reopen" % i)
        os.close(fd)
        fd = os.open(path, os.O_RDWR)
        if os.fstat(fd).st_size != len(model):
            fail("op %d: size %d after reopen, want %d" % (i, os.fstat(fd).st_size, len(model)))
os.fsync(fd)
os.close(fd)
os.posix_fadvise(os.open(path, os.O_RDONLY), 0, 0, os.POSIX_FADV_DONTNEED)
try:
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
except OSError:
    pass
fd = os.open(path, os.O_RDONLY)
if os.fstat(fd).st_size != len(model):
    fail("final size %d, want %d" % (os.fstat(fd).st_size, len(model)))
off = 0
while off < len(model):
    check(fd, off, 1 << 20, "final read")
    off += 1 << 20
os.close(fd)
print("ops=%d" % nops)
print("size=%d" % len(model))
print("sha256=%s" % hashlib.sha256(model).hexdigest())
print("fsx=ok")
