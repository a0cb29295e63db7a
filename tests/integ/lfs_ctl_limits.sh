#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs's control socket against local users who hold connections to
# it (issue 13), and lacunad getting atomic sparse reads back by itself:
#  - an unprivileged user (nobody) opening 70 connections keeps at most 4
#    (LFS_CTL_CONNS_PER_UID); a lacunad started afterwards registers its
#    pool and serves the export atomically (no warning, the stats gauge
#    exports_not_atomic is 0);
#  - when root itself takes every connection, a lacunad started then
#    serves non-atomically and says so (a loud warning, the gauge is 1);
#    once those connections are closed it registers again within seconds
#    and the gauge goes back to 0, without a restart.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad and lacunafs"
nfs_require_server
lt_require_cmd python3 setpriv
# the unprivileged user runs the system's python (a root-only shim may come first in PATH)
SYS_PY=/usr/bin/python3
[ -x "$SYS_PY" ] || lt_skip "no $SYS_PY to run as an unprivileged user"

HOLD="$top_srcdir/tests/tools/ctl_hold.py"
HOLD_DIR="$LT_TMP/hold" # where the holders, root or not, say they are ready
mkdir -p "$HOLD_DIR" && chmod 1777 "$HOLD_DIR" || lt_hard "mkdir $HOLD_DIR"

nfs_make_export ext4 ctl
sock=$(awk -v p="@lacunafs.$LT_LFS_PID." 'index($NF, p) == 1 { print $NF; exit }' /proc/net/unix)
[ -n "$sock" ] || lt_hard "no control socket of lacunafs (PID $LT_LFS_PID) in /proc/net/unix"
lt_log "control socket $sock"

HOLD_PIDS=()
_kill_holders() {
	local p
	for p in "${HOLD_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	return 0
}
lt_push_cleanup _kill_holders

# hold USER COUNT READY: hold COUNT connections as USER in the background
# until release; sets HOLD_PID
hold() {
	local user=$1 n=$2 ready=$3 i
	rm -f "$ready"
	if [ "$user" = root ]; then
		setsid python3 "$HOLD" "$sock" "$n" "$ready" </dev/null &
	else
		setsid setpriv --reuid="$user" --regid=nogroup --clear-groups \
			"$SYS_PY" "$HOLD" "$sock" "$n" "$ready" </dev/null &
	fi
	HOLD_PID=$!
	HOLD_PIDS+=("$HOLD_PID")
	for ((i = 0; i < 300; i++)); do
		[ -s "$ready" ] && return 0
		sleep 0.1
	done
	lt_hard "ctl_hold.py as $user did not get ready in 30 s (timed out)"
}

# release: close the last holder's connections
release() {
	kill "$HOLD_PID" 2>/dev/null
	wait "$HOLD_PID" 2>/dev/null
}

stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/stats" 2>/dev/null
}

# wait_gauge VALUE SECONDS: until exports_not_atomic is VALUE
wait_gauge() {
	local want=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(stat_of exports_not_atomic)" = "$want" ] && return 0
		sleep 0.1
	done
	return 1
}

conf="$LT_TMP/lacunad.conf"
cat >"$conf" <<CONF
stats_file = $LT_TMP/stats
threads = 2
$NFS_EXPORT 127.0.0.0/8(rw,no_root_squash,fsid=root)
CONF

# 1. an unprivileged user cannot take the control socket
hold nobody 70 "$HOLD_DIR/nobody"
kept=$(cat "$HOLD_DIR/nobody")
lt_log "nobody opened 70 connections, lacunafs kept $kept"
lt_check "an unprivileged user keeps at most 4 control connections ($kept)" test "$kept" -le 4
nfs_start --config "$conf"
if grep -qE "will not be atomic|WITHOUT ATOMIC" "$NFS_LOG"; then
	lt_fail "lacunad serves non-atomically while nobody holds control connections"
	grep -E "will not be atomic|WITHOUT ATOMIC" "$NFS_LOG" | sed 's/^/# server: /'
else
	lt_ok "lacunad registered with lacunafs beside nobody's connections"
fi
lt_check "stats: exports_not_atomic is 0" wait_gauge 0 5
nfs_stop
release

# 2. every connection taken (by root): non-atomic and loud, then atomic again
hold root 70 "$HOLD_DIR/root"
lt_log "root holds $(cat "$HOLD_DIR/root") control connections"
rm -f "$LT_TMP/stats"
nfs_start --config "$conf"
lt_check "stats: exports_not_atomic is 1 while lacunafs refuses lacunad" wait_gauge 1 10
lt_check "lacunad warns loudly while it serves non-atomically" \
	grep -q "SERVED WITHOUT ATOMIC SPARSE READS" "$NFS_LOG"
release
lt_check "stats: exports_not_atomic back to 0 once lacunafs takes lacunad again" \
	wait_gauge 0 20
lt_check "lacunad says it is atomic again" grep -q "atomic again" "$NFS_LOG"
nfs_stop

lt_done
