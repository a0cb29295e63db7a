#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One connection's pipelined requests do not hold back another's: a
# connection keeps 100 small FILE_SYNC WRITEs in flight (each waits for
# the disk) while a GETATTR from another address must be answered after
# a median of at most 24 of its WRITEs, where served in arrival order it
# would wait for the ~100 queued ahead of it (tests/tools/nfs_fairness.py
# counts replies, not seconds, so a loaded machine does not change the
# verdict). The workers serve the connections with work in turn
# (gateway/xprt/gw_worker.c); a server that served requests in arrival order
# fails this.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own scheduling"
nfs_require_server
lt_require_cmd python3

nfs_plain_conf "threads = 2"
: >"$NFS_PLAIN_DIR/wfile"
nfs_start --config "$NFS_CONF"
rc=0
timeout 300 python3 "$top_srcdir/tests/tools/nfs_fairness.py" --port "$NFS_PORT" \
	--window 100 --bound 24 >"$LT_TMP/fair.out" 2>&1 || rc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) lt_ok "${line#ok - }" ;;
	"not ok - "*) lt_fail "${line#not ok - }" ;;
	"# "*) lt_log "${line#\# }" ;;
	*) lt_log "$line" ;;
	esac
done <"$LT_TMP/fair.out"
case $rc in
0 | 1) lt_check_eq "nfs_fairness.py exit status" 0 "$rc" ;;
77)
	nfs_stop
	lt_skip "the WRITEs did not queue up at the server: nothing to check"
	;;
124) lt_fail "nfs_fairness.py timed out after 300 s" ;;
*) lt_fail "nfs_fairness.py exited with status $rc" ;;
esac
nfs_alive || lt_fail "lacunad died"
nfs_stop
lt_done
