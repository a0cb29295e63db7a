#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad with a real NFSv4.0 client: libnfs's nfs-ls, nfs-cat and nfs-cp
# (and libnfs itself, driven by tests/py/lt_libnfs.py), on a lacunafs mount
# over ext4, one over XFS, and a plain directory.
#
# Files are made before the server starts, then through NFS:
#  - nfs-ls of the root lists exactly the directory's entries, with their
#    types, permissions and sizes (and, from lacunad, numeric owners that
#    libnfs shows as such); a directory of 3000 entries is listed
#    completely (several READDIR rounds); nfs-ls -R reaches files three
#    directories down;
#  - nfs-cat and nfs-cp (download) of files of 0, 1, 4095, 4096, 4097,
#    1 MiB - 1, 1 MiB, 1 MiB + 1 and 5 MiB + 3 random bytes give the
#    backing file's SHA-256, and so do READs of 100003 bytes at odd
#    offsets; a sparse file reads back with zeros in its holes;
#  - uploads of the same sizes land with the right SHA-256 in the backing
#    filesystem and read back through NFS: with nfs-cp, and with libnfs in
#    3 KiB WRITEs. libnfs 4.0 cannot encode a WRITE of more than about
#    3.9 KB in NFSv4 (its COMPOUND buffer is 4 KiB): where that limit shows,
#    nfs-cp of a larger file must fail in the client with the file created
#    and empty, and the chunked upload carries those sizes;
#  - an exclusive create (libnfs always makes one) over an existing file
#    fails with NFS4ERR_EXIST and leaves it be, an O_TRUNC open of it then
#    truncates and rewrites it; an upload into a subdirectory works;
#  - a missing file, a missing directory and an upload into a missing
#    directory fail with a non-zero exit status, and the server lives on;
#  - two clients take turns at a whole-file lock: a conflicting LOCK and
#    LOCKT are refused, an unlocked file can be locked by the other.
# Last, the server exits 0 on SIGTERM with no sanitizer report.
#
# LT_NFS_SERVER=ganesha runs the same checks against NFS-Ganesha.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
nfs_require_libnfs
nfs_require_server
lt_require_cmd find sort cmp
[ -x "$TOOLS/lt_seekmap" ] || lt_hard "lt_seekmap not built at $TOOLS/lt_seekmap"

SIZES=(0 1 4095 4096 4097 1048575 1048576 1048577 5242883)
NMANY=3000
SPARSE="size=9M,data@1M+5,data@4095k+64k,data@9215k+1k"
# Largest WRITE libnfs can send, once known: "" (not probed), 0 (no limit
# seen), or the chunk size that works.
LIBNFS_WLIMIT=""

# populate DIR: the files every check reads, made before the server starts.
populate() {
	local d=$1 s i
	mkdir -p "$d/data" "$d/many" "$d/sub/deeper/deepest" "$d/up" || return 1
	for s in "${SIZES[@]}"; do
		head -c "$s" /dev/urandom >"$d/data/r-$s" || return 1
	done
	for ((i = 0; i < NMANY; i++)); do
		: >"$d/many/entry-with-a-longer-name-$i" || return 1
	done
	head -c 70001 /dev/urandom >"$d/sub/deeper/deepest/f.bin" || return 1
	echo "a small text" >"$d/sub/s.txt" || return 1
	head -c 100000 /dev/urandom >"$d/sub/old.bin" || return 1
	chmod 640 "$d/sub/s.txt" && chmod 700 "$d/sub/deeper" || return 1
	ln -s data/r-1 "$d/link" || return 1
	echo theirs >"$d/owned" && chown 1234:5678 "$d/owned" || return 1
	"$TOOLS/lt_seekmap" make "$d/data/sparse" "$SPARSE" || return 1
}

# Names only, sorted, from nfs-ls output (mode nlink uid gid size name).
ls_names() {
	sed -E 's/^[^ ]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ //' | LC_ALL=C sort
}

# "name mode [size]" per entry (size for regular files), sorted.
ls_entries() {
	awk '{ n = $0; sub(/^[^ ]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ /, "", n);
		print n, $1, (substr($1, 1, 1) == "-" ? $5 : "") }' | LC_ALL=C sort
}
dir_entries() {
	find "$1" -mindepth 1 -maxdepth 1 -printf '%f %M %y %s\n' |
		awk '{ print $1, $2, ($3 == "f" ? $4 : "") }' | LC_ALL=C sort
}

check_listing() {
	local t=$1 dir=$2 out rc want
	out=$(nfs_run nfs-ls "$(nfs_url /)" 2>"$LT_TMP/err")
	rc=$?
	lt_check_eq "$t: nfs-ls / exits 0 ($(head -c 200 "$LT_TMP/err"))" 0 "$rc"
	want=$(dir_entries "$dir")
	lt_check_eq "$t: nfs-ls / = the directory (names, modes, sizes)" "$want" \
		"$(ls_entries <<<"$out")"
	if [ "$LT_NFS_SERVER" = lacunad ]; then
		# (Ganesha sends owner names, which libnfs cannot map)
		lt_check_eq "$t: nfs-ls / shows the owners" \
			"$(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f %U %G\n' | LC_ALL=C sort)" \
			"$(awk '{ n = $0; sub(/^[^ ]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ /, "", n);
				print n, $3, $4 }' <<<"$out" | LC_ALL=C sort)"
	fi

	out=$(nfs_run nfs-ls "$(nfs_url /many)" 2>"$LT_TMP/err")
	rc=$?
	lt_check_eq "$t: nfs-ls of $NMANY entries exits 0 ($(head -c 200 "$LT_TMP/err"))" 0 "$rc"
	lt_check_eq "$t: nfs-ls lists all $NMANY entries" "$NMANY" "$(ls_names <<<"$out" | grep -c .)"
	lt_check_eq "$t: nfs-ls of $NMANY entries = the directory" \
		"$(cd "$dir/many" && ls -A | LC_ALL=C sort | sha256sum)" \
		"$(ls_names <<<"$out" | sha256sum)"

	out=$(nfs_run nfs-ls -R "$(nfs_url /sub)" 2>"$LT_TMP/err")
	rc=$?
	lt_check_eq "$t: nfs-ls -R /sub exits 0 ($(head -c 200 "$LT_TMP/err"))" 0 "$rc"
	want=$(cd "$dir/sub" && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort)
	lt_check_eq "$t: nfs-ls -R /sub lists the tree" "$want" "$(ls_names <<<"$out")"
	case $out in
	*" 70001 deeper/deepest/f.bin"*) lt_ok "$t: nfs-ls -R shows the size three levels down" ;;
	*) lt_fail "$t: nfs-ls -R: no '70001 deeper/deepest/f.bin' in: $out" ;;
	esac
}

# check_read T BACKING: nfs-cat and nfs-cp downloads against the backing files.
check_read() {
	local t=$1 b=$2 s want got rc
	for s in "${SIZES[@]}"; do
		want=$(nfs_sha256 "$b/data/r-$s")
		rm -f "$LT_TMP/got"
		nfs_run nfs-cat "$(nfs_url "/data/r-$s")" >"$LT_TMP/got" 2>"$LT_TMP/err"
		rc=$?
		if [ $rc != 0 ]; then
			lt_fail "$t: nfs-cat of $s bytes: exit $rc: $(head -c 300 "$LT_TMP/err")"
		else
			lt_check_eq "$t: nfs-cat of $s bytes: SHA-256" "$want" "$(nfs_sha256 "$LT_TMP/got")"
		fi
		rm -f "$LT_TMP/got"
		nfs_run nfs-cp "$(nfs_url "/data/r-$s")" "$LT_TMP/got" >/dev/null 2>"$LT_TMP/err"
		rc=$?
		if [ $rc != 0 ]; then
			lt_fail "$t: nfs-cp download of $s bytes: exit $rc: $(head -c 300 "$LT_TMP/err")"
		else
			lt_check_eq "$t: nfs-cp download of $s bytes: SHA-256" "$want" \
				"$(nfs_sha256 "$LT_TMP/got")"
		fi
	done
	# READs at odd offsets and of odd sizes
	rm -f "$LT_TMP/got"
	nfs_run python3 "$LT_LIBNFS" get "$(nfs_url /data/r-5242883)" "$LT_TMP/got" \
		--chunk 100003 >/dev/null 2>"$LT_TMP/err"
	rc=$?
	lt_check_eq "$t: libnfs download in 100003-byte READs ($(head -c 200 "$LT_TMP/err"))" 0 $rc
	lt_check "$t: ... SHA-256" cmp -s "$LT_TMP/got" "$b/data/r-5242883"
	rm -f "$LT_TMP/got"
	nfs_run nfs-cat "$(nfs_url /data/sparse)" >"$LT_TMP/got" 2>"$LT_TMP/err"
	rc=$?
	lt_check_eq "$t: nfs-cat of a sparse file ($(head -c 200 "$LT_TMP/err"))" 0 $rc
	lt_check "$t: ... holes read as zeros and data as written" \
		"$TOOLS/lt_seekmap" check "$LT_TMP/got" "$SPARSE"
	lt_check "$t: ... the same bytes as the backing file" cmp -s "$LT_TMP/got" "$b/data/sparse"
	got=$(nfs_run nfs-cat "$(nfs_url /sub/deeper/deepest/f.bin)" 2>"$LT_TMP/err" | sha256sum)
	lt_check_eq "$t: nfs-cat three directories down" \
		"$(sha256sum <"$b/sub/deeper/deepest/f.bin")" "$got"
	got=$(nfs_run nfs-cat "$(nfs_url /sub/s.txt)" 2>"$LT_TMP/err")
	lt_check_eq "$t: nfs-cat of a mode 640 file in a mode 700 directory" "a small text" "$got"
}

# probe_wlimit: does this libnfs send a 64 KiB WRITE at all?
probe_wlimit() {
	local t=$1
	[ -n "$LIBNFS_WLIMIT" ] && return 0
	head -c 65536 /dev/urandom >"$LT_TMP/probe"
	if nfs_run python3 "$LT_LIBNFS" put "$LT_TMP/probe" "$(nfs_url /up/probe)" \
		--chunk 65536 >/dev/null 2>"$LT_TMP/err"; then
		LIBNFS_WLIMIT=0
		lt_log "libnfs sends 64 KiB WRITEs: nfs-cp uploads are checked at every size"
	elif grep -q "Failed to encode COMPOUND4args" "$LT_TMP/err"; then
		LIBNFS_WLIMIT=3072
		lt_log "libnfs cannot encode a 64 KiB NFSv4 WRITE (libnfs 4.0's 4 KiB COMPOUND" \
			"buffer): nfs-cp uploads past ~3.9 KB must fail in the client;" \
			"those sizes are uploaded in 3 KiB WRITEs"
	else
		lt_fail "$t: libnfs upload of 64 KiB: $(head -c 300 "$LT_TMP/err")"
		LIBNFS_WLIMIT=3072
	fi
}

# mtime_recent FILE: modified within the last 10 minutes (an exclusive
# create's verifier must not stay in the times once data is written).
mtime_recent() {
	local m now
	m=$(stat -c %Y "$1") || return 1
	now=$(date +%s)
	[ "$m" -le $((now + 60)) ] && [ "$m" -ge $((now - 600)) ]
}

check_upload() {
	local t=$1 b=$2 s want rc got sum
	probe_wlimit "$t"
	for s in "${SIZES[@]}"; do
		want=$(nfs_sha256 "$b/data/r-$s")
		# nfs-cp: O_CREAT|O_TRUNC open (EXCLUSIVE4 create), SETATTR mode, WRITEs
		nfs_run nfs-cp "$b/data/r-$s" "$(nfs_url "/up/cp-$s")" >/dev/null 2>"$LT_TMP/err"
		rc=$?
		if [ $rc = 0 ]; then
			lt_check_eq "$t: nfs-cp upload of $s bytes: backing SHA-256" "$want" \
				"$(nfs_sha256 "$b/up/cp-$s" 2>/dev/null)"
			[ "$s" -gt 0 ] && lt_check "$t: nfs-cp upload of $s bytes: mtime is now" \
				mtime_recent "$b/up/cp-$s"
		elif [ "$LIBNFS_WLIMIT" != 0 ] && [ "$s" -gt "$LIBNFS_WLIMIT" ] &&
			grep -q "Failed to write to dest file" "$LT_TMP/err"; then
			# the client gave up before sending the WRITE: what the
			# server did (create the file) must still be right
			if [ -f "$b/up/cp-$s" ] && [ ! -s "$b/up/cp-$s" ]; then
				lt_ok "$t: nfs-cp upload of $s bytes: created empty (libnfs cannot send the WRITE)"
			else
				lt_fail "$t: nfs-cp upload of $s bytes: no empty file after libnfs's WRITE failure"
			fi
		else
			lt_fail "$t: nfs-cp upload of $s bytes: exit $rc: $(head -c 300 "$LT_TMP/err")"
		fi
		nfs_put "$b/data/r-$s" "/up/put-$s" >/dev/null 2>"$LT_TMP/err"
		rc=$?
		if [ $rc != 0 ]; then
			lt_fail "$t: libnfs upload of $s bytes: exit $rc: $(head -c 300 "$LT_TMP/err")"
			continue
		fi
		lt_check_eq "$t: libnfs upload of $s bytes: backing SHA-256" "$want" \
			"$(nfs_sha256 "$b/up/put-$s" 2>/dev/null)"
		got=$(nfs_run nfs-cat "$(nfs_url "/up/put-$s")" 2>"$LT_TMP/err" | sha256sum)
		lt_check_eq "$t: the upload of $s bytes reads back through NFS" "$want  -" "$got"
	done
	lt_check "$t: uploads are owned by root (no_root_squash)" \
		test "$(stat -c %u:%g "$b/up/put-1")" = 0:0

	# Over an existing file: libnfs 4.0 creates with EXCLUSIVE4 (O_EXCL
	# or not), which must fail with NFS4ERR_EXIST and leave the file be;
	# opening it O_WRONLY|O_TRUNC and writing replaces it.
	sum=$(nfs_sha256 "$b/sub/old.bin")
	nfs_put "$b/data/r-4097" /sub/old.bin >/dev/null 2>"$LT_TMP/err"
	rc=$?
	if [ $rc = 0 ]; then
		lt_log "$t: a create over an existing file succeeded (this libnfs uses UNCHECKED4)"
	else
		lt_check "$t: an exclusive create over an existing file is NFS4ERR_EXIST" \
			grep -q NFS4ERR_EXIST "$LT_TMP/err"
		lt_check_eq "$t: ... and leaves the file untouched" "$sum" "$(nfs_sha256 "$b/sub/old.bin")"
	fi
	nfs_run python3 "$LT_LIBNFS" put "$b/data/r-4097" "$(nfs_url /sub/old.bin)" \
		--trunc >/dev/null 2>"$LT_TMP/err"
	rc=$?
	lt_check_eq "$t: upload into an existing file opened O_TRUNC ($(head -c 200 "$LT_TMP/err"))" 0 $rc
	lt_check_eq "$t: ... truncates it" 4097 "$(stat -c %s "$b/sub/old.bin")"
	lt_check "$t: ... and writes the new content" cmp -s "$b/data/r-4097" "$b/sub/old.bin"
	head -c 3000 /dev/urandom >"$LT_TMP/small"
	nfs_run nfs-cp "$LT_TMP/small" "$(nfs_url /sub/deeper/deepest/small)" >/dev/null 2>"$LT_TMP/err"
	rc=$?
	lt_check_eq "$t: nfs-cp upload three directories down ($(head -c 200 "$LT_TMP/err"))" 0 $rc
	lt_check "$t: ... lands there" cmp -s "$LT_TMP/small" "$b/sub/deeper/deepest/small"
	lt_check_eq "$t: ... with nfs-cp's mode 0660" 660 "$(stat -c %a "$b/sub/deeper/deepest/small")"
}

check_errors() {
	local t=$1 b=$2 rc got
	nfs_run nfs-cat "$(nfs_url /no-such-file)" >"$LT_TMP/got" 2>"$LT_TMP/err"
	rc=$?
	if [ $rc != 0 ] && [ $rc != 124 ]; then
		lt_ok "$t: nfs-cat of a missing file fails (exit $rc)"
	else
		lt_fail "$t: nfs-cat of a missing file: exit $rc"
	fi
	if grep -q "NOENT" "$LT_TMP/err"; then
		lt_ok "$t: the missing file is NFS4ERR_NOENT"
	else
		lt_fail "$t: nfs-cat of a missing file says: $(head -c 300 "$LT_TMP/err")"
	fi
	lt_check "$t: the server lives after a missing file" nfs_alive
	nfs_run nfs-cat "$(nfs_url /no-dir/no-file)" >/dev/null 2>&1
	rc=$?
	lt_check "$t: nfs-cat in a missing directory fails (exit $rc)" test $rc != 0 -a $rc != 124
	nfs_run nfs-ls "$(nfs_url /no-dir)" >/dev/null 2>&1
	rc=$?
	lt_check "$t: nfs-ls of a missing directory fails (exit $rc)" test $rc != 0 -a $rc != 124
	nfs_run nfs-cat "$(nfs_url /data)" >/dev/null 2>&1
	rc=$?
	lt_check "$t: nfs-cat of a directory fails (exit $rc)" test $rc != 0 -a $rc != 124
	nfs_run nfs-cp "$b/data/r-1" "$(nfs_url /no-dir/f)" >/dev/null 2>&1
	rc=$?
	lt_check "$t: nfs-cp into a missing directory fails (exit $rc)" test $rc != 0 -a $rc != 124
	lt_check_fails "$t: ... and creates nothing" test -e "$b/no-dir"
	lt_check "$t: the server lives after the failures" nfs_alive
	got=$(nfs_run nfs-cat "$(nfs_url /data/r-4095)" 2>/dev/null | sha256sum)
	lt_check_eq "$t: and still serves files" "$(sha256sum <"$b/data/r-4095")" "$got"
}

# Byte-range locks between two libnfs clients (LOCK, LOCKT, LOCKU).
check_locks() {
	local t=$1 b=$2 out want rc
	out=$(nfs_run python3 "$LT_LIBNFS" locks "$(nfs_url /data/r-4096)" 2>"$LT_TMP/err")
	rc=$?
	lt_check_eq "$t: two clients locking: exit status ($(head -c 200 "$LT_TMP/err"))" 0 $rc
	# 0 granted, "x" refused (libnfs reports NFS4ERR_DENIED as some -errno)
	want="a_tlock=0 b_test=x a_test=0 a_ulock=0 b_tlock=0 a_test_b=x b_ulock=0 b_tlock_again=0 a_tlock_denied=x b_ulock_again=0"
	lt_check_eq "$t: lock, test, unlock by turns" "$want" \
		"$(sed -E 's/=-[0-9]+$/=x/' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
	lt_check "$t: the server lives after the lock battery" nfs_alive
}

# run_fs TYPE BACKING DIR: DIR is what lacunad exports (a lacunafs mount
# over BACKING, or BACKING itself).
run_fs() {
	local t=$1 b=$2 dir=$3
	if ! populate "$dir"; then
		lt_fail "$t: making the test files in $dir"
		return
	fi
	sync
	nfs_start "$dir" --threads 2
	check_listing "$t" "$dir"
	check_read "$t" "$b"
	check_upload "$t" "$b"
	check_errors "$t" "$b"
	check_locks "$t" "$b"
	nfs_stop
}

if [ "$LT_NFS_SERVER" = lacunad ]; then
	lt_require_fuse
	lt_each_fs run_fs
fi
mkdir -p "$LT_TMP/plain"
lt_log "== plain directory $LT_TMP/plain"
run_fs plain "$LT_TMP/plain" "$LT_TMP/plain"
lt_done
