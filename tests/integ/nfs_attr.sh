#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's NFSv4 attributes, checked with raw COMPOUNDs (tests/py/nfs_attr.py)
# against lstat(2) of the exported files: GETATTR of every supported
# attribute for each file type, SETATTR and its refusals (attrsset with
# every status), ACCESS as three users, VERIFY and NVERIFY. A plain
# directory is exported (attributes do not depend on lacunafs), so the
# test needs no FUSE; it needs root to make a device node and files of
# other owners.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_server
lt_require_cmd python3 mknod mkfifo

dir="$LT_TMP/export"
mkdir -p "$dir/sub" "$dir/mine"
printf 'hello\n' >"$dir/file"
chown 1000:100 "$dir/file"
chmod 0640 "$dir/file"
ln -s file "$dir/link"
mkfifo "$dir/fifo"
mknod "$dir/cdev" c 1 3
printf 'deep\n' >"$dir/sub/deep"
chown 1000:100 "$dir/mine"
chmod 0700 "$dir/mine"
printf '#!/bin/sh\n' >"$dir/exe"
chmod 0755 "$dir/exe"
head -c 100 /dev/zero >"$dir/s"
chmod 0644 "$dir/s"

nfs_start "$dir" --lease-time 17

NFS_ATTR_LEASE=17 lt_timeout "$LT_NFS_TIMEOUT" python3 "$top_srcdir/tests/py/nfs_attr.py" \
	"$NFS_PORT" "$dir" >"$LT_TMP/attr.out" 2>&1
rc=$?
while read -r word desc; do
	case $word in
	ok) lt_ok "$desc" ;;
	FAIL) lt_fail "$desc" ;;
	*) lt_log "$word $desc" ;;
	esac
done <"$LT_TMP/attr.out"
case $rc in
0 | 1) ;;
*) lt_fail "nfs_attr.py exited with status $rc" ;;
esac
lt_check "the server lives" nfs_alive
nfs_stop
lt_done
