#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's TCP transport against careless and hostile clients, with raw
# ONC RPC (tests/tools/rpc_client.py):
#  - NULL calls: single, 20000 pipelined, records cut into fragments
#    (empty ones too) or written a byte at a time, 2 MiB of calls of
#    varied sizes written in odd pieces so marks and bodies straddle the
#    server's receive buffers, empty records;
#  - fragment lengths of 2^31-1 and 64 MiB, a record growing past
#    max_record, 2000 fragments: only that connection is dropped;
#  - truncated records and marks then a disconnect; complete calls before
#    a half-close are all answered, then the server closes;
#  - 1000 idle connections (a third stopped inside a record mark) cost
#    the server little memory while another client keeps working;
#  - 1 MiB calls sent then the connection closed or reset at once;
#  - 1 MiB READ replies the client never reads, then it goes away;
#    300 of them pipelined and read late (back-pressure), all arrive;
#  - SIGTERM with 100 MiB of replies pending: every reply is sent, then
#    the connection and an idle one are closed and lacunad exits 0;
#    SIGTERM while a client reads nothing: closed after stop_timeout,
#    lacunad exits 0 (no chunk leaked: the pools are checked at exit).
# Every server's log must be free of sanitizer reports.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
lt_require_cmd python3
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own transport"
nfs_require_server

RPC="$top_srcdir/tests/tools/rpc_client.py"
export="$LT_TMP/export"
mkdir -p "$export"
head -c $((3 << 20)) /dev/urandom >"$export/big" || lt_hard "cannot make $export/big"

# rpc_run OUT ARGS...: run rpc_client.py against the server, output to OUT
rpc_run() {
	local out=$1
	shift
	lt_timeout 300 python3 "$RPC" --port "$NFS_PORT" --pid "$NFS_PID" --read-path big "$@" \
		>"$out" 2>&1
}

# rpc_report DESCRIPTION OUT RC: one check per "ok"/"not ok" line of OUT
rpc_report() {
	local d=$1 out=$2 rc=$3 line
	while IFS= read -r line; do
		case $line in
		"ok - "*) lt_ok "$d: ${line#ok - }" ;;
		"not ok - "*) lt_fail "$d: ${line#not ok - }" ;;
		"# "*) lt_log "${line#\# }" ;;
		*) lt_log "$line" ;;
		esac
	done <"$out"
	[ "$rc" = 0 ] || lt_fail "$d: rpc_client.py exit status $rc"
}

# stop_with CHECK: run a stop_* check and SIGTERM the server when it is ready
stop_with() {
	local check=$1 ready="$LT_TMP/ready.$1" out="$LT_TMP/rpc.$1" pid i rc=0
	rm -f "$ready"
	rpc_run "$out" --ready "$ready" "$check" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "$ready" ] && break
		sleep 0.05
	done
	[ -e "$ready" ] || lt_fail "$check never got ready"
	nfs_stop
	wait "$pid" || rc=$?
	rpc_report "$check" "$out" "$rc"
}

# the idle check opens 1000 connections from one address: more than the
# default max_connections_per_client (tests/integ/nfs_hostile_limits.sh
# checks the limits)
nfs_start "$export" --threads 2 --set max_connections_per_client=2000
rc=0
rpc_run "$LT_TMP/rpc.out" || rc=$?
rpc_report transport "$LT_TMP/rpc.out" "$rc"
nfs_alive || lt_fail "lacunad died"
nfs_stop

# sending 100 MiB to a Python client may take longer than the default
# stop_timeout (5 s) on a loaded machine: the check is that every reply
# goes out, not how fast
nfs_start "$export" --threads 2 --set stop_timeout=60
stop_with stop_drain

nfs_start "$export" --threads 2
stop_with stop_stuck

lt_done
