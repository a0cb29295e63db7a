#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One address cannot take lacunad's NFSv4 client table (lacunad.conf(5),
# LIMITS), with raw RPCs (tests/py/lt_client_table.py) from 127.0.0.1 and
# from a socket bound to 127.0.0.2:
#  - a flood of clients from 127.0.0.1 (4.1 with sessions, 4.1 and 4.0
#    never confirmed, 4.0 confirmed, some holding an open) stays within
#    max_clients_per_address by reclaiming its own clients that hold
#    nothing, while 127.0.0.2 gets a client ID and a session at once,
#    during the flood and after; once all the flooder's clients hold an
#    open it is refused (state_refused); reclaims are counted
#    (state_clients_reclaimed) and logged with the address holding the
#    most clients
#  - unconfirmed records and 4.1 clients without a session go after
#    unconfirmed_timeout (state_clients_idle_expired)
#  - 1,100 clients of one address each holding an open fill max_clients:
#    a new client is refused until some close their file, then admitted
#    in their place; once the leases end, every client is gone, and
#    a second round leaves lacunad's resident heap memory within 10% of
#    where the first left it (the first leaves the allocator's arenas
#    grown: freed, not given back)
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own limits"
nfs_require_server
lt_require_cmd python3
export PYTHONPATH="$top_srcdir/tests/py"
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null ||
	lt_skip "cannot bind a socket to 127.0.0.2"

# the raw clients connect from ports above 1023
client_table_conf() {
	nfs_plain_conf "$@"
	sed -i 's/(rw,no_root_squash,fsid=root)$/(rw,no_root_squash,insecure,fsid=root)/' \
		"$NFS_CONF" || lt_hard "sed $NFS_CONF"
	grep -q insecure "$NFS_CONF" || lt_hard "no insecure export in $NFS_CONF"
}

# stat_of KEY: a value of the stats file (0 when missing)
stat_of() {
	awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' "$LT_TMP/stats" 2>/dev/null
}

# anon_kib: lacunad's resident anonymous memory (its heaps; not the
# shared chunk pool, whose pages stay once touched)
anon_kib() {
	awk '/^Anonymous:/ { print $2 }' "/proc/$NFS_PID/smaps_rollup"
}

# all_gone: the stats file shows no client, unconfirmed or expired, nor open
all_gone() {
	[ -s "$LT_TMP/stats" ] && [ "$(stat_of clients)" = 0 ] &&
		[ "$(stat_of clients_unconfirmed)" = 0 ] && [ "$(stat_of opens)" = 0 ] &&
		grep -q "^clients_expired 0$" "$LT_TMP/stats"
}

wait_all_gone() {
	local i
	for ((i = 0; i < 600; i++)); do
		all_gone && return 0
		sleep 0.5
	done
	echo "# clients $(stat_of clients), unconfirmed $(stat_of clients_unconfirmed)," \
		"expired $(stat_of clients_expired), opens $(stat_of opens) after 300 s (timed out)"
	return 1
}

client_table_conf "max_clients = 30" "max_clients_per_address = 20"
nfs_start --config "$NFS_CONF"
lt_check "the sizes in force are logged" grep -q \
	"max_clients 30, max_clients_per_address 20, max_sessions 30 (auto)" "$NFS_LOG"
nfs_run_checks "flood from 127.0.0.1, sessions from 127.0.0.2" 300 \
	python3 "$top_srcdir/tests/py/lt_client_table.py" flood "$NFS_PORT"
lt_check "stats: clients reclaimed counted" nfs_stat_at_least state_clients_reclaimed 100
lt_check "stats: clients refused counted" nfs_stat_at_least state_refused 2
lt_check "a reclaim is logged with the address holding the most clients" grep -q \
	"max_clients_per_address reached: .* is forgotten to make room; 127.0.0.1 holds the most clients" \
	"$NFS_LOG"
lt_check "the refusal is logged" grep -q \
	"no new client or session for 127.0.0.1.*max_clients_per_address.*127.0.0.1 holds the most" \
	"$NFS_LOG"
nfs_stop

# records that hold nothing and can do nothing go after unconfirmed_timeout
rm -f "$LT_TMP/stats"
client_table_conf "unconfirmed_timeout = 2"
nfs_start --config "$NFS_CONF"
lt_check "the stats file is written" nfs_stat_at_least compounds 0
nfs_run_checks "unconfirmed and session-less clients expire" 300 \
	python3 "$top_srcdir/tests/py/lt_client_table.py" idle "$NFS_PORT" "$LT_TMP/stats"
lt_check "stats: counted" nfs_stat_at_least state_clients_idle_expired 3
nfs_stop

# 1,100 clients with an open each; short leases so that they all end
rm -f "$LT_TMP/stats"
client_table_conf "max_clients = 1100" "max_clients_per_address = 1100" "max_opens = 4000" \
	"lease_time = 15"
nfs_start --config "$NFS_CONF"
lt_check "the stats file is written" nfs_stat_at_least compounds 0
anon0=$(anon_kib)
# the first round leaves the allocator's arenas grown (freed, fragmented,
# kept): the second must come back to where the first ended, or it leaks
for round in 1 2; do
	nfs_run_checks "round $round: 1,100 clients holding state" 600 \
		python3 "$top_srcdir/tests/py/lt_client_table.py" many "$NFS_PORT" 1100
	anon_full=$(anon_kib)
	lt_check "round $round: stats: new clients refused while all held state" \
		nfs_stat_at_least state_refused $((4 * round))
	lt_check "round $round: stats: clients holding nothing reclaimed" \
		nfs_stat_at_least state_clients_reclaimed $((10 * round))
	lt_check "round $round: every lease ends, every record goes: no client, no open" \
		wait_all_gone
	anon[$round]=$(anon_kib)
	echo "# round $round: anonymous RSS ${anon_full} KiB with 1,100 clients," \
		"${anon[$round]} KiB once they are gone (${anon0} KiB at start)"
done
lt_check "resident memory after the second round within 10% of after the first" \
	test "${anon[2]}" -le $((anon[1] + anon[1] / 10))
nfs_stop
lt_done
