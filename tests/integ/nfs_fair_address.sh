#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A connection with nothing outstanding is answered even when the other
# connections of its address hold that address's whole share of requests
# and never read their replies: 60 connections from 127.0.0.1 each send
# 24 READs of 1 MiB and read nothing (no send_timeout closes them), the
# server stops reading them (client_stalls), and then a fresh connection
# from 127.0.0.1 must get its NULL and its GETATTR answered, while the
# greedy ones stay held back (tests/tools/nfs_fair_address.py). A server
# that stops reading every connection of an address over its share
# answers neither: the test then fails when its hang timeout runs out.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own limits"
nfs_require_server
lt_require_cmd python3

: "${LT_FAIR_HANG:=120}"

export_dir="$LT_TMP/export"
mkdir -p "$export_dir" || lt_hard "mkdir $export_dir"
head -c $((1 << 20)) /dev/urandom >"$export_dir/big" || lt_hard "cannot make big"
conf="$LT_TMP/lacunad.conf"
cat >"$conf" <<CONF || lt_hard "cannot write $conf"
stats_file = $LT_TMP/stats
threads = 2
max_requests_per_client = 32
send_timeout = 0
$export_dir 127.0.0.0/8(rw,no_root_squash,insecure,fsid=root)
CONF
nfs_start --config "$conf"

nfs_run_checks "fair within an address" $((3 * LT_FAIR_HANG)) \
	python3 "$top_srcdir/tests/tools/nfs_fair_address.py" --port "$NFS_PORT" \
	--stats "$LT_TMP/stats" --greedy 60 --reads 24 --hang "$LT_FAIR_HANG"
nfs_stop
lt_done
