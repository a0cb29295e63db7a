#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# POSIX behaviour through lacunafs, as root, on ext4 and on XFS: regular
# files (create, write, read, append, truncate), directories (including a
# 1000-entry listing compared with the backing listing), hard links,
# symlinks, every kind of rename (plain, replacing, RENAME_NOREPLACE,
# RENAME_EXCHANGE, directories), special files, user xattrs, inode flags
# (lsattr), nanosecond
# timestamps, chmod/chown, a sparse file past 4 GiB, statfs,
# copy_file_range, and flock / POSIX / OFD locks between two processes.
#
# Every change made through the mount is also checked on the backing
# filesystem, and where Linux has a subtle rule (chown clearing set-id
# bits) the same operation is made on a twin file directly on the backing
# filesystem and the outcomes compared. lt_fsops reports failures as errno
# names, so expected errors are checked by name.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
FSOPS="$TOOLS/lt_fsops"
PX_FS="" # the filesystem under test, prefixed to every check
[ -x "$FSOPS" ] || lt_hard "lt_fsops not built at $FSOPS"

# px_out CMD...: "OK", "OK:<stdout>" or the errno name lt_fsops printed.
px_out() {
	local out rc
	out=$("$@" 2>/dev/null)
	rc=$?
	case $rc in
	0) if [ -n "$out" ]; then echo "OK:$out"; else echo OK; fi ;;
	1) echo "${out##*$'\n'}" ;;
	*) echo "EXIT$rc" ;;
	esac
}

# px_chk DESCRIPTION EXPECTED CMD...: the outcome of CMD must be EXPECTED.
px_chk() {
	local d=$1 e=$2
	shift 2
	lt_check_eq "$PX_FS: $d" "$e" "$(px_out "$@")"
}

# px_same DESCRIPTION FIELDS PATH_THROUGH_MOUNT PATH_ON_BACKING: the listed
# stat fields agree between the mount and the backing filesystem.
px_same() {
	lt_check_eq "$PX_FS: $1" "$("$FSOPS" lstat "$4" $2 2>&1)" "$("$FSOPS" lstat "$3" $2 2>&1)"
}

# px_echo_fd FD TEXT: write a line to an open descriptor of this shell.
px_echo_fd() {
	echo "$2" >&"$1"
}

# ---------------------------------------------------------------- files
px_files() {
	local B=$1 M=$2 want got rfd wfd

	echo hello >"$M/f1"
	lt_check_eq "$PX_FS: create+write: content on backing" hello "$(cat "$B/f1")"
	lt_check_eq "$PX_FS: read back through mount" hello "$(cat "$M/f1")"
	echo world >>"$M/f1"
	lt_check_eq "$PX_FS: append: content on backing" "hello world" "$(tr '\n' ' ' <"$B/f1" | sed 's/ $//')"
	px_chk "append: size through mount" "OK:12" "$FSOPS" stat "$M/f1" size
	px_chk "pwrite with append flag goes to the end" OK "$FSOPS" pwrite "$M/f1" 0 '!' append
	lt_check_eq "$PX_FS: append flag: content" "hello world !" "$(tr '\n' ' ' <"$M/f1")"
	truncate -s 3 "$M/f1"
	lt_check_eq "$PX_FS: truncate shrink: content on backing" hel "$(cat "$B/f1")"
	px_chk "truncate shrink: size through mount" "OK:3" "$FSOPS" stat "$M/f1" size
	px_chk "truncate(2) extend" OK "$FSOPS" truncate "$M/f1" 10000
	px_chk "truncate extend: size through mount" "OK:10000" "$FSOPS" stat "$M/f1" size
	px_chk "truncate extend: size on backing" "OK:10000" "$FSOPS" stat "$B/f1" size
	want=$( (printf hel; head -c 9997 /dev/zero) | md5sum)
	lt_check_eq "$PX_FS: truncate extend: tail reads as zeros" "$want" "$(md5sum <"$M/f1")"
	px_chk "ftruncate(2) to 5" OK "$FSOPS" ftruncate "$M/f1" 5
	px_chk "ftruncate: size on backing" "OK:5" "$FSOPS" stat "$B/f1" size
	px_chk "open O_TRUNC" OK "$FSOPS" open "$M/f1" wronly trunc
	px_chk "O_TRUNC: size through mount" "OK:0" "$FSOPS" stat "$M/f1" size
	px_chk "O_TRUNC: size on backing" "OK:0" "$FSOPS" stat "$B/f1" size

	px_chk "O_CREAT|O_EXCL on a new name" OK "$FSOPS" open "$M/f2" wronly creat excl mode=0640
	px_chk "O_CREAT|O_EXCL: mode on backing" "OK:reg 0640" "$FSOPS" stat "$B/f2" type perm
	px_chk "O_CREAT|O_EXCL on an existing name fails EEXIST" EEXIST "$FSOPS" open "$M/f2" wronly creat excl
	px_chk "open a missing file fails ENOENT" ENOENT "$FSOPS" open "$M/nope" rdonly
	px_chk "open a file as a directory fails ENOTDIR" ENOTDIR "$FSOPS" open "$M/f2" rdonly directory
	px_chk "open a path below a file fails ENOTDIR" ENOTDIR "$FSOPS" open "$M/f2/x" rdonly
	px_chk "open a directory for writing fails EISDIR" EISDIR "$FSOPS" open "$M" wronly
	# libfuse 3.14 has no tmpfile operation; refusing with EOPNOTSUPP lets
	# callers fall back to a named temporary file.
	got=$(px_out "$FSOPS" open "$M" wronly tmpfile)
	lt_check "$PX_FS: O_TMPFILE works or fails with EOPNOTSUPP (got $got)" \
		test "$got" = OK -o "$got" = EOPNOTSUPP

	head -c 3145739 /dev/urandom >"$LT_TMP/rand"
	cp "$LT_TMP/rand" "$M/f3"
	lt_check "$PX_FS: 3 MiB write: backing file identical" cmp -s "$LT_TMP/rand" "$B/f3"
	lt_check "$PX_FS: 3 MiB write: read back identical" cmp -s "$LT_TMP/rand" "$M/f3"
	px_chk "pwrite in the middle" OK "$FSOPS" pwrite "$M/f3" 1000000 MIDDLE
	px_chk "pread in the middle through mount" "OK:MIDDLE" "$FSOPS" pread "$M/f3" 1000000 6
	px_chk "pread in the middle on backing" "OK:MIDDLE" "$FSOPS" pread "$B/f3" 1000000 6
	px_chk "unlink" OK "$FSOPS" unlink "$M/f3"
	px_chk "unlink: gone on backing" ENOENT "$FSOPS" lstat "$B/f3"
	px_chk "unlink: gone through mount" ENOENT "$FSOPS" lstat "$M/f3"
	px_chk "unlink a missing name fails ENOENT" ENOENT "$FSOPS" unlink "$M/f3"

	# An open file outlives its name.
	echo open-data >"$M/f4"
	exec {rfd}<"$M/f4" {wfd}>>"$M/f4"
	rm "$M/f4"
	lt_check "$PX_FS: write to an unlinked open file" px_echo_fd "$wfd" more
	lt_check_eq "$PX_FS: read an unlinked open file" "open-data more" "$(tr '\n' ' ' <&"$rfd" | sed 's/ $//')"
	exec {rfd}<&- {wfd}>&-
	px_chk "unlinked open file: name gone on backing" ENOENT "$FSOPS" stat "$B/f4"

	echo renamed-while-open >"$M/f5"
	exec {rfd}<"$M/f5"
	mv "$M/f5" "$M/f6"
	lt_check_eq "$PX_FS: read a file renamed while open" renamed-while-open "$(cat <&"$rfd")"
	exec {rfd}<&-

	px_chk "create a 255-byte name" OK "$FSOPS" open "$M/$(printf 'n%.0s' {1..255})" wronly creat
	px_chk "255-byte name on backing" OK:reg "$FSOPS" stat "$B/$(printf 'n%.0s' {1..255})" type
	px_chk "a 256-byte name fails ENAMETOOLONG" ENAMETOOLONG \
		"$FSOPS" open "$M/$(printf 'n%.0s' {1..256})" wronly creat
	px_chk "a name with spaces and UTF-8" OK "$FSOPS" open "$M/with space é ✓" wronly creat
	px_chk "name with spaces and UTF-8 on backing" OK:reg "$FSOPS" stat "$B/with space é ✓" type
	lt_check "$PX_FS: write with fsync (dd conv=fsync)" \
		dd if="$LT_TMP/rand" of="$M/f7" bs=64k count=4 conv=fsync status=none
	px_same "st_blocks and size through mount equal backing" "size blocks" "$M/f7" "$B/f7"
}

# ---------------------------------------------------------------- directories
px_dirs() {
	local B=$1 M=$2 i n

	px_chk "mkdir" OK "$FSOPS" mkdir "$M/d" 0750
	px_chk "mkdir: on backing" "OK:dir 0750" "$FSOPS" stat "$B/d" type perm
	px_chk "mkdir an existing name fails EEXIST" EEXIST "$FSOPS" mkdir "$M/d"
	px_chk "mkdir below a missing dir fails ENOENT" ENOENT "$FSOPS" mkdir "$M/nope/d"
	: >"$M/d/child"
	px_chk "rmdir of a non-empty dir fails ENOTEMPTY" ENOTEMPTY "$FSOPS" rmdir "$M/d"
	px_chk "rmdir of a file fails ENOTDIR" ENOTDIR "$FSOPS" rmdir "$M/d/child"
	px_chk "unlink of a dir fails EISDIR" EISDIR "$FSOPS" unlink "$M/d"
	px_chk "parent nlink counts subdirectories" "OK:3" "$FSOPS" stat "$M/d/.." nlink
	rm "$M/d/child"
	px_chk "rmdir of an emptied dir" OK "$FSOPS" rmdir "$M/d"
	px_chk "rmdir: gone on backing" ENOENT "$FSOPS" stat "$B/d"

	# 1000 entries made through the mount, listed both ways.
	mkdir "$M/many"
	for ((i = 0; i < 1000; i++)); do
		: >"$M/many/entry-$i"
	done
	"$FSOPS" readdir "$M/many" | sort >"$LT_TMP/ls.mnt"
	"$FSOPS" readdir "$B/many" | sort >"$LT_TMP/ls.back"
	n=$(wc -l <"$LT_TMP/ls.mnt")
	lt_check_eq "$PX_FS: readdir of 1000 entries made through the mount: count" 1002 "$n"
	lt_check "$PX_FS: readdir of 1000 entries: same names as backing" cmp -s "$LT_TMP/ls.mnt" "$LT_TMP/ls.back"
	lt_check_eq "$PX_FS: readdir: no duplicate names" "$n" "$(uniq <"$LT_TMP/ls.mnt" | wc -l)"

	# 1000 entries made on the backing filesystem before the first lookup.
	mkdir "$B/many2"
	for ((i = 0; i < 1000; i++)); do
		: >"$B/many2/back-$i"
	done
	"$FSOPS" readdir "$M/many2" | sort >"$LT_TMP/ls.mnt"
	"$FSOPS" readdir "$B/many2" | sort >"$LT_TMP/ls.back"
	lt_check "$PX_FS: readdir of 1000 entries made on the backing fs: same names" \
		cmp -s "$LT_TMP/ls.mnt" "$LT_TMP/ls.back"

	# readdir's d_ino agrees with stat's st_ino through the mount.
	"$FSOPS" readdir "$M/many" ino | grep -v ' \.\.\?$' | sort -k2 >"$LT_TMP/dino"
	(cd "$M/many" && stat -c '%i %n' entry-*) | sort -k2 >"$LT_TMP/stino"
	lt_check "$PX_FS: readdir d_ino equals st_ino for 1000 entries" cmp -s "$LT_TMP/dino" "$LT_TMP/stino"
	rm -r "$M/many" "$M/many2"
	px_chk "rm -r of 2000 entries: gone on backing" ENOENT "$FSOPS" stat "$B/many"
}

# ---------------------------------------------------------------- links
px_links() {
	local B=$1 M=$2

	echo linked >"$M/h1"
	px_chk "link" OK "$FSOPS" link "$M/h1" "$M/h2"
	px_chk "link: nlink through mount (first name)" "OK:2" "$FSOPS" stat "$M/h1" nlink
	px_chk "link: nlink through mount (second name)" "OK:2" "$FSOPS" stat "$M/h2" nlink
	px_chk "link: nlink on backing" "OK:2" "$FSOPS" stat "$B/h1" nlink
	lt_check_eq "$PX_FS: link: same inode number through mount for both names" \
		"$("$FSOPS" stat "$M/h1" ino)" "$("$FSOPS" stat "$M/h2" ino)"
	lt_check_eq "$PX_FS: link: same inode on backing for both names" \
		"$("$FSOPS" stat "$B/h1" ino)" "$("$FSOPS" stat "$B/h2" ino)"
	echo changed >>"$M/h2"
	lt_check_eq "$PX_FS: link: write through one name, read through the other" \
		"linked changed" "$(tr '\n' ' ' <"$M/h1" | sed 's/ $//')"
	px_chk "link: size through the other name" "OK:15" "$FSOPS" stat "$M/h1" size
	px_chk "link to an existing name fails EEXIST" EEXIST "$FSOPS" link "$M/h1" "$M/h2"
	mkdir "$M/hd"
	px_chk "link of a directory fails EPERM" EPERM "$FSOPS" link "$M/hd" "$M/hd2"
	px_chk "unlink one name" OK "$FSOPS" unlink "$M/h1"
	px_chk "unlink: nlink of the other name through mount" "OK:1" "$FSOPS" stat "$M/h2" nlink
	px_chk "unlink: nlink on backing" "OK:1" "$FSOPS" stat "$B/h2" nlink
	px_chk "link after unlink (re-link to the old name)" OK "$FSOPS" link "$M/h2" "$M/h1"
	px_chk "re-link: nlink through mount" "OK:2" "$FSOPS" stat "$M/h2" nlink
	lt_check_eq "$PX_FS: re-link: same inode number through mount" \
		"$("$FSOPS" stat "$M/h1" ino)" "$("$FSOPS" stat "$M/h2" ino)"

	px_chk "symlink" OK "$FSOPS" symlink h2 "$M/s1"
	px_chk "readlink through mount" "OK:h2" "$FSOPS" readlink "$M/s1"
	px_chk "readlink on backing" "OK:h2" "$FSOPS" readlink "$B/s1"
	px_chk "lstat of a symlink" "OK:lnk 2" "$FSOPS" lstat "$M/s1" type size
	px_chk "stat follows the symlink" "OK:reg" "$FSOPS" stat "$M/s1" type
	lt_check_eq "$PX_FS: read through the symlink" "linked changed" "$(tr '\n' ' ' <"$M/s1" | sed 's/ $//')"
	px_chk "dangling symlink" OK "$FSOPS" symlink "no/such/target" "$M/s2"
	px_chk "readlink of a dangling symlink" "OK:no/such/target" "$FSOPS" readlink "$M/s2"
	px_chk "stat of a dangling symlink fails ENOENT" ENOENT "$FSOPS" stat "$M/s2"
	px_chk "lstat of a dangling symlink" "OK:lnk" "$FSOPS" lstat "$M/s2" type
	px_chk "open O_NOFOLLOW of a symlink fails ELOOP" ELOOP "$FSOPS" open "$M/s1" rdonly nofollow
	px_chk "readlink of a regular file fails EINVAL" EINVAL "$FSOPS" readlink "$M/h2"
	px_chk "symlink over an existing name fails EEXIST" EEXIST "$FSOPS" symlink x "$M/s1"
	px_chk "lchown of a symlink" OK "$FSOPS" lchown "$M/s1" 1234 4321
	px_chk "lchown: owner of the link on backing" "OK:1234 4321" "$FSOPS" lstat "$B/s1" uid gid
	px_chk "lchown: target untouched" "OK:0 0" "$FSOPS" stat "$B/h2" uid gid
	px_chk "symlink to an absolute 255-byte target" OK "$FSOPS" symlink "/$(printf 'a%.0s' {1..254})" "$M/s3"
	px_chk "readlink of a long target" "OK:/$(printf 'a%.0s' {1..254})" "$FSOPS" readlink "$M/s3"
}

# ---------------------------------------------------------------- renames
px_renames() {
	local B=$1 M=$2 ino native

	echo A >"$M/ra"
	ino=$("$FSOPS" stat "$M/ra" ino)
	px_chk "rename plain" OK "$FSOPS" rename "$M/ra" "$M/rb"
	px_chk "rename: old name gone through mount" ENOENT "$FSOPS" stat "$M/ra"
	px_chk "rename: old name gone on backing" ENOENT "$FSOPS" stat "$B/ra"
	lt_check_eq "$PX_FS: rename: new name on backing" A "$(cat "$B/rb")"
	px_chk "rename: inode number kept through mount" "OK:$ino" "$FSOPS" stat "$M/rb" ino

	echo C >"$M/rc"
	px_chk "rename over an existing file" OK "$FSOPS" rename "$M/rb" "$M/rc"
	lt_check_eq "$PX_FS: rename over existing: content through mount" A "$(cat "$M/rc")"
	lt_check_eq "$PX_FS: rename over existing: content on backing" A "$(cat "$B/rc")"
	px_chk "rename over existing: source gone" ENOENT "$FSOPS" stat "$M/rb"

	echo D >"$M/rd"
	px_chk "RENAME_NOREPLACE over an existing file fails EEXIST" EEXIST \
		"$FSOPS" rename2 "$M/rd" "$M/rc" noreplace
	lt_check_eq "$PX_FS: RENAME_NOREPLACE failure: target untouched" A "$(cat "$M/rc")"
	lt_check_eq "$PX_FS: RENAME_NOREPLACE failure: source untouched" D "$(cat "$M/rd")"
	px_chk "RENAME_NOREPLACE to a free name" OK "$FSOPS" rename2 "$M/rd" "$M/re" noreplace
	lt_check_eq "$PX_FS: RENAME_NOREPLACE: content on backing" D "$(cat "$B/re")"

	px_chk "RENAME_EXCHANGE of two files" OK "$FSOPS" rename2 "$M/rc" "$M/re" exchange
	lt_check_eq "$PX_FS: RENAME_EXCHANGE: first name through mount" D "$(cat "$M/rc")"
	lt_check_eq "$PX_FS: RENAME_EXCHANGE: second name through mount" A "$(cat "$M/re")"
	lt_check_eq "$PX_FS: RENAME_EXCHANGE: first name on backing" D "$(cat "$B/rc")"
	lt_check_eq "$PX_FS: RENAME_EXCHANGE: second name on backing" A "$(cat "$B/re")"
	px_chk "RENAME_EXCHANGE with a missing name fails ENOENT" ENOENT \
		"$FSOPS" rename2 "$M/rc" "$M/rmissing" exchange
	mkdir "$M/rdir"
	: >"$M/rdir/inside"
	px_chk "RENAME_EXCHANGE of a file and a directory" OK "$FSOPS" rename2 "$M/rc" "$M/rdir" exchange
	px_chk "RENAME_EXCHANGE file/dir: types swapped through mount" "OK:dir" "$FSOPS" stat "$M/rc" type
	px_chk "RENAME_EXCHANGE file/dir: child follows the dir" OK:reg "$FSOPS" stat "$M/rc/inside" type
	px_chk "RENAME_EXCHANGE file/dir: on backing" "OK:reg" "$FSOPS" stat "$B/rdir" type

	# Directories.
	mkdir -p "$M/d1/sub"
	echo deep >"$M/d1/sub/file"
	px_chk "rename a directory" OK "$FSOPS" rename "$M/d1" "$M/d2"
	lt_check_eq "$PX_FS: dir rename: child readable under the new name" deep "$(cat "$M/d2/sub/file")"
	px_chk "dir rename: old name gone through mount" ENOENT "$FSOPS" stat "$M/d1/sub/file"
	px_chk "dir rename: on backing" "OK:dir" "$FSOPS" stat "$B/d2/sub" type
	mkdir "$M/d3"
	px_chk "move a directory into another directory" OK "$FSOPS" rename "$M/d2" "$M/d3/d4"
	lt_check_eq "$PX_FS: dir move: child readable" deep "$(cat "$M/d3/d4/sub/file")"
	px_chk "dir move: '..' nlink of the new parent" "OK:3" "$FSOPS" stat "$M/d3" nlink
	px_chk "dir move: on backing" OK:reg "$FSOPS" stat "$B/d3/d4/sub/file" type
	px_chk "rename a dir into its own subdir fails EINVAL" EINVAL \
		"$FSOPS" rename "$M/d3" "$M/d3/d4/sub/x"
	mkdir "$M/empty"
	px_chk "rename a dir over an empty dir" OK "$FSOPS" rename "$M/d3/d4" "$M/empty"
	px_chk "rename over empty dir: content moved" OK:reg "$FSOPS" stat "$M/empty/sub/file" type
	mkdir -p "$M/full/x" "$B/twin-empty" "$B/twin-full/x"
	# POSIX allows ENOTEMPTY or EEXIST: ext4 says the first, XFS the second.
	native=$(px_out "$FSOPS" rename "$B/twin-empty" "$B/twin-full")
	lt_check_eq "$PX_FS: native rename of a dir over a non-empty dir fails" 1 \
		"$(grep -cxE 'ENOTEMPTY|EEXIST' <<<"$native")"
	px_chk "rename a dir over a non-empty dir fails as native ($native)" "$native" \
		"$FSOPS" rename "$M/empty" "$M/full"
	px_chk "rename a file over a dir fails EISDIR" EISDIR "$FSOPS" rename "$M/re" "$M/full"
	px_chk "rename a dir over a file fails ENOTDIR" ENOTDIR "$FSOPS" rename "$M/full" "$M/re"
	px_chk "rename of a missing name fails ENOENT" ENOENT "$FSOPS" rename "$M/nope" "$M/nope2"
	px_chk "rename to itself" OK "$FSOPS" rename "$M/re" "$M/re"
	echo still >"$M/hl1"
	ln "$M/hl1" "$M/hl2"
	px_chk "rename between two links of one inode is a no-op" OK "$FSOPS" rename "$M/hl1" "$M/hl2"
	px_chk "rename between links: both names remain" "OK:2" "$FSOPS" stat "$M/hl1" nlink
}

# ---------------------------------------------------------------- special files
px_special() {
	local B=$1 M=$2 got writer

	px_chk "mknod fifo" OK "$FSOPS" mknod "$M/fifo" fifo 0 0 0640
	px_chk "mknod fifo: type through mount" "OK:fifo 0640" "$FSOPS" stat "$M/fifo" type perm
	px_chk "mknod fifo: type on backing" "OK:fifo 0640" "$FSOPS" stat "$B/fifo" type perm
	lt_timeout 60 sh -c 'echo through-fifo >"$1"' sh "$M/fifo" &
	writer=$!
	got=$(lt_timeout 60 cat "$M/fifo")
	wait "$writer"
	lt_check_eq "$PX_FS: fifo through the mount carries data" through-fifo "$got"
	px_chk "mkfifo over an existing name fails EEXIST" EEXIST "$FSOPS" mknod "$M/fifo" fifo
	px_chk "mknod char 1:3" OK "$FSOPS" mknod "$M/null" char 1 3 0600
	px_chk "mknod char: through mount" "OK:chr 1:3" "$FSOPS" stat "$M/null" type rdev
	px_chk "mknod char: on backing" "OK:chr 1:3" "$FSOPS" stat "$B/null" type rdev
	px_chk "mount is nodev: opening the device fails EACCES" EACCES "$FSOPS" open "$M/null" rdonly
	px_chk "mknod socket" OK "$FSOPS" mknod "$M/sock" sock
	px_chk "mknod socket: on backing" "OK:sock" "$FSOPS" stat "$B/sock" type
	px_chk "mknod regular file" OK "$FSOPS" mknod "$M/regnod" reg 0 0 0604
	px_chk "mknod regular: on backing" "OK:reg 0604 0" "$FSOPS" stat "$B/regnod" type perm size
}

# ---------------------------------------------------------------- xattrs
px_xattrs() {
	local B=$1 M=$2 big

	echo x >"$M/x1"
	px_chk "setxattr user.color" OK "$FSOPS" setxattr "$M/x1" user.color blue
	px_chk "getxattr through mount" "OK:blue" "$FSOPS" getxattr "$M/x1" user.color
	px_chk "getxattr on backing" "OK:blue" "$FSOPS" getxattr "$B/x1" user.color
	px_chk "setxattr XATTR_CREATE on an existing name fails EEXIST" EEXIST \
		"$FSOPS" setxattr "$M/x1" user.color red create
	px_chk "setxattr XATTR_REPLACE of a missing name fails ENODATA" ENODATA \
		"$FSOPS" setxattr "$M/x1" user.shape round replace
	px_chk "setxattr XATTR_REPLACE" OK "$FSOPS" setxattr "$M/x1" user.color green replace
	px_chk "replaced value on backing" "OK:green" "$FSOPS" getxattr "$B/x1" user.color
	px_chk "getxattr of a missing name fails ENODATA" ENODATA "$FSOPS" getxattr "$M/x1" user.none
	px_chk "setxattr of an empty value" OK "$FSOPS" setxattr "$M/x1" user.empty ""
	px_chk "getxattr of an empty value" "OK" "$FSOPS" getxattr "$M/x1" user.empty
	big=$(head -c 3000 /dev/zero | tr '\0' v)
	px_chk "setxattr of a 3000-byte value" OK "$FSOPS" setxattr "$M/x1" user.big "$big"
	px_chk "getxattr of a 3000-byte value" "OK:$big" "$FSOPS" getxattr "$M/x1" user.big
	px_chk "setxattr in an unknown namespace fails EOPNOTSUPP" EOPNOTSUPP \
		"$FSOPS" setxattr "$M/x1" bogus.name v
	"$FSOPS" setxattr "$B/x1" user.behind backing
	px_chk "xattr set on backing visible through mount" "OK:backing" \
		"$FSOPS" getxattr "$M/x1" user.behind
	lt_check_eq "$PX_FS: listxattr: same names through mount and on backing" \
		"$("$FSOPS" listxattr "$B/x1" | sort | tr '\n' ' ')" \
		"$("$FSOPS" listxattr "$M/x1" | sort | tr '\n' ' ')"
	lt_check "$PX_FS: listxattr lists user.color" \
		sh -c '"$1" listxattr "$2" | grep -qx user.color' sh "$FSOPS" "$M/x1"
	px_chk "removexattr" OK "$FSOPS" removexattr "$M/x1" user.color
	px_chk "removexattr: gone through mount" ENODATA "$FSOPS" getxattr "$M/x1" user.color
	px_chk "removexattr: gone on backing" ENODATA "$FSOPS" getxattr "$B/x1" user.color
	px_chk "removexattr of a missing name fails ENODATA" ENODATA \
		"$FSOPS" removexattr "$M/x1" user.color
	lt_check "$PX_FS: listxattr no longer lists user.color" \
		sh -c '! "$1" listxattr "$2" | grep -qx user.color' sh "$FSOPS" "$M/x1"
	mkdir "$M/xd"
	px_chk "setxattr on a directory" OK "$FSOPS" setxattr "$M/xd" user.dir yes
	px_chk "directory xattr on backing" "OK:yes" "$FSOPS" getxattr "$B/xd" user.dir
	px_chk "getxattr of a missing file fails ENOENT" ENOENT "$FSOPS" getxattr "$M/nope" user.x
}

# ---------------------------------------------------------------- timestamps
px_times() {
	local B=$1 M=$2 before now t

	echo t >"$M/t1"
	px_chk "utimens with nanoseconds" OK \
		"$FSOPS" utimens "$M/t1" 1234567890.123456789 1500000000.987654321
	px_chk "utimens: atime/mtime through mount" "OK:1234567890.123456789 1500000000.987654321" \
		"$FSOPS" stat "$M/t1" atime mtime
	px_chk "utimens: atime/mtime on backing" "OK:1234567890.123456789 1500000000.987654321" \
		"$FSOPS" stat "$B/t1" atime mtime
	px_chk "utimens with omit for atime" OK "$FSOPS" utimens "$M/t1" omit 1600000000.000000001
	px_chk "utimens omit: atime kept, mtime set" "OK:1234567890.123456789 1600000000.000000001" \
		"$FSOPS" stat "$B/t1" atime mtime
	px_chk "utimens before 1970" OK "$FSOPS" utimens "$M/t1" -1.5 omit
	px_chk "utimens before 1970: on backing" "OK:$("$FSOPS" stat "$B/t1" atime)" \
		"$FSOPS" stat "$M/t1" atime
	now=$(date +%s)
	px_chk "utimens now" OK "$FSOPS" utimens "$M/t1" now now
	t=$("$FSOPS" stat "$M/t1" mtime)
	lt_check "$PX_FS: utimens now: mtime is the current time" test $((${t%.*} - now)) -ge 0 -a $((${t%.*} - now)) -le 5
	px_chk "utimens now: same on backing" "OK:$t" "$FSOPS" stat "$B/t1" mtime
	px_chk "symlink for lutimens" OK "$FSOPS" symlink t1 "$M/tl"
	px_chk "lutimens" OK "$FSOPS" utimens "$M/tl" 1000000000.5 1000000000.25 nofollow
	px_chk "lutimens: link times on backing" "OK:1000000000.500000000 1000000000.250000000" \
		"$FSOPS" lstat "$B/tl" atime mtime
	px_chk "lutimens: target untouched" "OK:$t" "$FSOPS" stat "$B/t1" mtime

	"$FSOPS" utimens "$M/t1" 1000000000 1000000000
	before=$("$FSOPS" stat "$M/t1" mtime ctime)
	echo more >>"$M/t1"
	t=$("$FSOPS" stat "$M/t1" mtime)
	lt_check "$PX_FS: write changes mtime through mount" test "$t" != "1000000000.000000000"
	px_chk "write: mtime through mount equals backing" "OK:$t" "$FSOPS" stat "$B/t1" mtime
	lt_check "$PX_FS: write changes ctime through mount" \
		test "$("$FSOPS" stat "$M/t1" ctime)" != "${before#* }"
	"$FSOPS" utimens "$M/t1" 1000000000 1000000000
	"$FSOPS" truncate "$M/t1" 1
	lt_check "$PX_FS: truncate changes mtime through mount" \
		test "$("$FSOPS" stat "$M/t1" mtime)" != "1000000000.000000000"
	"$FSOPS" utimens "$M/t1" 1000000000 1000000000
	"$FSOPS" pwrite "$M/t1" 0 z rdwr >/dev/null
	lt_check "$PX_FS: pwrite on an O_RDWR fd changes mtime through mount" \
		test "$("$FSOPS" stat "$M/t1" mtime)" != "1000000000.000000000"
	mkdir "$M/td"
	"$FSOPS" utimens "$M/td" 1000000000 1000000000
	: >"$M/td/new"
	lt_check "$PX_FS: creating an entry changes the dir's mtime through mount" \
		test "$("$FSOPS" stat "$M/td" mtime)" != "1000000000.000000000"
	px_chk "dir mtime equals backing" "OK:$("$FSOPS" stat "$B/td" mtime)" "$FSOPS" stat "$M/td" mtime
}

# ---------------------------------------------------------------- ownership
px_owner() {
	local B=$1 M=$2 f native

	echo c >"$M/c1"
	px_chk "chmod 4751" OK "$FSOPS" chmod "$M/c1" 4751
	px_chk "chmod: through mount" "OK:4751" "$FSOPS" stat "$M/c1" perm
	px_chk "chmod: on backing" "OK:4751" "$FSOPS" stat "$B/c1" perm
	px_chk "chown 1234:5678" OK "$FSOPS" chown "$M/c1" 1234 5678
	px_chk "chown: on backing" "OK:1234 5678" "$FSOPS" stat "$B/c1" uid gid
	px_chk "chown: through mount" "OK:1234 5678" "$FSOPS" stat "$M/c1" uid gid
	px_chk "chown -1 keeps the uid" OK "$FSOPS" chown "$M/c1" -1 42
	px_chk "chown -1: on backing" "OK:1234 42" "$FSOPS" stat "$B/c1" uid gid
	mkdir "$M/cd"
	px_chk "chown of a directory" OK "$FSOPS" chown "$M/cd" 77 88
	px_chk "chown of a directory: on backing" "OK:77 88" "$FSOPS" stat "$B/cd" uid gid
	px_chk "chmod of a directory 1777" OK "$FSOPS" chmod "$M/cd" 1777
	px_chk "chmod of a directory: on backing" "OK:1777" "$FSOPS" stat "$B/cd" perm
	px_chk "chmod of a missing file fails ENOENT" ENOENT "$FSOPS" chmod "$M/nope" 644

	# chown of a set-id file as root: compare with the same on the backing fs.
	mkdir "$B/twin"
	for f in "$M/c2" "$B/twin/c2"; do
		echo s >"$f"
		"$FSOPS" chmod "$f" 6755
		"$FSOPS" chown "$f" 1000 1000
	done
	native=$("$FSOPS" stat "$B/twin/c2" perm uid gid)
	px_chk "chown of a 6755 file as root: mode as on native ($native)" "OK:$native" \
		"$FSOPS" stat "$B/c2" perm uid gid
	px_chk "chown of a 6755 file as root: same through mount" "OK:$native" \
		"$FSOPS" stat "$M/c2" perm uid gid
}

# ---------------------------------------------------------------- big sparse file
px_sparse() {
	local B=$1 M=$2 blocks

	px_chk "write 11 bytes at 5 GiB" OK "$FSOPS" pwrite "$M/sparse" 5G tail-marker creat
	px_chk "sparse: size through mount" "OK:5368709131" "$FSOPS" stat "$M/sparse" size
	px_chk "sparse: size on backing" "OK:5368709131" "$FSOPS" stat "$B/sparse" size
	px_chk "sparse: data at 5 GiB through mount" "OK:tail-marker" \
		"$FSOPS" pread "$M/sparse" 5G 11
	px_chk "sparse: data at 5 GiB on backing" "OK:tail-marker" "$FSOPS" pread "$B/sparse" 5G 11
	lt_check_eq "$PX_FS: sparse: the hole reads as zeros" "$(head -c 65536 /dev/zero | md5sum)" \
		"$("$FSOPS" pread "$M/sparse" 3G 64K | md5sum)"
	blocks=$("$FSOPS" stat "$B/sparse" blocks)
	lt_check "$PX_FS: sparse: backing file stays sparse (blocks=$blocks)" test "$blocks" -lt 2048
	px_chk "write across the 4 GiB boundary" OK "$FSOPS" pwrite "$M/sparse" 4294967290 across-4GiB
	px_chk "4 GiB boundary: on backing" "OK:across-4GiB" "$FSOPS" pread "$B/sparse" 4294967290 11
	px_chk "4 GiB boundary: through mount" "OK:across-4GiB" "$FSOPS" pread "$M/sparse" 4294967290 11
	px_chk "read starting exactly at 4 GiB" "OK:-4" "$FSOPS" pread "$M/sparse" 4G 2
	px_chk "read past EOF returns nothing" "OK" "$FSOPS" pread "$M/sparse" 6G 10
	px_chk "truncate the 5 GiB file to 4 GiB + 1" OK "$FSOPS" truncate "$M/sparse" 4294967297
	px_chk "truncate: size on backing" "OK:4294967297" "$FSOPS" stat "$B/sparse" size
	rm "$M/sparse"
}

# ---------------------------------------------------------------- statfs
# px_field KEY "k=v k=v ...": the value of KEY in lt_fsops statfs output.
px_field() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" <<<"$2"; }

px_statfs() {
	local B=$1 M=$2 m b mb bb mf bf

	m=$("$FSOPS" statfs "$M")
	b=$("$FSOPS" statfs "$B")
	lt_log "statfs mount:   $m"
	lt_log "statfs backing: $b"
	mb=$(($(px_field frsize "$m") * $(px_field blocks "$m")))
	bb=$(($(px_field frsize "$b") * $(px_field blocks "$b")))
	lt_check_eq "$PX_FS: statfs: total size equals backing" "$bb" "$mb"
	mf=$(($(px_field frsize "$m") * $(px_field bavail "$m")))
	bf=$(($(px_field frsize "$b") * $(px_field bavail "$b")))
	lt_check "$PX_FS: statfs: available space within 16 MiB of backing ($mf vs $bf)" \
		test $((mf > bf ? mf - bf : bf - mf)) -le $((16 << 20))
	lt_check_eq "$PX_FS: statfs: total inodes equal backing" "$(px_field files "$b")" "$(px_field files "$m")"
	lt_check_eq "$PX_FS: statfs: name length equals backing" "$(px_field namemax "$b")" "$(px_field namemax "$m")"
	lt_check_eq "$PX_FS: df: same size as backing" "$(df -k --output=size "$B" | tail -1)" \
		"$(df -k --output=size "$M" | tail -1)"
}

# ---------------------------------------------------------------- copy_file_range
px_copy() {
	local B=$1 M=$2

	head -c 1048699 /dev/urandom >"$M/csrc"
	px_chk "copy_file_range of a whole file" "OK:1048699" "$FSOPS" copy_range "$M/csrc" "$M/cdst"
	lt_check "$PX_FS: copy_file_range: copy identical through mount" cmp -s "$M/csrc" "$M/cdst"
	lt_check "$PX_FS: copy_file_range: copy identical on backing" cmp -s "$B/csrc" "$B/cdst"
	px_chk "copy_file_range with offsets" "OK:10000" \
		"$FSOPS" copy_range "$M/csrc" "$M/cdst2" 4096 8192 10000
	lt_check_eq "$PX_FS: copy_file_range with offsets: data" \
		"$(dd if="$B/csrc" bs=1 skip=4096 count=10000 status=none | md5sum)" \
		"$(dd if="$M/cdst2" bs=1 skip=8192 count=10000 status=none | md5sum)"
	px_chk "copy_file_range with offsets: size" "OK:18192" "$FSOPS" stat "$B/cdst2" size
	lt_check_eq "$PX_FS: copy_file_range with offsets: hole before the data reads as zeros" \
		"$(head -c 8192 /dev/zero | md5sum)" "$(head -c 8192 "$M/cdst2" | md5sum)"
	px_chk "copy_file_range past the source's end copies nothing" "OK:0" \
		"$FSOPS" copy_range "$M/csrc" "$M/cdst3" 2M 0 100
	if command -v xfs_io >/dev/null; then
		: >"$M/cdst4"
		lt_check "$PX_FS: xfs_io copy_range" xfs_io -c "copy_range $M/csrc" "$M/cdst4"
		lt_check "$PX_FS: xfs_io copy_range: copy identical" cmp -s "$B/csrc" "$B/cdst4"
	fi
}

# ---------------------------------------------------------------- locks
# px_hold CMD...: start a lock holder as a coprocess, wait until it says
# "locked"; px_release ends it.
px_hold() {
	local line=""
	coproc PX_HOLDER { exec "$@" 2>/dev/null; }
	read -r -t 10 line <&"${PX_HOLDER[0]}"
	[ "$line" = locked ] || lt_fail "$PX_FS: lock holder did not report a lock: '$line'"
}
px_release() {
	local fd=${PX_HOLDER[1]}
	exec {fd}>&-
	wait "$PX_HOLDER_PID" 2>/dev/null
}

px_locks() {
	local B=$1 M=$2

	echo lock >"$M/lk"
	px_hold "$FSOPS" flock "$M/lk" ex hold
	px_chk "flock: second process cannot take LOCK_EX" EAGAIN "$FSOPS" flock "$M/lk" ex
	px_chk "flock: second process cannot take LOCK_SH" EAGAIN "$FSOPS" flock "$M/lk" sh
	px_release
	px_chk "flock: LOCK_EX after the holder exits" "OK:locked" "$FSOPS" flock "$M/lk" ex
	px_hold "$FSOPS" flock "$M/lk" sh hold
	px_chk "flock: two LOCK_SH coexist" "OK:locked" "$FSOPS" flock "$M/lk" sh
	px_chk "flock: LOCK_EX against LOCK_SH fails" EAGAIN "$FSOPS" flock "$M/lk" ex
	px_release

	px_hold "$FSOPS" fcntl-lock "$M/lk" wr 0 100 hold
	px_chk "F_SETLK: overlapping write lock fails EAGAIN" EAGAIN "$FSOPS" fcntl-lock "$M/lk" wr 50 10
	px_chk "F_SETLK: overlapping read lock fails EAGAIN" EAGAIN "$FSOPS" fcntl-lock "$M/lk" rd 99 1
	px_chk "F_SETLK: disjoint write lock succeeds" "OK:locked" "$FSOPS" fcntl-lock "$M/lk" wr 100 10
	px_chk "F_GETLK reports the holder's lock and pid" "OK:wr 0 100 $PX_HOLDER_PID" \
		"$FSOPS" fcntl-getlk "$M/lk" rd 0 0
	px_chk "F_GETLK on a free range" "OK:unlocked" "$FSOPS" fcntl-getlk "$M/lk" wr 100 0
	px_release
	px_chk "F_SETLK after the holder exits" "OK:locked" "$FSOPS" fcntl-lock "$M/lk" wr 50 10
	px_hold "$FSOPS" fcntl-lock "$M/lk" rd 0 0 hold
	px_chk "F_SETLK: read locks coexist" "OK:locked" "$FSOPS" fcntl-lock "$M/lk" rd 10 10
	px_chk "F_SETLK: write lock against a read lock fails" EAGAIN "$FSOPS" fcntl-lock "$M/lk" wr 10 10
	px_release

	px_hold "$FSOPS" fcntl-lock "$M/lk" wr 0 0 hold ofd
	px_chk "OFD lock: conflicting OFD lock fails EAGAIN" EAGAIN \
		"$FSOPS" fcntl-lock "$M/lk" wr 0 1 ofd
	px_chk "OFD lock: conflicting POSIX lock fails EAGAIN" EAGAIN "$FSOPS" fcntl-lock "$M/lk" rd 5 1
	px_release
	px_chk "OFD lock after the holder exits" "OK:locked" "$FSOPS" fcntl-lock "$M/lk" wr 0 1 ofd
}

# lsattr of a file and of a directory shows what it shows on the backing
# filesystem (the flags are read from the backing inode), with no error.
px_attrs() {
	local b=$1 m=$2 out
	echo x >"$m/f"
	out=$(lsattr "$m/f" 2>&1)
	lt_check_eq "$PX_FS: lsattr of a file as on the backing filesystem" \
		"$(lsattr "$b/f" 2>&1 | cut -d' ' -f1)" "$(cut -d' ' -f1 <<<"$out")"
	lt_check_eq "$PX_FS: lsattr -d of a directory as on the backing filesystem" \
		"$(lsattr -d "$b" 2>&1 | cut -d' ' -f1)" "$(lsattr -d "$m" 2>&1 | cut -d' ' -f1)"
	case $out in
	*"Invalid argument"* | *"not supported"* | *"Inappropriate ioctl"*)
		lt_fail "$PX_FS: lsattr: $out" ;;
	esac
}

px_one() {
	local type=$1 backing=$2 mnt=$3 sec
	PX_FS=$type
	for sec in files dirs links renames special xattrs attrs times owner sparse statfs copy locks; do
		mkdir "$mnt/$sec" || { lt_fail "$PX_FS: mkdir $mnt/$sec"; continue; }
		lt_log "-- $type: $sec"
		"px_$sec" "$backing/$sec" "$mnt/$sec"
	done
}

lt_each_fs px_one
lt_done
