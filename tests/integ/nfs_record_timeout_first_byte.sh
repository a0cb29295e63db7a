#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# record_timeout counts from the first byte of a record's mark: a client
# that sends the mark's 4 bytes over most of record_timeout, then a byte
# a second, is dropped once record_timeout has passed since its first
# byte, not record_timeout after the mark (tests/tools/nfs_slowloris.py).
# Counted in the stats file (conns_record_timeout).
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own limits"
nfs_require_server
lt_require_cmd python3

export_dir="$LT_TMP/export"
mkdir -p "$export_dir" || lt_hard "mkdir $export_dir"
conf="$LT_TMP/lacunad.conf"
cat >"$conf" <<CONF
stats_file = $LT_TMP/stats
record_timeout = 8
$export_dir 127.0.0.0/8(rw,no_root_squash,fsid=root)
CONF
nfs_start --config "$conf"
nfs_run_checks "slow-loris" 180 python3 "$top_srcdir/tests/tools/nfs_slowloris.py" \
	--port "$NFS_PORT" --record-timeout 8
v=0
for ((i = 0; i < 100; i++)); do
	v=$(awk '$1 == "conns_record_timeout" { print $2 }' "$LT_TMP/stats" 2>/dev/null)
	[ "${v:-0}" -ge 1 ] && break
	sleep 0.2
done
lt_check "stats: conns_record_timeout counted (${v:-missing})" test "${v:-0}" -ge 1
nfs_stop
lt_done
