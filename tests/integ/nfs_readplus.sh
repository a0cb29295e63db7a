#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# READ_PLUS, SEEK, ALLOCATE and DEALLOCATE over the wire, on lacunafs over
# ext4 and over XFS (tests/py/lt_readplus.py over tests/py/lt_nfs4raw.py, minor
# version 2):
#  - the RFC 7862 edge cases: count 0; offsets at EOF, past it, at 2^63-1
#    and past 2^63 (INVAL); a range inside one hole, a range ending
#    mid-hole, a file all hole, an empty file, a file of more than 1 TiB
#    with data past 1 TiB; the largest counts (capped at maxread) and
#    sessions whose ca_maxresponsesize cuts the reply (never larger,
#    continued to EOF); a file of 2048 segments; SEEK's virtual hole at
#    EOF, NXIO at and past EOF, eof when no data follows, UNION_NOTSUPP for
#    an unknown sa_what; ISDIR, SYMLINK and WRONG_TYPE; ALLOCATE and
#    DEALLOCATE seen in `lacuna map` of the backing file (holes, freed and
#    allocated blocks, size kept or grown), length 0 (INVAL), past 2^63
#    (FBIG), more than the filesystem holds (NOSPC); the 4.2 operations
#    in a 4.1 COMPOUND (OP_ILLEGAL);
#  - random sparse layouts (seeded: data runs of random sizes at aligned
#    and unaligned offsets, punched holes, zero ranges, preallocations,
#    truncates, files ending in a hole, data past 1 TiB), each made
#    through the mount and then read once whole (SEEK maps are not
#    canonical: an unwritten extent is data once its pages are cached,
#    DESIGN.md), then: the map over READ_PLUS, the map by SEEK,
#    `lacuna nfs-map --json` and the map of a random range all equal
#    `lacuna map --json` through the mount; every byte READ_PLUS sends is
#    the file's; `lacuna nfs-get` copies the file with every hole of the
#    source a hole of the copy, the same bytes (cmp, or the data segments
#    for the files past 1 TiB) and no more blocks than the data needs.
#
# LT_READPLUS_SEED picks the layouts (printed, so a failure can be rerun);
# LT_READPLUS_LAYOUTS how many per filesystem (default 40).

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own READ_PLUS (Ganesha's is broken, DESIGN.md)"
nfs_require_server
lt_require_cmd python3 cmp
lt_require_fuse
RP="$top_srcdir/tests/py/lt_readplus.py"
export LACUNA="$top_builddir/tools/lacuna"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"
SEED=${LT_READPLUS_SEED:-$((RANDOM * 32768 + RANDOM))}
LAYOUTS=${LT_READPLUS_LAYOUTS:-40}
lt_log "seed $SEED (set LT_READPLUS_SEED to repeat)"

has_cmd() { "$LACUNA" "$1" --help >/dev/null 2>&1; }
for cmd in nfs-map nfs-get; do
	lt_check "lacuna $cmd exists (the layouts are compared with it)" has_cmd "$cmd"
done

# run_checks LABEL TIMEOUT ARGS...: one lt_ok/lt_fail per line the script prints
run_checks() { nfs_run_checks "$1" "$2" python3 "$RP" "${@:3}"; }
# a guard against hangs only: a layout takes a few seconds, many more on a loaded machine
LAYOUTS_TIMEOUT=$((LT_NFS_TIMEOUT + 30 * LAYOUTS))

for type in ext4 xfs; do
	nfs_make_export "$type" "$type"
	lt_log "== $type: $NFS_BACKING via $NFS_EXPORT"
	nfs_start "$NFS_EXPORT" --threads 2
	run_checks "$type edge" "$LT_NFS_TIMEOUT" edge "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING"
	run_checks "$type layouts" "$LAYOUTS_TIMEOUT" layouts "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING" \
		--seed "$SEED" --count "$LAYOUTS"
	nfs_stop
done
lt_done
