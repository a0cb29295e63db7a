#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# RPC-with-TLS (RFC 9289) in lacunad, the smallest end-to-end check
# (tests/py/nfs_tls_smoke.py over tests/py/lt_nfs4raw.py): certificates
# made here with openssl (tests/lib_tls.sh); lacunad with --tls-cert/
# --tls-key answers the AUTH_TLS probe with STARTTLS, takes a TLS 1.3
# handshake from Python's ssl module on the same connection, serves NULL
# and a COMPOUND (PUTROOTFH, GETATTR) inside TLS, refuses a second probe
# inside TLS (AUTH_BADCRED) and a client that offers TLS 1.2 only; the
# statistics count the handshake and the refusal. Without a certificate
# the probe gets AUTH_ERROR AUTH_BADCRED and the connection goes on in
# the clear.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own RPC-with-TLS"
nfs_require_server
lt_require_cmd python3 openssl

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/stats"; }

tls_make_certs "$LT_TMP/certs"
nfs_make_export plain exp

# with a certificate
nfs_start "$NFS_EXPORT" --tls-cert "$TLS_CERTS/server.crt" --tls-key "$TLS_CERTS/server.key" \
	--stats-file "$LT_TMP/stats"
nfs_run_checks "tls" "$LT_NFS_TIMEOUT" python3 "$top_srcdir/tests/py/nfs_tls_smoke.py" \
	"$NFS_PORT" tls "$TLS_CERTS/ca.crt"
lt_check "the log says how records are encrypted" \
	grep -q "tls: kernel TLS .*records encrypted in user space" "$NFS_LOG"
lt_check "the log names the connection's protocol" grep -q "tls: connection .*TLSv1.3" "$NFS_LOG"
# a stats file written after the checks (lacunad writes it every second)
touch "$LT_TMP/stats-mark"
lt_wait_for 60 "lacunad to write $LT_TMP/stats" test "$LT_TMP/stats" -nt "$LT_TMP/stats-mark" ||
	lt_fail "timed out waiting for the stats file"
nfs_stop
lt_check_eq "tls_probes counts both probes" 2 "$(stat_of tls_probes)"
lt_check_eq "tls_handshakes counts the TLS 1.3 one" 1 "$(stat_of tls_handshakes)"
lt_check_eq "tls_failures_version counts the TLS 1.2 client" 1 "$(stat_of tls_failures_version)"

# without one
nfs_start "$NFS_EXPORT"
nfs_run_checks "off" "$LT_NFS_TIMEOUT" python3 "$top_srcdir/tests/py/nfs_tls_smoke.py" \
	"$NFS_PORT" off
nfs_stop
lt_done
