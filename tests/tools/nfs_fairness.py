#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
Does one connection that pipelines slow requests delay another's?

    nfs_fairness.py --port P [--window N] [--probes N] [--bound N]

A loader connection (from 127.0.0.1) keeps --window WRITEs of 512 KiB
(FILE_SYNC, file "wfile" in the export root) in flight, sending a new
one for each reply. Meanwhile a prober connection (from 127.0.0.2) sends
--probes GETATTRs one at a time, and for each one counts the loader's
replies that arrived between sending it and its reply. The count does
not depend on how fast the machine is: with the workers serving the
connections with work in turn, a GETATTR waits for about one WRITE per
worker; served in arrival order, it waits for the whole window queued
ahead of it. The median count must stay under --bound, and the loader's
window must really be queued: at least --bound of its WRITEs have to be
in flight when a probe is sent (else the check proves nothing and it
says so, exit 77). Prints "ok - ..." / "not ok - ..."; exits 0, 1 when
the check failed, 99 when the server cannot be reached.
"""
import argparse
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import auth_sys, call_record, frame  # noqa: E402
from nfs_limits import Conn, getattr_args, write_args  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--probes", type=int, default=15)
    ap.add_argument("--bound", type=int, default=24)
    ap.add_argument("--write-size", type=int, default=4096)
    ap.add_argument("--hang", type=float, default=120.0)
    a = ap.parse_args()
    try:
        load = Conn(a.host, a.port, "127.0.0.1", a.hang)
        probe = Conn(a.host, a.port, "127.0.0.2", a.hang)
    except OSError as e:
        print("ERROR: server at %s:%d: %s" % (a.host, a.port, e))
        return 99

    wargs = write_args("wfile", os.urandom(a.write_size))
    lock = threading.Lock()
    state = {"replies": 0, "sent": 0, "stop": False, "err": None}

    def wrec():
        return frame(call_record(load.next_xid(), 1, wargs, cred=auth_sys()))

    def reader():
        try:
            while not state["stop"]:
                load.recv_record()
                with lock:
                    state["replies"] += 1
                load.send(wrec())
                with lock:
                    state["sent"] += 1
        except (OSError, EOFError) as e:
            if not state["stop"]:
                state["err"] = repr(e)

    load.send(b"".join(wrec() for _ in range(a.window)))
    state["sent"] = a.window
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    time.sleep(2)  # the window is queued at the server
    gargs = getattr_args("wfile")
    counts, depths = [], []
    for _ in range(a.probes):
        with lock:
            before = state["replies"]
            depths.append(state["sent"] - state["replies"])
        probe.send(frame(call_record(probe.next_xid(), 1, gargs, cred=auth_sys())))
        try:
            probe.recv_record()
        except socket.timeout:
            print("not ok - a GETATTR got no reply in %.0f s (timed out)" % a.hang)
            return 1
        with lock:
            counts.append(state["replies"] - before)
        time.sleep(0.1)
    state["stop"] = True
    load.close()
    probe.close()
    if state["err"]:
        print("not ok - the loader's connection failed: %s" % state["err"])
        return 1
    counts.sort()
    depths.sort()
    med, depth = counts[len(counts) // 2], depths[len(depths) // 2]
    print("# loader's WRITEs in flight when a GETATTR was sent: median %d; its replies "
          "while a GETATTR waited: %s" % (depth, counts))
    if depth < a.bound:
        print("SKIP: only %d WRITEs in flight, fewer than %d: no queue to jump" %
              (depth, a.bound))
        return 77
    if med > a.bound:
        print("not ok - a GETATTR waited for a median of %d of another connection's WRITEs "
              "(over %d): that connection's pipelined requests went first" % (med, a.bound))
        return 1
    print("ok - a GETATTR waited for a median of %d WRITEs of a connection with %d in flight"
          % (med, depth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
