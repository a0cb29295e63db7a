#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Raw-RPC checks of lacunad's fd budget (lacunad.conf(5), LIMITS:
# max_cached_files), for tests/integ/nfs_fd_budget.sh, against a lacunad
# whose RLIMIT_NOFILE is small:
#
#   run PORT PID LIMIT NFILES MODE
#       a greedy client (NFSv4.1) looks up NFILES distinct files of "many/"
#       (LOOKUP + GETATTR each), then OPENs them without CLOSE until it is
#       refused three times running; lacunad's fds (/proc/PID/fd) are
#       counted all along. Every answer must be OK, DELAY or RESOURCE,
#       never SERVERFAULT or IO. Then, the greedy client still holding its
#       opens, a second client connects and does GETATTR, READ and WRITE
#       of "b.dat". Last the greedy client goes away (its connection
#       closed, its lease left to expire) and a third client must find the
#       service as before.
#       MODE auto: the limits are auto: every LOOKUP and GETATTR is OK, the
#       fds stay below LIMIT - 16, OPENs end in DELAY (max_opens) and the
#       second client is served.
#       MODE over: max_cached_files and max_opens set far past what LIMIT
#       allows: LOOKUPs still all OK (idle cached files closed on EMFILE
#       and the open tried again), OPENs end in DELAY once only open files
#       hold the fds (fd_exhausted); then LOCKs by new lock-owners on the
#       files held open, each needing a description of the file of its own
#       for its locks, end in DELAY too.
#
# Each check prints "ok - ..." or "not ok - ..."; the exit status is the
# number of failed checks (capped at 100).
import os
import sys
import time

from lt_grace import StateClient
from lt_nfs4raw import (A_SIZE, A_TYPE, ERR, ERRNAME, WRITE_LT, Conn, getattr_, lock_new,
                        lookup, noargs, read, write)

FAILED = 0
DATA = b"the well-behaved client's data\n"


def check(what, ok, detail=""):
    global FAILED
    print("%s - %s%s" % ("ok" if ok else "not ok", what, (": " + detail) if detail and not ok
                         else ""))
    FAILED += not ok


def nfds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def tally(counts):
    return ", ".join("%s %d" % (ERRNAME.get(k, str(k)), v) for k, v in sorted(counts.items()))


class Greedy(StateClient):
    def __init__(self, port, pid):
        super().__init__(port, 1, b"greedy-%d" % os.getpid())
        self.pid, self.peak, self.counts = pid, 0, {}

    def sample(self):
        self.peak = max(self.peak, nfds(self.pid))

    def count(self, st):
        self.counts[st] = self.counts.get(st, 0) + 1


def well_behaved(port, what):
    """a new client: GETATTR, WRITE and READ of b.dat"""
    try:
        c = Conn(port, minor=1)
    except (OSError, EOFError, ValueError) as e:
        check("%s: connects and makes a session" % what, False, str(e))
        return
    st, r = c.call([noargs("PUTROOTFH"), lookup(b"b.dat"), getattr_([A_TYPE, A_SIZE])])
    check("%s: GETATTR" % what, st == 0, ERRNAME.get(st, str(st)))
    st, r = c.call([noargs("PUTROOTFH"), lookup(b"b.dat"), write(0, DATA)])
    check("%s: WRITE" % what, st == 0 and r[-1][2]["count"] == len(DATA),
          ERRNAME.get(st, str(st)))
    st, r = c.call([noargs("PUTROOTFH"), lookup(b"b.dat"), read(0, 4096)])
    check("%s: READ gets what was written" % what, st == 0 and r[-1][2]["data"] == DATA,
          ERRNAME.get(st, str(st)))
    c.client.close()


def run(port, pid, limit, nfiles, mode):
    ok_set = {0, ERR["DELAY"], ERR["RESOURCE"]}
    idle = nfds(pid)
    g = Greedy(port, pid)
    for i in range(nfiles):
        st, r = g.call([noargs("PUTROOTFH"), lookup(b"many"), lookup(b"f%d" % i),
                        getattr_([A_TYPE, A_SIZE])])
        g.count(st)
        if i % 50 == 0:
            g.sample()
    g.sample()
    check("%d LOOKUP + GETATTR: all OK" % nfiles, set(g.counts) == {0}, tally(g.counts))
    lookups_peak = g.peak

    opens, refused, ocounts, sids = 0, 0, {}, []
    while refused < 3 and opens < nfiles:
        st, sid = g.open([noargs("PUTROOTFH"), lookup(b"many")], name=b"f%d" % opens)
        ocounts[st] = ocounts.get(st, 0) + 1
        if st == 0:
            sids.append(sid)
            opens += 1
            refused = 0
        else:
            refused += 1
        g.sample()
    print("# %d OPENs held; answers: %s" % (opens, tally(ocounts)))
    check("OPENs answered OK until DELAY", ERR["DELAY"] in ocounts and
          set(ocounts) <= ok_set, tally(ocounts))
    check("no SERVERFAULT or IO", not set(g.counts) - ok_set and not set(ocounts) - ok_set,
          tally(g.counts) + "; " + tally(ocounts))
    print("# lacunad's fds: at most %d during the LOOKUPs, %d with the OPENs (limit %d)"
          % (lookups_peak, g.peak, limit))
    if mode == "auto":
        check("fds stay within the budget during the LOOKUPs (< %d)" % (limit - 16),
              lookups_peak < limit - 16, "%d" % lookups_peak)
        check("fds stay within the budget with the OPENs (< %d)" % (limit - 16),
              g.peak < limit - 16, "%d" % g.peak)
        well_behaved(port, "a second client while the greedy one holds its opens")
    if mode == "over":
        # each lock-owner's locks on a file are held on a description of its own
        lcounts = {}
        for i, sid in enumerate(sids):
            st, _ = g.call([noargs("PUTROOTFH"), lookup(b"many"), lookup(b"f%d" % i),
                            lock_new(WRITE_LT, 0, 10, 0, sid, 0, b"lo-%d" % i, g.clientid)])
            lcounts[st] = lcounts.get(st, 0) + 1
            if st:
                break
        print("# LOCKs by new lock-owners on the files held open: %s" % tally(lcounts))
        check("out of fds, LOCKs are granted until one is DELAY",
              set(lcounts) == {0, ERR["DELAY"]} or set(lcounts) == {ERR["DELAY"]},
              tally(lcounts))

    g.c.close()  # gone: its lease runs out, its files go idle
    deadline = time.monotonic() + 120
    while nfds(pid) > idle + 2 and time.monotonic() < deadline:
        time.sleep(1)
    check("the greedy client's opens and files are let go (fds back to %d of %d before it)"
          % (nfds(pid), idle), nfds(pid) <= idle + 2, "timed out after 120 s")
    well_behaved(port, "after the greedy client went away")


def main(argv):
    if len(argv) != 7 or argv[1] != "run" or argv[6] not in ("auto", "over"):
        sys.exit("usage: lt_fd_budget.py run PORT PID LIMIT NFILES auto|over")
    run(int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]), argv[6])
    return min(FAILED, 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
