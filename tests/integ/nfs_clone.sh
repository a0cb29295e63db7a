#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# CLONE (RFC 7862 §15.13) and clone_blksize over the wire
# (tests/py/lt_clone.py over tests/py/lt_nfs4raw.py, minor version 2): one
# lacunad exports lacunafs over XFS made with reflink=1 and lacunafs over
# ext4, each at its own path.
#  - XFS: clone_blksize supported and the block size; a sparse file
#    cloned whole keeps its bytes (sha256) and its holes (the backing
#    SEEK_DATA/SEEK_HOLE map), its extents shared (filefrag -v); a range
#    cloned into the middle of a file; the RFC's errors (INVAL for
#    unaligned offsets and counts, ranges past EOF, overlap in one file;
#    FBIG, ISDIR, NOFILEHANDLE, OPENMODE, ACCESS for a user who cannot read
#    the source, XDEV across exports, OP_ILLEGAL in 4.1);
#  - ext4: no clone_blksize, CLONE is NOTSUPP;
#  - the statistics count the clones, their bytes and the refusals, as
#    /metrics does.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own CLONE"
nfs_require_server
lt_require_cmd python3 filefrag
lt_require_fuse
export LACUNA="$top_builddir/tools/lacuna"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/stats"; }
op_errors() { awk -v k="$1" '$1 == "op" && $2 == k { print $3 }' "$LT_TMP/stats"; }

lt_make_fs xfs xfs 1G -m reflink=1
XB=$LT_FS
XM="$LT_TMP/mnt-xfs"
lt_mount_lacunafs "$XB" "$XM"
lt_make_fs ext4 ext4
EB=$LT_FS
EM="$LT_TMP/mnt-ext4"
lt_mount_lacunafs "$EB" "$EM"
MPORT=$(nfs_free_port) || lt_hard "no free port for /metrics"

conf="$LT_TMP/lacunad.conf"
printf '%s\n' "threads = 2" "stats_file = $LT_TMP/stats" "metrics_listen = 127.0.0.1:$MPORT" \
	"$XM 127.0.0.0/8(rw,no_root_squash)" "$EM 127.0.0.0/8(rw,no_root_squash)" >"$conf"
nfs_start --config "$conf"
nfs_run_checks "clone" "$LT_NFS_TIMEOUT" python3 "$top_srcdir/tests/py/lt_clone.py" \
	"$NFS_PORT" "$XM" "$XB" "$EM" "$EB"

metrics=$(nfs_run python3 "$top_srcdir/tests/py/lt_metrics.py" get "http://127.0.0.1:$MPORT/metrics")
# wait for a stats file written after the checks (lacunad writes it every second)
touch "$LT_TMP/stats-mark"
lt_wait_for 60 "lacunad to write $LT_TMP/stats" test "$LT_TMP/stats" -nt "$LT_TMP/stats-mark" ||
	lt_fail "timed out waiting for the stats file"
nfs_stop
ops=$(stat_of clone_ops)
bytes=$(stat_of clone_bytes)
refused=$(stat_of clone_refused)
lt_log "${ops:-0} clones, ${bytes:-0} bytes, ${refused:-0} refused"
# the clones that succeed: whole file (8 MiB), middle (1 MiB), odd end (1 MiB + 100), disjoint (1 MiB)
lt_check_eq "the stats count the clones made" 4 "${ops:-0}"
lt_check_eq "the stats count the bytes cloned" $((11 * 1024 * 1024 + 100)) "${bytes:-0}"
lt_check_eq "the stats count the CLONE refused on ext4" 1 "${refused:-0}"
lt_check "/metrics counts the clones" grep -qx 'lacunad_clone_ops_total 4' <<<"$metrics"
lt_check "/metrics counts the bytes cloned" \
	grep -qx "lacunad_clone_bytes_total $((11 * 1024 * 1024 + 100))" <<<"$metrics"
lt_check "/metrics counts the refusals" grep -qx 'lacunad_clone_refused_total 1' <<<"$metrics"
lt_done
