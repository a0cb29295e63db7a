#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression test: starting lacunafs on a mountpoint that already is a
# lacunafs mount of the same backing directory used to stack a second
# mount silently over the first. It is now refused (a message naming both,
# exit 2) and the first mount keeps serving; -o stack mounts anyway. A
# second mountpoint for the same backing directory is not refused. A
# lacunafs that does mount where it should not is stopped by the timeout
# (reported as timed out).

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd findmnt

lt_make_fs ext4 ext4
BACK=$LT_FS
mkdir -p "$BACK/a" "$BACK/b"
echo first >"$BACK/a/f"
MNT="$LT_TMP/mnt"

# the number of mounts stacked at $1
mounts_at() { findmnt -n -o TARGET --mountpoint "$1" | wc -l; }

lt_mount_lacunafs "$BACK/a" "$MNT"
first=$LT_LFS_PID

out=$(lt_timeout 60 "$LACUNAFS" -f "$BACK/a" "$MNT" 2>&1)
rc=$?
[ "$rc" = 124 ] && lt_fail "a second lacunafs on the mountpoint timed out"
lt_check_eq "a second lacunafs of the same directory exits 2" 2 "$rc"
lt_check "and says why" grep -q "already a lacunafs mount of $BACK/a" <<<"$out"
lt_check "and names the way around it" grep -q -- "-o stack" <<<"$out"
lt_check_eq "one mount at the mountpoint" 1 "$(mounts_at "$MNT")"
lt_check_eq "the first mount still serves" first "$(cat "$MNT/f" 2>&1)"
lt_check "the first daemon still runs" kill -0 "$first"

out=$(lt_timeout 60 "$LACUNAFS" -f "$BACK/a/" "$MNT/" 2>&1)
rc=$?
[ "$rc" = 124 ] && lt_fail "a second lacunafs on the mountpoint/ timed out"
lt_check_eq "also with trailing slashes" 2 "$rc"

lt_check "-h documents -o stack" sh -c "'$LACUNAFS' -h | grep -q -- '-o stack'"

# with -o stack it mounts over the first
lt_mount_lacunafs "$BACK/a" "$MNT" -o stack
second=$LT_LFS_PID
# (the mountpoint is one already: lt_mount_lacunafs cannot tell when the second is up)
two_mounts() { [ "$(mounts_at "$MNT")" = 2 ]; }
lt_check "-o stack mounts a second one" lt_wait_for 60 "a second mount at $MNT" two_mounts
lt_check_eq "which serves" first "$(cat "$MNT/f" 2>&1)"
fusermount3 -u "$MNT"
for ((i = 0; i < 100; i++)); do kill -0 "$second" 2>/dev/null || break; sleep 0.05; done
lt_check_eq "unmounting the top one leaves the first" 1 "$(mounts_at "$MNT")"
LT_LFS_PIDS[$MNT]=$first

# another mountpoint of the same directory is fine
lt_mount_lacunafs "$BACK/a" "$LT_TMP/mnt2"
lt_check_eq "a second mountpoint of the same directory serves" first "$(cat "$LT_TMP/mnt2/f" 2>&1)"
lt_stop_lacunafs "$LT_TMP/mnt2"

lt_stop_lacunafs "$MNT"
lt_check_eq "nothing left mounted" 0 "$(mounts_at "$MNT")"
lt_done
