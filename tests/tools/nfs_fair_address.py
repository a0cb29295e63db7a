#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
Is a fresh connection answered while other connections of its own
address hold that address's whole share and never read their replies?

    nfs_fair_address.py --port P --stats FILE [--greedy N] [--reads N]
                        [--read-size N] [--hang S]

--greedy connections from 127.0.0.1 (default 60), each with a small
receive buffer, send --reads READs of --read-size bytes of "big" (a file
in the export root at least that large) and never read a reply, so that
their replies pile up at the server and their address reaches its
max_requests_per_client: the server then stops reading them
(client_stalls in the stats FILE, which the server rewrites once a
second). Once the server has taken all it will take from them (its
compounds counter stops moving), one more connection from 127.0.0.1
calls NULL, then a COMPOUND with a GETATTR: both must be answered,
within --hang seconds, a bound for a hang only (a server that stalls
every connection of the address answers neither until the greedy ones
are closed, and the test gives them no send_timeout). The greedy ones
must stay bounded: the server read fewer of their READs than they sent.

Prints "ok - ..." / "not ok - ..." and "# " notes, among them how long
the fresh connection waited for each reply (not checked: a loaded
machine changes it); exits 0, 1 when a check failed, 99 when the server
cannot be reached or the setup did not happen in --hang seconds.
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import Compound, auth_sys, call_record, frame  # noqa: E402
from nfs_limits import Conn, getattr_args, read_args, stats  # noqa: E402

ADDR = "127.0.0.1"


def greedy_conn(a, rargs):
    """A connection that sends its READs and will never read a reply."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # a small receive window: the replies stay queued at the server
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(a.hang)
    s.bind((ADDR, 0))
    s.connect((a.host, a.port))
    s.sendall(b"".join(frame(call_record(x, 1, rargs, cred=auth_sys()))
                       for x in range(1, a.reads + 1)))
    return s


def wait_settled(a):
    """Wait until client_stalls is counted and compounds stops moving."""
    t0 = time.time()
    last, same = None, 0
    while time.time() - t0 < a.hang:
        st = stats(a.stats)
        n = st.get("compounds", 0)
        if st.get("client_stalls", 0) > 0:
            same = same + 1 if n == last else 0
            if same >= 3:  # three rewrites of the stats file, nothing new
                return st
        last = n
        time.sleep(0.5)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--greedy", type=int, default=60)
    ap.add_argument("--reads", type=int, default=24)
    ap.add_argument("--read-size", type=int, default=1 << 20)
    ap.add_argument("--hang", type=float, default=120.0)
    a = ap.parse_args()

    base = stats(a.stats).get("compounds", 0)
    rargs = read_args("big", a.read_size)
    greedy = []
    try:
        for _ in range(a.greedy):
            greedy.append(greedy_conn(a, rargs))
    except OSError as e:
        print("ERROR: greedy connection %d: %s" % (len(greedy) + 1, e))
        return 99
    sent = a.greedy * a.reads
    st = wait_settled(a)
    if st is None:
        print("ERROR: no client_stalls, or the server kept reading, for %.0f s (timed out)"
              % a.hang)
        return 99
    taken = st.get("compounds", 0) - base
    print("# %d greedy connections sent %d READs of %d bytes; the server read %d, "
          "client_stalls %d" % (a.greedy, sent, a.read_size, taken, st["client_stalls"]))

    fails = 0
    try:
        t0 = time.time()
        fresh = Conn(a.host, a.port, ADDR, a.hang)
        ok = fresh.null()
        t1 = time.time()
        rep = fresh.call(1, getattr_args("big"), cred=auth_sys())
        t2 = time.time()
        status, _ = Compound.parse_reply(rep.body)
        fresh.close()
        print("# the fresh connection waited %.3f s for its NULL, %.3f s for its GETATTR"
              % (t1 - t0, t2 - t1))
        if not ok or status:
            print("not ok - the fresh connection's calls failed: NULL %s, COMPOUND status %d"
                  % ("answered" if ok else "refused", status))
            fails += 1
        else:
            print("ok - a fresh connection of the stalled address got its NULL and GETATTR "
                  "answered")
    except socket.timeout:
        print("not ok - a fresh connection of the stalled address got no reply in %.0f s "
              "(timed out): it waited for the greedy connections of its address" % a.hang)
        fails += 1
    except (OSError, EOFError) as e:
        print("not ok - the fresh connection failed: %r" % e)
        fails += 1

    st = stats(a.stats)
    taken = st.get("compounds", 0) - base
    if st.get("client_stalls", 0) > 0 and taken < sent:
        print("ok - the greedy connections stayed bounded: %d of their %d READs read, "
              "client_stalls %d" % (taken, sent, st["client_stalls"]))
    else:
        print("not ok - the greedy connections were not held back: %d of %d READs read, "
              "client_stalls %d" % (taken, sent, st.get("client_stalls", 0)))
        fails += 1
    for s in greedy:
        s.close()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
