#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lacuna nfs-get` and `lacuna nfs-map` over RPC-with-TLS (RFC 9289)
# against lacunad, with certificates made here by openssl (tests/lib_tls.sh:
# a CA, a server certificate naming 127.0.0.1, a client certificate;
# another CA that signed neither):
#  - usage: --help shows --tls, --ca, --cert, --key; --tls with --rdma and
#    --key without --cert are usage errors (2);
#  - a lacunad without a certificate: --tls fails (1) saying that the
#    server does not support RPC-with-TLS;
#  - a lacunad with one (tls_cert, tls_key, tls_ca in its configuration
#    file) and three exports on lacunafs over ext4: `pub` (xprtsec=none:tls:
#    mtls) and `sec` (xprtsec=mtls). Over TLS, nfs-get with READ_PLUS copies
#    a sparse file byte for byte (SHA-256), reports its hole bytes as
#    `lacuna map` of the file counts them, keeps them holes in the copy,
#    and says TLS 1.3 was used; nfs-map --json gives the same holes and
#    "xprtsec":"tls"; READ at depth 16 copies it too; the wrong CA is a
#    verification failure naming the reason (1, no copy left behind); on
#    `sec`, a client certificate from the CA reads the file, while no
#    certificate, a certificate of the other CA, and a connection in the
#    clear are refused (1, NFS4ERR_WRONGSEC with a hint naming the options),
#    while `pub` still serves a connection in the clear; a third export,
#    `tlsonly` (xprtsec=tls), serves TLS and refuses mutual TLS, as nfsd;
#  - the cipher suite is the client's (AES-256-GCM) unless
#    tls_cipher_preference = aes128, with which it is AES-128-GCM.

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib_nfs.sh"
. "$top_srcdir/tests/lib_tls.sh"
lt_init
[ "$LT_NFS_SERVER" = lacunad ] || lt_skip "checks lacunad's RPC-with-TLS"
nfs_require_server
lt_require_cmd openssl sha256sum python3 setsid
lt_require_fuse
LACUNA="$top_builddir/tools/lacuna"
[ -x "$LACUNA" ] || lt_hard "lacuna not built at $LACUNA"
OUT=$LT_TMP/cli.out

# run_lacuna STATUS ARGS...: lacuna's exit status must be STATUS; output in $OUT
run_lacuna() {
	local want=$1 rc
	shift
	nfs_run "$LACUNA" "$@" >"$OUT" 2>&1
	rc=$?
	sed 's/^/# /' "$OUT"
	lt_check_eq "lacuna $* -> exit status" "$want" "$rc"
}
json_field() { # FILE KEY
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# ---- certificates (tests/lib_tls.sh): ca, server, client; other-ca and
# rogue (a client's signed by other-ca)
C=$LT_TMP/certs
tls_make_certs "$C"

# ---- usage
for cmd in nfs-get nfs-map; do
	"$LACUNA" "$cmd" --help >"$OUT" 2>&1
	for o in --tls "--ca FILE" "--cert FILE" "--key FILE"; do
		lt_check "$cmd --help shows $o" grep -q -- "$o" "$OUT"
	done
done
run_lacuna 2 nfs-get --tls --rdma nfs://127.0.0.1/x "$LT_TMP/x"
lt_check "--tls --rdma: says why" grep -q "do not go together" "$OUT"
run_lacuna 2 nfs-map --key "$C/client.key" nfs://127.0.0.1/x
lt_check "--key without --cert: says why" grep -q -- "--key needs --cert" "$OUT"

# ---- the files: a sparse one in each export, read once (canonical maps)
nfs_make_export ext4 tls 256M
mkdir -p "$NFS_EXPORT/pub" "$NFS_EXPORT/sec" "$NFS_EXPORT/tlsonly" || lt_hard "mkdir in $NFS_EXPORT"
SP=$NFS_EXPORT/pub/sparse.dat
truncate -s 48M "$SP" || lt_hard "truncate $SP"
for at in 4 20 21 22 47; do
	dd if=/dev/urandom of="$SP" bs=1M seek="$at" count=1 conv=notrunc status=none ||
		lt_hard "dd into $SP"
done
for d in sec tlsonly; do
	cp --sparse=always "$SP" "$NFS_EXPORT/$d/sparse.dat" || lt_hard "cp $SP"
	cat "$NFS_EXPORT/$d/sparse.dat" >/dev/null
done
cat "$SP" >/dev/null
SUM=$(nfs_sha256 "$SP")
"$LACUNA" map --json "$SP" >"$LT_TMP/map.json" || lt_hard "lacuna map $SP"
HOLES=$(json_field "$LT_TMP/map.json" hole_bytes)
lt_log "sparse.dat: 48 MiB, $HOLES bytes of holes, sha256 $SUM"
[ "$HOLES" -gt 0 ] || lt_hard "sparse.dat has no holes on this filesystem"

# ---- a server without TLS: the probe is refused
nfs_start "$NFS_EXPORT/pub"
run_lacuna 1 nfs-get --tls "nfs://127.0.0.1:$NFS_PORT/sparse.dat" "$LT_TMP/got"
lt_check "no TLS at the server: says so" grep -q "does not support RPC-with-TLS" "$OUT"
lt_check_fails "no TLS at the server: no copy left" test -e "$LT_TMP/got"
run_lacuna 1 nfs-map --ca "$C/ca.crt" "nfs://127.0.0.1:$NFS_PORT/sparse.dat"
lt_check "no TLS at the server (nfs-map --ca): says so" \
	grep -q "does not support RPC-with-TLS" "$OUT"
nfs_stop

# ---- a server with TLS
PUB=${NFS_EXPORT#/}/pub
SEC=${NFS_EXPORT#/}/sec
TLSONLY=${NFS_EXPORT#/}/tlsonly
cat >"$LT_TMP/tls.conf" <<EOF || lt_hard "write $LT_TMP/tls.conf"
tls_cert = $C/server.crt
tls_key = $C/server.key
tls_ca = $C/ca.crt
$NFS_EXPORT/pub 127.0.0.1(rw,no_root_squash,xprtsec=none:tls:mtls)
$NFS_EXPORT/sec 127.0.0.1(rw,no_root_squash,xprtsec=mtls)
$NFS_EXPORT/tlsonly 127.0.0.1(rw,no_root_squash,xprtsec=tls)
EOF
nfs_start --config "$LT_TMP/tls.conf"
URL=nfs://127.0.0.1:$NFS_PORT

# READ_PLUS over TLS: the same bytes, the same holes, kept as holes
run_lacuna 0 nfs-get --ca "$C/ca.crt" "$URL/$PUB/sparse.dat" "$LT_TMP/got"
lt_check_eq "nfs-get --ca: SHA-256 of the copy" "$SUM" "$(nfs_sha256 "$LT_TMP/got")"
lt_check "nfs-get --ca: READ_PLUS over TLS 1.3" grep -q "with READ_PLUS over TLSv1.3" "$OUT"
lt_check "nfs-get --ca: the client's cipher suite (AES-256-GCM) by default" \
	grep -q "over TLSv1.3 TLS_AES_256_GCM_SHA384" "$OUT"
lt_check "nfs-get --ca: reports the file's holes ($HOLES bytes)" \
	grep -q "holes $HOLES " "$OUT"
lt_check "nfs-get --ca: the holes stay holes in the copy" \
	test "$(($(stat -c %b "$LT_TMP/got") * 512))" -le "$((48 * 1048576 - HOLES))"
run_lacuna 0 nfs-map --json --tls --ca "$C/ca.crt" "$URL/$PUB/sparse.dat"
lt_check_eq "nfs-map --json over TLS: hole bytes" "$HOLES" "$(json_field "$OUT" hole_bytes)"
lt_check_eq "nfs-map --json over TLS: xprtsec" tls "$(json_field "$OUT" xprtsec)"
rm -f "$LT_TMP/got"
run_lacuna 0 nfs-get --read --depth 16 --ca "$C/ca.crt" "$URL/$PUB/sparse.dat" "$LT_TMP/got"
lt_check_eq "nfs-get --read --depth 16 over TLS: SHA-256" "$SUM" "$(nfs_sha256 "$LT_TMP/got")"
rm -f "$LT_TMP/got"

# the wrong CA: the server's certificate is refused, nothing copied
run_lacuna 1 nfs-get --ca "$C/other-ca.crt" "$URL/$PUB/sparse.dat" "$LT_TMP/got"
lt_check "wrong CA: a verification failure with OpenSSL's reason" \
	grep -q "certificate failed verification: .*certificate" "$OUT"
lt_check_fails "wrong CA: no copy left" test -e "$LT_TMP/got"

# mutual TLS
run_lacuna 0 nfs-get --ca "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key" \
	"$URL/$SEC/sparse.dat" "$LT_TMP/got"
lt_check_eq "mtls: SHA-256 of the copy" "$SUM" "$(nfs_sha256 "$LT_TMP/got")"
lt_check "mtls: says a client certificate was used" grep -q "client certificate" "$OUT"
rm -f "$LT_TMP/got"
run_lacuna 1 nfs-get --ca "$C/ca.crt" --cert "$C/rogue.crt" --key "$C/rogue.key" \
	"$URL/$SEC/sparse.dat" "$LT_TMP/got"
lt_check "a client certificate of another CA: OpenSSL's reason" grep -q "unknown ca" "$OUT"
lt_check_fails "a client certificate of another CA: no copy" test -e "$LT_TMP/got"
run_lacuna 1 nfs-get --ca "$C/ca.crt" "$URL/$SEC/sparse.dat" "$LT_TMP/got"
lt_check "mtls export, no client certificate: NFS4ERR_WRONGSEC" grep -q NFS4ERR_WRONGSEC "$OUT"
lt_check "mtls export, no client certificate: says to try --cert and --key" \
	grep -q -- "try --cert and --key" "$OUT"
lt_check_fails "mtls export, no client certificate: no copy" test -e "$LT_TMP/got"
run_lacuna 1 nfs-get "$URL/$SEC/sparse.dat" "$LT_TMP/got"
lt_check "mtls export in the clear: NFS4ERR_WRONGSEC" grep -q NFS4ERR_WRONGSEC "$OUT"
lt_check "mtls export in the clear: says to try --tls" grep -q "try --tls" "$OUT"
run_lacuna 0 nfs-get "$URL/$PUB/sparse.dat" "$LT_TMP/got"
lt_check_eq "none:tls:mtls export in the clear: SHA-256" "$SUM" "$(nfs_sha256 "$LT_TMP/got")"
# nfsd's xprtsec=tls: TLS without a client certificate, not mutual TLS
run_lacuna 0 nfs-get --ca "$C/ca.crt" "$URL/$TLSONLY/sparse.dat" "$LT_TMP/got"
lt_check_eq "tls export over TLS: SHA-256" "$SUM" "$(nfs_sha256 "$LT_TMP/got")"
rm -f "$LT_TMP/got"
run_lacuna 1 nfs-get --ca "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key" \
	"$URL/$TLSONLY/sparse.dat" "$LT_TMP/got"
lt_check "tls export, mutual TLS: NFS4ERR_WRONGSEC, says to try without --cert" \
	grep -q "does not admit mutual TLS.*try --tls without --cert" "$OUT"
lt_check "server alive" nfs_alive
nfs_stop

# tls_cipher_preference = aes128: AES-128-GCM although the client asks for AES-256 first
echo "tls_cipher_preference = aes128" >>"$LT_TMP/tls.conf" || lt_hard "write $LT_TMP/tls.conf"
nfs_start --config "$LT_TMP/tls.conf"
URL=nfs://127.0.0.1:$NFS_PORT
rm -f "$LT_TMP/got"
run_lacuna 0 nfs-get --ca "$C/ca.crt" "$URL/$PUB/sparse.dat" "$LT_TMP/got"
lt_check "tls_cipher_preference = aes128: TLS_AES_128_GCM_SHA256" \
	grep -q "over TLSv1.3 TLS_AES_128_GCM_SHA256" "$OUT"
lt_check_eq "tls_cipher_preference = aes128: SHA-256 of the copy" "$SUM" \
	"$(nfs_sha256 "$LT_TMP/got")"
nfs_stop
lt_done
