#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exports(5)'s xprtsec=, as Linux nfsd enforces it (check_xprtsec_policy()):
# a mixed configuration of exports admitting none, tls, mtls, none:tls and
# the default (none:tls:mtls with a certificate), each holding one file,
# and one taking only AUTH_NONE (sec=none), which every AUTH_SYS call of
# the test gets NFS4ERR_WRONGSEC from whatever the transport.
# Over plain TCP (tests/py/lt_xprtsec.py, minor versions 0 and 2) the
# exports admitting "none" serve the file and the tls-only and mtls-only
# ones answer NFS4ERR_WRONGSEC, while SECINFO still answers their
# flavors; the refusals are counted (xprtsec_refused in the stats file,
# lacunad_xprtsec_refused_total in /metrics, both shown by lacuna stats)
# and logged at most once a minute. A reload (SIGHUP) applies a changed
# xprtsec= to the next COMPOUNDs; one with tls_key missing is refused and
# the configuration in use stays. The pseudo root is open over a
# transport while some export admitting the client is: with tls exports
# only, PUTROOTFH+GETATTR over plain TCP is refused too (SECINFO_NO_NAME
# of the root still answers), and over TLS a client with a certificate is
# refused by those tls-only exports (logged with its identity) while one
# without is served. Configuration errors stop lacunad with a
# message (a tls export without a certificate, tls_cert without tls_key,
# an unreadable key file; --xprtsec with a bad list).
#
# When lacunad speaks RPC-with-TLS (its answer to the AUTH_TLS probe is
# STARTTLS), the same exports over TLS: without a client certificate the
# tls exports serve and the mtls-only one refuses; with a certificate
# signed by tls_ca the mtls exports serve and, as in nfsd, the tls-only
# one refuses. The certificates are made here with openssl, never kept.
. "$top_srcdir/tests/lib.sh"
lt_init
. "$top_srcdir/tests/lib_nfs.sh"
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's own options"
nfs_require_server
lt_require_cmd python3 openssl

XS="$top_srcdir/tests/py/lt_xprtsec.py"
T="$LT_TMP/x"
PKI="$LT_TMP/pki"
mkdir -p "$PKI" || lt_hard "mkdir $PKI"
for e in none tls mtls nonetls dflt secnone; do
	mkdir -p "$T/$e" && printf 'export %s\n' "$e" >"$T/$e/file" || lt_hard "make $T/$e"
done

# ---- certificates: a CA, the server's (for 127.0.0.1), a client's
mkcert() { # NAME CN [EXT]: NAME.key, NAME.pem signed by the CA
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$PKI/$1.key" -subj "/CN=$2" -out "$PKI/$1.csr" 2>/dev/null &&
		openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" \
			-CAcreateserial -days 2 -out "$PKI/$1.pem" ${3:+-extfile <(printf '%s\n' "$3")} \
			2>/dev/null
}
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$PKI/ca.key" -subj "/CN=lacuna test CA" -out "$PKI/ca.pem" 2>/dev/null ||
	lt_hard "openssl: the CA"
mkcert server 127.0.0.1 "subjectAltName=IP:127.0.0.1" || lt_hard "openssl: the server's certificate"
mkcert client "lacuna test client" "extendedKeyUsage=clientAuth" ||
	lt_hard "openssl: the client's certificate"
chmod 600 "$PKI"/*.key

p="${T#/}"
# the checks over plain TCP: none, none:tls and the default serve; tls, mtls refuse
PLAIN=("$p/none/file=ok" "$p/tls/file=wrongsec" "$p/mtls/file=wrongsec"
	"$p/nonetls/file=ok" "$p/dflt/file=ok" "$p/secnone/file=wrongsec" "/=ok")

write_conf() { # XPRTSEC_OF_TLS_EXPORT
	cat >"$LT_TMP/x.conf" <<EOF || lt_hard "write $LT_TMP/x.conf"
stats_file = $LT_TMP/stats
tls_cert = $PKI/server.pem
tls_key = $PKI/server.key
tls_ca = $PKI/ca.pem
$T/none 127.0.0.1(insecure,xprtsec=none)
$T/tls 127.0.0.1(insecure,xprtsec=$1)
$T/mtls 127.0.0.1(insecure,xprtsec=mtls)
$T/nonetls 127.0.0.1(insecure,xprtsec=none:tls)
$T/dflt 127.0.0.1(insecure)
$T/secnone 127.0.0.1(insecure,sec=none)
EOF
}

# ---- the mixed configuration over plain TCP
write_conf tls
MPORT=$(nfs_free_port) || lt_hard "no free port for /metrics"
nfs_start --config "$LT_TMP/x.conf" --metrics-listen "127.0.0.1:$MPORT"
lt_run_checks "plain TCP, mixed exports" 120 python3 "$XS" "$NFS_PORT" "${PLAIN[@]}"
# 2 minor versions x 2 refused READs, and 2 GETATTRs after 4.0's SECINFO
lt_check "refusals counted in the stats file" nfs_stat_at_least xprtsec_refused 6
lt_check "refusals counted in /metrics" nfs_metric_at_least "$MPORT" lacunad_xprtsec_refused_total 6
lt_check "refusal logged with the client, its transport and the export's policy" \
	grep -Eq "request from 127\.0\.0\.1:[0-9]+ over plain TCP refused \(NFS4ERR_WRONGSEC\): $T/(tls|mtls) admits it over (tls|mtls) only" \
	"$NFS_LOG"
lt_check "lacuna stats shows them (the page)" sh -c \
	"'$top_builddir/tools/lacuna' stats http://127.0.0.1:$MPORT/metrics | grep -Eq 'refused for their transport \\(xprtsec=\\): 6 calls'"
lt_check "lacuna stats shows them (the stats file)" sh -c \
	"'$top_builddir/tools/lacuna' stats --json '$LT_TMP/stats' | grep -Eq '\"xprtsec_refused\":6[,}]'"
n=$(grep -c "refused (NFS4ERR_WRONGSEC)" "$NFS_LOG")
lt_check "logged at most once a minute, not per call ($n lines for 6 refusals)" \
	test "$n" -ge 1 -a "$n" -lt 6

# ---- a reload: the tls export takes none:tls, the next COMPOUNDs see it
reloads_at_least() { test "$(grep -c "reloaded $LT_TMP/x.conf" "$NFS_LOG")" -ge "$1"; }
write_conf none:tls
kill -HUP "$NFS_PID"
lt_check "reloaded" lt_wait_for 20 "the reload" reloads_at_least 1
lt_run_checks "plain TCP after the reload" 120 python3 "$XS" "$NFS_PORT" "$p/tls/file=ok" \
	"$p/mtls/file=wrongsec"

# ---- a reload whose TLS settings are wrong (no tls_key) keeps the configuration in use
sed -i '/^tls_key/d' "$LT_TMP/x.conf"
kill -HUP "$NFS_PID"
lt_check "a reload without tls_key is refused" lt_wait_for 20 "the refusal" \
	grep -q "reload: configuration refused, keeping the one in use" "$NFS_LOG"
lt_check "and says why" grep -q "tls_cert is set but tls_key is not" "$NFS_LOG"
lt_run_checks "plain TCP after the refused reload" 120 python3 "$XS" "$NFS_PORT" \
	"$p/tls/file=ok" "$p/mtls/file=wrongsec"

# ---- RPC-with-TLS, when lacunad speaks it
tls_ready() {
	python3 - "$NFS_PORT" "$PKI/ca.pem" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "py"))
from lt_nfs4raw import Client
from lt_xprtsec import start_tls
c = Client(int(sys.argv[1]))
try:
    start_tls(c.s, sys.argv[2], None, None)
except Exception as e:
    print("# no RPC-with-TLS: %r" % e)
    sys.exit(1)
PY
}
write_conf tls
kill -HUP "$NFS_PID"
lt_check "reloaded again" lt_wait_for 20 "the reload" reloads_at_least 2
TLS=no
tls_ready && TLS=yes
if [ "$TLS" = yes ]; then
	lt_run_checks "TLS without a client certificate" 120 python3 "$XS" "$NFS_PORT" \
		--tls "$PKI/ca.pem" "$p/none/file=wrongsec" "$p/tls/file=ok" \
		"$p/mtls/file=wrongsec" "$p/nonetls/file=ok" "$p/dflt/file=ok" \
		"$p/secnone/file=wrongsec" "/=ok"
	lt_run_checks "TLS with a client certificate (mtls)" 120 python3 "$XS" "$NFS_PORT" \
		--tls "$PKI/ca.pem" --cert "$PKI/client.pem" --key "$PKI/client.key" \
		"$p/none/file=wrongsec" "$p/tls/file=wrongsec" "$p/mtls/file=ok" \
		"$p/nonetls/file=wrongsec" "$p/dflt/file=ok" "$p/secnone/file=wrongsec" "/=ok"
else
	lt_log "lacunad does not answer the AUTH_TLS probe: the TLS half is not run"
fi
lt_check "server alive" nfs_alive
nfs_stop

# ---- tls exports only: over plain TCP even the pseudo root is refused,
# and (nfsd's meaning of tls) so it is to a client with a certificate,
# whose identity the log line gives
cat >"$LT_TMP/tlsonly.conf" <<EOF || lt_hard "write $LT_TMP/tlsonly.conf"
stats_file = $LT_TMP/stats
tls_cert = $PKI/server.pem
tls_key = $PKI/server.key
tls_ca = $PKI/ca.pem
$T/tls 127.0.0.1(insecure,xprtsec=tls)
EOF
nfs_start --config "$LT_TMP/tlsonly.conf"
if [ "$TLS" = yes ]; then
	lt_run_checks "mtls, tls exports only" 120 python3 "$XS" "$NFS_PORT" --tls "$PKI/ca.pem" \
		--cert "$PKI/client.pem" --key "$PKI/client.key" "/=wrongsec"
	lt_check "the refusal logged with the client's identity" grep -Eq \
		"request from 127\.0\.0\.1:[0-9]+ over mtls as '[^']*lacuna test client[^']*' refused \(NFS4ERR_WRONGSEC\): every export admitting it admits it over tls only" \
		"$NFS_LOG"
	lt_run_checks "tls, tls exports only" 120 python3 "$XS" "$NFS_PORT" --tls "$PKI/ca.pem" \
		"/=ok" "$p/tls/file=ok"
fi
lt_run_checks "plain TCP, tls exports only" 120 python3 "$XS" "$NFS_PORT" "/=wrongsec"
nfs_stop

# ---- configuration errors: lacunad does not start, and says why
LACUNAD="$top_builddir/gateway/lacunad"
refuses() { # WHAT ARGS...: lacunad exits non-zero with WHAT on stderr
	local what=$1 rc
	shift
	timeout 60 "$LACUNAD" "$@" --listen "127.0.0.1:$(nfs_free_port)" \
		--state-dir "$LT_TMP/state-refused" -f >"$LT_TMP/refused.out" 2>&1
	rc=$?
	sed 's/^/# /' "$LT_TMP/refused.out"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -qF -- "$what" "$LT_TMP/refused.out"
}
cat >"$LT_TMP/nocert.conf" <<EOF || lt_hard "write $LT_TMP/nocert.conf"
$T/tls 127.0.0.1(xprtsec=tls)
EOF
lt_check "a tls export without tls_cert" refuses \
	"$T/tls 127.0.0.1: xprtsec=tls needs a certificate" --config "$LT_TMP/nocert.conf"
lt_check "--xprtsec mtls without --tls-cert" refuses "xprtsec=mtls needs a certificate" \
	--export "$T/mtls" --xprtsec mtls
lt_check "--tls-cert without --tls-key" refuses "tls_cert is set but tls_key is not" \
	--export "$T/none" --tls-cert "$PKI/server.pem"
lt_check "an unreadable key" refuses "tls_key $PKI/nothere.key: open: No such file" \
	--export "$T/none" --tls-cert "$PKI/server.pem" --tls-key "$PKI/nothere.key"
lt_check "--xprtsec with an unknown mode" refuses "--xprtsec: 'none:ssl': unknown mode 'ssl'" \
	--export "$T/none" --xprtsec none:ssl
lt_check "--xprtsec with a mode twice" refuses "mode 'tls' listed twice" \
	--export "$T/none" --xprtsec tls:tls
lt_check "lacunad --help shows --xprtsec" sh -c "'$LACUNAD' --help | grep -q -- '--xprtsec LIST'"
lt_check "lacunad --help shows --tls-cert" sh -c "'$LACUNAD' --help | grep -q -- '--tls-cert FILE'"
lt_done
