#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READDIR of a directory of 100,000 entries through lacunad over a
# lacunafs mount (issue 13): listed whole, each name once, no
# NFS4ERR_DELAY, handles and fileids as LOOKUP gives them
# (tests/tools/nfs_readdir_all.py). It used to end in NFS4ERR_DELAY after
# some 18,700 entries: every entry was opened through lacunafs, which
# kept an fd for each until it ran out. Neither lacunad's nor lacunafs's
# fd count may grow with the directory. LT_READDIR_COUNT changes the
# number of entries.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad over lacunafs"
nfs_require_server
lt_require_cmd python3

: "${LT_READDIR_COUNT:=100000}"
# fds either daemon may hold after the listing, whatever the directory's size
FD_BOUND=2000

nfs_make_export xfs big # XFS: inodes as needed (a small ext4 has 65536)
mkdir "$NFS_BACKING/d" || lt_hard "mkdir"
python3 -c '
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    os.close(os.open("%s/f%d" % (d, i), os.O_CREAT | os.O_WRONLY, 0o644))
' "$NFS_BACKING/d" "$LT_READDIR_COUNT" || lt_hard "cannot make $LT_READDIR_COUNT files"
lfs_pid=$LT_LFS_PID
nfs_start "$NFS_EXPORT" --threads 2

rc=0
lt_timeout 900 python3 "$top_srcdir/tests/tools/nfs_readdir_all.py" --port "$NFS_PORT" \
	--dir d --count "$LT_READDIR_COUNT" >"$LT_TMP/readdir.out" 2>&1 || rc=$?
sed 's/^/# /' "$LT_TMP/readdir.out"
[ "$rc" = 124 ] && lt_fail "READDIR of $LT_READDIR_COUNT entries timed out after 900 s"
lt_check_eq "READDIR of $LT_READDIR_COUNT entries, whole and once each" 0 "$rc"

lfs_fds=$(ls /proc/"$lfs_pid"/fd | wc -l)
gw_fds=$(ls /proc/"$NFS_PID"/fd | wc -l)
lt_log "after the listing: lacunafs holds $lfs_fds fds, lacunad $gw_fds"
lt_check "lacunafs's fds do not grow with the directory ($lfs_fds)" test "$lfs_fds" -lt "$FD_BOUND"
lt_check "lacunad's fds do not grow with the directory ($gw_fds)" test "$gw_fds" -lt "$FD_BOUND"

nfs_stop
lt_done
