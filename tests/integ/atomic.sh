#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Atomicity of the sparse-read ioctl under concurrent change, on ext4 and
# on XFS (see tests/tools/lt_torture.c for the workload and the checks).
#
# For each filesystem lt_torture runs through the lacunafs mount: writers
# keep rewriting, punching, zeroing and truncating regions of one file
# while readers take sparse reads of it through an arena, and every reply
# must be a snapshot of the file at one moment (a write longer than the
# FUSE max_write, 1 MiB, is checked per 1 MiB piece since the kernel
# splits it). Then a second lacunafs mount of the same backing filesystem
# is started with LACUNA_TEST_DISABLE_RANGELOCK=1, and the same workload
# run through it must catch a reply that is no snapshot: proof that the
# checks can see the race the lock prevents.
#
# LT_TORTURE_SEED picks the layout and the random choices (printed, so a
# failure can be rerun); LT_TORTURE_SECONDS the length of the locked runs.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

TORTURE="$TOOLS/lt_torture"
[ -x "$TORTURE" ] || lt_hard "lt_torture not built at $TORTURE"

SEED=${LT_TORTURE_SEED:-$((RANDOM * 32768 + RANDOM))}
LOCKED_SECONDS=${LT_TORTURE_SECONDS:-8}
# the race is usually caught within a second; give up after this
UNLOCKED_SECONDS=10
lt_log "seed $SEED (set LT_TORTURE_SEED to repeat)"

torture() {
	local type=$1 backing=$2 mnt=$3 nolock="$LT_TMP/nolock-$type" log

	lt_check "$type: every sparse read is a snapshot with the range lock" \
		"$TORTURE" --seed "$SEED" --seconds "$LOCKED_SECONDS" "$mnt/torture"

	LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$backing" "$nolock"
	log="$LT_TMP/lacunafs.$(basename "$nolock").log"
	if ! grep -q "RANGE LOCK DISABLED" "$log"; then
		lt_fail "$type: the second mount did not disable its range lock"
		lt_stop_lacunafs "$nolock"
		return
	fi
	lt_check "$type: the race is caught without the range lock" \
		"$TORTURE" --seed "$SEED" --seconds "$UNLOCKED_SECONDS" --stop-after 3 \
		--expect-race "$nolock/torture-nolock"
	lt_stop_lacunafs "$nolock"
}

lt_each_fs torture
lt_done
