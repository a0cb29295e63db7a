#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# NFS byte-range locks against local ones, with raw RPCs: lacunad holds
# what it grants as open file description locks on the exported file, so
# a process locking the same file through the export's directory (the
# lacunafs mount, or a plain directory) and an NFS client exclude each
# other. Phases, run by tests/integ/nfs_locks_local.sh:
#
#   run PORT MINOR DIR NAME     a client creates NAME in the export, whose
#                               directory is DIR here, and locks it while a
#                               local process (this script's "locker") does:
#                               both orders, read and write, overlapping and
#                               disjoint ranges, upgrade (one refused for a
#                               local lock leaves the lock as it was),
#                               downgrade and split,
#                               LOCKU, LOCKT, two NFS lock-owners, a range to
#                               the end of the file, CLOSE and RELEASE_LOCKOWNER
#                               or FREE_STATEID
#   expire PORT DIR NAME        a 4.0 and a 4.1 client each lock a file and
#                               fall silent: once their leases ran out, the
#                               local process gets the ranges
#   try PATH r|w START LEN      exit 0 when a new local process gets this
#                               lock (and gives it back), 1 when refused
#   locker PATH                 the local process: opens PATH and takes POSIX
#                               locks (lockf, never waiting) as told on stdin,
#                               "lock r|w START LEN" or "unlock START LEN",
#                               answering "ok" or "denied ERRNO"
#
# Each check prints "ok - ..." or "not ok - ..."; the exit status is the
# number of failed checks (capped at 100).
import errno
import fcntl
import os
import subprocess
import sys
import time

from lt_grace import NOT_MUTATING, StateClient
from lt_nfs4raw import (CLAIM_NULL, ERR, OPEN4_RESULT_CONFIRM, READ_LT, WRITE_LT, close,
                        errname, lock_exist, lock_new, lockt, locku, noargs, opaque, open_,
                        open_confirm, putfh, u64)

FAILED = 0
ALL = 0xFFFFFFFFFFFFFFFF  # length4 to the end of the file
RELEASE_LOCKOWNER, FREE_STATEID = 39, 45


def check(what, cond, detail=""):
    global FAILED
    print("%s - %s%s" % ("ok" if cond else "not ok", what, "" if cond else ": " + detail))
    FAILED += not cond


def check_st(what, want, got):
    check("%s (%s)" % (what, errname(want)), want == got, "got %s" % errname(got))


# ---------------------------------------------------------------- the local process
def phase_locker(path):
    fd = os.open(path, os.O_RDWR)
    for line in sys.stdin:
        w = line.split()
        try:
            if w[0] == "lock":
                how = fcntl.LOCK_SH if w[1] == "r" else fcntl.LOCK_EX
                fcntl.lockf(fd, how | fcntl.LOCK_NB, int(w[3]), int(w[2]))
            else:
                fcntl.lockf(fd, fcntl.LOCK_UN, int(w[2]), int(w[1]))
            print("ok", flush=True)
        except OSError as e:
            print("denied %d" % e.errno, flush=True)
    return 0


class Locker:
    """A local process with the file open, taking POSIX locks as told"""

    def __init__(self, path):
        self.p = subprocess.Popen([sys.executable, __file__, "locker", path], text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def lock(self, kind, start, length):
        """'ok' or 'denied ERRNO'"""
        return self._ask("lock %s %d %d" % (kind, start, length))

    def unlock(self, start, length):
        return self._ask("unlock %d %d" % (start, length))

    def done(self):
        self.p.stdin.close()
        self.p.wait()


def denied_locally(answer):
    """F_SETLK refused for a conflicting lock: EAGAIN or EACCES"""
    return answer in ("denied %d" % errno.EAGAIN, "denied %d" % errno.EACCES)


def local_gets(path, kind, start, length):
    """Does a new local process get (and give back) this lock?"""
    lk = Locker(path)
    answer = lk.lock(kind, start, length)
    lk.done()
    return answer == "ok"


# ---------------------------------------------------------------- the NFS client
class NfsClient(StateClient):
    """lt_grace's client ID with one open-owner, here with its open of one
    file and lock-owners by name, keeping the 4.0 seqids"""

    def __init__(self, port, minor, name):
        super().__init__(port, minor, name)
        self.owners = {}

    def _bump_open(self, st):
        if self.minor == 0 and st not in NOT_MUTATING:
            self.oseq += 1

    def open(self, fname):
        st, r = self.call([noargs("PUTROOTFH"),
                           open_(self.oseq, b"oo-" + self.name, self.clientid, create=True,
                                 claim=CLAIM_NULL, name=fname), noargs("GETFH")])
        self._bump_open(st)
        if st:
            raise ValueError("OPEN: " + errname(st))
        res, self.fh = r[-2][2], r[-1][2]
        self.osid = res["sid"]
        if res["rflags"] & OPEN4_RESULT_CONFIRM:
            st, r = self.call([putfh(self.fh), open_confirm(self.osid, self.oseq)])
            self._bump_open(st)
            if st:
                raise ValueError("OPEN_CONFIRM: " + errname(st))
            self.osid = r[-1][2]["sid"]

    def lock(self, owner, type_, off, length):
        """(status, LOCK4denied or None)"""
        o = self.owners.setdefault(owner, dict(sid=None, seq=0))
        if o["sid"] is None:
            st, r = self.call([putfh(self.fh), lock_new(type_, off, length, self.oseq, self.osid,
                                                        o["seq"], owner, self.clientid)])
            self._bump_open(st)
            if st == 0:
                o["sid"] = r[-1][2]["sid"]
                o["seq"] += 1
        else:
            st, r = self.call([putfh(self.fh), lock_exist(type_, off, length, o["sid"], o["seq"])])
            if self.minor == 0 and st not in NOT_MUTATING:
                o["seq"] += 1
            if st == 0:
                o["sid"] = r[-1][2]["sid"]
        return st, (r[-1][2] if st == ERR["DENIED"] else None)

    def locku(self, owner, off, length):
        o = self.owners[owner]
        st, r = self.call([putfh(self.fh), locku(WRITE_LT, o["seq"], o["sid"], off, length)])
        if self.minor == 0 and st not in NOT_MUTATING:
            o["seq"] += 1
        if st == 0:
            o["sid"] = r[-1][2]["sid"]
        return st

    def lockt(self, owner, type_, off, length):
        st, r = self.call([putfh(self.fh), lockt(type_, off, length, owner, self.clientid)])
        return st, (r[-1][2] if st == ERR["DENIED"] else None)

    def release(self, owner):
        """RELEASE_LOCKOWNER (4.0) or FREE_STATEID (4.1+) of @owner's lock stateid"""
        o = self.owners.pop(owner)
        if self.minor == 0:
            st, _ = self.call([(RELEASE_LOCKOWNER, u64(self.clientid) + opaque(owner))])
        else:
            st, _ = self.call([(FREE_STATEID, o["sid"])])
        return st

    def close(self):
        st, _ = self.call([putfh(self.fh), close(self.oseq, self.osid)])
        self._bump_open(st)
        return st


def is_local(d):
    return d is not None and d["clientid"] == 0 and d["owner"].startswith(b"local")


# ---------------------------------------------------------------- run
def phase_run(port, minor, d, fname):
    v = "4.%d" % minor
    path = os.path.join(d, fname.decode())
    a = NfsClient(port, minor, b"lt-locks-local-%d" % minor)
    a.open(fname)
    o1, o2 = b"lo-one", b"lo-two"

    # NFS first
    check_st(v + ": NFS WRITE lock of [0,100)", 0, a.lock(o1, WRITE_LT, 0, 100)[0])
    lk = Locker(path)
    check(v + ": a local write lock of [50,60) through the export is refused",
          denied_locally(lk.lock("w", 50, 10)))
    check(v + ": a local read lock of [0,1) is refused", denied_locally(lk.lock("r", 0, 1)))
    check(v + ": a local write lock of [100,150) (disjoint) is granted",
          lk.lock("w", 100, 50) == "ok")
    lk.unlock(100, 50)
    st, den = a.lock(o2, WRITE_LT, 50, 10)
    check_st(v + ": another NFS lock-owner's WRITE of [50,60)", ERR["DENIED"], st)
    check(v + ": LOCK4denied names the NFS owner", den is not None and den["owner"] == o1 and
          den["offset"] == 0 and den["length"] == 100, repr(den))
    check_st(v + ": LOCKU of [0,100)", 0, a.locku(o1, 0, 100))
    check(v + ": after LOCKU a local write lock of [0,100) is granted",
          lk.lock("w", 0, 100) == "ok")
    lk.unlock(0, 100)

    # read locks, both ways
    check_st(v + ": NFS READ lock of [0,100)", 0, a.lock(o1, READ_LT, 0, 100)[0])
    check(v + ": a local read lock of [0,100) is granted beside it", lk.lock("r", 0, 100) == "ok")
    lk.unlock(0, 100)
    check(v + ": a local write lock of [10,20) is refused", denied_locally(lk.lock("w", 10, 10)))
    check(v + ": a local read lock of [50,60) beside it", lk.lock("r", 50, 10) == "ok")
    st, den = a.lock(o1, WRITE_LT, 0, 100)
    check_st(v + ": the NFS lock's upgrade to WRITE over it", ERR["DENIED"], st)
    check(v + ": ... names the local process", is_local(den) and den["offset"] == 50, repr(den))
    lk.unlock(50, 10)
    check(v + ": the refused upgrade left the NFS READ lock: a local read lock is granted",
          local_gets(path, "r", 0, 100))
    check(v + ": ... a local write lock refused", not local_gets(path, "w", 0, 10))
    # upgrade, downgrade, split mirrored
    check_st(v + ": the NFS lock upgraded to WRITE", 0, a.lock(o1, WRITE_LT, 0, 100)[0])
    check(v + ": after the upgrade a local read lock is refused",
          denied_locally(lk.lock("r", 0, 10)))
    check_st(v + ": downgraded to READ", 0, a.lock(o1, READ_LT, 0, 100)[0])
    check(v + ": after the downgrade a local read lock is granted", lk.lock("r", 0, 10) == "ok")
    lk.unlock(0, 10)
    check(v + ": ... and a local write lock refused", denied_locally(lk.lock("w", 0, 10)))
    check_st(v + ": LOCKU of [40,60) splits it", 0, a.locku(o1, 40, 20))
    check(v + ": a local write lock of the hole [40,60) is granted", lk.lock("w", 40, 20) == "ok")
    lk.unlock(40, 20)
    check(v + ": ... not one of [30,35)", denied_locally(lk.lock("w", 30, 5)))
    check(v + ": ... nor one of [60,65)", denied_locally(lk.lock("w", 60, 5)))
    check_st(v + ": LOCKU of the rest", 0, a.locku(o1, 0, 100))
    lk.done()

    # local first
    lr = Locker(path)
    check(v + ": a local process read-locks [200,300)", lr.lock("r", 200, 100) == "ok")
    check_st(v + ": NFS READ lock of [250,260) beside it", 0, a.lock(o2, READ_LT, 250, 10)[0])
    st, den = a.lock(o1, WRITE_LT, 210, 10)
    check_st(v + ": NFS WRITE lock of [210,220) over it", ERR["DENIED"], st)
    check(v + ": LOCK4denied names a local process, its range and type",
          is_local(den) and den["offset"] == 200 and den["length"] == 100 and
          den["type"] == READ_LT, repr(den))
    st, den = a.lockt(b"lo-test", WRITE_LT, 200, 10)
    check_st(v + ": LOCKT WRITE of [200,210)", ERR["DENIED"], st)
    check(v + ": LOCKT reports the local lock", is_local(den) and den["offset"] == 200, repr(den))
    check_st(v + ": LOCKT READ of [200,210)", 0, a.lockt(b"lo-test", READ_LT, 200, 10)[0])
    lw = Locker(path)
    check(v + ": another local process write-locks [400,500)", lw.lock("w", 400, 100) == "ok")
    st, den = a.lock(o1, READ_LT, 450, 10)
    check_st(v + ": NFS READ lock of [450,460) over it", ERR["DENIED"], st)
    check(v + ": LOCK4denied has the local write lock",
          is_local(den) and den["offset"] == 400 and den["type"] == WRITE_LT, repr(den))
    st, den = a.lockt(o2, READ_LT, 0, ALL)
    check_st(v + ": LOCKT READ of the whole file by a lock-owner", ERR["DENIED"], st)
    check(v + ": ... reports the local write lock", is_local(den) and den["offset"] == 400,
          repr(den))
    check_st(v + ": NFS WRITE lock of [500,600), next to it", 0, a.lock(o1, WRITE_LT, 500, 100)[0])
    check_st(v + ": NFS WRITE lock of [600, end of file)", 0, a.lock(o1, WRITE_LT, 600, ALL)[0])
    lw.done()
    lr.done()
    check(v + ": a local write lock far out (2^40) is refused under the range to the end",
          not local_gets(path, "w", 1 << 40, 1))
    check_st(v + ": LOCKU of [500, end of file)", 0, a.locku(o1, 500, ALL))
    check(v + ": then the local write lock far out is granted", local_gets(path, "w", 1 << 40, 1))
    check_st(v + ": the local processes gone, NFS WRITE lock of [200,300) meets the other "
             "NFS owner's READ lock", ERR["DENIED"], a.lock(o1, WRITE_LT, 200, 100)[0])
    check_st(v + ": LOCKU by that owner", 0, a.locku(o2, 250, 10))
    check_st(v + ": then it is granted", 0, a.lock(o1, WRITE_LT, 200, 100)[0])
    check_st(v + ": a lock starting past 2^63 - 1 (lacunad's table only)", 0,
             a.lock(o2, WRITE_LT, (1 << 63) + 10, 10)[0])
    check_st(v + ": ... excludes another NFS owner", ERR["DENIED"],
             a.lock(o1, WRITE_LT, (1 << 63), 100)[0])
    check_st(v + ": LOCKU of it", 0, a.locku(o2, (1 << 63) + 10, 10))
    check_st(v + ": " + ("RELEASE_LOCKOWNER" if minor == 0 else "FREE_STATEID") +
             " of a lock-owner holding nothing", 0, a.release(o2))

    # CLOSE takes the open's locks along
    check(v + ": before CLOSE a local write lock of [200,210) is refused",
          not local_gets(path, "w", 200, 10))
    check_st(v + ": CLOSE with locks held (they go with the open)", 0, a.close())
    check(v + ": after CLOSE a local write lock of the whole file is granted",
          local_gets(path, "w", 0, 0))
    return 0


# ---------------------------------------------------------------- expire
def phase_expire(port, d, fname):
    clients = []
    for minor in (0, 1):
        name = b"%s-%d" % (fname, minor)
        path = os.path.join(d, name.decode())
        a = NfsClient(port, minor, b"lt-locks-expire-%d" % minor)
        a.open(name)
        check_st("4.%d: NFS WRITE lock of the whole file" % minor, 0,
                 a.lock(b"lo-expire", WRITE_LT, 0, ALL)[0])
        check("4.%d: a local write lock is refused while the lease runs" % minor,
              not local_gets(path, "w", 0, 0))
        clients.append((minor, path, a))
    # the clients fall silent; a limit only against a hang
    for minor, path, a in clients:
        deadline = time.monotonic() + 120
        while not local_gets(path, "w", 0, 0) and time.monotonic() < deadline:
            time.sleep(0.5)
        check("4.%d: once the lease ran out a local write lock is granted" % minor,
              local_gets(path, "w", 0, 0))
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "locker":
        return phase_locker(sys.argv[2])
    if cmd == "try":
        return 0 if local_gets(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])) else 1
    if cmd == "run":
        phase_run(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5].encode())
    elif cmd == "expire":
        phase_expire(int(sys.argv[2]), sys.argv[3], sys.argv[4].encode())
    else:
        raise SystemExit("usage: see the top of " + __file__)
    return min(FAILED, 100)


if __name__ == "__main__":
    sys.exit(main())
