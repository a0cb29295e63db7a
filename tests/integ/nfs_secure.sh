#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exports(5)'s secure and insecure, as Linux nfsd takes them: on a secure
# export (the default) AUTH_SYS calls from a source port of 1024 or more
# are answered NFS4ERR_PERM by the op that puts a file handle of the
# export (PUTROOTFH, LOOKUP into it, PUTFH), and served from a reserved
# port; an insecure export serves them from any port
# (tests/py/lt_secure.py, minor versions 0 and 2). Also: two rules of one
# export, secure for 127.0.0.1 and insecure for 127.0.0.2, each deciding
# for its address (the export below pseudo directories, which follow the
# rules admitting the client); one-export mode with --export-options
# insecure; the refusals counted (insecure_port_refused in the stats
# file, lacunad_insecure_port_refused_total in /metrics) and logged
# ("request from insecure port ADDR:PORT"); and the lacuna CLI, which as
# root connects from a reserved port and not as root says why it is
# refused.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own options"
nfs_require_server
lt_require_cmd python3 setpriv cmp
[ "$(id -u)" = 0 ] || lt_skip "needs root, for reserved ports"

SECURE="$top_srcdir/tests/py/lt_secure.py"
LACUNA="$top_builddir/tools/lacuna"
DIR="$LT_TMP/export"
mkdir -p "$DIR/sub" || lt_hard "mkdir $DIR/sub"
printf 'secure or not\n' >"$DIR/sub/file" || lt_hard "write $DIR/sub/file"
STATS=(--stats-file "$LT_TMP/stats")

# ---- one-export mode, the default: secure
MPORT=$(nfs_free_port) || lt_hard "no free port for /metrics"
nfs_start "$DIR" "${STATS[@]}" --metrics-listen "127.0.0.1:$MPORT"
lt_run_checks "default (secure)" 120 python3 "$SECURE" "$NFS_PORT" sub/file perm
# 2 minor versions x (3 refused calls + PUTFH alone)
lt_check "refusals counted in the stats file" nfs_stat_at_least insecure_port_refused 8
lt_check "refusals counted in /metrics" nfs_metric_at_least "$MPORT" lacunad_insecure_port_refused_total 8
lt_check "refusal logged with the client's address and port" \
	grep -Eq "request from insecure port 127\.0\.0\.1:[0-9]{4,5} refused" "$NFS_LOG"
n=$(grep -c "request from insecure port" "$NFS_LOG")
lt_check "logged at most once a minute, not per call ($n lines for 8 refusals)" \
	test "$n" -ge 1 -a "$n" -lt 8

# the CLI as root: from a reserved port, served
lt_check "lacuna nfs-get as root" nfs_run "$LACUNA" nfs-get \
	"nfs://127.0.0.1:$NFS_PORT/sub/file" "$LT_TMP/got"
lt_check "lacuna nfs-get as root: the file's bytes" cmp "$DIR/sub/file" "$LT_TMP/got"
# not as root: an ordinary port, refused, and the message says what to do
nfs_run setpriv --reuid=65534 --regid=65534 --clear-groups "$LACUNA" nfs-map \
	"nfs://127.0.0.1:$NFS_PORT/sub/file" >"$LT_TMP/cli.out" 2>&1
lt_check_eq "lacuna nfs-map not as root: exit status" 1 "$?"
sed 's/^/# /' "$LT_TMP/cli.out"
lt_check "lacuna nfs-map not as root: NFS4ERR_PERM" grep -q NFS4ERR_PERM "$LT_TMP/cli.out"
lt_check "lacuna nfs-map not as root: says to run as root or add insecure" \
	grep -q "run as root.*add \`insecure\` to the export's options" "$LT_TMP/cli.out"
nfs_stop

# ---- one-export mode, --export-options insecure
NFS_EXPORT_OPTS=insecure nfs_start "$DIR"
lt_run_checks "--export-options insecure" 120 python3 "$SECURE" "$NFS_PORT" sub/file ok
lt_check "lacuna nfs-map not as root on an insecure export" nfs_run setpriv --reuid=65534 \
	--regid=65534 --clear-groups "$LACUNA" nfs-map "nfs://127.0.0.1:$NFS_PORT/sub/file"
lt_check_fails "nothing logged" grep -q "request from insecure port" "$NFS_LOG"
nfs_stop

# ---- a file: one export, a secure rule for 127.0.0.1 and an insecure one
# for 127.0.0.2; no fsid=root, so the export sits below pseudo directories
cat >"$LT_TMP/two.conf" <<EOF || lt_hard "write $LT_TMP/two.conf"
stats_file = $LT_TMP/stats2
$DIR 127.0.0.1(rw,no_root_squash) 127.0.0.2(rw,no_root_squash,insecure)
EOF
nfs_start --config "$LT_TMP/two.conf"
path="${DIR#/}/sub/file"
lt_run_checks "127.0.0.1 under its secure rule" 120 \
	python3 "$SECURE" "$NFS_PORT" "$path" perm --source 127.0.0.1
lt_run_checks "127.0.0.2 under its insecure rule" 120 \
	python3 "$SECURE" "$NFS_PORT" "$path" ok --source 127.0.0.2
lt_check "server alive" nfs_alive
nfs_stop
lt_done
