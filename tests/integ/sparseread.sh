#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The atomic sparse-read ioctl and `lacuna map`, on ext4 and on XFS.
#
# For each layout (holes at the start and the end, 1-byte extents, odd
# offsets, unwritten extents, blocks preallocated past EOF, no hole at all,
# an empty file, a sparse file past 4 GiB, 2000 extents so that replies
# stop at LACUNA_SR_MAX_SEGS) the file is made through the mount, then:
#  - `lacuna map --json` through the mount must equal `lacuna map --json`
#    on the backing file taken right after it. The only difference allowed
#    is a DENSE reply calling data what the backing file calls a hole where
#    that range is unwritten or delayed-allocated (no written data: it reads
#    as zeros, and ext4/XFS themselves call it data once cached);
#    lt_sparsecheck mapdiff decides, using FIEMAP on the backing file.
#  - lt_sparsecheck verify walks the file in map, arena, staged and inline
#    modes (and with an odd arena window and chunk size) and checks every
#    reply against the backing file: bytes, zeros in holes, contiguity,
#    flags, next_offset, totals, and the backing map at that moment.
#  - the maps are compared again: reading cached pages, so unwritten
#    extents may now be data, but in both views alike.
# Then `lacuna map`'s command line: "atomic" through the mount, "not
# atomic" on the backing file, exit 2 on bad usage, 1 with a message for a
# missing file, a directory or a FIFO (without hanging on the FIFO).
# Last, lt_sparsecheck bad (the bad-input battery of the ioctls and of the
# control socket), after which the daemon must be alive and the mount work.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd timeout cmp

SM="$TOOLS/lt_seekmap"
SC="$TOOLS/lt_sparsecheck"
LACUNA="$top_builddir/tools/lacuna"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"
[ -x "$SC" ] || lt_hard "lt_sparsecheck not built at $SC"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"

# name|layout (lt_seekmap's syntax)
LAYOUTS=(
	"empty|size=0"
	"dense|data@0+3145745"
	"leading-hole|data@5M+64k"
	"trailing-hole|size=8M,data@0+64k"
	"both-ends-hole|size=8M,data@3M+5"
	"tiny-extents|size=2M,data@0+1,data@4095+1,data@4096+1,data@8191+2,data@1M+1,data@2097151+1"
	"odd-offsets|data@12345+6789,data@1000001+3,data@3333333+444444,data@5555555+1"
	"unwritten|size=16M,unwritten@1M+2M,data@4M+4k,unwritten@8M+1M,data@8M+5,data@8390000+7,keep@16M+1M"
	"unwritten-only|unwritten@0+3M"
	"unwritten-tail|data@0+4k,unwritten@64k+1M"
	"prealloc-past-eof|size=1M,data@0+1020k,keep@1M+64k"
	"over-4g|size=5G,data@0+4k,data@4294967295+2,data@4294971392+1M,unwritten@4608M+1M,data@5368709119+1"
	"extents-2000|data@0+100*2000/8192"
)

# The JSON of lacuna map without what may differ: the path, "atomic", and
# allocated_bytes (writeback allocates blocks, ext4 extent-tree blocks too,
# between the two calls right after a file was written).
map_json() {
	"$LACUNA" map --json "$1" |
		sed -e 's/"file":"[^"]*",//' -e 's/"atomic":[a-z]*,//' \
			-e 's/"allocated_bytes":[0-9]*,//'
}

# compare_maps DESC MOUNTFILE BACKINGFILE
compare_maps() {
	local desc=$1 m b
	if ! m=$(map_json "$2") || [ -z "$m" ]; then
		lt_fail "$desc: lacuna map --json through the mount"
		return
	fi
	if ! b=$(map_json "$3") || [ -z "$b" ]; then
		lt_fail "$desc: lacuna map --json on the backing file"
		return
	fi
	if [ "$m" = "$b" ]; then
		lt_ok "$desc: lacuna map --json through the mount = on the backing file"
	elif "$SC" mapdiff "$2" "$3"; then
		lt_ok "$desc: the maps differ only where allowed (mapdiff above)"
	else
		lt_fail "$desc: lacuna map --json differs: mount $m; backing $b"
	fi
}

check_layouts() {
	local type=$1 backing=$2 mnt=$3 entry name layout f b short
	for entry in "${LAYOUTS[@]}"; do
		name=${entry%%|*}
		layout=${entry#*|}
		f="$mnt/$name"
		b="$backing/$name"
		if ! "$SM" make "$f" "$layout"; then
			lt_fail "$type $name: make $layout through the mount"
			continue
		fi
		compare_maps "$type $name" "$f" "$b"
		short=""
		[ "$name" = extents-2000 ] && short=--expect-short
		# map mode first: checking that holes read as zeros caches their
		# pages, and XFS then reports its delalloc ranges as data
		lt_check "$type $name: verify, map" "$SC" verify "$f" "$b" --mode map $short
		lt_check "$type $name: verify, arena" "$SC" verify "$f" "$b" --mode arena
		lt_check "$type $name: verify, 64 KiB arena at +3, 100003-byte chunks" \
			"$SC" verify "$f" "$b" --mode arena --arena 64k --arena-off 3 --chunk 100003
		lt_check "$type $name: verify, staged" \
			"$SC" verify "$f" "$b" --mode staged --arena 64k --buf 300000
		lt_check "$type $name: verify, inline" "$SC" verify "$f" "$b" --mode inline
		compare_maps "$type $name (after reading)" "$f" "$b"
	done
	lt_check "$type: verify a range, arena" "$SC" verify "$mnt/tiny-extents" \
		"$backing/tiny-extents" --offset 4095 --length 1048578 --chunk 4097
	lt_check "$type: verify past EOF, inline" "$SC" verify "$mnt/tiny-extents" \
		"$backing/tiny-extents" --mode inline --offset 3M --length 10
}

# lacuna map's command line
check_cli() {
	local type=$1 backing=$2 mnt=$3 out rc args
	out=$("$LACUNA" map "$mnt/leading-hole" 2>&1)
	case $out in
	*"atomic map"*) lt_ok "$type: lacuna map says atomic through the mount" ;;
	*) lt_fail "$type: lacuna map through the mount: $out" ;;
	esac
	out=$("$LACUNA" map "$backing/leading-hole" 2>&1)
	case $out in
	*"not atomic"*) lt_ok "$type: lacuna map says not atomic on the backing file" ;;
	*) lt_fail "$type: lacuna map on the backing file: $out" ;;
	esac
	out=$("$LACUNA" map --json --offset 5M --length 1 "$mnt/leading-hole")
	case $out in
	*'"segments":[{"kind":"data","offset":5242880,"length":1}]}') lt_ok "$type: --offset/--length" ;;
	*) lt_fail "$type: lacuna map --offset 5M --length 1: $out" ;;
	esac
	for args in "" "map" "map $mnt/dense $mnt/dense" "map --bogus $mnt/dense" \
		"map --offset abc $mnt/dense" "map --length -1 $mnt/dense" \
		"map --offset 9223372036854775808 $mnt/dense" "frobnicate $mnt/dense"; do
		# shellcheck disable=SC2086 # args is a list of arguments
		"$LACUNA" $args >/dev/null 2>&1
		lt_check_eq "$type: lacuna $args: exit status" 2 $?
	done
	out=$("$LACUNA" map "$mnt/no-such-file" 2>&1)
	rc=$?
	lt_check_eq "$type: lacuna map of a missing file: exit status" 1 $rc
	case $out in
	*"No such file"*) lt_ok "$type: missing file: message" ;;
	*) lt_fail "$type: missing file: message '$out'" ;;
	esac
	out=$("$LACUNA" map "$mnt" 2>&1)
	rc=$?
	lt_check_eq "$type: lacuna map of a directory: exit status" 1 $rc
	case $out in
	*"directory"*) lt_ok "$type: directory: message" ;;
	*) lt_fail "$type: directory: message '$out'" ;;
	esac
	mkfifo "$mnt/fifo" || lt_fail "$type: mkfifo through the mount"
	out=$(lt_timeout 60 "$LACUNA" map "$mnt/fifo" 2>&1)
	rc=$?
	if [ $rc = 124 ]; then
		lt_fail "$type: lacuna map of a FIFO hangs (timed out after 60 s)"
	else
		lt_check_eq "$type: lacuna map of a FIFO: exit status ($out)" 1 $rc
	fi
	rm -f "$mnt/fifo"
	"$LACUNA" --version >/dev/null
	lt_check_eq "$type: lacuna --version: exit status" 0 $?
}

check_bad() {
	local type=$1 backing=$2 mnt=$3 f
	f="$mnt/bad-input"
	if ! "$SM" make "$f" "size=2M,data@64k+10000,data@1M+3,data@1536k+20000"; then
		lt_fail "$type: make the bad-input file"
		return
	fi
	lt_check "$type: bad-input battery" \
		lt_timeout 600 "$SC" bad "$f" "$mnt" --plain "$backing/bad-input"
	lt_check "$type: the daemon is alive after the battery" kill -0 "$LT_LFS_PID"
	lt_check "$type: still mounted" mountpoint -q "$mnt"
	lt_check "$type: a file reads back through the mount" cmp "$f" "$backing/bad-input"
	lt_check "$type: write through the mount" "$SM" make "$mnt/after" "data@0+100000"
	lt_check "$type: and read it back" cmp "$mnt/after" "$backing/after"
	lt_check "$type: verify after the battery" "$SC" verify "$f" "$backing/bad-input"
	compare_maps "$type bad-input (after the battery)" "$f" "$backing/bad-input"
}

per_fs() {
	check_layouts "$@"
	check_cli "$@"
	check_bad "$@"
}

lt_each_fs per_fs
lt_done
