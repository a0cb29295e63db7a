#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hostile peers of lacunad's RPC-with-TLS (RFC 9289), raw clients of
# tests/py/lt_tls_hostile.py, certificates made by openssl here (tests/lib_tls.sh).
# lacunad runs with tls_handshake_timeout=2 and tls_handshakes_max=4.
# Each case ends with a closed connection (or a refused handshake), then
# a new TLS client must be served and the case's reason in
# lacunad_tls_failures_total{reason} (/metrics) must have grown:
#  - clear-text RPC right after STARTTLS, and random bytes instead of a
#    ClientHello (not_tls);
#  - a handshake that never starts (the probe, then nothing) and one that
#    never finishes (half a ClientHello): closed by the handshake timeout
#    (timeout);
#  - 10 stalled handshakes (more than tls_handshakes_max) while a client
#    that finished its handshake before keeps being served: the ones over
#    the limit refused (busy), all of them closed in the end;
#  - a client offering only TLS 1.2 (version), one offering ALPN without
#    "sunrpc" (alpn);
#  - a KeyUpdate storm (libssl's SSL_key_update through ctypes) on an
#    established connection: 60 KeyUpdates asking for one back, each
#    followed by a NULL call (application data between them: OpenSSL's
#    own limit of 32 KeyUpdates in a row does not apply), closed as
#    key_update; a burst of 200 KeyUpdates alone, closed (key_update, or
#    record when OpenSSL refuses them first);
#  - 20 TLS connections reset right after sending 4 READs of 1 MiB (their
#    replies being encrypted and sent): lacunad goes on serving;
#  - on an export with xprtsec=mtls (lacunad --xprtsec mtls): a client
#    with a certificate of tls_ca is served; one without a certificate is
#    refused (lacunad_xprtsec_refused_total), one with an expired
#    certificate and one with a certificate of another CA are refused
#    in the handshake (verify); the good certificate's subject is logged.
# lacunad must still be running and exit 0 on SIGTERM at the end
# (nfs_stop), with no sanitizer report in its log. The clients' waits
# (30 s) only guard against hangs: nothing is judged by the clock.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's RPC-with-TLS"
nfs_require_server
lt_require_cmd python3 openssl
T="$top_srcdir/tests/py/lt_tls_hostile.py"
HS_MAX=4

tls_make_certs "$LT_TMP/certs"
C=$TLS_CERTS
SRV_TLS=(--tls-cert "$C/server.crt" --tls-key "$C/server.key" --tls-ca "$C/ca.crt"
	--set tls_handshake_timeout=2 --set "tls_handshakes_max=$HS_MAX")
CA=(--ca "$C/ca.crt")

# (insecure: the clients need no reserved port, so that no root is needed)
NFS_EXPORT_OPTS=insecure
nfs_make_export plain export
head -c 4M /dev/urandom >"$NFS_EXPORT/big" || lt_hard "write $NFS_EXPORT/big"
mport=$(nfs_free_port) || lt_hard "no free port for the metrics"
URL="http://127.0.0.1:$mport/metrics"

bad() { # CASE [ARGS...]
	nfs_run_checks "$1" "$LT_NFS_TIMEOUT" python3 "$T" bad "$1" "$NFS_PORT" "$URL" "${CA[@]}" "${@:2}"
}

nfs_start "$NFS_EXPORT" --threads 2 "${SRV_TLS[@]}" --metrics-listen "127.0.0.1:$mport"
for c in plain garbage stall halfhello tls12 alpn; do
	bad "$c"
done
bad keyupdate --count 60
bad abort --count 20
bad flood --count $((HS_MAX + 6)) --hs-max "$HS_MAX"
nfs_stop

mport=$(nfs_free_port) || lt_hard "no free port for the metrics"
URL="http://127.0.0.1:$mport/metrics"
nfs_start "$NFS_EXPORT" --threads 2 "${SRV_TLS[@]}" --xprtsec mtls --metrics-listen "127.0.0.1:$mport"
nfs_run_checks "mtls" "$LT_NFS_TIMEOUT" python3 "$T" mtls "$NFS_PORT" "$URL" "${CA[@]}" \
	--cert "$C/client.crt" --key "$C/client.key" \
	--expired "$C/expired.crt" "$C/expired.key" --otherca "$C/rogue.crt" "$C/rogue.key"
lt_check "the identity of the client certificate is logged" \
	grep -q "tls: connection .*, client .*lacuna test client" "$NFS_LOG"
nfs_stop
lt_done
