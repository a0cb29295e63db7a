#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# max_record, the largest RPC record lacunad accepts or builds, over
# lacunafs on XFS, at its smallest (16K), its default and 8M (a pool of
# more than 4 GiB, beyond what lacunafs once took as an arena: lacunad
# then fell back to non-atomic READ_PLUS with one log line). For each:
# lacunad starts, registers its pool with lacunafs (no "not be atomic"
# line), offers maxread and maxwrite of max_record less 8 KiB in pages,
# and a WRITE of maxwrite bytes and READ/READ_PLUS of maxread bytes work
# and were taken atomically (the stats file's counters); a record over
# max_record drops only its own connection (tests/py/lt_max_record.py). A
# reload that changes max_record keeps the one in use and says so.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "lacunad's own max_record"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
CHECK="$top_srcdir/tests/py/lt_max_record.py"

stat_of() { sed -n "s/^$1 //p" "$LT_TMP/stats" 2>/dev/null; }

nfs_make_export xfs xfs
for rec in 16384 1056768 8388608; do
	conf="$LT_TMP/lacunad-$rec.conf"
	rm -f "$LT_TMP/stats"
	printf '%s\n' "max_record = $rec" "stats_file = $LT_TMP/stats" \
		"$NFS_EXPORT 127.0.0.1(rw,no_root_squash)" >"$conf"
	nfs_start --config "$conf"
	lt_check "max_record $rec: lacunad reads the export through lacunafs" \
		grep -q "lacunafs over" "$NFS_LOG"
	lt_check "max_record $rec: the pool is lacunafs's arena (atomic sparse reads)" \
		bash -c "! grep -q 'not be atomic' '$NFS_LOG'"
	: >"$NFS_EXPORT/f$rec"
	nfs_run_checks "max_record $rec" "$LT_NFS_TIMEOUT" \
		python3 "$CHECK" "$NFS_PORT" "$NFS_EXPORT/f$rec" "$rec"
	# the stats file is written on SIGHUP: the reload also tries a new max_record
	sed -i "s/^max_record = .*/max_record = 65536/" "$conf"
	kill -HUP "$NFS_PID"
	for ((i = 0; i < 100; i++)); do
		[ -s "$LT_TMP/stats" ] && grep -q "reload" "$NFS_LOG" && break
		sleep 0.1
	done
	lt_check "max_record $rec: a reload keeps max_record and says so" \
		grep -q "max_record stays $rec" "$NFS_LOG"
	lt_check "max_record $rec: the WRITE was atomic (write_atomic >= 1)" \
		test "$(stat_of write_atomic)" -ge 1
	lt_check_eq "max_record $rec: no WRITE was not atomic" 0 "$(stat_of write_not_atomic)"
	lt_check "max_record $rec: READ_PLUS was atomic" test "$(stat_of read_plus_atomic)" -ge 1
	lt_check_eq "max_record $rec: no READ_PLUS was not atomic" 0 \
		"$(stat_of read_plus_not_atomic)"
	nfs_stop
done
lt_done
