#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a reboot and a lacunafs crash do to lacunad's file handles, on
# ext4 and XFS:
#
# - handles of files, directories and symlinks taken before lacunad is
#   stopped, lacunafs and the backing filesystem are unmounted and
#   mounted again, which drops its page, dentry and inode caches
#   (nothing is cached: a reboot) resolve to the same objects with the
#   same bytes after lacunad starts again, through lacunafs's lookup by
#   handle;
# - lacunafs killed under a running lacunad: lacunad answers errors
#   (NFS4ERR_DELAY) and lives on, and once lacunafs is mounted again the
#   same old handles read the same bytes, without restarting lacunad.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "lacunafs's lookup by handle is lacunad's"

HANDLES="$top_srcdir/tests/py/lt_handles.py"
export PYTHONPATH="$top_srcdir/tests/py"
PATHS=(dir dir/sub dir/sub/file deep/a/b/c/file link dir/sparse top)

handles() { python3 "$HANDLES" "$NFS_PORT" "$@"; }
status_is() {
	LT_WAIT_LAST=$(handles status "$1" 2>&1 | tail -n 1)
	[ "$LT_WAIT_LAST" = "$2" ]
}

# backing_handle PATH: name_to_handle_at(2) of PATH as lacunafs's lookup name wants it
backing_handle() {
	python3 - "$1" <<'PY'
import ctypes, sys
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("h", ctypes.c_ubyte * 128)]
fh, mnt = FH(), ctypes.c_int()
fh.bytes = 128
libc = ctypes.CDLL(None, use_errno=True)
if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(fh), ctypes.byref(mnt), 0):
    sys.exit("name_to_handle_at: errno %d" % ctypes.get_errno())
print("%08x%s" % (fh.type & 0xffffffff, bytes(fh.h[:fh.bytes]).hex()))
PY
}

# lacunafs's lookup by handle itself: root finds the file, others nothing, no directories
check_lookup_by_handle() {
	local fs=$1 mnt=$2 h hd out
	h=$(backing_handle "$NFS_BACKING/dir/sub/file") || lt_hard "name_to_handle_at"
	hd=$(backing_handle "$NFS_BACKING/dir") || lt_hard "name_to_handle_at"
	lt_check_eq "$fs: root looks a file up by its handle" "$(stat -c %i "$NFS_BACKING/dir/sub/file")" \
		"$(stat -c %i "$mnt/deep/.lacuna-fh-$h" 2>&1)"
	lt_check "$fs: ... and reads it" cmp "$mnt/.lacuna-fh-$h" "$NFS_BACKING/dir/sub/file"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups stat "$mnt/.lacuna-fh-$h" 2>&1)
	lt_check "$fs: another user finds nothing there" grep -q "No such file" <<<"$out"
	out=$(stat "$mnt/.lacuna-fh-$hd" 2>&1)
	lt_check "$fs: a directory is not looked up by handle" grep -q "Is a directory" <<<"$out"
	out=$(stat "$mnt/.lacuna-fh-0000000112" 2>&1)
	lt_check "$fs: a handle naming nothing: no such file" grep -q "No such file" <<<"$out"
	lt_check "$fs: the name is in no listing" eval '! ls -a "$mnt" | grep -q lacuna-fh'
}

run_fs() {
	local fs=$1 mnt img j=$LT_TMP/handles-$1.json
	nfs_make_export "$fs" "r$fs"
	mnt=$NFS_EXPORT
	img=$LT_TMP/r$fs.img
	mkdir -p "$mnt/dir/sub" "$mnt/deep/a/b/c" || lt_hard "mkdir"
	head -c 300000 /dev/urandom >"$mnt/dir/sub/file" || lt_hard "write"
	echo deep >"$mnt/deep/a/b/c/file" && echo top >"$mnt/top" || lt_hard "write"
	ln -s dir/sub/file "$mnt/link" || lt_hard "symlink"
	truncate -s 64M "$mnt/dir/sparse" && echo tail | dd of="$mnt/dir/sparse" bs=1M seek=40 \
		conv=notrunc status=none || lt_hard "sparse file"

	check_lookup_by_handle "$fs" "$mnt"
	nfs_start "$mnt"
	handles save "$j" "${PATHS[@]}" || lt_hard "save handles"
	nfs_stop

	# a reboot: nothing of the files is left in any cache
	lt_stop_lacunafs "$mnt"
	# (unmounting drops every page, dentry and inode the kernel cached of
	# it: no global drop_caches, which would disturb the tests running
	# beside this one)
	umount "$NFS_BACKING" || lt_hard "umount $NFS_BACKING"
	mount -o loop "$img" "$NFS_BACKING" || lt_hard "mount $img"
	lt_mount_lacunafs "$NFS_BACKING" "$mnt"
	nfs_start "$mnt"
	lt_run_checks "$fs: after a reboot" 300 python3 "$HANDLES" "$NFS_PORT" check "$j"

	# lacunafs dies under a running lacunad, then comes back
	kill -KILL "$LT_LFS_PID"
	lt_check "$fs: lacunafs dead: the handle answers DELAY" \
		lt_wait_for 60 "NFS4ERR_DELAY" status_is "$j" DELAY
	lt_check "$fs: lacunafs dead: lacunad lives on" nfs_alive
	umount -l "$mnt" || lt_hard "umount -l $mnt"
	lt_mount_lacunafs "$NFS_BACKING" "$mnt"
	lt_check "$fs: lacunafs back: lacunad picks the new mount up" \
		lt_wait_for 60 "the handle to read again" status_is "$j" OK
	lt_run_checks "$fs: after lacunafs came back" 300 python3 "$HANDLES" "$NFS_PORT" check "$j"
	lt_check "$fs: the log says lacunafs went and came back" \
		grep -q "lacunafs is mounted again" "$NFS_LOG"
	nfs_stop
	lt_stop_lacunafs "$mnt"
}

run_fs ext4
run_fs xfs
lt_done
