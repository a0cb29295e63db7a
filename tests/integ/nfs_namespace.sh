#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's namespace operations, answer by answer, with raw COMPOUNDs
# (tests/py/lt_nfs4_names.py over tests/py/lt_nfs4raw.py) in minor versions 0,
# 1 and 2, on lacunafs over ext4 and over XFS:
#  - file handles: PUTFH of empty, oversized, foreign and stale handles,
#    PUTROOTFH/PUTPUBFH, SAVEFH/RESTOREFH;
#  - names: empty (INVAL), "." and ".." and "a/b" (BADNAME), 256 bytes
#    (NAMETOOLONG), LOOKUP in a file (NOTDIR) or a symlink (SYMLINK);
#  - SECINFO and SECINFO_NO_NAME, which consume the current file handle
#    from 4.1 on;
#  - CREATE of directories, symlinks, FIFOs, sockets and devices with the
#    client's mode (no umask), NF4REG refused, EXIST; READLINK;
#  - REMOVE (files, empty and non-empty directories), RENAME (across
#    directories, onto incompatible or non-empty targets: EXIST, onto a
#    link of itself: nothing), LINK (of a symlink: the symlink);
#  - READDIR of a directory of 3000 files from cookie to cookie at several
#    maxcount and dircount values, the cookie verifier, cookies 1, 2 and
#    past 2^63, TOOSMALL, rdattr_error for entries the caller cannot look
#    up, a 4.1 session whose replies are smaller than maxcount.
# Then a server with two exports under one directory, only one of them
# open to this client: the pseudo directories on the way.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own answers"
nfs_require_server
lt_require_cmd python3
lt_require_fuse
NAMES="$top_srcdir/tests/py/lt_nfs4_names.py"
TO=$LT_NFS_TIMEOUT

# run_checks LABEL ARGS...: one lt_ok/lt_fail per line the script prints
run_checks() { nfs_run_checks "$1" "$TO" python3 "$NAMES" "${@:2}"; }

per_fs() {
	local type=$1 mnt=$3 m
	nfs_start "$mnt" --threads 2
	for m in 0 1 2; do
		run_checks "$type 4.$m" names "$NFS_PORT" "$mnt" --minor "$m"
		run_checks "$type 4.$m" readdir "$NFS_PORT" "$mnt" --minor "$m" --files 3000
	done
	nfs_stop
}
lt_each_fs per_fs

# ---- pseudo directories: a server of two exports, one for another address
mkdir -p "$LT_TMP/ps/open" "$LT_TMP/ps/closed"
port=$(nfs_free_port) || lt_hard "no free TCP port in $LT_NFS_PORTS"
cat >"$LT_TMP/pseudo.conf" <<EOF
listen = 127.0.0.1:$port
threads = 2
$LT_TMP/ps/open 127.0.0.1(rw,no_root_squash)
$LT_TMP/ps/closed 192.0.2.1(rw)
EOF
NFS_LOG="$LT_TMP/lacunad.pseudo.log"
setsid "$LACUNAD" --config "$LT_TMP/pseudo.conf" --state-dir "$LT_TMP/state" -f </dev/null >"$NFS_LOG" 2>&1 &
NFS_PID=$!
NFS_PORT=$port
NFS_RUNNING[$NFS_PID]=1
lt_push_cleanup "_nfs_kill $NFS_PID"
for ((i = 0; i < 300; i++)); do
	_nfs_listening "$NFS_PID" "$port" && break
	kill -0 "$NFS_PID" 2>/dev/null || break
	sleep 0.05
done
if ! _nfs_listening "$NFS_PID" "$port"; then
	sed 's/^/# server: /' "$NFS_LOG"
	lt_hard "lacunad --config $LT_TMP/pseudo.conf does not listen on $port"
fi
for m in 0 1; do
	run_checks "pseudo 4.$m" pseudo "$NFS_PORT" "$LT_TMP/ps" open closed --minor "$m"
done
nfs_stop

lt_done
