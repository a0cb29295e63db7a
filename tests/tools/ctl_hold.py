#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
Hold connections to a lacunafs control socket, as a local user might:

    ctl_hold.py NAME COUNT READY_FILE

connects COUNT times to the abstract socket NAME ("@lacunafs.PID.X" as
/proc/net/unix shows it), waits a second, writes to READY_FILE how many
connections the daemon kept (it closes the ones it refuses), and holds
them until killed.
"""
import select
import socket
import sys
import time


def main():
    name, count, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    addr = "\0" + name.lstrip("@")
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(addr)
            socks.append(s)
        except OSError:
            s.close()
    time.sleep(1)
    kept = 0
    for s in socks:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            kept += 1  # nothing to read: not closed by the daemon
    with open(ready, "w") as f:
        f.write("%d\n" % kept)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
