#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
A slow-loris client against lacunad's record_timeout:

    nfs_slowloris.py --port P --record-timeout T

It sends the 4 bytes of a record mark (a 1000-byte record) spread over
0.6 T, then one byte of the record a second. record_timeout counts from
the record's first byte, so the server must close the connection less
than T - 1 seconds after the mark's last byte (it times in whole
seconds): a server that started the clock again at the end of the mark
would still be reading then. Prints "ok - ..." or
"not ok - ..."; exits 0, 1 when the check failed, 99 when the server
cannot be reached.
"""
import argparse
import socket
import struct
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--record-timeout", type=float, required=True)
    ap.add_argument("--hang", type=float, default=120.0,
                    help="the server not closing by then is a hang")
    a = ap.parse_args()
    try:
        s = socket.create_connection((a.host, a.port), timeout=10)
    except OSError as e:
        print("ERROR: server at %s:%d: %s" % (a.host, a.port, e))
        return 99
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    mark = struct.pack(">I", 0x80000000 | 1000)
    step = 0.6 * a.record_timeout / 3
    t0 = time.time()
    closed = None
    mark_done = None
    sent = 0
    while time.time() - t0 < a.hang:
        # the byte to send next and when
        if sent < 4:
            b, at = mark[sent:sent + 1], t0 + sent * step
        else:
            b, at = b"\0", mark_done + (sent - 3)
        wait = at - time.time()
        if wait > 0:
            s.settimeout(wait)
            try:
                if not s.recv(1):
                    closed = time.time()
                    break
            except socket.timeout:
                pass
            except OSError:
                closed = time.time()
                break
        try:
            s.sendall(b)
        except OSError:
            closed = time.time()
            break
        sent += 1
        if sent == 4:
            mark_done = time.time()
    s.close()
    if closed is None:
        print("not ok - the slow record was not dropped in %.0f s (timed out)" % a.hang)
        return 1
    print("# the mark took %.1f s; closed %.1f s after the first byte, %d bytes sent" %
          ((mark_done or closed) - t0, closed - t0, sent))
    if mark_done is not None and closed - mark_done >= a.record_timeout - 1:
        print("not ok - closed %.1f s after the mark was complete: record_timeout (%.0f s) "
              "did not count from the record's first byte" % (closed - mark_done,
                                                               a.record_timeout))
        return 1
    print("ok - a record sent a byte a second is dropped record_timeout after its first byte")
    return 0


if __name__ == "__main__":
    sys.exit(main())
