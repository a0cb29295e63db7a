#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's bounds on the NFSv4 state one client or all can hold
# (lacunad.conf(5), LIMITS), with raw RPCs (tests/py/lt_state_limits.py),
# for NFSv4.0 and 4.1, each on a server of its own:
#  - opens, lock-owners and byte-range locks per client and opens in all:
#    past a bound OPEN, LOCK and LOCKU are RESOURCE (4.0) or DELAY (4.1)
#    for that client while another still opens and locks, CLOSE and LOCKU
#    give the budget back; the refusals are counted in the stats file
#  - unconfirmed clients (SETCLIENTID, EXCHANGE_ID never confirmed) have
#    a bound of their own: the oldest are forgotten
#    (state_unconfirmed_evicted); past max_clients the unconfirmed go
#    first, then the confirmed holding nothing (state_clients_reclaimed)
#  - the reply cache of each session slot is bounded by a clamped
#    ca_maxresponsesize_cached, and all sessions' by max_reply_cache:
#    fewer slots, or none (DELAY) when it is taken by clients holding
#    state; a client holding nothing gives its sessions up
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own limits"
nfs_require_server
lt_require_cmd python3
export PYTHONPATH="$top_srcdir/tests/py"

nfs_plain_conf "max_opens_per_client = 4" "max_opens = 6" "max_lock_owners_per_client = 2" \
	"max_locks_per_client = 3" "max_clients = 6" "max_clients_per_address = 6" \
	"max_unconfirmed_clients = 3"

for minor in 0 1; do
	rm -f "$LT_TMP/stats"
	nfs_start --config "$NFS_CONF"
	nfs_run_checks "4.$minor: opens, lock-owners, locks" 120 \
		python3 "$top_srcdir/tests/py/lt_state_limits.py" opens "$NFS_PORT" "$minor"
	lt_check "4.$minor: stats: OPENs refused counted" nfs_stat_at_least state_opens_refused 2
	lt_check "4.$minor: stats: LOCKs and LOCKUs refused counted" \
		nfs_stat_at_least state_locks_refused 4
	lt_check "4.$minor: a warning in the log" grep -q "max_opens_per_client reached" "$NFS_LOG"
	nfs_run_checks "4.$minor: unconfirmed clients" 120 \
		python3 "$top_srcdir/tests/py/lt_state_limits.py" unconfirmed "$NFS_PORT" "$minor"
	lt_check "4.$minor: stats: unconfirmed clients forgotten counted" \
		nfs_stat_at_least state_unconfirmed_evicted 5
	lt_check "4.$minor: stats: clients reclaimed for max_clients counted" \
		nfs_stat_at_least state_clients_reclaimed 2
	nfs_stop
done

# the sessions' reply caches share max_reply_cache
nfs_plain_conf "max_reply_cache = 64K"
rm -f "$LT_TMP/stats"
nfs_start --config "$NFS_CONF"
nfs_run_checks "4.1: reply cache" 120 python3 "$top_srcdir/tests/py/lt_state_limits.py" drc "$NFS_PORT"
lt_check "stats: sessions short of reply cache counted" nfs_stat_at_least reply_cache_short 2
lt_check "stats: a client reclaimed for the reply cache counted" \
	nfs_stat_at_least state_clients_reclaimed 1
nfs_stop
lt_done
