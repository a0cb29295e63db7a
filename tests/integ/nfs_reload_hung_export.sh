#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A reload is not held up by an export whose lacunafs hangs. lacunad
# serves two lacunafs exports, A and B, each over an ext4 of its own. A
# client's WRITE to A is in flight while A's lacunafs is stopped
# (SIGSTOP), so the WRITE hangs in lacunad; then SIGHUP: the reload must
# complete (its "reloaded" line), and a client of B must get a GETATTR
# and a 1 MiB READ answered, while the WRITE still hangs. Then lacunafs A
# goes on (SIGCONT): the WRITE completes and the server is healthy.
# (lacunad held its configuration lock for reading across every
# COMPOUND and for writing across a reload: the reload waited for the
# hung WRITE, and every request after it for the reload.)

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's reload"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
TO=$LT_NFS_TIMEOUT
HANG=60 # seconds a step may take before it counts as hung (a guard, not a budget)

nfs_make_export ext4 a 256M
A=$NFS_EXPORT
A_PID=$LT_LFS_PID
nfs_make_export ext4 b 256M
B=$NFS_EXPORT
B_BACKING=$NFS_BACKING
: >"$A/afile" || lt_hard "cannot make $A/afile"
head -c $((1 << 20)) /dev/urandom >"$B_BACKING/bfile" || lt_hard "cannot make $B_BACKING/bfile"

cat >"$LT_TMP/lacunad.conf" <<EOF || lt_hard "cannot write the configuration"
threads = 4
grace = off
$A 127.0.0.1(rw,no_root_squash)
$B 127.0.0.1(rw,no_root_squash)
EOF

# The client: "fh PORT PATH" prints the handle of PATH (looked up from the
# pseudo root); "write PORT FH" writes 64 KiB at 0 with FILE_SYNC;
# "read PORT PATH FILE" checks GETATTR and a 1 MiB READ of PATH against FILE.
cat >"$LT_TMP/client.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from lt_nfs4raw import (Client, check, Checks, errname, getattr_, lookup, noargs, putfh,
                        read, write, opaque, A_SIZE, A_TYPE)

cmd, port = sys.argv[2], int(sys.argv[3])
c = Client(port)
c.s.settimeout(None)  # the caller's timeout guards against hangs


def path_ops(path):
    return [noargs("PUTROOTFH")] + [lookup(n.encode()) for n in path.split("/") if n]


if cmd == "fh":
    st, r = c.call(0, path_ops(sys.argv[4]) + [noargs("GETFH")])
    if st:
        sys.exit("LOOKUP %s: %s" % (sys.argv[4], errname(st)))
    print(r[-1][2].hex())
elif cmd == "write":
    print("# WRITE sent", flush=True)
    st, r = c.call(0, [putfh(bytes.fromhex(sys.argv[4])), write(0, b"w" * 65536, stable=2)])
    check("the WRITE to A completes", st == 0 and r[-1][2]["count"] == 65536, errname(st))
elif cmd == "read":
    want = open(sys.argv[5], "rb").read()
    st, r = c.call(0, path_ops(sys.argv[4]) + [getattr_((A_TYPE, A_SIZE))])
    check("GETATTR is answered", st == 0, errname(st))
    st, r = c.call(0, path_ops(sys.argv[4]) + [read(0, 1 << 20)])
    check("a 1 MiB READ is answered", st == 0, errname(st))
    if st == 0:
        check("the READ returns the file's bytes", r[-1][2]["data"] == want)
sys.exit(1 if Checks.fails else 0)
EOF
CLIENT=(python3 "$LT_TMP/client.py" "$top_srcdir/tests/py")

nfs_start --config "$LT_TMP/lacunad.conf"
FH=$(nfs_run "${CLIENT[@]}" fh "$NFS_PORT" "$A/afile") || lt_hard "no handle of $A/afile"
nfs_run_checks "B before" "$TO" "${CLIENT[@]}" read "$NFS_PORT" "$B/bfile" "$B_BACKING/bfile"

# lacunafs A stops; the trap lets it go on before anything is unmounted
lt_push_cleanup "kill -CONT $A_PID"
kill -STOP "$A_PID" || lt_hard "cannot stop lacunafs A (PID $A_PID)"
"${CLIENT[@]}" write "$NFS_PORT" "$FH" >"$LT_TMP/write.out" 2>&1 &
WPID=$!
lt_push_cleanup "kill $WPID"

# the WRITE is in flight: a thread of lacunad waits on lacunafs A
fuse_waiter() {
	local t
	for t in /proc/"$NFS_PID"/task/*; do
		LT_WAIT_LAST=$(cat "$t/wchan" 2>/dev/null)
		[[ $LT_WAIT_LAST == *fuse* || $LT_WAIT_LAST == request_wait_answer ]] && return 0
	done
	return 1
}
lt_check "the WRITE to A hangs in lacunad" lt_wait_for "$HANG" "lacunad waiting on lacunafs A" \
	fuse_waiter
lt_log "a thread of lacunad waits in $LT_WAIT_LAST"

kill -HUP "$NFS_PID"
lt_check "the reload completes while the WRITE to A hangs" \
	lt_wait_for "$HANG" "the reload (its \"reloaded\" line)" grep -q "reloaded " "$NFS_LOG"
nfs_run_checks "B during" "$TO" "${CLIENT[@]}" read "$NFS_PORT" "$B/bfile" "$B_BACKING/bfile"
lt_check "the WRITE to A still hangs" kill -0 "$WPID"

kill -CONT "$A_PID"
lt_check "the WRITE to A completes after lacunafs A goes on" \
	lt_wait_for "$HANG" "the WRITE" eval "! kill -0 $WPID 2>/dev/null"
wait "$WPID"
rc=$?
sed 's/^/# write: /' "$LT_TMP/write.out"
lt_check "the WRITE to A succeeded" [ "$rc" -eq 0 ]
lt_check "A's file has the data written" \
	cmp -n 65536 "$A/afile" <(head -c 65536 /dev/zero | tr '\0' w)
nfs_run_checks "B after" "$TO" "${CLIENT[@]}" read "$NFS_PORT" "$B/bfile" "$B_BACKING/bfile"
nfs_run_checks "A after" "$TO" "${CLIENT[@]}" read "$NFS_PORT" "$A/afile" "$A/afile"
nfs_stop

lt_done
