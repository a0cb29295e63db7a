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

nfs_plain_conf "record_timeout = 8"
nfs_start --config "$NFS_CONF"
nfs_run_checks "slow-loris" 180 python3 "$top_srcdir/tests/tools/nfs_slowloris.py" \
	--port "$NFS_PORT" --record-timeout 8
lt_check "stats: conns_record_timeout counted" nfs_stat_at_least conns_record_timeout 1
nfs_stop
lt_done
