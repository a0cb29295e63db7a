#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Changes made to the backing file outside the mount cannot be locked out:
# the sparse read must detect them (retry, then LACUNA_SR_UNSTABLE) rather
# than return a torn answer as if it were atomic. On ext4 and XFS; the
# writers and the checks are tests/tools/lt_unstable.c.
#
# Through the lacunafs mount, each case checks LT_UNSTABLE_REPLIES sparse
# reads of the file's second MiB:
#   mount       writes through the mount below the range only: never
#               flagged UNSTABLE, never retried, the range unchanged;
#   behind      a writer behind the mount (on the backing file) rewrites
#               and punches the range: no unflagged reply may be torn, and
#               the daemon must notice the writer;
#               On XFS this also needs each pass to wait for a write
#               already under way when it begins (torn replies otherwise);
#   coincident  the same while writes through the mount below the range
#               run all the time, so that some write through the mount
#               coincides with nearly every read: the daemon must still
#               tell the writer behind the mount from them.
#
# Then a second lacunafs mount of the same backing filesystem is started
# with LACUNA_TEST_TRUST_MOUNT_WRITES=1, which restores the rule that took
# any change during a write through the mount for that write, and the
# coincident case run through it must let a torn reply through unflagged
# within LT_UNSTABLE_CATCH replies (it took from 1 to about 1100 here):
# proof that the case exercises the hole the whole-file pass closes. Not
# catching one is a failure of this test.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

UNSTABLE="$TOOLS/lt_unstable"
[ -x "$UNSTABLE" ] || lt_hard "lt_unstable not built at $UNSTABLE"

REPLIES=${LT_UNSTABLE_REPLIES:-2000}
CATCH=${LT_UNSTABLE_CATCH:-20000}

# run_case TYPE DESCRIPTION ARGS...: lt_unstable ARGS..., its report logged
run_case() {
	local type=$1 what=$2 out rc line
	shift 2
	out=$("$UNSTABLE" "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		lt_log "$type: $line"
	done <<<"$out"
	lt_check_eq "$type: $what" 0 "$rc"
}

check_fs() {
	local type=$1 backing=$2 mnt=$3 trust
	trust="$LT_TMP/trust-$type"

	run_case "$type" "writes through the mount below the range are not taken for changes behind it" \
		--case mount --replies "$REPLIES" "$mnt/mount" "$backing/mount"
	run_case "$type" "writes behind the mount are flagged, never torn" \
		--case behind --replies "$REPLIES" "$mnt/behind" "$backing/behind"
	run_case "$type" "writes behind the mount coinciding with writes through it are flagged, never torn" \
		--case coincident --replies "$REPLIES" "$mnt/coincident" "$backing/coincident"

	LACUNA_TEST_TRUST_MOUNT_WRITES=1 lt_mount_lacunafs "$backing" "$trust"
	lt_check "$type: the second mount says it trusts writes through the mount" \
		grep -q "WRITES THROUGH THE MOUNT TRUSTED" "$LT_TMP/lacunafs.$(basename "$trust").log"
	run_case "$type" "without the whole-file pass a torn reply comes through unflagged" \
		--case coincident --replies "$CATCH" --expect-tear "$trust/trusted" "$backing/trusted"
	lt_stop_lacunafs "$trust"
}
lt_each_fs check_fs

lt_done
