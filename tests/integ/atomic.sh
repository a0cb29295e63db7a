#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Atomicity of the sparse-read ioctl under concurrent change, on ext4 and
# on XFS (see tests/tools/lt_torture.c for the workload and the checks).
#
# For each filesystem lt_torture runs through the lacunafs mount: writers
# keep rewriting, punching, zeroing and truncating regions of one file,
# from buffers at every offset in a page, while readers take sparse reads
# of it through an arena, and every reply must be a snapshot of the file
# at one moment. A write longer than the mount's write unit (LACUNA_IOC_INFO)
# is checked per piece, the pieces the kernel cuts it into following from
# its buffer's offset in a page. Then three controls:
#
# - the same workload from page-aligned buffers only, checked as if every
#   write of up to 1 MiB arrived whole, must pass: such buffers never show
#   the kernel's split of a 1 MiB write;
# - the full workload checked that way must catch writes split inside
#   their first MiB (in the data, or in the file size while a write extends
#   the file), and only writes from buffers that do not start on a page:
#   with the lock in place, the buffer's alignment alone splits them;
# - a second lacunafs mount of the same backing filesystem started with
#   LACUNA_TEST_DISABLE_RANGELOCK=1 must show a reply that is no snapshot:
#   proof that the checks can see the race the lock prevents.
#
# LT_TORTURE_SEED picks the layout and the random choices (printed, so a
# failure can be rerun); LT_TORTURE_SECONDS the length of the locked run.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

TORTURE="$TOOLS/lt_torture"
[ -x "$TORTURE" ] || lt_hard "lt_torture not built at $TORTURE"

SEED=${LT_TORTURE_SEED:-$((RANDOM * 32768 + RANDOM))}
LOCKED_SECONDS=${LT_TORTURE_SECONDS:-8}
ALIGNED_SECONDS=$(((LOCKED_SECONDS + 1) / 2))
# A race is usually caught within a second; this only ends a control that
# never catches one (lt_torture then says it timed out).
CONTROL_SECONDS=120
lt_log "seed $SEED (set LT_TORTURE_SEED to repeat)"

# torture_run NAME ARGS...: run lt_torture with the seed, its output also
# kept in $LT_TMP/NAME.out. Its status 2 (bad arguments, a failed call, a
# mount without a write unit) is a hard error.
torture_run() {
	local out="$LT_TMP/$1.out" rc
	shift
	"$TORTURE" --seed "$SEED" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	[ "$rc" != 2 ] || lt_hard "lt_torture could not run: $(tail -n 1 "$out")"
	return "$rc"
}

# only_unaligned OUT: OUT shows violations, each in a region written from
# a buffer that does not start on a page.
only_unaligned() {
	local all other
	all=$(grep -c '^# VIOLATION' "$1")
	other=$(grep '^# VIOLATION' "$1" | grep -vc 'from buffer offset [1-9]')
	[ "$all" -gt 0 ] && [ "$other" = 0 ]
}

torture() {
	local type=$1 backing=$2 mnt=$3 nolock="$LT_TMP/nolock-$type" log

	lt_check "$type: every sparse read is a snapshot with the range lock" \
		torture_run "$type-locked" --seconds "$LOCKED_SECONDS" "$mnt/torture"

	lt_check "$type: checked as whole up to 1 MiB, writes from page-aligned buffers pass" \
		torture_run "$type-aligned" --seconds "$ALIGNED_SECONDS" --buffer-offset 0 \
		--assume-unit 1048576 "$mnt/torture-aligned"
	lt_check "$type: checked as whole up to 1 MiB, writes from any buffer are caught split" \
		torture_run "$type-unit" --seconds "$CONTROL_SECONDS" --stop-after 3 \
		--expect-race --assume-unit 1048576 "$mnt/torture-unit"
	lt_check "$type: every split caught is of a write from an unaligned buffer" \
		only_unaligned "$LT_TMP/$type-unit.out"

	LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$backing" "$nolock"
	log="$LT_TMP/lacunafs.$(basename "$nolock").log"
	if ! grep -q "RANGE LOCK DISABLED" "$log"; then
		lt_fail "$type: the second mount did not disable its range lock"
		lt_stop_lacunafs "$nolock"
		return
	fi
	lt_check "$type: the race is caught without the range lock" \
		torture_run "$type-nolock" --seconds "$CONTROL_SECONDS" --stop-after 3 \
		--expect-race "$nolock/torture-nolock"
	lt_stop_lacunafs "$nolock"
}

lt_each_fs torture
lt_done
