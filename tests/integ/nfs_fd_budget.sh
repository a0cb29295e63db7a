#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad's file descriptors are a budget, not a cliff (lacunad.conf(5),
# LIMITS: max_cached_files): lacunad runs with RLIMIT_NOFILE 700 over a
# lacunafs mount of an ext4 loop image, and one client looks up 3000
# distinct files and OPENs them without CLOSE (tests/py/lt_fd_budget.py):
#  - auto limits: lacunad logs its budget at start; the file cache stays
#    at max_cached_files, so every LOOKUP and GETATTR is OK and lacunad's
#    fds stay well below the limit; OPENs past max_opens are DELAY; a
#    second client meanwhile connects, GETATTRs, READs and WRITEs
#  - max_cached_files and max_opens set far past the limit: LOOKUPs are
#    still all OK (idle cached files are closed when an open gets EMFILE,
#    and it is tried again); once open files hold every fd, OPEN is DELAY,
#    counted as fd_exhausted in the stats file and /metrics and logged
#  - either way no answer is SERVERFAULT or IO, and once the greedy client
#    is gone (its lease expired) a new client is served as before
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own fd budget"
nfs_require_server
lt_require_cmd python3
export PYTHONPATH="$top_srcdir/tests/py"

LIMIT=700
NFILES=3000
nfs_make_export ext4 fdb
mkdir "$NFS_EXPORT/many" || lt_hard "mkdir $NFS_EXPORT/many"
(cd "$NFS_EXPORT/many" && seq -f "f%.0f" 0 $((NFILES - 1)) | xargs touch) ||
	lt_hard "cannot make $NFILES files"
echo "b" >"$NFS_EXPORT/b.dat" || lt_hard "cannot write b.dat"

# lacunad under RLIMIT_NOFILE $LIMIT, soft and hard (it raises soft to hard)
cat >"$LT_TMP/lacunad-nofile" <<EOS
#!/bin/bash
ulimit -n $LIMIT || exit 99
exec "$LACUNAD" "\$@"
EOS
chmod +x "$LT_TMP/lacunad-nofile"
LACUNAD="$LT_TMP/lacunad-nofile"

# fd_conf SETTING...: the mount exported, a short lease, stats and /metrics
fd_conf() {
	local s
	MPORT=$(nfs_free_port) || lt_hard "no free port for the metrics"
	{
		echo "stats_file = $LT_TMP/stats"
		echo "metrics_listen = 127.0.0.1:$MPORT"
		echo "lease_time = 10"
		echo "grace = off"
		for s in "$@"; do echo "$s"; done
		echo "$NFS_EXPORT 127.0.0.0/8(rw,no_root_squash,fsid=root)"
	} >"$LT_TMP/lacunad.conf" || lt_hard "cannot write the configuration"
}

# metric_at_least NAME VALUE: a sample of /metrics whose line starts with NAME is >= VALUE
metric_at_least() {
	python3 "$top_srcdir/tests/py/lt_metrics.py" get "http://127.0.0.1:$MPORT/metrics" \
		>"$LT_TMP/metrics" || return 1
	awk -v n="$1" -v v="$2" 'index($0, n) == 1 && $NF >= v { f = 1 } END { exit !f }' \
		"$LT_TMP/metrics"
}

fd_conf
rm -f "$LT_TMP/stats"
nfs_start --config "$LT_TMP/lacunad.conf"
lt_check "RLIMIT_NOFILE is $LIMIT" grep -q "^Max open files *$LIMIT *$LIMIT " \
	"/proc/$NFS_PID/limits"
lt_check "the fd budget is logged at start" \
	grep -q "fd budget: RLIMIT_NOFILE $LIMIT: reserve 512 + max_connections 94 x 1 + max_cached_files 23 x 2 + max_opens 16 x 3" \
	"$NFS_LOG"
lt_log "$(grep -o "fd budget: .*" "$NFS_LOG")"
nfs_run_checks "auto" 600 python3 "$top_srcdir/tests/py/lt_fd_budget.py" run "$NFS_PORT" \
	"$NFS_PID" "$LIMIT" "$NFILES" auto
lt_check "stats: OPENs past max_opens counted" nfs_stat_at_least state_opens_refused 1
lt_check "stats: fd_exhausted reported" grep -q "^fd_exhausted " "$LT_TMP/stats"
lt_check "/metrics: fd_exhausted reported" \
	metric_at_least 'lacunad_limit_hits_total{limit="fd_exhausted"}' 0
nfs_stop

fd_conf "max_cached_files = 8192" "max_opens = 100000"
rm -f "$LT_TMP/stats"
nfs_start --config "$LT_TMP/lacunad.conf"
nfs_run_checks "over" 600 python3 "$top_srcdir/tests/py/lt_fd_budget.py" run "$NFS_PORT" \
	"$NFS_PID" "$LIMIT" "$NFILES" over
lt_check "stats: fd_exhausted counted" nfs_stat_at_least fd_exhausted 1
lt_check "/metrics: fd_exhausted counted" \
	metric_at_least 'lacunad_limit_hits_total{limit="fd_exhausted"}' 1
lt_check "a warning in the log" grep -q "out of file descriptors (EMFILE" "$NFS_LOG"
lt_log "$(grep -m1 -o "out of file descriptors.*" "$NFS_LOG")"
lt_log "stats: $(grep -E "^(fd_exhausted|cached_files|state_opens_refused) " "$LT_TMP/stats" | tr '\n' ' ')"
nfs_stop
lt_done
