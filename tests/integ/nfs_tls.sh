#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) in lacunad with raw RPC clients
# (tests/py/lt_tls.py and lt_tls_readplus.py over tests/py/lt_nfs4raw.py and
# Python's ssl), on
# lacunafs over ext4, certificates made by openssl here (tests/lib_tls.sh):
#  - minor versions 0, 1 and 2, each over a TLS connection of its own,
#    without and with a client certificate: the AUTH_TLS probe answered
#    with the STARTTLS verifier, TLS 1.3, ALPN "sunrpc" selected when
#    offered, a NULL call inside TLS, then 4.0 SETCLIENTID/CONFIRM or 4.1
#    and 4.2 EXCHANGE_ID/CREATE_SESSION/SEQUENCE, OPEN (create), WRITE,
#    READ back, CLOSE, CREATE of a directory, READDIR, REMOVE; what the
#    server sent after the handshake (read below the TLS layer: memory
#    BIOs) is nothing but TLS application_data records, with no 64 bytes
#    of the data written and read back in clear; the handshakes counted
#    in /metrics;
#  - a certificate reload: lacunad with a configuration file gets SIGHUP
#    after its certificate and key files were replaced: a connection made
#    before is still served, a new one gets the new certificate; a
#    certificate file that does not load is refused on the next SIGHUP
#    and the previous certificate stays;
#  - READ_PLUS over TLS of sparse files (all hole, empty, dense, data at
#    both ends, ending in a hole, 40 random data runs, data past 1 GiB):
#    every byte and the map of data and holes equal to the backing file;
#  - pipelining over one TLS connection: as many 1 MiB WRITEs (at odd
#    offsets) as the session has slots sent before reading a reply, then
#    as many READ_PLUS, then READs: each answered once, the data written
#    in the backing file and read back whole;
#  - a torture over TLS: READ_PLUS readers of 1 MiB regions at unaligned
#    offsets while a writer sends 1 MiB WRITEs (FILE_SYNC4) over TLS and
#    another writes (from a buffer at an odd address, as much as the
#    mount's write unit) and punches through the mount: 0 torn replies.
#    Negative control: lacunad with LACUNA_TEST_PLAIN_WRITE=1 (WRITE by
#    pwrite from the receive buffer) must show a torn reply within
#    LT_TLS_RACE_REPLIES (default 20000) replies: the check can see what
#    the atomic write prevents for data that arrived through TLS. And a
#    second lacunafs mount with LACUNA_TEST_DISABLE_RANGELOCK=1 served
#    over TLS must show a torn reply within as many replies: the readers
#    can see the race lacunafs's range lock prevents.
# Nothing is judged by the clock; the clients' waits only guard against
# hangs. LT_TLS_SEED picks the random layouts (printed).

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's RPC-with-TLS"
nfs_require_server
lt_require_fuse
lt_require_cmd python3 openssl
T="$top_srcdir/tests/py/lt_tls.py"
RP="$top_srcdir/tests/py/lt_tls_readplus.py"
M="$top_srcdir/tests/py/lt_metrics.py"
SEED=${LT_TLS_SEED:-$((RANDOM * 32768 + RANDOM))}
RACE_REPLIES=${LT_TLS_RACE_REPLIES:-20000}
lt_log "seed $SEED (set LT_TLS_SEED to repeat)"

tls_make_certs "$LT_TMP/certs"
C=$TLS_CERTS
SRV_TLS=(--tls-cert "$C/server.crt" --tls-key "$C/server.key" --tls-ca "$C/ca.crt")
CA=(--ca "$C/ca.crt")
WITH_CERT=(--ca "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key")

tls() { nfs_run_checks "$1" "$LT_NFS_TIMEOUT" python3 "$T" "${@:2}"; }
rp() { nfs_run_checks "$1" "$LT_NFS_TIMEOUT" python3 "$RP" "${@:2}"; }
metric() { # SAMPLE: its value on the /metrics page now (0 when absent)
	nfs_run python3 "$M" get "$URL" >"$LT_TMP/page" || return 1
	python3 "$M" value "$LT_TMP/page" "$1"
}

nfs_make_export ext4 tls
mport=$(nfs_free_port) || lt_hard "no free port for the metrics"
URL="http://127.0.0.1:$mport/metrics"
nfs_start "$NFS_EXPORT" --threads 2 "${SRV_TLS[@]}" --metrics-listen "127.0.0.1:$mport"
hs0=$(metric lacunad_tls_handshakes_total) || lt_hard "GET $URL"

tls "minors" minors "$NFS_PORT" "${CA[@]}"
tls "minors, client certificate" minors "$NFS_PORT" "${WITH_CERT[@]}"
hs1=$(metric lacunad_tls_handshakes_total)
lt_check "the 8 handshakes are counted in lacunad_tls_handshakes_total ($hs0 -> $hs1)" \
	test "$((${hs1%.*} - ${hs0%.*}))" -ge 8

rp "readplus" readplus "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING" --seed "$SEED" "${CA[@]}"
rp "pipeline" pipeline "$NFS_PORT" "$NFS_EXPORT" "$NFS_BACKING" "${CA[@]}"
rp "torture" torture "$NFS_PORT" "$NFS_EXPORT" --name torture --seed "$SEED" --replies 600 \
	"${CA[@]}"
bytes=$(metric 'lacunad_tls_bytes_total{direction="out"}')
lt_check "TLS bytes sent are counted (${bytes:-0})" test "${bytes%.*}" -gt $((8 * 1048576))
nfs_stop

# a certificate reload (SIGHUP) with a configuration file: copies of the
# server's files, which the test replaces
mkdir -p "$LT_TMP/srv" && cp -p "$C/server.crt" "$C/server.key" "$LT_TMP/srv/" ||
	lt_hard "copy the server's certificate"
nfs_plain_conf "tls_cert = $LT_TMP/srv/server.crt" "tls_key = $LT_TMP/srv/server.key"
nfs_start --config "$NFS_CONF" --threads 2
tls "reload" reload "$NFS_PORT" "$NFS_PID" "$NFS_LOG" "$LT_TMP/srv/server.crt" \
	"$LT_TMP/srv/server.key" "$C/server2.crt" "$C/server2.key" "${CA[@]}"
nfs_stop

LACUNA_TEST_PLAIN_WRITE=1 nfs_start "$NFS_EXPORT" --threads 2 "${SRV_TLS[@]}"
lt_check "lacunad says it writes with pwrite (LACUNA_TEST_PLAIN_WRITE)" \
	grep -q "ATOMIC WRITE DISABLED FOR TESTING" "$NFS_LOG"
rp "torture, negative control" torture "$NFS_PORT" "$NFS_EXPORT" --name control --seed "$SEED" \
	--expect-torn --max-replies "$RACE_REPLIES" "${CA[@]}"
nfs_stop

nolock="$LT_TMP/nolock"
LACUNA_TEST_DISABLE_RANGELOCK=1 lt_mount_lacunafs "$NFS_BACKING" "$nolock"
if grep -q "RANGE LOCK DISABLED" "$LT_TMP/lacunafs.nolock.log"; then
	nfs_start "$nolock" --threads 2 "${SRV_TLS[@]}"
	rp "torture, negative control without the range lock" torture "$NFS_PORT" "$nolock" \
		--name nolock --seed "$SEED" --expect-torn --max-replies "$RACE_REPLIES" "${CA[@]}"
	nfs_stop
else
	lt_fail "the second mount did not disable its range lock"
fi
lt_stop_lacunafs "$nolock"
lt_done
