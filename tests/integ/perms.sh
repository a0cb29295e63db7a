#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# An unprivileged user sees the same semantics through lacunafs as on the
# backing filesystem itself. On ext4 and on XFS, two identical trees are
# laid out directly on the backing filesystem: "native", used directly,
# and "via", used through the mount. Each row of the table below is one
# operation made by one user (uid/gid 1500 "A", 1600 "B", optionally
# with the supplementary group 1700) with one umask, first on the native
# twin, then on the via twin; both must end the same way: success with
# the same output, or the same errno. Most rows also state the outcome
# Linux gives natively, which checks the test's own assumptions.
#
# Rows run as root with "%" paths look at the backing filesystem of each
# twin, so ownership and modes of what users create through the mount are
# checked where they land, not as the mount reports them. At the end the
# two trees (type, mode, owner, size, content) are compared whole, and the
# mount's view of the via tree is compared with the backing one.
#
# Table columns, separated by "|": WHO | UMASK | EXPECTED | lt_fsops ARGS
#   WHO       A, B (no supplementary groups), As, Bs (with group 1700), root
#   UMASK     octal, or "-" for 022
#   EXPECTED  OK, OK:<output>, an errno name, or "=" for "as native"
#   ARGS      "@/x" is x under the twin as the user reaches it (backing
#             directory or mount), "%/x" is x in the twin's backing directory

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd setpriv
[ -x "$TOOLS/lt_fsops" ] || lt_hard "lt_fsops not built at $TOOLS/lt_fsops"

# The users must be able to reach the tool wherever the build tree is.
mkdir -m 755 "$LT_TMP/bin"
cp "$TOOLS/lt_fsops" "$LT_TMP/bin/lt_fsops" || lt_hard "cp lt_fsops"
FSOPS="$LT_TMP/bin/lt_fsops"

UA=1500
UB=1600
GS=1700

# pm_out CMD...: "OK", "OK:<stdout>" or the errno name lt_fsops printed.
pm_out() {
	local out rc
	out=$("$@" 2>/dev/null)
	rc=$?
	case $rc in
	0) if [ -n "$out" ]; then echo "OK:$out"; else echo OK; fi ;;
	1) echo "${out##*$'\n'}" ;;
	*) echo "EXIT$rc" ;;
	esac
}

# pm_run WHO UMASK ACCESS_ROOT BACKING_ROOT ARGS...: one row on one twin.
pm_run() {
	local who=$1 mask=$2 acc=$3 bak=$4 a
	local -a pre args
	shift 4
	for a in "$@"; do
		case $a in
		@*) args+=("$acc${a#@}") ;;
		%*) args+=("$bak${a#%}") ;;
		*) args+=("$a") ;;
		esac
	done
	case $who in
	root) pre=() ;;
	A) pre=(setpriv "--reuid=$UA" "--regid=$UA" --clear-groups --) ;;
	As) pre=(setpriv "--reuid=$UA" "--regid=$UA" "--groups=$GS" --) ;;
	B) pre=(setpriv "--reuid=$UB" "--regid=$UB" --clear-groups --) ;;
	Bs) pre=(setpriv "--reuid=$UB" "--regid=$UB" "--groups=$GS" --) ;;
	*) lt_hard "unknown user '$who' in the table" ;;
	esac
	[ "$mask" = - ] && mask=022
	pm_out "${pre[@]}" "$FSOPS" -m "$mask" "${args[@]}"
}

# pm_file PATH MODE UID GID CONTENT: a regular file made as root.
pm_file() {
	printf '%s' "$5" >"$1" && chown "$3:$4" "$1" && chmod "$2" "$1"
}

# pm_setup ROOT: the starting tree, made as root directly on the backing
# fs (run with set -e: any failure is a hard error).
pm_setup() {
	local r=$1
	mkdir -m 755 "$r"
	# A's home and files.
	install -d -m 755 -o $UA -g $UA "$r/a"
	pm_file "$r/a/secret" 0600 $UA $UA secret
	pm_file "$r/a/ro" 0444 $UA $UA ro
	pm_file "$r/a/shared" 0666 $UA $UA shared
	pm_file "$r/a/shared2" 0666 $UA $UA shared2
	pm_file "$r/a/suid" 4777 $UA $UA suid
	pm_file "$r/a/suid2" 4777 $UA $UA suid2
	pm_file "$r/a/suid3" 4777 $UA $UA suid3
	pm_file "$r/a/suidown" 4755 $UA $UA suidown
	pm_file "$r/a/suidchown" 4755 $UA $UA suidchown
	pm_file "$r/a/sgidx" 2777 $UA $UA sgidx
	pm_file "$r/a/sgidnox" 2666 $UA $UA sgidnox
	pm_file "$r/a/sgidnox2" 2666 $UA $UA sgidnox2
	pm_file "$r/a/sgidnox3" 2666 $UA $UA sgidnox3
	pm_file "$r/a/sgidnoxgrp" 2666 0 $GS sgidnoxgrp
	pm_file "$r/a/sgidnoxgrp2" 2666 0 $GS sgidnoxgrp2
	pm_file "$r/a/sgidx2" 2777 $UA $UA sgidx2
	pm_file "$r/a/suid4" 4777 $UA $UA suid4
	pm_file "$r/a/suid5" 4777 $UA $UA suid5
	pm_file "$r/a/suidgrp" 4775 0 $GS suidgrp
	pm_file "$r/a/mine" 0644 $UA $UA mine
	pm_file "$r/a/mine2" 0644 $UA $UA mine2
	pm_file "$r/a/mine3" 0644 $UA $UA mine3
	ln -s mine "$r/a/link"
	chown -h $UA:$UA "$r/a/link"
	install -d -m 755 -o $UA -g $UA "$r/adir"
	pm_file "$r/adir/f" 0644 $UA $UA adir-f
	# Shared places.
	install -d -m 777 "$r/pub"
	install -d -m 1777 "$r/sticky"
	pm_file "$r/sticky/fA" 0666 $UA $UA sticky-fA
	install -d -m 777 -o $UA -g $UA "$r/sticky/dA"
	install -d -m 2777 -g $GS "$r/sgid"
	install -d -m 555 "$r/ro"
	pm_file "$r/ro/f" 0666 0 0 ro-f
	install -d -m 666 "$r/nox"
	pm_file "$r/nox/f" 0644 0 0 nox-f
	install -d -m 770 -g $GS "$r/grp"
	pm_file "$r/grp/f" 0660 0 $GS grp-f
	if [ -n "$PM_ACL" ]; then
		# Default ACL: new entries ignore the umask, B gets rw.
		install -d -m 777 "$r/acl"
		setfacl -m d:u::rwx,d:g::r-x,d:o::r-x,d:u:$UB:rwx,d:m::rwx "$r/acl"
		pm_file "$r/a/aclfile" 0600 $UA $UA aclfile
		setfacl -m u:$UB:r "$r/a/aclfile"
		install -d -m 700 -o $UA -g $UA "$r/a/acldir"
		setfacl -m u:$UB:x "$r/a/acldir"
		pm_file "$r/a/acldir/f" 0644 $UA $UA acldir-f
	fi
}

# pm_tree DIR: one line per entry (path type mode uid gid size), the md5
# of every regular file and, where the tools exist, ACLs and user xattrs.
pm_tree() {
	(
		cd "$1" || exit
		{
			find . -printf '%p %y %m %U %G %s\n'
			find . -type f -exec md5sum {} +
			if [ -n "$PM_ACL" ]; then
				getfacl -R -p -s . 2>/dev/null | grep -v '^$' | sed 's/^/acl /'
			fi
			if command -v getfattr >/dev/null; then
				getfattr -R -h -d -m '^user\.' . 2>/dev/null | grep -v '^$' | sed 's/^/xattr /'
			fi
		} | sort
	)
}

# pm_tree_cmp DESCRIPTION DIR1 DIR2: the trees agree; on failure show the
# differing lines only.
pm_tree_cmp() {
	local d
	d=$(diff <(pm_tree "$2") <(pm_tree "$3") | grep '^[<>]')
	if [ -z "$d" ]; then
		lt_ok "$1"
	else
		lt_fail "$1; differences (< first, > second):"
		sed 's/^/#   /' <<<"$d"
	fi
}

PM_ACL=""
if command -v setfacl >/dev/null && command -v getfacl >/dev/null; then
	PM_ACL=1
else
	lt_log "setfacl/getfacl not installed (package acl): POSIX ACL rows left out"
fi

# Rows that need POSIX ACLs set up (see pm_setup).
PM_ACL_TABLE=$(
	cat <<'EOF'
# --- POSIX ACLs: access entries, default ACLs replacing the umask
B  | -   | OK:aclfile            | cat @/a/aclfile
B  | -   | EACCES                | pwrite @/a/aclfile 0 B
Bs | -   | OK:aclfile            | cat @/a/aclfile
B  | -   | OK:reg                | stat @/a/acldir/f type
B  | -   | EACCES                | readdir @/a/acldir
A  | 077 | OK                    | open @/acl/fA wronly creat mode=0666
root | - | =                     | stat %/acl/fA perm uid gid
A  | 077 | OK                    | mkdir @/acl/dA 0777
root | - | =                     | stat %/acl/dA perm uid gid
B  | -   | OK                    | pwrite @/acl/fA 0 B-via-default-acl
B  | -   | OK                    | open @/acl/dA/fB wronly creat mode=0640
root | - | =                     | stat %/acl/dA/fB perm uid gid
A  | -   | OK                    | chmod @/a/aclfile 0640
B  | -   | =                     | cat @/a/aclfile
A  | -   | OK                    | chmod @/a/aclfile 0600
B  | -   | =                     | cat @/a/aclfile
EOF
)

PM_TABLE=$(
	cat <<'EOF'
# --- what users create is theirs, with the umask applied (checked on backing)
A  | -   | OK                    | open @/pub/f022 wronly creat mode=0666
root | - | OK:reg 0644 1500 1500 | stat %/pub/f022 type perm uid gid
A  | 077 | OK                    | open @/pub/f077 wronly creat mode=0666
root | - | OK:0600 1500 1500     | stat %/pub/f077 perm uid gid
A  | 000 | OK                    | open @/pub/f000 wronly creat mode=0666
root | - | OK:0666 1500 1500     | stat %/pub/f000 perm uid gid
A  | 027 | OK                    | mkdir @/pub/d027 0777
root | - | OK:dir 0750 1500 1500 | stat %/pub/d027 type perm uid gid
A  | 027 | OK                    | open @/pub/d027/inner wronly creat mode=0666
root | - | OK:0640 1500 1500     | stat %/pub/d027/inner perm uid gid
A  | -   | OK                    | symlink target @/pub/sl
root | - | OK:lnk 1500 1500      | lstat %/pub/sl type uid gid
A  | -   | OK                    | mknod @/pub/fifo fifo 0 0 0666
root | - | OK:fifo 0644 1500 1500 | stat %/pub/fifo type perm uid gid
A  | 002 | OK                    | mknod @/pub/reg reg 0 0 0666
root | - | OK:reg 0664 1500 1500 | stat %/pub/reg type perm uid gid
A  | 000 | OK                    | open @/pub/f4755 wronly creat mode=4755
root | - | OK:4755 1500 1500     | stat %/pub/f4755 perm uid gid
A  | 000 | OK                    | open @/pub/f2755 wronly creat mode=2755
root | - | OK:2755 1500 1500     | stat %/pub/f2755 perm uid gid
As | -   | OK                    | open @/pub/fAs wronly creat mode=0666
root | - | OK:0644 1500 1500     | stat %/pub/fAs perm uid gid
A  | -   | OK                    | pwrite @/pub/fnew 0 created-by-pwrite creat
root | - | OK:created-by-pwrite  | cat %/pub/fnew
A  | -   | OK                    | link @/pub/f022 @/pub/f022.link
root | - | OK:2 1500 1500        | stat %/pub/f022.link nlink uid gid
A  | -   | OK                    | rename @/pub/f077 @/pub/f077.renamed
root | - | OK:0600 1500 1500     | stat %/pub/f077.renamed perm uid gid
B  | -   | OK                    | mkdir @/pub/dB 0777
root | - | OK:dir 0755 1600 1600 | stat %/pub/dB type perm uid gid
A  | -   | EEXIST                | open @/pub/f022 wronly creat excl
A  | -   | OK                    | open @/pub/f022 wronly trunc
A  | -   | EEXIST                | mkdir @/pub/dB

# --- a set-group-id directory gives its group (and to dirs its sgid bit)
A  | -   | OK                    | open @/sgid/f wronly creat mode=0666
root | - | OK:0644 1500 1700     | stat %/sgid/f perm uid gid
A  | -   | OK                    | mkdir @/sgid/d 0777
root | - | OK:dir 2755 1500 1700 | stat %/sgid/d type perm uid gid
A  | -   | OK                    | mkdir @/sgid/d/dd 0777
root | - | OK:dir 2755 1500 1700 | stat %/sgid/d/dd type perm uid gid
A  | -   | OK                    | mknod @/sgid/fifo fifo 0 0 0666
root | - | OK:fifo 0644 1500 1700 | stat %/sgid/fifo type perm uid gid
A  | -   | OK                    | symlink x @/sgid/sl
root | - | OK:lnk 1500 1700      | lstat %/sgid/sl type uid gid
A  | 000 | OK                    | open @/sgid/fs wronly creat mode=2777
root | - | OK:0777 1500 1700     | stat %/sgid/fs perm uid gid
As | 000 | OK                    | open @/sgid/fs2 wronly creat mode=2777
root | - | OK:2777 1500 1700     | stat %/sgid/fs2 perm uid gid
A  | 000 | OK                    | mkdir @/sgid/d2 0777
root | - | OK:2777 1500 1700     | stat %/sgid/d2 perm uid gid
A  | -   | OK                    | pwrite @/sgid/d/dd/deep 0 deep creat
root | - | OK:0644 1500 1700     | stat %/sgid/d/dd/deep perm uid gid

# --- reading and writing other people's files
B  | -   | EACCES                | cat @/a/secret
A  | -   | OK:secret             | cat @/a/secret
B  | -   | EACCES                | open @/a/secret rdonly
B  | -   | EACCES                | access @/a/secret r
B  | -   | OK                    | access @/a/shared rw
B  | -   | EACCES                | access @/a/shared x
B  | -   | EACCES                | pwrite @/a/ro 0 x
A  | -   | EACCES                | pwrite @/a/ro 0 x
B  | -   | EACCES                | open @/a/ro wronly trunc
B  | -   | EACCES                | open @/a/ro rdwr
B  | -   | OK:ro                 | cat @/a/ro
B  | -   | OK                    | pwrite @/a/shared 0 B-was-here
A  | -   | OK:B-was-here         | cat @/a/shared
B  | -   | OK                    | pwrite @/a/shared end +appended append
B  | -   | OK:B-was-here+appended | cat @/a/shared
B  | -   | EACCES                | getxattr @/a/secret user.none
B  | -   | EACCES                | readlink @/nox/f

# --- a directory without write permission
B  | -   | EACCES                | open @/ro/new wronly creat
B  | -   | EACCES                | mkdir @/ro/newd
B  | -   | EACCES                | symlink x @/ro/newl
B  | -   | EACCES                | mknod @/ro/fifo fifo
B  | -   | EACCES                | unlink @/ro/f
B  | -   | EACCES                | rename @/ro/f @/pub/moved
B  | -   | EACCES                | rename @/pub/dB @/ro/dB
B  | -   | EACCES                | link @/pub/f000 @/ro/link
B  | -   | OK                    | pwrite @/ro/f 0 B
B  | -   | OK                    | open @/ro/f wronly creat
B  | -   | EEXIST                | open @/ro/f wronly creat excl
B  | -   | EACCES                | rename @/adir/f @/pub/bf
A  | -   | OK                    | rename @/adir/f @/pub/af
root | - | OK:0644 1500 1500     | stat %/pub/af perm uid gid

# --- a directory without search (x) permission
B  | -   | EACCES                | stat @/nox/f
B  | -   | EACCES                | open @/nox/f rdonly
B  | -   | EACCES                | open @/nox/new wronly creat
B  | -   | EACCES                | unlink @/nox/f
B  | -   | OK:dir                | stat @/nox type
B  | -   | EACCES                | stat @/nox/. type
A  | -   | EACCES                | cat @/nox/f

# --- a sticky, world-writable directory
B  | -   | EPERM                 | unlink @/sticky/fA
B  | -   | EPERM                 | rename @/sticky/fA @/sticky/fB
B  | -   | EPERM                 | rename @/sticky/fA @/pub/stolen
B  | -   | EPERM                 | rmdir @/sticky/dA
B  | -   | OK                    | pwrite @/sticky/fA 0 B
B  | -   | OK                    | open @/sticky/fB wronly creat mode=0666
root | - | OK:0644 1600 1600     | stat %/sticky/fB perm uid gid
A  | -   | EPERM                 | unlink @/sticky/fB
A  | -   | EPERM                 | rename @/pub/f000 @/sticky/fB
B  | -   | OK                    | mkdir @/sticky/dA/byB
A  | -   | OK                    | rmdir @/sticky/dA/byB
B  | -   | OK                    | unlink @/sticky/fB
A  | -   | OK                    | rename @/sticky/fA @/sticky/fA2
A  | -   | OK                    | unlink @/sticky/fA2

# --- chmod and chown of another's file; chgrp to a supplementary group
B  | -   | EPERM                 | chmod @/a/shared 0777
B  | -   | EPERM                 | chown @/a/shared 1600 -1
B  | -   | EPERM                 | chown @/a/shared -1 1600
B  | -   | EPERM                 | lchown @/a/link 1600 1600
B  | -   | EPERM                 | chmod @/pub 0700
A  | -   | EPERM                 | chown @/a/mine 1600 -1
A  | -   | OK                    | chown @/a/mine 1500 -1
A  | -   | OK                    | chown @/a/mine -1 -1
A  | -   | EPERM                 | chown @/a/mine -1 1700
As | -   | OK                    | chown @/a/mine -1 1700
root | - | OK:0644 1500 1700     | stat %/a/mine perm uid gid
As | -   | EPERM                 | chown @/a/mine -1 1600
As | -   | OK                    | lchown @/a/link -1 1700
root | - | OK:1500 1700          | lstat %/a/link uid gid
A  | -   | OK                    | chmod @/a/mine2 0640
root | - | OK:0640               | stat %/a/mine2 perm
A  | -   | OK                    | chmod @/a/mine2 2755
root | - | OK:2755               | stat %/a/mine2 perm
A  | -   | OK                    | chmod @/a/mine 2755
root | - | OK:0755 1700          | stat %/a/mine perm gid
As | -   | OK                    | chmod @/a/mine 2755
root | - | OK:2755 1700          | stat %/a/mine perm gid
A  | -   | OK                    | chmod @/a/mine3 4711
root | - | OK:4711               | stat %/a/mine3 perm
As | -   | OK                    | chown @/a/suidchown -1 1700
root | - | OK:0755 1500 1700     | stat %/a/suidchown perm uid gid
As | -   | OK                    | chown @/pub/d027 -1 1700
root | - | OK:0750 1500 1700     | stat %/pub/d027 perm uid gid

# --- access through a supplementary group
As | -   | OK                    | pwrite @/grp/f 0 As
As | -   | OK:Asp-f               | cat @/grp/f
A  | -   | EACCES                | pwrite @/grp/f 0 A
A  | -   | EACCES                | stat @/grp/f
Bs | -   | OK                    | open @/grp/new wronly creat mode=0666
root | - | OK:0644 1600 1600     | stat %/grp/new perm uid gid
As | -   | OK                    | unlink @/grp/new
B  | -   | EACCES                | readdir @/grp

# --- timestamps: "now" needs write access, explicit times ownership
B  | -   | OK                    | utimens @/a/shared now now
B  | -   | EPERM                 | utimens @/a/shared 1000000000 1000000000
B  | -   | EPERM                 | utimens @/a/shared omit 1000000000
B  | -   | =                     | utimens @/a/shared now omit
B  | -   | OK                    | utimens @/a/shared omit omit
B  | -   | EACCES                | utimens @/a/secret now now
B  | -   | EACCES                | utimens @/a/ro now now
A  | -   | OK                    | utimens @/a/ro 1000000000.5 1000000001.25
root | - | OK:1000000000.500000000 1000000001.250000000 | stat %/a/ro atime mtime
As | -   | OK                    | utimens @/grp/f now now
As | -   | EPERM                 | utimens @/grp/f 5 5

# --- truncate
B  | -   | OK                    | truncate @/a/shared2 3
root | - | OK:3                  | stat %/a/shared2 size
B  | -   | OK                    | ftruncate @/a/shared2 1
root | - | OK:s                  | cat %/a/shared2
B  | -   | EACCES                | truncate @/a/ro 1
A  | -   | EACCES                | truncate @/a/ro 1
B  | -   | EACCES                | truncate @/a/secret 0
B  | -   | EACCES                | ftruncate @/a/secret 0
As | -   | OK                    | truncate @/grp/f 2
B  | -   | EACCES                | truncate @/grp/f 0

# --- writes and truncates by other users clear set-id bits
B  | -   | OK                    | pwrite @/a/suid 0 B
root | - | OK:0777               | stat %/a/suid perm
B  | -   | OK                    | truncate @/a/suid2 1
root | - | OK:0777               | stat %/a/suid2 perm
B  | -   | OK                    | open @/a/suid3 wronly trunc
root | - | =                     | stat %/a/suid3 perm
A  | -   | OK                    | pwrite @/a/suidown 0 A
root | - | OK:0755               | stat %/a/suidown perm
B  | -   | OK                    | pwrite @/a/sgidx 0 B
root | - | OK:0777               | stat %/a/sgidx perm
B  | -   | OK                    | ftruncate @/a/suid4 0
root | - | OK:0777               | stat %/a/suid4 perm
B  | -   | OK                    | open @/a/suid5 wronly creat trunc
root | - | OK:0777               | stat %/a/suid5 perm
B  | -   | OK                    | open @/a/sgidx2 wronly trunc
root | - | OK:0777               | stat %/a/sgidx2 perm
As | -   | OK                    | pwrite @/a/suidgrp 0 As
root | - | OK:0775               | stat %/a/suidgrp perm
# set-group-id without group execute: since Linux 6.2 cleared for writers
# outside the file's group (setattr_should_drop_sgid), kept for members
B  | -   | OK                    | pwrite @/a/sgidnox 0 B
root | - | =                     | stat %/a/sgidnox perm
B  | -   | OK                    | truncate @/a/sgidnox2 1
root | - | =                     | stat %/a/sgidnox2 perm
A  | -   | OK                    | pwrite @/a/sgidnox3 0 A
root | - | OK:2666               | stat %/a/sgidnox3 perm
As | -   | OK                    | pwrite @/a/sgidnoxgrp 0 As
root | - | OK:2666               | stat %/a/sgidnoxgrp perm
As | -   | OK                    | truncate @/a/sgidnoxgrp2 2
root | - | OK:2666               | stat %/a/sgidnoxgrp2 perm

# --- xattrs, O_NOATIME, hard-link protection
B  | -   | OK                    | setxattr @/a/shared user.b from-B
A  | -   | OK:from-B             | getxattr @/a/shared user.b
B  | -   | EACCES                | setxattr @/a/secret user.b from-B
B  | -   | EACCES                | setxattr @/a/ro user.b from-B
A  | -   | EPERM                 | setxattr @/a/mine trusted.x v
B  | -   | =                     | setxattr @/pub/fifo user.x v
B  | -   | =                     | setxattr @/sticky/dA user.x v
A  | -   | OK                    | setxattr @/sticky/dA user.x v
B  | -   | OK                    | removexattr @/a/shared user.b
B  | -   | EACCES                | removexattr @/a/secret user.none
B  | -   | EPERM                 | open @/a/shared rdonly noatime
A  | -   | OK                    | open @/a/mine rdonly noatime
B  | -   | EPERM                 | link @/a/secret @/pub/lsecret
B  | -   | EPERM                 | link @/a/ro @/pub/lro
B  | -   | OK                    | link @/a/shared @/pub/lshared
root | - | OK:2 1500             | stat %/pub/lshared nlink uid
B  | -   | OK:19                 | copy_range @/a/shared @/pub/copyB
root | - | OK:0644 1600 1600     | stat %/pub/copyB perm uid gid
B  | -   | EACCES                | copy_range @/a/secret @/pub/copyB2
EOF
)

pm_one() {
	local type=$1 backing=$2 mnt=$3
	local nat="$backing/native" via="$backing/via" line who mask want cmd got_n got_v n=0
	local what last=""
	local -a argv

	(set -e; pm_setup "$nat") || lt_hard "setting up $nat failed"
	(set -e; pm_setup "$via") || lt_hard "setting up $via failed"
	pm_tree_cmp "$type: the two starting trees are identical" "$nat" "$via"
	pm_tree_cmp "$type: the mount shows the backing tree" "$via" "$mnt/via"

	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		IFS='|' read -r who mask want cmd <<<"$line"
		who=${who//[[:space:]]/}
		mask=${mask//[[:space:]]/}
		want=${want#"${want%%[![:space:]]*}"}
		want=${want%"${want##*[![:space:]]}"}
		read -r -a argv <<<"$cmd"
		n=$((n + 1))
		got_n=$(pm_run "$who" "$mask" "$nat" "$nat" "${argv[@]}")
		got_v=$(pm_run "$who" "$mask" "$mnt/via" "$via" "${argv[@]}")
		what="$who umask $mask: ${argv[*]}"
		if [ "$who" = root ]; then
			what="$what (after $last)"
		else
			last=$what
		fi
		if [ "$want" != = ] && [ "$got_n" != "$want" ]; then
			lt_fail "$type #$n native baseline: $what: expected '$want', got '$got_n'"
		fi
		lt_check_eq "$type #$n $what; native: $got_n" "$got_n" "$got_v"
	done <<<"$PM_TABLE${PM_ACL:+$'\n'$PM_ACL_TABLE}"

	pm_tree_cmp "$type: both trees end identical (native <, via >)" "$nat" "$via"
	pm_tree_cmp "$type: the mount shows the final backing tree (backing <, mount >)" \
		"$via" "$mnt/via"
}

lt_each_fs pm_one
lt_done
