#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's wire format as Wireshark sees it. dumpcap captures the test's
# port on the loopback while libnfs (an NFSv4.0 client) lists
# directories (one of 300 entries, so READDIR goes on from a cookie),
# reads files of several sizes (multi-READ files among them), uploads
# files (an exclusive create, OPEN_CONFIRM, SETATTR, WRITE, COMMIT,
# CLOSE), asks for a missing file and for a directory as a file, and
# two clients take turns at a lock (LOCK, LOCKT, LOCKU, some DENIED).
# Then tshark, reading the capture in two passes, must find:
#  - no malformed packet and no expert item of severity error;
#  - a reply for every call, as many replies as calls, every reply
#    accepted (MSG_ACCEPTED, SUCCESS);
#  - the operations the client used, each in a call and in a reply;
#  - NFSv4 errors only where the test asked for them (NOENT for the
#    missing file, ISDIR or NOENT-like refusals for the directory,
#    DENIED for the conflicting locks);
#  - COMPOUND replies no longer than their calls, minorversion 0 calls.
# Expert warnings at the NFS layer are listed (they are not errors).
# Skips (77) where tshark or dumpcap is missing or cannot capture on lo.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_libnfs
nfs_require_server
lt_require_cmd tshark dumpcap

CAP="$LT_TMP/nfs.pcapng"
dir="$LT_TMP/export"
mkdir -p "$dir/many" "$dir/sub"
for s in 0 1 4096 65537 1048577 3145731; do
	head -c "$s" /dev/urandom >"$dir/f-$s"
done
for ((i = 0; i < 300; i++)); do
	: >"$dir/many/name-$i"
done
echo hello >"$dir/sub/hello"
head -c 3000 /dev/urandom >"$LT_TMP/up-3000"
head -c 200000 /dev/urandom >"$LT_TMP/up-200000"

nfs_start "$dir" --threads 2

# ---- capture ------------------------------------------------------------
nfs_capture_start "$CAP" || lt_skip "$NFS_CAP_WHY"

# ---- traffic ------------------------------------------------------------
run() { # run DESC CMD...: a client command that must work
	local d=$1
	shift
	if nfs_run "$@" >"$LT_TMP/out" 2>"$LT_TMP/err"; then
		lt_ok "client: $d"
	else
		lt_fail "client: $d: $(head -c 300 "$LT_TMP/err")"
	fi
}
run "nfs-ls /" nfs-ls "$(nfs_url /)"
run "nfs-ls of 300 entries" nfs-ls "$(nfs_url /many)"
lt_check_eq "nfs-ls lists 300 entries" 300 "$(grep -c name- "$LT_TMP/out")"
run "nfs-ls -R /sub" nfs-ls -R "$(nfs_url /sub)"
for s in 0 1 4096 65537 1048577 3145731; do
	run "nfs-cat of $s bytes" nfs-cat "$(nfs_url "/f-$s")"
	lt_check "nfs-cat of $s bytes reads the file" cmp -s "$LT_TMP/out" "$dir/f-$s"
done
run "nfs-cp download" nfs-cp "$(nfs_url /f-65537)" "$LT_TMP/down"
run "nfs-cp upload of 3000 bytes" nfs-cp "$LT_TMP/up-3000" "$(nfs_url /sub/up-3000)"
lt_check "the upload landed" cmp -s "$LT_TMP/up-3000" "$dir/sub/up-3000"
run "libnfs upload of 200000 bytes" python3 "$LT_LIBNFS" put "$LT_TMP/up-200000" "$(nfs_url /up-200000)"
lt_check "the upload landed" cmp -s "$LT_TMP/up-200000" "$dir/up-200000"
nfs_run nfs-cat "$(nfs_url /no-such-file)" >/dev/null 2>&1
lt_check "client: nfs-cat of a missing file fails" test $? != 0
nfs_run nfs-cat "$(nfs_url /sub)" >/dev/null 2>&1
lt_check "client: nfs-cat of a directory fails" test $? != 0
run "two clients locking by turns" python3 "$LT_LIBNFS" locks "$(nfs_url /f-4096)"
lt_check "the server lives" nfs_alive

sleep 0.5
nfs_capture_stop
nfs_stop
grep dropped "$CAP.dumpcap" | sed "s/^/# dumpcap: /"

# ---- decode -------------------------------------------------------------
if [ -n "${LT_KEEP_CAPTURE:-}" ]; then
	cp "$CAP" "$LT_KEEP_CAPTURE" && lt_log "capture kept as $LT_KEEP_CAPTURE"
fi
[ -s "$CAP" ] || lt_hard "dumpcap wrote no capture ($(head -c 300 "$CAP.dumpcap"))"
ts() { nfs_ts "$CAP" "$@"; }
nfs_cap_check "libnfs" "$CAP"

# ---- operations ---------------------------------------------------------
ts -Y 'nfs && rpc.msgtyp == 0' -T fields -E occurrence=a -e nfs.opcode |
	tr ',' '\n' | LC_ALL=C sort -n | uniq >"$LT_TMP/call-ops"
ts -Y 'nfs && rpc.msgtyp == 1' -T fields -E occurrence=a -e nfs.opcode |
	tr ',' '\n' | LC_ALL=C sort -n | uniq >"$LT_TMP/reply-ops"
lt_log "ops in calls: $(tr '\n' ' ' <"$LT_TMP/call-ops")"
# ACCESS 3, CLOSE 4, COMMIT 5, GETATTR 9, GETFH 10, LOCK 12, LOCKT 13,
# LOCKU 14, LOOKUP 15, OPEN 18,
# OPEN_CONFIRM 20, PUTFH 22, PUTROOTFH 24, READ 25, READDIR 26,
# SETATTR 34, SETCLIENTID 35, SETCLIENTID_CONFIRM 36, WRITE 38
for op in 3:ACCESS 4:CLOSE 5:COMMIT 9:GETATTR 10:GETFH 12:LOCK 13:LOCKT 14:LOCKU \
	15:LOOKUP 18:OPEN 20:OPEN_CONFIRM 22:PUTFH 24:PUTROOTFH 25:READ 26:READDIR 34:SETATTR \
	35:SETCLIENTID 36:SETCLIENTID_CONFIRM 38:WRITE; do
	lt_check "${op#*:} appears in calls" grep -qx "${op%%:*}" "$LT_TMP/call-ops"
	lt_check "${op#*:} appears in replies" grep -qx "${op%%:*}" "$LT_TMP/reply-ops"
done
lt_check_eq "every call is NFSv4.0 (minorversion 0)" "0" \
	"$(ts -Y 'nfs && rpc.msgtyp == 0 && rpc.procedure == 1' -T fields -E occurrence=a \
		-e nfs.minorversion | tr ',' '\n' | sort -u | tr '\n' ' ' | sed 's/ $//')"

# Per reply: the COMPOUND status, then each op's. Errors are allowed only
# for the two failures asked for: NOENT (2) from LOOKUP or OPEN, and the
# refusal to read a directory (ISDIR 21, or WRONG_TYPE 10083... from OPEN),
# and DENIED (10010) from LOCK and LOCKT.
nfs_cap_results "$CAP" >"$LT_TMP/results"
awk '$2 != 0 { k = $1 ":" $2
	if (k == "15:2" || k == "18:2" || k == "18:21" || k == "18:10083" || k == "18:10084" ||
	    k == "12:10010" || k == "13:10010")
		next
	print "frame " $3 ": op " $1 " status " $2 }' "$LT_TMP/results" >"$LT_TMP/unexpected"
if [ -s "$LT_TMP/unexpected" ]; then
	lt_fail "NFSv4 errors the test did not ask for:"
	head -n 20 "$LT_TMP/unexpected" | sed 's/^/#   /'
else
	lt_ok "NFSv4 errors only where asked for"
fi
lt_check "the missing file was NFS4ERR_NOENT on the wire" grep -qE '^(15|18) 2 ' "$LT_TMP/results"
lt_check "the conflicting lock was NFS4ERR_DENIED on the wire" grep -qE '^1[23] 10010 ' "$LT_TMP/results"

# A reply never holds more ops than its call.
longer=$(nfs_cap_opcounts "$CAP" | awk '$2 == 0 { c[$1] = $3 } $2 == 1 { r[$1] = $3 }
	END { for (x in r) if ((x in c) && r[x] + 0 > c[x] + 0) print x }')
lt_check_eq "no COMPOUND reply has more ops than its call" "" "$longer"
[ -s "$LT_TMP/tshark.err" ] && grep -v "Running as user" "$LT_TMP/tshark.err" | head -n 5 | sed 's/^/# tshark: /'
lt_done
