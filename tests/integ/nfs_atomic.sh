#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Atomicity over the wire: lacunad's READ_PLUS under concurrent change,
# on lacunafs over ext4 and over XFS (tests/tools/lt_nfs_torture.c has the
# workload and the checks). In every run lt_nfs_torture's readers, each
# over its own NFSv4.2 session, send READ_PLUS for random ranges and check
# every reply: well formed, and a snapshot of the file at one moment
# (every region it shows in a state it had, all of them and the size at
# the same moment). Four runs per filesystem, each proving one thing:
#
#  1. Writes through the mount, lacunad as shipped: writers pwrite
#     regions of 1 byte to over 2 MiB from buffers at byte 0, 1, 212, 511,
#     2048 and 4095 of a page, punch, zero and truncate. Passes with no
#     violation in at least 1000 replies: the range lock makes every
#     READ_PLUS a snapshot, a write through the mount of at most the
#     mount's write unit (LACUNA_IOC_INFO) is never seen torn, and a longer
#     one only at the kernel's piece boundaries.
#  2. Writes over NFS, lacunad as shipped: writers over their own sessions
#     WRITE (FILE_SYNC4, UNSTABLE4, UNSTABLE4 then COMMIT) and DEALLOCATE
#     regions of 1 byte to maxwrite at unaligned offsets, with an open or
#     the anonymous stateid, the data at many offsets of lacunad's receive
#     buffer. Passes with no violation in at least 1000 replies, and
#     lacunad counted every WRITE as atomic: an NFS WRITE is seen whole or
#     not at all, whatever its size and wherever its data sits.
#  3. The negative control of 2: lacunad started with
#     LACUNA_TEST_PLAIN_WRITE=1 writes with pwrite through the mount from
#     its receive buffer, which the kernel cuts in two where the data does
#     not start on a page. The same NFS writers must get a torn reply
#     within 200000 replies (a miss fails): run 2's checks can see
#     the tear that lacunad's atomic write prevents.
#  4. The negative control of 1: a second lacunafs mount of the same
#     filesystem with LACUNA_TEST_DISABLE_RANGELOCK=1, exported by a second
#     lacunad. Run 1's workload must catch a reply that is no snapshot
#     within 200000 replies: the checks can see, over the wire, the
#     race the range lock prevents.
#
# No run is judged by the clock: runs 1 and 2 last at least
# LT_NFS_TORTURE_SECONDS (default 5) and until LT_NFS_TORTURE_REPLIES
# (default 1000) replies were checked; run 3 until its third torn reply,
# run 4 until its first violation (rarer: a few per 10000 replies), or
# either until LT_NFS_TORTURE_RACE_REPLIES (default 200000) replies. Only a
# hang is timed (lt_nfs_torture --timeout, "timed out"; LT_NFS_TIMEOUT).
# LT_NFS_TORTURE_SEED picks the layouts and the random choices (printed,
# so a failure can be rerun).

# a run may take minutes on a loaded machine: only a hang should hit this
LT_NFS_TIMEOUT=${LT_NFS_TIMEOUT:-1200}
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "needs lacunad over lacunafs (the range lock)"
nfs_require_server
lt_require_fuse

TORTURE="$TOOLS/lt_nfs_torture"
[ -x "$TORTURE" ] || lt_hard "lt_nfs_torture not built at $TORTURE"

SEED=${LT_NFS_TORTURE_SEED:-$((RANDOM * 32768 + RANDOM))}
SECONDS_MIN=${LT_NFS_TORTURE_SECONDS:-5}
REPLIES=${LT_NFS_TORTURE_REPLIES:-1000}
RACE_REPLIES=${LT_NFS_TORTURE_RACE_REPLIES:-200000}
HANG=$((LT_NFS_TIMEOUT * 9 / 10))
lt_log "seed $SEED (set LT_NFS_TORTURE_SEED to repeat)"

STATS="$LT_TMP/stats"
stat_of() { sed -n "s/^$1 //p" "$STATS" 2>/dev/null; }

# fresh_stats: wait for lacunad to write its stats file again (every second)
fresh_stats() {
	local i
	rm -f "$STATS"
	for ((i = 0; i < 600; i++)); do
		[ -s "$STATS" ] && return 0
		nfs_alive || break
		sleep 0.1
	done
	lt_fail "timed out waiting for lacunad's stats file"
	return 1
}

# torture FILE PATH ARGS...: lt_nfs_torture on FILE, which clients name PATH
torture() {
	local file=$1 path=$2
	shift 2
	nfs_run "$TORTURE" --port "$NFS_PORT" --name "$path" --seed "$SEED" --timeout "$HANG" \
		"$@" "$file"
}

for type in ext4 xfs; do
	nfs_make_export "$type" "$type"
	lt_log "== $type: $NFS_BACKING via $NFS_EXPORT"
	# (with a configuration file lacunad serves the export at its own path)
	conf="$LT_TMP/lacunad-$type.conf"
	printf '%s\n' "stats_file = $STATS" "$NFS_EXPORT 127.0.0.1(rw,no_root_squash)" >"$conf"

	nfs_start --config "$conf" --threads 2
	lt_check "$type: lacunad reads the export through lacunafs" \
		grep -q "lacunafs over" "$NFS_LOG"
	lt_check "$type: (1) every READ_PLUS reply is a snapshot under writes through the mount from buffers at every page offset, none torn within the write unit" \
		torture "$NFS_EXPORT/mount" "$NFS_EXPORT/mount" --seconds "$SECONDS_MIN" --min-replies "$REPLIES"
	lt_check "$type: (2) every READ_PLUS reply is a snapshot under NFS WRITEs (FILE_SYNC4, UNSTABLE4, COMMIT) and DEALLOCATEs of 1 byte to maxwrite: none torn" \
		torture "$NFS_EXPORT/nfs" "$NFS_EXPORT/nfs" --nfs-writes --seconds "$SECONDS_MIN" \
		--min-replies "$REPLIES"
	if fresh_stats; then
		lt_check "$type: (2) lacunad applied the NFS WRITEs with the atomic write" \
			test "$(stat_of write_atomic)" -ge 1
		lt_check_eq "$type: (2) no NFS WRITE went through pwrite" 0 "$(stat_of write_not_atomic)"
	fi
	nfs_stop

	LACUNA_TEST_PLAIN_WRITE=1 nfs_start --config "$conf" --threads 2
	lt_check "$type: (3) lacunad says it writes with pwrite (LACUNA_TEST_PLAIN_WRITE)" \
		grep -q "ATOMIC WRITE DISABLED FOR TESTING" "$NFS_LOG"
	lt_check "$type: (3) with WRITE by pwrite from the receive buffer a torn reply is caught over NFS" \
		torture "$NFS_EXPORT/plain" "$NFS_EXPORT/plain" --nfs-writes --expect-race=torn \
		--max-replies "$RACE_REPLIES" --stop-after 3
	if fresh_stats; then
		lt_check "$type: (3) lacunad counted its WRITEs as not atomic" \
			test "$(stat_of write_not_atomic)" -ge 1
	fi
	nfs_stop

	nolock="$LT_TMP/nolock-$type"
	LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$NFS_BACKING" "$nolock"
	if ! grep -q "RANGE LOCK DISABLED" "$LT_TMP/lacunafs.$(basename "$nolock").log"; then
		lt_fail "$type: (4) the second mount did not disable its range lock"
		lt_stop_lacunafs "$nolock"
		continue
	fi
	nfs_start "$nolock" --threads 2
	lt_check "$type: (4) without the range lock a reply that is no snapshot is caught over NFS" \
		torture "$nolock/nolock" nolock --expect-race --max-replies "$RACE_REPLIES" --stop-after 1
	nfs_stop
	lt_stop_lacunafs "$nolock"
done
lt_done
