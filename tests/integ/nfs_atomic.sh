#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Atomicity over the wire: lacunad's READ_PLUS under concurrent change,
# on lacunafs over ext4 and over XFS (see tests/tools/lt_nfs_torture.c for
# the workload and the checks).
#
# For each filesystem lacunad exports the lacunafs mount; lt_nfs_torture's
# writers keep rewriting, punching, zeroing and truncating regions of one
# file through the mount while its readers, each over its own NFSv4.2
# session, send READ_PLUS for random ranges: every reply must be well
# formed and a snapshot of the file at one moment (every region it shows
# in a state it had, all of them and the size at the same moment). Then a
# second lacunafs mount of the same filesystem is started with
# LACUNA_TEST_DISABLE_RANGELOCK=1 and exported by a second lacunad, and
# the same workload must catch a reply that is no snapshot: proof that the
# checks can see, over the wire, the race the lock prevents. If no
# violation is found within the time, that run fails.
#
# LT_NFS_TORTURE_SEED picks the layout and the random choices (printed, so
# a failure can be rerun); LT_NFS_TORTURE_SECONDS the length of the locked
# runs (default 5).

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "needs lacunad over lacunafs (the range lock)"
nfs_require_server
lt_require_fuse

TORTURE="$TOOLS/lt_nfs_torture"
[ -x "$TORTURE" ] || lt_hard "lt_nfs_torture not built at $TORTURE"

SEED=${LT_NFS_TORTURE_SEED:-$((RANDOM * 32768 + RANDOM))}
LOCKED_SECONDS=${LT_NFS_TORTURE_SECONDS:-5}
# the race is usually caught within a second or two; give up after this
UNLOCKED_SECONDS=15
lt_log "seed $SEED (set LT_NFS_TORTURE_SEED to repeat)"

for type in ext4 xfs; do
	nfs_make_export "$type" "$type"
	lt_log "== $type: $NFS_BACKING via $NFS_EXPORT"
	nfs_start "$NFS_EXPORT" --threads 2
	lt_check "$type: lacunad reads the export through lacunafs" \
		grep -q "lacunafs over" "$NFS_LOG"
	lt_check "$type: every READ_PLUS reply is a snapshot with the range lock" \
		nfs_run "$TORTURE" --port "$NFS_PORT" --name torture --seed "$SEED" \
		--seconds "$LOCKED_SECONDS" "$NFS_EXPORT/torture"
	nfs_stop

	nolock="$LT_TMP/nolock-$type"
	LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$NFS_BACKING" "$nolock"
	if ! grep -q "RANGE LOCK DISABLED" "$LT_TMP/lacunafs.$(basename "$nolock").log"; then
		lt_fail "$type: the second mount did not disable its range lock"
		lt_stop_lacunafs "$nolock"
		continue
	fi
	nfs_start "$nolock" --threads 2
	lt_check "$type: without the range lock the race is caught over NFS" \
		nfs_run "$TORTURE" --port "$NFS_PORT" --name torture-nolock --seed "$SEED" \
		--seconds "$UNLOCKED_SECONDS" --stop-after 3 --expect-race "$nolock/torture-nolock"
	nfs_stop
	lt_stop_lacunafs "$nolock"
done
lt_done
