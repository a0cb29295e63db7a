#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of tests/integ/metrics.sh.

  readplus PORT NAME N COUNT   N READ_PLUS of NAME (offset 0, COUNT bytes)
                               in N COMPOUNDs of one 4.2 session; prints
                               "data D hole H" summed over the replies, H
                               the holes' bytes inside [0, COUNT)
  load PORT NAME STOPFILE      READ_PLUS of NAME in a loop until STOPFILE
                               exists (at most 10 minutes)
  get URL                      the page at URL (HTTP status 200 or exit 1)
  value FILE SAMPLE            the value of SAMPLE (name{labels} exactly as
                               written) in a saved page, 0 when absent
  http ADDR PORT CASE          send a hostile request, print the status
                               line answered (or "closed")
  idle ADDR PORT N SECONDS     hold N connections open without a request
"""
import os
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from lt_nfs4raw import Conn, lookup, noargs, read_plus, NFS4_CONTENT_DATA  # noqa: E402


def readplus(port, name, n, count):
    c = Conn(port, minor=2)
    data = hole = 0
    for _ in range(n):
        st, r = c.call([noargs("PUTROOTFH"), lookup(name), read_plus(0, count)])
        if st:
            raise SystemExit("READ_PLUS: status %d" % st)
        for kind, _off, v in r[-1][2]["segs"]:
            if kind == NFS4_CONTENT_DATA:
                data += len(v)
            else:
                hole += min(_off + v, count) - max(_off, 0)
    print("data %d hole %d" % (data, hole))


def load(port, name, stopfile):
    c = Conn(port, minor=2)
    end = time.monotonic() + 600
    while time.monotonic() < end and not os.path.exists(stopfile):
        c.call([noargs("PUTROOTFH"), lookup(name), read_plus(0, 1 << 20)])


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        if r.status != 200:
            raise SystemExit("HTTP %d" % r.status)
        sys.stdout.write(r.read().decode())


def value(path, sample):
    for line in open(path):
        if line.startswith(sample + " "):
            print(line.split()[-1])
            return
    print(0)


CASES = {
    "garbage": b"\x16\x03\x01 hello\r\n\r\n",
    "nul": b"GET /metr\0ics HTTP/1.1\r\n\r\n",
    "notfound": b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n",
    "post": b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    "http2": b"GET /metrics HTTP/2.0\r\n\r\n",
    "huge": b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 100000 + b"\r\n\r\n",
    "half": b"GET /metrics HTTP/1.1\r\nHost:",
    "ok10": b"GET /metrics HTTP/1.0\r\n\r\n",
}


def http(addr, port, case):
    s = socket.create_connection((addr, port), timeout=60)
    try:
        s.sendall(CASES[case])
        if case == "half":
            s.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the server may close before taking everything
    try:
        line = s.makefile("rb").readline().decode(errors="replace").strip()
    except OSError:
        line = ""
    print(line or "closed")


def idle(addr, port, n, seconds):
    socks = [socket.create_connection((addr, port), timeout=60) for _ in range(n)]
    time.sleep(seconds)
    for s in socks:
        s.close()


def main():
    a = sys.argv[1:]
    if a[0] == "readplus":
        readplus(int(a[1]), a[2], int(a[3]), int(a[4]))
    elif a[0] == "load":
        load(int(a[1]), a[2], a[3])
    elif a[0] == "get":
        get(a[1])
    elif a[0] == "value":
        value(a[1], a[2])
    elif a[0] == "http":
        http(a[1], int(a[2]), a[3])
    elif a[0] == "idle":
        idle(a[1], int(a[2]), int(a[3]), float(a[4]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
