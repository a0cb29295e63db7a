#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad under resource attacks (issue 13), each bounded in count and
# time, on loopback, with small limits so that the attacks are cheap,
# while a well-behaved client from another address keeps calling NULL (on
# a new connection each time), GETATTR, a 1 MiB READ and a 900 KiB WRITE
# (tests/tools/nfs_limits.py): every one of its calls must complete with
# a p99 latency under LT_LIMITS_P99 seconds (default 2.5, generous for a
# loaded machine), during each attack and after it, and the server's
# connections must be gone once an attack ends.
#  - idle: 1200 connections that send nothing from 8 addresses, lacunad
#    allowed 1024 fds: max_connections (auto: 256 of them) and
#    max_connections_per_client (50) close the idle ones first, the
#    rest go after idle_timeout; lacunad never runs out of fds; a
#    connection from another address made just before the flood, whose
#    first call comes once the server is full, is answered (the flooding
#    addresses' connections are closed to make room, not the newcomer)
#  - noread: 40 connections each sending 200 1 MiB READs and reading no
#    reply: max_requests_per_client and send_timeout; lacunad's RSS
#    stays under LT_LIMITS_RSS_MIB (default 300)
#  - slowrec: 400 connections from 8 addresses each sending the mark of
#    a 1,000,000-byte record and a few bytes: max_records_per_client,
#    record_timeout; the 900 KiB WRITEs still get their chunks
#  - pipeline: 4 connections keeping 256 GETATTRs each in flight: the
#    workers serve connections in turn
#  - state: 50 NFSv4.1 clients with a session and an open each,
#    max_clients 30: the rest are refused with NFS4ERR_DELAY (clients
#    holding state are not reclaimed); EXCHANGE_ID from an address no
#    export lists is NFS4ERR_PERM
# The limits hit are counted in the stats file.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own limits"
nfs_require_server
lt_require_cmd python3 prlimit

: "${LT_LIMITS_P99:=2.5}"
: "${LT_LIMITS_RSS_MIB:=300}"

export_dir="$LT_TMP/export"
mkdir -p "$export_dir" || lt_hard "mkdir $export_dir"
head -c $((2 << 20)) /dev/urandom >"$export_dir/big" || lt_hard "cannot make big"
: >"$export_dir/wfile"
conf="$LT_TMP/lacunad.conf"
cat >"$conf" <<CONF
stats_file = $LT_TMP/stats
threads = 2
max_connections_per_client = 50
idle_timeout = 4
record_timeout = 3
send_timeout = 3
max_requests_per_client = 32
max_records_per_client = 8
max_clients = 30
max_sessions = 40
# not 127.200.0.1: the state attack's unlisted address
$export_dir 127.0.0.0/9(rw,no_root_squash,fsid=root)
CONF

# lacunad with RLIMIT_NOFILE 1024: max_connections = auto follows it
NFS_NOFILE=1024 nfs_start --config "$conf"

rc=0
lt_timeout 600 python3 "$top_srcdir/tests/tools/nfs_limits.py" --port "$NFS_PORT" \
	--pid "$NFS_PID" --stats "$LT_TMP/stats" --p99 "$LT_LIMITS_P99" \
	--rss-mib "$LT_LIMITS_RSS_MIB" --fds 1000 --idle-conns 1200 --noread-conns 40 \
	--slowrec-conns 400 --state-clients 50 --max-clients 30 >"$LT_TMP/limits.out" 2>&1 ||
	rc=$?
[ "$rc" = 124 ] && lt_fail "nfs_limits.py timed out after 600 s"
while IFS= read -r line; do
	case $line in
	"ok - "*) lt_ok "${line#ok - }" ;;
	"not ok - "*) lt_fail "${line#not ok - }" ;;
	*) lt_log "$line" ;;
	esac
done <"$LT_TMP/limits.out"
lt_check_eq "nfs_limits.py exit status" 0 "$rc"

# each attack hit the limit meant for it, and the stats file says so
for k in conns_evicted conns_idle_closed conns_record_timeout client_stalls state_refused; do
	v=$(awk -v k="$k" '$1 == k { print $2 }' "$LT_TMP/stats")
	lt_check "stats: $k counted (${v:-missing})" test "${v:-0}" -gt 0
done
v=$(awk '$1 == "conns_send_timeout" || $1 == "conns_record_timeout" { s += $2 } END { print s + 0 }' \
	"$LT_TMP/stats")
lt_check "stats: no-read connections closed ($v)" test "$v" -gt 0
grep -qE "max_connections(_per_client)? reached" "$NFS_LOG" ||
	lt_fail "no warning in the log when a connection limit was reached"

nfs_alive || lt_fail "lacunad died"
nfs_stop
lt_done
