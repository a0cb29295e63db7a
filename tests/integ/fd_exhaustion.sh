#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression test: an unprivileged `ls -l` of a 100,000-entry directory
# used to take lacunafs to one O_PATH fd per inode the kernel looked up,
# up to its RLIMIT_NOFILE, after which everyone's opens and creates
# failed with EMFILE. Inode fds are now a bounded cache over the backing
# filesystem's file handles (docs/lacunafs.md, "Inodes").
#
# lacunafs runs with RLIMIT_NOFILE 1024 soft / 4096 hard (it raises the
# soft limit itself). As user nobody: `ls -l` and a `stat` of each of
# 100,000 files. Checks: no EMFILE for anyone, lacunafs's fd count stays
# within its cache bound (as it logged it) and below the limit, root can
# still create, write and read files, files whose fd was evicted still
# read, write and stat, and the kernel still knows the inodes (no
# lookups were refused). Then the same with -o fd_cache=500. Last, with
# a cache bound above the limit (-o fd_cache=100000), fds do run out: the
# daemon must log it once, with the numbers, close cached fds, retry,
# and keep serving everyone.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd setpriv mkfs.ext4 xargs
NFILES=100000
id nobody >/dev/null 2>&1 || lt_skip "no user nobody"

# ext4 gives one inode per 16 KiB by default: ask for enough
img="$LT_TMP/ext4.img"
truncate -s 2G "$img" || lt_hard "truncate $img"
mkfs.ext4 -q -F -N 150000 "$img" >/dev/null 2>&1 || lt_hard "mkfs.ext4 $img"
BACK="$LT_TMP/back"
mkdir -p "$BACK"
mount -o loop "$img" "$BACK" || lt_skip "cannot mount a loop device here"
lt_push_cleanup "umount -l '$BACK'"
chmod 755 "$BACK"
mkdir "$BACK/many"
(cd "$BACK/many" && seq -f 'f%06.0f' 0 $((NFILES - 1)) | xargs touch) ||
	lt_hard "creating $NFILES files"
echo hello >"$BACK/many/f000001"
chmod -R a+rX "$BACK"
lt_log "made $NFILES files"

# the fd count of process $1
fd_count() { ls "/proc/$1/fd" | wc -l; }

# as_nobody CMD...: run CMD as nobody, its stderr to $LT_TMP/nobody.err
as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$@" \
		2>>"$LT_TMP/nobody.err"
}

# scan MNT PID BOUND: the whole check against one mount
scan() {
	local mnt=$1 pid=$2 bound=$3 n before after
	: >"$LT_TMP/nobody.err"
	before=$(fd_count "$pid")
	n=$(as_nobody ls -l "$mnt/many" | grep -c '^-')
	lt_check_eq "nobody's ls -l lists every file" "$NFILES" "$n"
	n=$( (cd "$mnt/many" && as_nobody find . -type f -print0 |
		as_nobody xargs -0 stat -c '%i' | wc -l))
	lt_check_eq "nobody stats every file" "$NFILES" "$n"
	if grep -q . "$LT_TMP/nobody.err"; then
		lt_fail "nobody saw errors: $(sort "$LT_TMP/nobody.err" | uniq -c | head -3)"
	else
		lt_ok "nobody saw no errors"
	fi
	after=$(fd_count "$pid")
	lt_log "lacunafs fds: $before before, $after after (bound $bound + reserve)"
	lt_check "fd count $after within the cache bound $bound (+64)" \
		test "$after" -le $((bound + 64))
	lt_check "fd count $after below RLIMIT_NOFILE 4096" test "$after" -lt 4096
	lt_check "root creates a file after the scan" sh -c "echo x >'$mnt/newfile'"
	lt_check_eq "root reads it back" x "$(cat "$mnt/newfile" 2>&1)"
	lt_check_eq "an early (evicted) file reads" hello "$(cat "$mnt/many/f000001" 2>&1)"
	lt_check "an early (evicted) file takes a write" \
		sh -c "echo more >>'$mnt/many/f000001'"
	lt_check_eq "and the backing file has it" "hello more" \
		"$(tr '\n' ' ' <"$BACK/many/f000001" | sed 's/ $//')"
	lt_check_eq "an early file's inode number" "$(stat -c %i "$BACK/many/f000002")" \
		"$(stat -c %i "$mnt/many/f000002")"
	lt_check "a hard link to an evicted file" ln "$mnt/many/f000003" "$mnt/link3"
	lt_check_eq "shares its inode" "$(stat -c %i "$BACK/many/f000003")" \
		"$(stat -c %i "$mnt/link3")"
	rm -f "$mnt/newfile" "$mnt/link3"
	echo hello >"$BACK/many/f000001"
	if grep -qi "too many open files\|out of file descriptors" "$LT_TMP"/lacunafs.*.log; then
		lt_fail "lacunafs ran out of fds: $(grep -i 'descriptors' "$LT_TMP"/lacunafs.*.log)"
	else
		lt_ok "lacunafs never ran out of fds"
	fi
}

# a soft limit below the hard one, which lacunafs raises
ulimit -Sn 1024 && ulimit -Hn 4096 || lt_hard "ulimit -n"

MNT="$LT_TMP/mnt"
lt_mount_lacunafs "$BACK" "$MNT"
bound=$(sed -n 's/.*at most \([0-9]*\) path fds cached.*/\1/p' "$LT_TMP/lacunafs.mnt.log")
if [ -z "$bound" ]; then
	cat "$LT_TMP/lacunafs.mnt.log"
	# the old daemon does not log a bound: hold it to the limit
	bound=4000
	lt_fail "lacunafs logged no fd cache bound"
fi
lt_log "== default cache ($bound fds)"
scan "$MNT" "$LT_LFS_PID" "$bound"
lt_stop_lacunafs "$MNT"

MNT2="$LT_TMP/mnt2"
lt_mount_lacunafs "$BACK" "$MNT2" -o fd_cache=500
lt_log "== -o fd_cache=500"
lt_check "the bound is logged" grep -q "at most 500 path fds cached" "$LT_TMP/lacunafs.mnt2.log"
scan "$MNT2" "$LT_LFS_PID" 500
lt_stop_lacunafs "$MNT2"

: >"$LT_TMP/nobody.err"
MNT3="$LT_TMP/mnt3"
lt_mount_lacunafs "$BACK" "$MNT3" -o fd_cache=100000
lt_log "== -o fd_cache=100000, above RLIMIT_NOFILE"
n=$(as_nobody ls -l "$MNT3/many" | grep -c '^-')
lt_check_eq "nobody's ls -l lists every file" "$NFILES" "$n"
if grep -q . "$LT_TMP/nobody.err"; then
	lt_fail "nobody saw errors: $(sort "$LT_TMP/nobody.err" | uniq -c | head -3)"
else
	lt_ok "nobody saw no errors"
fi
lt_check "root creates a file" sh -c "echo y >'$MNT3/newfile3'"
lt_check_eq "root reads it back" y "$(cat "$MNT3/newfile3" 2>&1)"
lt_check_eq "running out is logged once" 1 \
	"$(grep -c 'out of file descriptors' "$LT_TMP/lacunafs.mnt3.log")"
lt_check "with the numbers" grep -q "RLIMIT_NOFILE 4096" "$LT_TMP/lacunafs.mnt3.log"
lt_log "$(grep -m1 'out of file descriptors' "$LT_TMP/lacunafs.mnt3.log")"
lt_stop_lacunafs "$MNT3"

lt_check_fails "-o fd_cache=1 is refused" "$LACUNAFS" -o fd_cache=1 "$BACK" "$LT_TMP/mnt4"
lt_done
