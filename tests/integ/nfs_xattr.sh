#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Extended attributes (RFC 8276: GETXATTR, SETXATTR, LISTXATTRS,
# REMOVEXATTR, xattr_support, the ACCESS xattr bits) over the wire, on
# lacunafs over ext4 and over XFS (tests/py/lt_xattr.py over
# tests/py/lt_nfs4raw.py, minor version 2): the wire names map onto user.*
# attributes of the backing files; the RFC's errors, sizes and LISTXATTRS
# paging; permissions; 4.1 has none of it.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own xattr operations"
nfs_require_server
lt_require_cmd python3
lt_require_fuse

for type in ext4 xfs; do
	nfs_make_export "$type" "$type"
	lt_log "== $type: $NFS_BACKING via $NFS_EXPORT"
	nfs_start "$NFS_EXPORT" --threads 2
	nfs_run_checks "$type" "$LT_NFS_TIMEOUT" python3 "$top_srcdir/tests/py/lt_xattr.py" \
		"$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING"
	nfs_stop
done
lt_done
