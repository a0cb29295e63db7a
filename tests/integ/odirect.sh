#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# O_DIRECT through lacunafs on ext4 and XFS: aligned direct writes and
# reads work and land in the backing file; an unaligned direct write is
# accepted or refused exactly as on the backing filesystem itself.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

check_fs() {
	local type=$1 backing=$2 mnt=$3 rc_native rc_mnt
	head -c 8M /dev/urandom >"$LT_TMP/src"
	lt_check "$type: 1 MiB O_DIRECT writes" \
		dd if="$LT_TMP/src" of="$mnt/d" bs=1M oflag=direct status=none
	lt_check "$type: backing file has the data" cmp "$LT_TMP/src" "$backing/d"
	lt_check "$type: 1 MiB O_DIRECT reads" \
		dd if="$mnt/d" of="$LT_TMP/back" bs=1M iflag=direct status=none
	lt_check "$type: read back equals written" cmp "$LT_TMP/src" "$LT_TMP/back"
	lt_check "$type: 4 KiB O_DIRECT rewrite in the middle" \
		dd if=/dev/zero of="$mnt/d" bs=4k seek=100 count=3 oflag=direct conv=notrunc status=none
	dd if=/dev/zero of="$LT_TMP/src" bs=4k seek=100 count=3 conv=notrunc status=none
	lt_check "$type: rewrite visible on the backing file" cmp "$LT_TMP/src" "$backing/d"
	lt_check "$type: O_DIRECT read of a file cached by a buffered reader" \
		cmp <(cat "$mnt/d") <(dd if="$mnt/d" bs=64k iflag=direct status=none)

	rc_native=0
	dd if=/dev/zero of="$backing/u" bs=1000 count=3 oflag=direct status=none 2>/dev/null ||
		rc_native=$?
	rc_mnt=0
	dd if=/dev/zero of="$mnt/u2" bs=1000 count=3 oflag=direct status=none 2>/dev/null ||
		rc_mnt=$?
	lt_check_eq "$type: unaligned O_DIRECT write behaves as native" "$rc_native" "$rc_mnt"
}
lt_each_fs check_fs

lt_done
