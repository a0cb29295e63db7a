#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's grace period and stable client records, with raw RPCs
# (tests/py/lt_grace.py). For NFSv4.0 and 4.1, after a crash (SIGKILL) and
# after a clean stop (SIGTERM): a client that held an open and a lock
# reclaims both; meanwhile new opens, LOCKT and WRITEs without an open
# are GRACE and a client without a record gets RECLAIM_BAD; grace ends
# as soon as the recorded client is done, and the reclaimed lock keeps
# other clients and local processes (through the lacunafs mount) out.
# Then: grace off, a corrupt and a torn record (set
# aside, never trusted), grace that ends by time when a recorded client
# never comes back (its record goes), records removed when a lease
# expires, and a state directory that is in use or open to others. The
# export is lacunafs over ext4.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
lt_require_cmd python3
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "the grace period tested here is lacunad's"

GRACE="$top_srcdir/tests/py/lt_grace.py"
export PYTHONPATH="$top_srcdir/tests/py"
lt_require_fuse
nfs_make_export ext4 grace
EXP=$NFS_EXPORT
STATE=$LT_TMP/state

grace() { nfs_run python3 "$GRACE" "$@"; }
records() { find "$STATE" -maxdepth 1 -name 'client-*' ! -name '*.corrupt' | wc -l; }
start() { nfs_start "$EXP" --state-dir "$STATE" "$@"; }
new_open_ok() { [ "$(python3 "$GRACE" new-open "$NFS_PORT")" = OK ]; }
no_records() { [ "$(records)" = 0 ]; }
# local_refused FILE: a local process is refused a write lock of bytes 0-4095 of FILE
local_refused() {
	python3 "$top_srcdir/tests/py/lt_locks_local.py" try "$1" w 0 4096
	[ $? = 1 ]
}
# has_record NAME: a trusted record names the client NAME
has_record() {
	local f
	for f in "$STATE"/client-*; do
		case $f in *.corrupt) continue ;; esac
		[ -f "$f" ] && grep -aqF -- "$1" "$f" && return 0
	done
	return 1
}

for minor in 0 1; do
	for how in crash stop; do
		rm -rf "$STATE"
		start --lease-time 60
		j=$LT_TMP/hold-$minor-$how.json
		lt_check "4.$minor: a client opens, writes and locks" \
			grace hold "$NFS_PORT" "$minor" "client-$minor-$how" "f-$minor-$how" "$j"
		lt_check_eq "4.$minor: its record is on disk" 1 "$(records)"
		if [ $how = crash ]; then nfs_crash; else nfs_stop; fi
		start --lease-time 60
		lt_check "4.$minor after a $how: grace, reclaim of the open and the lock" \
			grace reclaim "$NFS_PORT" "$j"
		lt_check "4.$minor after a $how: the reclaimed lock is held locally too" \
			local_refused "$EXP/f-$minor-$how"
		lt_check "4.$minor after a $how: grace started and ended early" \
			grep -q "grace period ends: every recorded client is done reclaiming" "$NFS_LOG"
		nfs_stop
	done
done

# grace = off: nothing to reclaim, new opens at once
rm -rf "$STATE"
start --lease-time 60
j=$LT_TMP/hold-off.json
grace hold "$NFS_PORT" 1 client-off f-off "$j" >/dev/null || lt_hard "hold (grace off)"
nfs_stop
start --lease-time 60 --grace off
lt_check "grace off: reclaims are NO_GRACE, new opens granted" grace no-reclaim "$NFS_PORT" "$j"
lt_check "grace off: the log says what it costs" grep -q "grace = off: the 1 client" "$NFS_LOG"
nfs_stop

# a corrupt and a torn record: reported, set aside, never trusted
for damage in corrupt torn; do
	rm -rf "$STATE"
	start --lease-time 60
	j=$LT_TMP/hold-$damage.json
	grace hold "$NFS_PORT" 1 "client-$damage" "f-$damage" "$j" >/dev/null || lt_hard "hold ($damage)"
	nfs_crash
	rec=$(find "$STATE" -name 'client-*')
	if [ $damage = corrupt ]; then
		printf '\377' | dd of="$rec" bs=1 seek=44 conv=notrunc status=none
		why="bad checksum"
	else
		truncate -s 30 "$rec"
		why="too short"
	fi
	start --lease-time 60
	lt_check "$damage record: reported" grep -q "$(basename "$rec"): $why: not trusted" "$NFS_LOG"
	lt_check "$damage record: set aside" test -f "$rec.corrupt"
	lt_check "$damage record: no grace for it, its reclaim refused" \
		grace no-reclaim "$NFS_PORT" "$j"
	nfs_stop
done

# two recorded clients, one never comes back: grace lasts a lease, then its record goes
rm -rf "$STATE"
start --lease-time 10
grace hold "$NFS_PORT" 1 client-back f-back "$LT_TMP/back.json" >/dev/null || lt_hard "hold (back)"
grace hold "$NFS_PORT" 1 client-gone f-gone "$LT_TMP/gone.json" >/dev/null || lt_hard "hold (gone)"
lt_check_eq "two clients recorded" 2 "$(records)"
lt_check "... one of them client-gone" has_record client-gone
nfs_crash
start --lease-time 10
lt_check "one client reclaims; grace waits for the other" \
	grace reclaim-only "$NFS_PORT" "$LT_TMP/back.json"
lt_check "grace ends after a lease time" lt_wait_for 120 "a new OPEN to be granted" new_open_ok
lt_check "the log says grace ended by time" grep -q "grace period ends: lease time over" "$NFS_LOG"
# by name, not by count: the other clients' leases (10 s) may run out too
lt_check "the record of the client that never came back is removed" \
	lt_wait_for 30 "the stale record to go" eval '! has_record client-gone'
nfs_stop

# a lease that expires takes the record with it
rm -rf "$STATE"
start --lease-time 10
grace hold "$NFS_PORT" 1 client-exp f-exp "$LT_TMP/exp.json" >/dev/null || lt_hard "hold (expiry)"
lt_check_eq "recorded" 1 "$(records)"
lt_check "the record goes when the lease expires" lt_wait_for 120 "the record to go" no_records
lt_check "the log says the lease expired" grep -q "lease expired" "$NFS_LOG"

# one lacunad per state directory; a directory others may write is refused
out=$(lt_timeout 60 "$LACUNAD" --export "$EXP" --state-dir "$STATE" --listen 127.0.0.1:1 -f 2>&1)
lt_check "a second lacunad on the same state directory exits non-zero" test $? -ne 0
lt_check "... and says why" grep -q "is in use by another lacunad" <<<"$out"
nfs_stop
chmod 0777 "$STATE"
out=$(lt_timeout 60 "$LACUNAD" --export "$EXP" --state-dir "$STATE" --listen 127.0.0.1:1 -f 2>&1)
lt_check "a state directory writable by others is refused" test $? -ne 0
lt_check "... and says why" grep -q "writable by it alone" <<<"$out"
lt_done
