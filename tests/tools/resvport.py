#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
TCP connections for the tests' NFS clients, from a reserved source port
when the test runs as root, as libnfs and the Linux kernel client do
(bindresvport(3)): lacunad's exports are `secure` by default, and a
secure export answers AUTH_SYS calls from ports 1024 and up with
NFS4ERR_PERM (docs/lacunad.conf.5.md).

    from resvport import connect
    s = connect("127.0.0.1", 2049, timeout=30)            # reserved if root
    s = connect("127.0.0.1", 2049, reserved=False)        # never
    s = connect("127.0.0.1", 2049, source="127.0.0.2")    # from that address

The ports are tried from a random start in 600..1023, skipping those in
use; when none is free (reserved ports are few, and TIME_WAIT holds each
closed one a minute) or the caller is not root, the connection comes from
an ordinary port. LT_RESVPORT=0 in the environment turns reserved ports
off for every caller that does not ask for them explicitly.
"""

import errno
import os
import random
import socket

RESV_LOW, RESV_HIGH = 600, 1023  # below 600: well-known services


def want_reserved():
    """True when connections should come from a reserved port by default."""
    return os.geteuid() == 0 and os.environ.get("LT_RESVPORT", "1") != "0"


def _family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _try_reserved(host, port, timeout, source):
    """A socket connected from a reserved port, or None when none is free."""
    fam = _family(host)
    n = RESV_HIGH - RESV_LOW + 1
    start = random.randrange(n)
    for i in range(n):
        sport = RESV_LOW + (start + i) % n
        s = socket.socket(fam, socket.SOCK_STREAM)
        # a port of ours in TIME_WAIT towards another server stays usable
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(timeout)
        try:
            s.bind((source or "", sport))
            s.connect((host, port))
            return s
        except OSError as e:
            s.close()
            if e.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
                continue
            raise
    return None


def connect(host, port, timeout=None, source=None, reserved=None):
    """A connected TCP socket to (host, port). reserved: True (from a
    reserved port, falling back to an ordinary one when none is free),
    False (an ordinary port), None (True when want_reserved())."""
    if reserved is None:
        reserved = want_reserved()
    if reserved:
        s = _try_reserved(host, port, timeout, source)
        if s is not None:
            return s
    return socket.create_connection((host, port), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def is_reserved(sock):
    """Does @sock come from a reserved port?"""
    return sock.getsockname()[1] < 1024
