#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# In a test VM, on an NFS mount: a process that holds an open file and an
# fcntl write lock across a restart of the server.
#
#   lock_holder.py FILE FLAGDIR TAG
#
# Opens FILE (created, truncated), writes "before-TAG", locks the whole
# file, prints locked=ok and makes FLAGDIR/locked-TAG; waits (up to 10
# minutes) for FLAGDIR/restarted-TAG, made once the server is back; then
# writes "after-TAG" behind, reads the file back, and has a child process
# try the same lock without waiting. Prints KEY=VALUE lines:
# write_after, read_after (ok or the error), other_lock (refused, or
# granted: wrong), done.
import fcntl, os, sys, time
path, share, tag = sys.argv[1:4]
def flag(name):
    open(os.path.join(share, name), "w").close()
def wait(name, t):
    for _ in range(t * 10):
        if os.path.exists(os.path.join(share, name)):
            return True
        time.sleep(0.1)
    return False
before, after = ("before-%s\n" % tag).encode(), ("after-%s\n" % tag).encode()
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, before)
os.fsync(fd)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked=ok", flush=True)
flag("locked-" + tag)
if not wait("restarted-" + tag, 600):
    print("restarted=timeout")
    sys.exit(1)
try:
    os.pwrite(fd, after, len(before))
    os.fsync(fd)
    print("write_after=ok", flush=True)
except OSError as e:
    print("write_after=%s" % e.strerror, flush=True)
try:
    got = os.pread(fd, 4096, 0)
    print("read_after=%s" % ("ok" if got == before + after else repr(got)), flush=True)
except OSError as e:
    print("read_after=%s" % e.strerror, flush=True)
pid = os.fork()
if pid == 0:
    fd2 = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd2, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("other_lock=granted", flush=True)
    except OSError as e:
        print("other_lock=%s" % ("refused" if e.errno in (11, 13) else e.strerror), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
fcntl.lockf(fd, fcntl.LOCK_UN)
os.close(fd)
print("done=ok", flush=True)
