#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lacunad as an administrator meets it: --help and --version, usage errors
# (exit 2 with the usage), configuration errors reported as FILE:LINE
# (exit 1), a configuration file with exports in the pseudo filesystem
# and a statistics file, SIGHUP reloading it (a broken file is refused and
# the old one kept), SIGTERM (exit 0); and the failures of what it serves:
# a full filesystem gives NFS4ERR_NOSPC, a lacunafs that died gives an NFS
# error, and lacunad keeps serving.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
nfs_require_server
nfs_require_libnfs
lt_require_fuse

HOSTILE="$top_srcdir/tests/tools/nfs_hostile.py"

# ---- command line
out=$("$LACUNAD" --help 2>&1)
lt_check_eq "--help exits 0" 0 $?
lt_check "--help shows the usage" grep -q -- "--export DIR" <<<"$out"
out=$("$LACUNAD" --version 2>&1)
lt_check "--version names lacunad" grep -q "^lacunad " <<<"$out"
out=$("$LACUNAD" --frobnicate 2>&1)
lt_check_eq "unknown option exits 2" 2 $?
lt_check_eq "unknown option: one line and a pointer to --help" \
	"lacunad: unknown option '--frobnicate'|Try 'lacunad --help' for more information." \
	"$(paste -sd'|' <<<"$out")"
out=$("$LACUNAD" --export /tmp --listen bogus 2>&1)
lt_check_eq "bad --listen exits 2" 2 $?
lt_check_eq "bad --listen: two lines, no usage" 2 "$(wc -l <<<"$out")"
lt_check "bad --listen: prefixed and said why" grep -q "^lacunad: --listen: 'bogus'" <<<"$out"
out=$("$LACUNAD" --export /tmp --state-dir relative/dir 2>&1)
lt_check_eq "relative --state-dir exits 2" 2 $?
lt_check "relative --state-dir: said why" grep -q "state-dir: 'relative/dir' is not an absolute path" <<<"$out"
out=$("$LACUNAD" --export /tmp --grace maybe 2>&1)
lt_check_eq "--grace maybe exits 2" 2 $?
lt_check "--grace maybe: said why" grep -q "grace: 'maybe' is not on or off" <<<"$out"
out=$("$LACUNAD" --export /nonexistent-dir-xyz 2>&1)
rc=$?
lt_check "missing export dir: non-zero exit" test "$rc" -ne 0
lt_check "missing export dir: named, prefixed lacunad:" \
	grep -q "^lacunad: .*nonexistent-dir-xyz" <<<"$out"
printf '%s\n' "listen = 127.0.0.1:notaport" "threads = many" \
	"/srv/nowhere 127.0.0.1(rw,frobnicate)" >"$LT_TMP/bad.conf"
out=$("$LACUNAD" --config "$LT_TMP/bad.conf" -f 2>&1)
lt_check_eq "bad configuration exits 1" 1 $?
lt_check "errors as FILE:LINE (line 1)" grep -q "^lacunad: .*bad.conf:1:" <<<"$out"
lt_check "errors as FILE:LINE (line 2)" grep -q "bad.conf:2:" <<<"$out"
lt_check "errors as FILE:LINE (line 3)" grep -q "bad.conf:3:" <<<"$out"

# ---- a configuration file, the pseudo filesystem, stats, SIGHUP
nfs_make_export ext4 cfa
A=$NFS_EXPORT
echo "in a" >"$A/file-a"
nfs_make_export plain cfb
B=$NFS_EXPORT
echo "in b" >"$B/file-b"
port=$(nfs_free_port) || lt_hard "no free port"
conf="$LT_TMP/lacunad.conf"
printf '%s\n' "listen = 127.0.0.1:$port" "lease_time = 10" "stats_file = $LT_TMP/stats" \
	"$A 127.0.0.1(rw,no_root_squash)" >"$conf"
log="$LT_TMP/lacunad-conf.log"
setsid "$LACUNAD" --config "$conf" --state-dir "$LT_TMP/state" -f >"$log" 2>&1 &
pid=$!
lt_push_cleanup "kill -TERM $pid 2>/dev/null"
for ((i = 0; i < 100; i++)); do
	ss -Hltn "sport = :$port" | grep -q . && break
	sleep 0.05
done
url() { echo "nfs://127.0.0.1/$1?version=4&nfsport=$port"; }
out=$(lt_timeout 120 nfs-cat "$(url "$A/file-a")" 2>&1)
lt_check_eq "export at its path in the pseudo filesystem" "in a" "$out"
out=$(lt_timeout 120 nfs-ls "$(url "$(dirname "$A")")" 2>&1)
lt_check "pseudo directory lists the export" grep -q " $(basename "$A")\$" <<<"$out"
lt_check_eq "start-up: the thread count said once" 1 "$(grep -cE "[0-9]+ (worker )?threads" "$log")"
sleep 1.5
lt_check "stats file written" grep -q "^compounds [1-9]" "$LT_TMP/stats"
lt_check "stats file counts ops" grep -q "^op PUTROOTFH [1-9]" "$LT_TMP/stats"

echo "$B 127.0.0.1(ro)" >>"$conf"
kill -HUP "$pid"
sleep 1
out=$(lt_timeout 120 nfs-cat "$(url "$B/file-b")" 2>&1)
lt_check_eq "SIGHUP: the new export is served" "in b" "$out"
echo "this is not a setting" >>"$conf"
kill -HUP "$pid"
sleep 1
lt_check "SIGHUP with a broken file: refused with FILE:LINE" grep -q "lacunad.conf:6:" "$log"
out=$(lt_timeout 120 nfs-cat "$(url "$B/file-b")" 2>&1)
lt_check_eq "SIGHUP with a broken file: old configuration kept" "in b" "$out"
sed -i -e '$d' -e 's/^lease_time = 10$/lease_time = 20/' "$conf"
printf '%s\n' "threads = 3" "grace = off" >>"$conf"
kill -HUP "$pid"
sleep 1
lt_check "SIGHUP: a setting taken at start is said to need a restart" \
	grep -q "reload: threads stays .* until lacunad is restarted" "$log"
lt_check "SIGHUP: ... grace too" grep -q "reload: grace applies at the next start" "$log"
lt_check "SIGHUP: lease_time is applied" grep -q "reloaded .*lease 20 s" "$log"
lt_check "stats file: grace and client records" grep -q "^grace 0" "$LT_TMP/stats"
lt_check "stats file: ... the records of clients holding state" grep -q "^client_records " "$LT_TMP/stats"
kill -TERM "$pid"
wait "$pid"
lt_check_eq "SIGTERM: exit 0" 0 $?

# ---- --rdma: RDMA where a device is, else said once and TCP served
nfs_start "$B" --rdma
if ls /sys/class/infiniband/* >/dev/null 2>&1; then
	# loopback: listening where a device serves it, else said and TCP alone
	lt_check "--rdma: RDMA listening or refused with a reason" \
		grep -q -e "rdma: listening on 127.0.0.1:20049" -e "serving TCP only" "$NFS_LOG"
else
	lt_check_eq "--rdma without a device: said once" 1 \
		"$(grep -c "rdma: no RDMA device: serving TCP only" "$NFS_LOG")"
fi
out=$(lt_timeout 120 nfs-cat "nfs://127.0.0.1//file-b?version=4&nfsport=$NFS_PORT" 2>&1)
lt_check_eq "--rdma: TCP served" "in b" "$out"
nfs_stop

# ---- a full filesystem
lt_make_fs ext4 small 64M
small=$LT_TMP/mnt-small
lt_mount_lacunafs "$LT_FS" "$small"
: >"$small/filler"
nfs_start "$small"
out=$(lt_timeout 120 python3 "$HOSTILE" fill --port "$NFS_PORT" filler)
lt_check_eq "full filesystem: NFS4ERR_NOSPC" 28 "$out"
lt_check "full filesystem: server alive" nfs_alive
out=$(lt_timeout 120 nfs-ls "$(nfs_url /)" 2>&1)
lt_check "full filesystem: still listing" grep -q filler <<<"$out"

# ---- lacunafs dies under lacunad
kill -KILL "${LT_LFS_PIDS[$small]}"
sleep 0.5
lt_timeout 120 nfs-cat "$(nfs_url filler)" >/dev/null 2>&1
lt_check "dead lacunafs: the client gets an error" test $? -ne 0
lt_check "dead lacunafs: server alive" nfs_alive
lt_check "dead lacunafs: NULL still answered" \
	python3 "$top_srcdir/tests/tools/rpc_client.py" --port "$NFS_PORT" null
nfs_stop
umount -l "$small" 2>/dev/null
lt_done
