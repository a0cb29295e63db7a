#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# File handles of lacunad stay valid across a restart of lacunad and an
# unmount and mount of lacunafs over the same backing filesystem (as
# kernel nfsd's do), name the same files after a rename, and turn into
# NFS4ERR_STALE once the file is removed. On ext4 and XFS.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3
lt_require_fuse

HOSTILE="$top_srcdir/tests/tools/nfs_hostile.py"
STALE=70

fh_of() { python3 "$HOSTILE" get-fh --port "$NFS_PORT" "$1"; }
fh_check() { python3 "$HOSTILE" check-fh --port "$NFS_PORT" "$1"; }

run_fs() {
	local fs=$1 mnt fh_file fh_dir fh_sub ino_file ino_dir
	nfs_make_export "$fs" "h$fs"
	mnt=$NFS_EXPORT
	mkdir -p "$mnt/dir/sub" && echo data >"$mnt/dir/sub/file" && echo x >"$mnt/gone" ||
		lt_hard "populate $mnt"
	ino_file=$(stat -c %i "$NFS_BACKING/dir/sub/file")
	ino_dir=$(stat -c %i "$NFS_BACKING/dir")

	nfs_start "$mnt"
	fh_file=$(fh_of dir/sub/file)
	fh_dir=$(fh_of dir)
	fh_gone=$(fh_of gone)
	lt_check "$fs: handles obtained" test -n "$fh_file" -a -n "$fh_dir" -a -n "$fh_gone"
	lt_check_eq "$fs: handle resolves to the file" "0 $ino_file" "$(fh_check "$fh_file")"

	nfs_stop
	nfs_start "$mnt"
	lt_check_eq "$fs: file handle after a lacunad restart" "0 $ino_file" "$(fh_check "$fh_file")"
	lt_check_eq "$fs: directory handle after a lacunad restart" "0 $ino_dir" "$(fh_check "$fh_dir")"
	nfs_stop

	lt_stop_lacunafs "$mnt"
	lt_mount_lacunafs "$NFS_BACKING" "$mnt"
	nfs_start "$mnt"
	lt_check_eq "$fs: file handle after a lacunafs remount" "0 $ino_file" "$(fh_check "$fh_file")"
	mv "$mnt/dir/sub/file" "$mnt/renamed" || lt_hard "rename"
	lt_check_eq "$fs: handle after a rename" "0 $ino_file" "$(fh_check "$fh_file")"
	nfs_stop
	nfs_start "$mnt"
	lt_check_eq "$fs: handle after a rename, resolved afresh" "0 $ino_file" "$(fh_check "$fh_file")"
	rm "$mnt/gone" || lt_hard "rm"
	lt_check_eq "$fs: handle of a removed file" "$STALE" "$(fh_check "$fh_gone")"
	rm "$mnt/renamed" || lt_hard "rm"
	lt_check_eq "$fs: cached handle of a file removed later" "$STALE" "$(fh_check "$fh_file")"
	lt_check "$fs: server alive" nfs_alive
	nfs_stop
	lt_stop_lacunafs "$mnt"
}

run_fs ext4
run_fs xfs
lt_done
