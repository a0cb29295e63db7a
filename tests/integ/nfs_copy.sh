#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Server-side COPY (RFC 7862 §15.2) over the wire, on lacunafs over ext4
# and over XFS (tests/py/lt_copy.py over tests/py/lt_nfs4raw.py, minor version
# 2), lacunad with a small copy_sync_max so that long copies come back
# short:
#  - the RFC's cases: count 0, ranges, the errors (NOFILEHANDLE, ISDIR,
#    SYMLINK, WRONG_TYPE, INVAL for ranges past EOF or overlapping in one
#    file, FBIG, NOTSUPP for an inter-server copy, OPENMODE, BAD_STATEID),
#    the destination's data punched where the source has holes, a copy
#    ending in a hole extending the destination, short copies continued,
#    OFFLOAD_STATUS/OFFLOAD_CANCEL, COPY not in 4.1;
#  - random sparse layouts copied whole: same bytes, and the backing
#    file's SEEK_DATA/SEEK_HOLE map of the copy equals the source's;
#  - the statistics count the COPYs, their data and their holes, and no
#    READ or WRITE data went over the wire.
#
# LT_COPY_SEED picks the layouts (printed, so a failure can be rerun);
# LT_COPY_LAYOUTS how many per filesystem (default 20).

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own COPY"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
export LACUNA="$top_builddir/tools/lacuna"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"
SEED=${LT_COPY_SEED:-$((RANDOM * 32768 + RANDOM))}
LAYOUTS=${LT_COPY_LAYOUTS:-20}
SYNC_MAX=$((2 * 1024 * 1024))
lt_log "seed $SEED (set LT_COPY_SEED to repeat)"

CP="$top_srcdir/tests/py/lt_copy.py"
run_checks() { nfs_run_checks "$1" "$LT_NFS_TIMEOUT" python3 "$CP" "${@:2}"; }

# stat NAME: a counter of the stats file
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/stats"; }
op_count() { awk -v k="$1" '$1 == "op" && $2 == k { print $3 }' "$LT_TMP/stats"; }
# wait_stats: a stats file written after the checks (lacunad writes it every second)
wait_stats() {
	local i
	touch "$LT_TMP/stats-mark"
	for ((i = 0; i < 600; i++)); do
		[ "$LT_TMP/stats" -nt "$LT_TMP/stats-mark" ] && return 0
		sleep 0.1
	done
	lt_fail "timed out waiting for lacunad to write $LT_TMP/stats"
	return 1
}

for type in ext4 xfs; do
	nfs_make_export "$type" "$type"
	lt_log "== $type: $NFS_BACKING via $NFS_EXPORT"
	conf="$LT_TMP/lacunad-$type.conf"
	rm -f "$LT_TMP/stats"
	printf '%s\n' "threads = 2" "copy_sync_max = $SYNC_MAX" "stats_file = $LT_TMP/stats" \
		"$NFS_EXPORT 127.0.0.0/8(rw,no_root_squash,fsid=root)" >"$conf"
	nfs_start --config "$conf"
	run_checks "$type edge" edge "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING" "$SYNC_MAX"
	run_checks "$type layouts" layouts "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING" \
		--seed "$SEED" --count "$LAYOUTS"
	wait_stats
	nfs_stop
	copies=$(op_count COPY)
	data=$(stat_of copy_data_bytes)
	holes=$(stat_of copy_hole_bytes)
	short=$(stat_of copy_short)
	lt_log "$type: ${copies:-0} COPYs, ${data:-0} bytes of data, ${holes:-0} of holes, ${short:-0} short"
	lt_check "$type: the stats count COPYs" test "${copies:-0}" -gt 0
	lt_check "$type: the stats count the data COPY wrote" test "${data:-0}" -gt 0
	lt_check "$type: the stats count the holes COPY kept" test "${holes:-0}" -gt 0
	lt_check "$type: the stats count short COPYs" test "${short:-0}" -gt 0
	# the edge checks WRITE one byte; nothing else went through READ or WRITE
	lt_check "$type: no data went over the wire ($(stat_of read_bytes) read, $(stat_of write_bytes) written)" \
		test "$(stat_of read_bytes)" = 0 -a "$(stat_of write_bytes)" -le 1
done
lt_done
