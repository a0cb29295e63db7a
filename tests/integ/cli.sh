#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs command line: usage errors exit 2 with a usage message, --help
# and --version exit 0, a missing or non-directory backing dir is a clear
# error, unknown options are refused. None of these may leave a mount.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

mnt="$LT_TMP/mnt"
mkdir -p "$mnt" "$LT_TMP/dir"
touch "$LT_TMP/file"
out="$LT_TMP/out"

# run_lfs EXPECTED_RC PATTERN DESCRIPTION ARGS...: output must match PATTERN
run_lfs() {
	local want=$1 pat=$2 desc=$3 rc=0
	shift 3
	timeout 10 "$LACUNAFS" "$@" >"$out" 2>&1 || rc=$?
	if [ "$want" = nonzero ] && [ $rc -ne 0 ] || [ "$rc" = "$want" ]; then
		if grep -qiE -- "$pat" "$out"; then
			lt_ok "$desc (exit $rc)"
		else
			lt_fail "$desc: output lacks /$pat/: $(head -3 "$out")"
		fi
	else
		lt_fail "$desc: exit $rc, expected $want: $(head -3 "$out")"
	fi
	if mountpoint -q "$mnt"; then
		lt_fail "$desc left a mount behind"
		fusermount3 -u "$mnt"
	fi
}

run_lfs 2 "usage: .*BACKING_DIR MOUNTPOINT" "no arguments"
run_lfs 2 "missing MOUNTPOINT" "only a backing dir" "$LT_TMP/dir"
run_lfs 0 "cache=auto" "--help" --help
run_lfs 0 "usage:" "-h" -h
run_lfs 0 "^lacunafs [0-9]+\.[0-9]+" "--version" --version
run_lfs nonzero "'$LT_TMP/nope'.*No such file or directory" "missing backing dir" \
	-f "$LT_TMP/nope" "$mnt"
run_lfs nonzero "not a directory" "backing is a regular file" -f "$LT_TMP/file" "$mnt"
run_lfs 2 "cache=bogus: expected auto or none" "bad cache mode" -f -o cache=bogus "$LT_TMP/dir" "$mnt"
run_lfs 2 "timeout=-1" "negative timeout" -f -o timeout=-1 "$LT_TMP/dir" "$mnt"
run_lfs nonzero "unknown option" "unknown -o option" -f -o no_such_option "$LT_TMP/dir" "$mnt"
run_lfs nonzero "mountpoint|No such file" "missing mountpoint dir" -f "$LT_TMP/dir" "$LT_TMP/nomnt"

# daemon mode (no -f): files that existed before the mount open and read,
# new ones are written (a regression: the daemon once looked its fds up
# in the /proc directory of the parent that fuse_daemonize() left behind)
echo before >"$LT_TMP/dir/old"
if "$LACUNAFS" "$LT_TMP/dir" "$mnt" >"$LT_TMP/daemon.out" 2>&1; then
	lt_check_eq "daemon mode: an existing file reads" before "$(cat "$mnt/old" 2>&1)"
	echo after >"$mnt/new"
	lt_check_eq "daemon mode: a new file is written" after "$(cat "$LT_TMP/dir/new" 2>&1)"
	fusermount3 -u "$mnt" || lt_fail "daemon mode: fusermount3 -u"
else
	lt_fail "daemon mode: lacunafs exited $?: $(head -3 "$LT_TMP/daemon.out")"
fi

lt_done
