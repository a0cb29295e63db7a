#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Bad input against lacunad serving a lacunafs mount over ext4: every case
# gets the answer RFC 5531 / RFC 7530 / RFC 8881 ask for, or drops only the
# connection that sent it, and the server keeps serving a good client.
#
# Transport (tests/tools/rpc_client.py): fragmented, split and empty
# records, a fragment length of 2^31-1, truncated records, a large request
# abandoned, a client that disconnects in the middle of a large reply, a
# reader too slow for its replies, 1,000 idle connections while another
# client works.
# Protocol (tests/tools/nfs_hostile.py): unknown program, version and
# procedure, garbage COMPOUND headers, minor version 3, illegal opcodes,
# truncated op arguments, 10,000-op COMPOUNDs in 4.0 and 4.1, ops outside
# a session, SEQUENCE misuse (unknown session, bad slot, misordered seqid,
# retransmissions replayed byte for byte), forged file handles, and the
# handle of a removed file (NFS4ERR_STALE), and a client whose lease
# expires (its session and open files are dropped).
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3

TOOLS_PY="$top_srcdir/tests/tools"

nfs_make_export ext4 bad
head -c $((3 * 1024 * 1024)) /dev/urandom >"$NFS_BACKING/big" || lt_hard "write big"
echo doomed >"$NFS_BACKING/doomed" || lt_hard "write doomed"
# the transport's idle check opens 1000 connections from one address: more
# than the default max_connections_per_client (see nfs_hostile_limits.sh)
nfs_start "$NFS_EXPORT" --lease-time 10 --set max_connections_per_client=2000

lt_log "transport checks"
if lt_timeout 600 python3 "$TOOLS_PY/rpc_client.py" --port "$NFS_PORT" --pid "$NFS_PID" \
	--read-path big >"$LT_TMP/transport.out" 2>&1; then
	lt_ok "transport: every check passed"
else
	lt_fail "transport checks"
fi
sed 's/^/#   /' "$LT_TMP/transport.out"

lt_log "protocol checks"
# the stale-handle check asks for the file to be removed behind its back
coproc HOSTILE { lt_timeout 300 python3 "$TOOLS_PY/nfs_hostile.py" --port "$NFS_PORT" \
	--stale-path doomed --lease 10 --pid "$NFS_PID" --open-path big 2>&1; }
hpid=$HOSTILE_PID
while IFS= read -r line <&"${HOSTILE[0]}"; do
	echo "#   $line"
	case $line in
	"remove doomed")
		rm -f "$NFS_EXPORT/doomed" # through the lacunafs mount, like any local user
		echo removed >&"${HOSTILE[1]}"
		;;
	"not ok"*) lt_fail "protocol: ${line#not ok - }" ;;
	"ok"*) lt_ok "protocol: ${line#ok - }" ;;
	esac
done
wait "$hpid"
rc=$?
lt_check_eq "nfs_hostile.py exit status" 0 "$rc"

lt_check "server alive after all of it" nfs_alive
nfs_stop
lt_done
