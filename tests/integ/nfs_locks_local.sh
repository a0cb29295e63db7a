#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# NFS byte-range locks are real locks: lacunad holds each one as an open
# file description lock on the exported file, so an NFS client and a
# local process locking through the export's directory exclude each
# other (tests/py/lt_locks_local.py, raw RPCs and a local process taking
# POSIX locks with lockf). For NFSv4.0 and 4.1, on lacunafs over ext4 and
# on a plain directory: NFS first then local and local first then NFS,
# read and write locks, overlapping and disjoint ranges, upgrade,
# downgrade and split, LOCKT and LOCK4denied naming the local process,
# LOCKU and CLOSE giving the range back, two NFS lock-owners still
# excluding each other; and locks of clients whose lease ran out are
# released locally too.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's locks"
nfs_require_server
lt_require_cmd python3
export PYTHONPATH="$top_srcdir/tests/py"
TOOL="$top_srcdir/tests/py/lt_locks_local.py"

for kind in ext4 plain; do
	nfs_make_export $kind "locks-$kind"
	# the raw clients connect from unprivileged ports
	nfs_start "$NFS_EXPORT" --lease-time 10 --export-options no_root_squash,insecure
	for minor in 0 1; do
		nfs_run_checks "$kind 4.$minor" 120 \
			python3 "$TOOL" run "$NFS_PORT" "$minor" "$NFS_EXPORT" "f-$minor"
	done
	nfs_run_checks "$kind: lease expiry" 180 \
		python3 "$TOOL" expire "$NFS_PORT" "$NFS_EXPORT" expire
	nfs_stop
done
lt_done
