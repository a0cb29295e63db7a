#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs's atomic write (LACUNA_IOC_WRITE, how lacunad applies NFS
# WRITEs), on ext4 and XFS (tests/tools/lt_write.c):
#  - abi: what the ioctls accept and refuse, the bytes and the size seen
#    through the mount right after, the write unit LACUNA_IOC_INFO tells;
#  - torture: writes of 1 byte to 2.5 MiB from arena addresses of every
#    alignment class, each one lacuna_write(), against sparse reads of the
#    range: never torn. The same writes made with pwrite(2) through the
#    mount from the same addresses: never torn up to the mount's write
#    unit (1 MiB - 4095), and caught torn above it (the kernel cuts a
#    direct-io write on the buffer's pages): the documented unit, and
#    proof the check sees the tear the ioctl prevents;
#  - full: on a small filesystem, a write larger than the free space
#    writes part of itself or fails with ENOSPC, and the mount goes on.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
LTW="$TOOLS/lt_write"
[ -x "$LTW" ] || lt_hard "lt_write not built at $LTW"

run_checks() { lt_run_checks "$1" 600 "${@:2}"; }

check_fs() {
	local type=$1 backing=$2 mnt=$3
	run_checks "$type abi" "$LTW" abi "$mnt/abi"
	run_checks "$type torture" "$LTW" torture "$mnt/torture"
	run_checks "$type torture, pwrite through the mount" \
		"$LTW" torture --plain --replies 2000 "$mnt/torture-plain"
}
lt_each_fs check_fs

lt_make_fs ext4 small 64M
lt_mount_lacunafs "$LT_FS" "$LT_TMP/mnt-small"
run_checks "ext4 of 64 MiB" "$LTW" full "$LT_TMP/mnt-small/big"
lt_done
