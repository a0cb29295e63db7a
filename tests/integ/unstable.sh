#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Changes made to the backing file outside the mount cannot be locked out:
# the sparse read must detect them (retry, then LACUNA_SR_UNSTABLE) rather
# than return a torn answer as if it were atomic. On ext4 and XFS.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

check_fs() {
	local type=$1 backing=$2 mnt=$3 out
	out=$("$TOOLS/lt_unstable" --seconds 3 "$mnt/f" "$backing/f" 2>&1)
	local rc=$?
	lt_log "$type: $out"
	lt_check_eq "$type: outside writes are flagged, never torn" 0 "$rc"
}
lt_each_fs check_fs

lt_done
