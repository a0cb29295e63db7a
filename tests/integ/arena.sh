#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A server's own memory as the sparse-read arena: a memfd-backed chunk
# pool registered with lacuna_client_open_arena() receives the data of
# sparse reads through lacunafs, on ext4 and XFS, and every segment
# matches the backing file (data bytes equal, holes zero).
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_fuse

check_fs() {
	local type=$1 backing=$2 mnt=$3 layout out
	for layout in \
		"size=24M,data@0+4k,data@1M+1,data@5M+3M,unwritten@12M+1M,data@20M+100k" \
		"size=8M,data@0+8M" \
		"size=40M,data@17+1000*400/40000"; do
		"$TOOLS/lt_seekmap" make "$mnt/f" "$layout" || lt_hard "lt_seekmap make $layout"
		out=$("$TOOLS/lt_arena" "$mnt/f" "$backing/f" 2>&1)
		lt_check "$type $layout: $out" [ $? -eq 0 ]
		rm -f "$mnt/f"
	done
}
lt_each_fs check_fs

lt_done
