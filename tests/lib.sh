# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared helpers for the integration tests. Each test sources this file,
# calls lt_init, and then builds its own world: loop images with real ext4
# and XFS filesystems, lacunafs mounts over them, daemons started with
# setsid. One EXIT trap undoes everything in reverse order, also when the
# test fails or is interrupted, and kills only the PIDs this test started.
#
# Exit codes follow automake: 0 pass, 77 skip (with the reason printed),
# 99 hard error, anything else a failure.

: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
LACUNAFS="$top_builddir/fusefs/lacunafs"
TOOLS="$top_builddir/tests/tools"

LT_TMP=""
LT_CLEANUP=()     # commands run in reverse order at exit
LT_FAILS=0
LT_CHECKS=0

lt_log() { printf '# %s\n' "$*"; }
lt_skip() { echo "SKIP: $*"; exit 77; }
lt_hard() { echo "ERROR: $*"; exit 99; }

lt_push_cleanup() { LT_CLEANUP+=("$*"); }

lt_cleanup() {
	local rc=$? _c
	trap - EXIT INT TERM
	for ((_c = ${#LT_CLEANUP[@]} - 1; _c >= 0; _c--)); do
		eval "${LT_CLEANUP[$_c]}" >/dev/null 2>&1 || true
	done
	# A daemon built with --enable-sanitizers reports into its log.
	if [ -n "$LT_TMP" ] &&
		grep -lE "ERROR: (Address|Leak|Thread)Sanitizer|runtime error:" \
			"$LT_TMP"/*.log >/dev/null 2>&1; then
		echo "not ok - sanitizer report in a daemon log:"
		grep -hE -A30 "ERROR: (Address|Leak|Thread)Sanitizer|runtime error:" "$LT_TMP"/*.log
		[ "$rc" = 0 ] && rc=1
	fi
	[ -n "$LT_TMP" ] && rm -rf "$LT_TMP"
	exit "$rc"
}

lt_init() {
	[ "$(id -u)" = 0 ] || lt_skip "needs root (loop devices, mounts)"
	LT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lacuna-test.XXXXXX") || lt_hard "mktemp failed"
	chmod 755 "$LT_TMP"
	trap lt_cleanup EXIT
	trap 'exit 130' INT TERM
}

lt_require_fuse() {
	[ -c /dev/fuse ] || lt_skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || lt_skip "fusermount3 not installed (package fuse3)"
	[ -x "$LACUNAFS" ] || lt_hard "lacunafs not built at $LACUNAFS"
}

lt_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || lt_skip "$c not installed"
	done
}

# lt_timeout SECONDS COMMAND...: COMMAND, stopped after SECONDS. Only a
# guard against hangs, never a budget: give it several times what a
# loaded machine takes. When it fires, says "timed out after N s: COMMAND"
# on stderr and returns 124.
lt_timeout() {
	local t=$1 rc=0
	shift
	timeout "$t" "$@" || rc=$?
	[ $rc != 124 ] || echo "timed out after $t s: $*" >&2
	return $rc
}

# lt_make_fs TYPE NAME [SIZE [MKFS-OPTIONS...]]: make a TYPE (ext4|xfs)
# filesystem on a loop image (mkfs given MKFS-OPTIONS, e.g. -m reflink=1),
# mount it at $LT_TMP/NAME and set LT_FS to that path.
lt_make_fs() {
	local type=$1 name=$2 size=${3:-1G} img dir
	shift $(($# < 3 ? $# : 3))
	img="$LT_TMP/$name.img"
	dir="$LT_TMP/$name"
	case $type in
	ext4) command -v mkfs.ext4 >/dev/null || lt_skip "mkfs.ext4 missing (e2fsprogs)" ;;
	xfs) command -v mkfs.xfs >/dev/null || lt_skip "mkfs.xfs missing (xfsprogs)" ;;
	*) lt_hard "lt_make_fs: unknown type $type" ;;
	esac
	truncate -s "$size" "$img" || lt_hard "truncate $img"
	case $type in
	ext4) mkfs.ext4 -q -F "$@" "$img" >/dev/null 2>&1 || lt_hard "mkfs.ext4 $* $img" ;;
	xfs) mkfs.xfs -q -f "$@" "$img" >/dev/null 2>&1 || lt_hard "mkfs.xfs $* $img" ;;
	esac
	mkdir -p "$dir"
	mount -o loop "$img" "$dir" || lt_skip "cannot mount a loop device here"
	lt_push_cleanup "umount -l '$dir'"
	chmod 755 "$dir"
	LT_FS=$dir
}

# lt_mount_lacunafs BACKING MOUNTPOINT [OPTIONS...]: start lacunafs in the
# foreground under setsid, wait until the mount is up, remember its PID in
# LT_LFS_PID (and in LT_LFS_PIDS[MOUNTPOINT]).
declare -A LT_LFS_PIDS
lt_mount_lacunafs() {
	local backing=$1 mnt=$2 log i
	shift 2
	mkdir -p "$mnt"
	log="$LT_TMP/lacunafs.$(basename "$mnt").log"
	setsid "$LACUNAFS" -f "$@" "$backing" "$mnt" >"$log" 2>&1 &
	LT_LFS_PID=$!
	LT_LFS_PIDS[$mnt]=$LT_LFS_PID
	lt_push_cleanup "lt_stop_lacunafs '$mnt'"
	for ((i = 0; i < 200; i++)); do
		if mountpoint -q "$mnt"; then
			return 0
		fi
		if ! kill -0 "$LT_LFS_PID" 2>/dev/null; then
			cat "$log"
			lt_hard "lacunafs exited before mounting $mnt"
		fi
		sleep 0.05
	done
	cat "$log"
	lt_hard "lacunafs did not mount $mnt"
}

# lt_stop_lacunafs MOUNTPOINT: unmount and wait for that daemon to exit.
lt_stop_lacunafs() {
	local mnt=$1 pid=${LT_LFS_PIDS[$1]:-} i
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	[ -n "$pid" ] || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	return 1
}

# lt_each_fs CALLBACK: run CALLBACK TYPE BACKING MOUNTPOINT for ext4 and xfs,
# each on its own fresh filesystem with lacunafs mounted over it.
lt_each_fs() {
	local cb=$1 type backing mnt
	shift
	for type in ext4 xfs; do
		lt_make_fs "$type" "$type"
		backing=$LT_FS
		mnt="$LT_TMP/mnt-$type"
		lt_mount_lacunafs "$backing" "$mnt" "$@"
		lt_log "== $type: $backing via $mnt"
		"$cb" "$type" "$backing" "$mnt"
	done
}

# Checks: count failures, keep going, report at the end with lt_done.
lt_ok() {
	LT_CHECKS=$((LT_CHECKS + 1))
	echo "ok - $*"
}
lt_fail() {
	LT_CHECKS=$((LT_CHECKS + 1))
	LT_FAILS=$((LT_FAILS + 1))
	echo "not ok - $*"
}
# lt_check DESCRIPTION COMMAND...: pass when COMMAND succeeds.
lt_check() {
	local d=$1
	shift
	if "$@"; then lt_ok "$d"; else lt_fail "$d"; fi
}
# lt_check_fails DESCRIPTION COMMAND...: pass when COMMAND fails.
lt_check_fails() {
	local d=$1
	shift
	if "$@" 2>/dev/null; then lt_fail "$d (unexpectedly succeeded)"; else lt_ok "$d"; fi
}
# lt_check_eq DESCRIPTION EXPECTED ACTUAL
lt_check_eq() {
	if [ "$2" = "$3" ]; then
		lt_ok "$1"
	else
		lt_fail "$1: expected '$2', got '$3'"
	fi
}
# lt_run_checks LABEL TIMEOUT COMMAND...: run COMMAND (lt_timeout TIMEOUT) and make one check of every line it prints that starts with
# "ok" (passed) or "FAIL"/"not ok" (failed), logging the others. Its exit
# status must be 0, or 1 when it printed a failed check.
# lt_wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every half
# second until it succeeds; after SECONDS say "timed out" (with
# $LT_WAIT_LAST, what the command last saw, when it sets it) and fail.
lt_wait_for() {
	local t=$1 what=$2 i
	shift 2
	LT_WAIT_LAST=""
	for ((i = 0; i < t * 2; i++)); do
		"$@" && return 0
		sleep 0.5
	done
	echo "# timed out after $t s waiting for $what${LT_WAIT_LAST:+ (last: $LT_WAIT_LAST)}"
	return 1
}

lt_run_checks() {
	local label=$1 to=$2 out rc line failed=0
	shift 2
	out=$(lt_timeout "$to" "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) lt_ok "$label: ${line#ok - }" ;;
		"ok "*) lt_ok "$label: ${line#ok }" ;;
		"not ok - "*) lt_fail "$label: ${line#not ok - }"; failed=1 ;;
		"FAIL "*) lt_fail "$label: ${line#FAIL }"; failed=1 ;;
		"# "*) lt_log "${line#\# }" ;;
		"") ;;
		*) lt_log "$line" ;;
		esac
	done <<<"$out"
	if [ "$rc" -eq 124 ]; then
		lt_fail "$label: timed out after $to s"
	elif [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 1 ] && [ "$failed" -eq 1 ]; }; then
		lt_fail "$label: $(basename "$1") exited with status $rc"
		tail -n 20 <<<"$out" | sed 's/^/# /'
	fi
}
lt_done() {
	echo "# $LT_CHECKS checks, $LT_FAILS failed"
	[ "$LT_CHECKS" -gt 0 ] || lt_hard "no checks ran"
	[ "$LT_FAILS" -eq 0 ]
}
