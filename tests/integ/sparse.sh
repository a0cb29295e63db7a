#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sparse files through lacunafs, on ext4 and on XFS.
#
# For each layout (holes at the start and the end, 1-byte extents, odd
# offsets, unwritten extents, no hole at all, an empty file, a sparse file
# past 4 GiB, many small extents) the file is made through the mount; then
# the SEEK_DATA/SEEK_HOLE answers through the mount must equal those of the
# backing file asked at the same moment, and the file must read as the
# layout says: holes and unwritten ranges as zeros, data as the pattern.
# The maps are not compared with a fixed layout: ext4 and XFS report an
# unwritten extent as data once its pages are cached.
#
# Then hole punching and zero-range: the same fallocate(1) calls go to a
# file through the mount and to a twin made directly on the backing
# filesystem; after each call both must hold the same bytes and the same
# number of allocated blocks, the map through the mount must be the backing
# file's, and, with no page cached, the backing file's map the twin's.
# Last, lseek at and past EOF must fail with ENXIO through the mount.

. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse
lt_require_cmd fallocate cmp stat sync

SM="$TOOLS/lt_seekmap"
[ -x "$SM" ] || lt_hard "lt_seekmap not built at $SM"

# name|layout (see lt_seekmap's usage); data is a position-dependent pattern
LAYOUTS=(
	"empty|size=0"
	"no-holes|data@0+3145745"
	"leading-hole|data@5M+64k"
	"trailing-hole|size=8M,data@0+64k"
	"both-ends-hole|size=8M,data@3M+5"
	"tiny-extents|size=2M,data@0+1,data@4095+1,data@4096+1,data@8191+2,data@1M+1,data@2097151+1"
	"odd-offsets|data@12345+6789,data@1000001+3,data@3333333+444444,data@5555555+1"
	"unwritten|size=16M,unwritten@1M+2M,data@4M+4k,unwritten@8M+1M,data@8M+5,data@8390000+7,keep@16M+1M"
	"unwritten-tail|data@0+4k,unwritten@64k+1M"
	"unwritten-only|unwritten@0+3M"
	"punched|data@0+4M,punch@1M+1M,punch@3M+5,punch@100+4000"
	"zeroed|data@0+4M,zero@2M+1M,zero@100+200,zero@4M+1M"
	"over-4g|size=5G,data@0+4k,data@4294967295+2,data@4294971392+1M,unwritten@4608M+1M,data@5368709119+1"
	"many-small|data@0+100*1500/8192,data@777+13*300/12289"
	"many-blocks|size=9M,data@4k+4k*1000/8k"
)

# make NAME through MNT, compare with the backing file, read it back
check_layouts() {
	local type=$1 backing=$2 mnt=$3 entry name layout f

	for entry in "${LAYOUTS[@]}"; do
		name=${entry%%|*}
		layout=${entry#*|}
		f="$mnt/$name"
		if ! "$SM" make "$f" "$layout"; then
			lt_fail "$type $name: make $layout through the mount"
			continue
		fi
		lt_check "$type $name: map through mount = backing map" \
			"$SM" cmp -q "$f" "$backing/$name"
		lt_check "$type $name: reads back as the layout (mount)" \
			"$SM" check -q "$f" "$layout"
		lt_check "$type $name: reads back as the layout (backing)" \
			"$SM" check -q "$backing/$name" "$layout"
		# reading cached the pages: the maps may change, but together
		lt_check "$type $name: maps still agree after reading" \
			"$SM" cmp -q "$f" "$backing/$name"
	done
}

# fallocate(1) arguments applied in turn to a file and to its twin
FALLOC_OPS=(
	"-p -o 4096 -l 8192"
	"-p -o 1000 -l 3000"
	"-p -o 1M -l 1M"
	"-z -o 2097155 -l 100000"
	"-z -o 3M -l 2M"
	"-p -o 5M -l 10M"
	"-z -o 7M -l 2M"
	"-z -n -o 10M -l 1M"
	"-p -o 0 -l 1"
	"-z -o 6291455 -l 2"
	"-p -o 0 -l 20M"
)

check_punch_zero() {
	local type=$1 backing=$2 mnt=$3 f twin op i=0
	# seven extents from the start: ext4 keeps four in the inode, so
	# both files have their extent tree block before the first call
	local base="size=8M,data@0+3M,data@3200k+2M,data@5400k+700k,unwritten@6M+1M"
	base+=",data@6M+4k,data@7200k+100k,data@7500k+4k"

	f="$mnt/pz"
	twin="$backing/pz.twin"
	# Each file is flushed before the next is written: delayed allocation
	# of both at once would interleave their blocks.
	lt_check "$type: make the punch/zero file through the mount" "$SM" make "$f" "$base"
	lt_check "$type: fsync it through the mount" sync "$f"
	lt_check "$type: make its twin on the backing fs" "$SM" make "$twin" "$base"
	lt_check "$type: fsync the twin" sync "$twin"
	lt_check_eq "$type: same allocation as the twin after make" \
		"$(stat -c %b "$twin")" "$(stat -c %b "$backing/pz")"
	for op in "${FALLOC_OPS[@]}"; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # op is a list of arguments
		lt_check "$type op$i fallocate $op (mount)" fallocate $op "$f"
		# shellcheck disable=SC2086
		lt_check "$type op$i fallocate $op (twin)" fallocate $op "$twin"
		sync "$f" "$twin"
		lt_check_eq "$type op$i: same size as the twin" \
			"$(stat -c %s "$twin")" "$(stat -c %s "$f")"
		lt_check_eq "$type op$i: same allocation as the twin" \
			"$(stat -c %b "$twin")" "$(stat -c %b "$backing/pz")"
		# with no page cached, unwritten extents are holes in both
		if ! "$SM" drop "$backing/pz" || ! "$SM" drop "$twin"; then
			lt_fail "$type op$i: drop cached pages"
		fi
		lt_check "$type op$i: backing map = twin's map" \
			"$SM" cmp "$backing/pz" "$twin"
		lt_check "$type op$i: map through mount = backing map" \
			"$SM" cmp "$f" "$backing/pz"
		lt_check "$type op$i: same bytes as the twin (cmp)" cmp "$f" "$twin"
	done
}

# lseek at and past EOF: ENXIO through the mount, as on the backing file
check_past_eof() {
	local type=$1 backing=$2 mnt=$3 name size off offs w got want

	"$SM" make "$mnt/eof" "data@0+10000" || lt_fail "$type: make eof file"
	for name in eof empty trailing-hole over-4g; do
		size=$(stat -c %s "$backing/$name")
		for off in "$size" $((size + 1)) $((size + 4096)) $((size + (1 << 32))); do
			for w in data hole; do
				got=$("$SM" seek "$mnt/$name" $w "$off")
				lt_check_eq "$type $name: SEEK_${w^^} at $off (size $size) through mount" \
					ENXIO "$got"
			done
		done
		offs="-1"
		[ "$size" -gt 0 ] && offs="$offs 0"
		[ "$size" -gt 1 ] && offs="$offs $((size - 1))"
		for off in $offs; do
			for w in data hole; do
				want=$("$SM" seek "$backing/$name" $w "$off")
				got=$("$SM" seek "$mnt/$name" $w "$off")
				lt_check_eq "$type $name: SEEK_${w^^} at $off as on backing" \
					"$want" "$got"
			done
		done
	done
	# the virtual hole at EOF after trailing data
	lt_check_eq "$type eof: SEEK_HOLE at the last byte gives the size" \
		10000 "$("$SM" seek "$mnt/eof" hole 9999)"
}

per_fs() {
	# first, while free space is not yet fragmented (allocation counts)
	check_punch_zero "$@"
	check_layouts "$@"
	check_past_eof "$@"
}

lt_each_fs per_fs
lt_done
