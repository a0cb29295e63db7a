#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs command line: usage errors exit 2 with a usage message, --help
# and --version exit 0 (lacunafs's own version first), a missing or
# non-directory backing dir is a clear error, unknown options are refused.
# None of these may leave a mount. Then lacuna's: a summary per command,
# a --help per command, messages prefixed "lacuna CMD:", a map that
# starts past the end of the file refused with a message, and the
# allocated figure of a range labelled as the whole file's.
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
	lt_timeout 60 "$LACUNAFS" "$@" >"$out" 2>&1 || rc=$?
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
lt_check "-V: lacunafs's version on the first line" grep -qE "^lacunafs [0-9]+\.[0-9]+" \
	<(head -n 1 "$out")
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

# ---- lacuna
LACUNA="$top_builddir/tools/lacuna"
# run_lacuna EXPECTED_RC ARGS...: output (stdout and stderr) in $out
run_lacuna() {
	local want=$1 rc=0
	shift
	"$LACUNA" "$@" >"$out" 2>&1 || rc=$?
	lt_check_eq "lacuna $*: exit status" "$want" "$rc"
}
run_lacuna 0 --help
for c in map nfs-map nfs-get; do
	lt_check "--help: '$c' with a one-line summary" grep -qE "^  $c +[a-z]" "$out"
done
run_lacuna 0 map --help
lt_check "map --help: map's usage" grep -q "^usage: lacuna map FILE" "$out"
lt_check "map --help: map's options" grep -q -- "--offset N" "$out"
lt_check_fails "map --help: not the other commands'" grep -q "nfs-get" "$out"
run_lacuna 0 nfs-get --help
lt_check "nfs-get --help: its options" grep -q -- "--depth D" "$out"
run_lacuna 2 map --bogus "$LT_TMP/file"
lt_check "getopt errors prefixed 'lacuna map:'" grep -q "^lacuna map: unrecognized option '--bogus'" "$out"
lt_check "usage error: points at --help" grep -q "Try 'lacuna map --help'" "$out"
run_lacuna 2 nfs-get --depth
lt_check "nfs-get: getopt errors prefixed 'lacuna nfs-get:'" grep -q "^lacuna nfs-get: option" "$out"
printf '%8192s' x >"$LT_TMP/small"
run_lacuna 1 map --offset 1M "$LT_TMP/small"
lt_check "--offset past the end: said" grep -q "at or past the end of the file (size 8192" "$out"
run_lacuna 1 map --offset 8192 "$LT_TMP/small"
run_lacuna 0 map --offset 4096 --length 1 "$LT_TMP/small"
lt_check "a range: allocated labelled as the whole file's" \
	grep -q "allocated [0-9]* (.*) in the whole file$" "$out"
run_lacuna 0 map "$LT_TMP/small"
lt_check_fails "the whole file: allocated not labelled" grep -q "in the whole file" "$out"
run_lacuna 0 map --json --offset 4096 "$LT_TMP/small"
lt_check "a range in JSON: allocated_of_whole_file" grep -q '"allocated_of_whole_file":true' "$out"

lt_done
