#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunafs's clone ioctl (LACUNA_IOC_CLONE_RANGE) driven through the mount
# (tests/tools/lfs_clone.py), on XFS made with reflink=1 and on ext4:
#  - XFS: LACUNA_IOC_INFO tells the block size as clone_blksize; a whole
#    sparse file cloned (length 0) has the source's bytes, the source's
#    SEEK_DATA/SEEK_HOLE map on the backing filesystem and extents shared
#    with it (filefrag -v); a range cloned into the middle of a file
#    replaces that range only; unaligned offsets are EINVAL, a read-only
#    destination EBADF, another ABI version EPROTO, a directory's handle
#    EINVAL; a caller who cannot read the source gets EACCES (and may
#    clone once it is readable);
#  - torture: a writer keeps replacing 8 MiB of the source with one value
#    by LACUNA_IOC_WRITE (the daemon applies it in several backing writes
#    under one hold of the range lock) while the source is cloned: every
#    clone is one whole write. With LACUNA_TEST_DISABLE_RANGELOCK=1 the
#    same torture must see a torn clone: proof that the lock is what
#    keeps it whole;
#  - ext4: clone_blksize 0 and the ioctl answers EOPNOTSUPP.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd python3 sha256sum filefrag setpriv
LC="$top_srcdir/tests/tools/lfs_clone.py"
# the system's python for another user: /root may be closed to them
SYSPY=/usr/bin/python3
[ -x "$SYSPY" ] || lt_skip "no $SYSPY to run as another user"
MIB=$((1024 * 1024))

lc() { lt_timeout 600 python3 "$LC" "$@"; }
as_nobody() { lt_timeout 600 setpriv --reuid 65534 --regid 65534 --clear-groups -- "$SYSPY" "$@"; }
sum() { sha256sum <"$1" | cut -d' ' -f1; }
# map FILE: its SEEK_DATA/SEEK_HOLE map and size
map() {
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size, off, out = os.fstat(fd).st_size, 0, []
while off < size:
    try:
        d = os.lseek(fd, off, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    out.append("%d+%d" % (d, h - d))
    off = h
print(size, " ".join(out))' "$1"
}
# mkimg FILE: data at 0 (1 MiB), 3 MiB (512 KiB) and 7 MiB (1 MiB), holes between, 8 MiB
mkimg() {
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
r = os.urandom
for off, n in ((0, 1 << 20), (3 << 20, 512 << 10), (7 << 20, 1 << 20)):
    os.pwrite(fd, r(n), off)
os.close(fd)' "$1"
}

xfs_checks() {
	local b=$1 m=$2 out
	lt_check_eq "xfs: clone_blksize is the block size" 4096 "$(lc info "$m")"
	mkimg "$m/src"
	: >"$m/dst"
	out=$(lc clone "$m/dst" "$b/src")
	lt_check_eq "xfs: a whole sparse file cloned (length 0)" "ok cloned $((8 * MIB)) size $((8 * MIB))" "$out"
	lt_check_eq "xfs: the clone has the source's bytes" "$(sum "$m/src")" "$(sum "$m/dst")"
	lt_check_eq "xfs: the clone keeps the source's holes (backing map)" "$(map "$b/src")" "$(map "$b/dst")"
	lt_check "xfs: the clone's extents are shared with the source (filefrag -v)" \
		grep -q shared <(filefrag -v "$b/dst")

	# a range into the middle of a file of 0xa5
	python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\xa5" * (4 << 20))' "$m/mid"
	out=$(lc clone "$m/mid" "$b/src" --src-off 0 --dst-off $MIB --len $MIB)
	lt_check_eq "xfs: 1 MiB cloned into the middle" "ok cloned $MIB size $((4 * MIB))" "$out"
	lt_check "xfs: the middle is the source's, the rest kept" python3 -c '
import sys
s, d = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(not (d[1 << 20:2 << 20] == s[:1 << 20] and d[:1 << 20] == b"\xa5" * (1 << 20)
              and d[2 << 20:] == b"\xa5" * (2 << 20)))' "$m/src" "$m/mid"

	lt_check_eq "xfs: an unaligned source offset is EINVAL" "error EINVAL" \
		"$(lc clone "$m/mid" "$b/src" --src-off 100 --len 4096)"
	lt_check_eq "xfs: an unaligned length inside the source is EINVAL" "error EINVAL" \
		"$(lc clone "$m/mid" "$b/src" --len 1000)"
	lt_check_eq "xfs: a read-only destination is EBADF" "error EBADF" \
		"$(lc clone "$m/mid" "$b/src" --rdonly)"
	lt_check_eq "xfs: another ABI version is EPROTO" "error EPROTO" \
		"$(lc clone "$m/mid" "$b/src" --bad-version)"
	mkdir -p "$b/dir"
	lt_check_eq "xfs: a directory's handle is EINVAL" "error EINVAL" \
		"$(lc clone "$m/mid" "$b/src" --handle-of "$b/dir")"

	# permission: the handle alone does not let a caller read the source
	chmod 600 "$m/src"
	: >"$m/theirs"
	chown 65534:65534 "$m/theirs"
	lt_check_eq "xfs: a caller who cannot read the source gets EACCES" "error EACCES" \
		"$(as_nobody "$LC" clone "$m/theirs" "$b/src")"
	chmod 644 "$m/src"
	lt_check_eq "xfs: the same caller clones it once it is readable" \
		"ok cloned $((8 * MIB)) size $((8 * MIB))" \
		"$(as_nobody "$LC" clone "$m/theirs" "$b/src")"
}

lt_make_fs xfs xfs 1G -m reflink=1
xb=$LT_FS
lt_mount_lacunafs "$xb" "$LT_TMP/mnt-xfs"
lt_log "== xfs (reflink=1): $xb via $LT_TMP/mnt-xfs"
xfs_checks "$xb" "$LT_TMP/mnt-xfs"
lt_run_checks "xfs torture" 900 python3 "$LC" torture --rounds 300 \
	"$LT_TMP/mnt-xfs/tsrc" "$LT_TMP/mnt-xfs/tdst" "$xb/tdst"

# the same torture without the range lock must catch a torn clone
mkdir -p "$xb/nolock"
LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$xb/nolock" "$LT_TMP/mnt-nolock"
lt_run_checks "xfs torture without the range lock" 900 python3 "$LC" torture --rounds 600 \
	--expect-torn "$LT_TMP/mnt-nolock/tsrc" "$LT_TMP/mnt-nolock/tdst" "$xb/nolock/tdst"

lt_make_fs ext4 ext4
eb=$LT_FS
lt_mount_lacunafs "$eb" "$LT_TMP/mnt-ext4"
lt_log "== ext4: $eb via $LT_TMP/mnt-ext4"
lt_check_eq "ext4: clone_blksize is 0 (no reflink)" 0 "$(lc info "$LT_TMP/mnt-ext4")"
mkimg "$LT_TMP/mnt-ext4/src"
: >"$LT_TMP/mnt-ext4/dst"
lt_check_eq "ext4: the clone ioctl answers EOPNOTSUPP" "error EOPNOTSUPP" \
	"$(lc clone "$LT_TMP/mnt-ext4/dst" "$eb/src")"
lt_done
