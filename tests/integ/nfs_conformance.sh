#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# NFSv4 protocol conformance of lacunad, with raw COMPOUNDs
# (tests/py/lt_conformance.py), each check a case where lacunad once
# answered otherwise than RFC 7530/8881/7862: GETATTR of an attribute it
# does not know, the 4.0 duplicate request cache, share reservations
# within one open-owner, I/O checked against the caller and not only the
# stateid, LOCK by an existing lock-owner with new_lock_owner set, LOCKT
# on files that are not regular, empty owner strings, an open file whose
# name is gone, READ past the largest offset, CREATE_SESSION flags,
# back channel and reply sizes, OPEN before RECLAIM_COMPLETE, and
# why_no_delegation4 values. The export is lacunafs over
# ext4, with one file of every type.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3 mknod mkfifo
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "the checks here are of lacunad's answers"
lt_require_fuse

export PYTHONPATH="$top_srcdir/tests/py"
nfs_make_export ext4 conf
EXP=$NFS_EXPORT

printf 'secret\n' >"$EXP/file"
chmod 0600 "$EXP/file"
mkdir "$EXP/dir"
ln -s file "$EXP/link"
mkfifo "$EXP/fifo"
mknod "$EXP/cdev" c 1 3
mknod "$EXP/bdev" b 7 200
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$EXP/sock" ||
	lt_hard "cannot make a socket"
for f in f-attr f-share f-share2 f-lock f-ren0 f-ren1 f-ren0-new f-ren1-new; do
	printf 'data\n' >"$EXP/$f"
done
printf 'own\n' >"$EXP/f-own"
chown 3913:3913 "$EXP/f-own"
chmod 0600 "$EXP/f-own"

# a configuration file for the statistics; the export is the pseudo-root
STATS=$LT_TMP/stats
printf '%s\n' "stats_file = $STATS" "$EXP 127.0.0.1(rw,no_root_squash,fsid=0)" \
	>"$LT_TMP/lacunad.conf"
nfs_start --config "$LT_TMP/lacunad.conf"

for check in getattr_unknown share_own io_cred io_owner lock_seqid lockt_type owner_empty \
	close_renamed read_far session reclaim_complete wnd drc; do
	nfs_run_checks "$check" "$LT_NFS_TIMEOUT" \
		python3 "$top_srcdir/tests/py/lt_conformance.py" "$check" "$NFS_PORT" "$EXP"
done
# the stats file is rewritten once a second: the two retransmissions of
# the drc check show in it
drc_hits() { awk '$1 == "drc_hits" { print $2 }' "$STATS" 2>/dev/null; }
for ((i = 0; i < 60; i++)); do
	[ "$(drc_hits)" = 2 ] && break
	sleep 1
done
lt_check_eq "two replies came from the 4.0 duplicate request cache (drc_hits)" 2 "$(drc_hits)"
lt_check "the server lives" nfs_alive
nfs_stop
lt_done
