#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exports(5)'s secure over the wire (tests/integ/nfs_secure.sh): the
# same calls from a reserved and from an unreserved source port, and the
# status each gets.
#
#   lt_secure.py PORT PATH EXPECT [--source ADDR]
#
# PATH is the file to read, as LOOKUP components from the root of the
# pseudo filesystem (a/b/file). EXPECT is what a call from an unreserved
# port gets: "perm" (NFS4ERR_PERM, a secure export) or "ok". A call from
# a reserved port always succeeds. The calls, in minor version 0 (no
# state) and 2 (a session): PUTROOTFH+GETATTR; PUTROOTFH+LOOKUP...+GETFH;
# PUTFH (the handle got from a reserved port)+READ. --source: connect
# from this local address. Prints "ok ..." or "FAIL ..." per check; exits
# 0 when all passed, 1 otherwise, 99 when the test cannot run (not root).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lt_nfs4raw import (A_SIZE, A_TYPE, ERR, Checks, Client, Session, check,  # noqa: E402
                        errname, getattr_, lookup, noargs, putfh, read)


def conn(port, minor, source, reserved):
    cl = Client(port, source=source, reserved=reserved)
    sport = cl.s.getsockname()[1]
    if reserved and sport >= 1024:
        print("ERROR: no reserved port free to connect from")
        sys.exit(99)
    if not reserved and sport < 1024:
        print("ERROR: an unreserved connection got port %d" % sport)
        sys.exit(99)
    if minor == 0:
        return cl, lambda ops: cl.call(0, ops)
    ses = Session(cl, minor)
    return cl, ses.call


def last_status(res):
    """status of the COMPOUND and the op that set it"""
    st, ops = res
    return st, ops[-1][0] if ops else None


def run(port, path, expect, source, minor):
    names = [n.encode() for n in path.split("/") if n]
    _, call_r = conn(port, minor, source, True)
    walk = [noargs("PUTROOTFH")] + [lookup(n) for n in names] + [noargs("GETFH")]
    st, ops = call_r(walk)
    check("4.%d reserved port: PUTROOTFH, LOOKUP %s, GETFH" % (minor, path), st == 0,
          errname(st))
    if st != 0:
        return
    fh = ops[-1][2]
    st, _ = call_r([putfh(fh), read(0, 64)])
    check("4.%d reserved port: PUTFH, READ" % minor, st == 0, errname(st))

    _, call_u = conn(port, minor, source, False)
    want = ERR["PERM"] if expect == "perm" else 0
    cases = [
        ("PUTROOTFH, GETATTR", [noargs("PUTROOTFH"), getattr_((A_TYPE, A_SIZE))]),
        ("PUTROOTFH, LOOKUP %s, GETFH" % path, walk),
        ("PUTFH, READ", [putfh(fh), read(0, 64)]),
    ]
    for desc, ops_ in cases:
        st, op = last_status(call_u(ops_))
        detail = "%s (op %s)" % (errname(st), op)
        check("4.%d unreserved port: %s: %s" % (minor, desc, errname(want)), st == want, detail)
    if expect == "perm":
        # nfsd's fh_verify(): the op that puts the handle is refused, not a later one
        st, ops = call_u([putfh(fh), read(0, 64)])
        check("4.%d unreserved port: PUTFH itself is refused" % minor,
              len(ops) == 1 and ops[0][1] == ERR["PERM"], ops)


def main():
    a = sys.argv[1:]
    source = None
    if "--source" in a:
        i = a.index("--source")
        source = a[i + 1]
        del a[i:i + 2]
    if len(a) != 3 or a[2] not in ("perm", "ok"):
        print("usage: lt_secure.py PORT PATH perm|ok [--source ADDR]", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("ERROR: needs root, for reserved ports")
        return 99
    for minor in (0, 2):
        run(int(a[0]), a[1], a[2], source, minor)
    return 1 if Checks.fails else 0


if __name__ == "__main__":
    sys.exit(main())
