# SPDX-License-Identifier: GPL-2.0-or-later
#
# Certificates for the RPC-with-TLS tests, made by openssl in the test's
# temporary directory and never kept. Sourced after tests/lib.sh:
#
#   tls_make_certs DIR   makes in DIR (EC P-256 keys, valid for 2 days):
#     ca.crt ca.key             the CA lacunad trusts (tls_ca)
#     server.crt server.key     lacunad's, signed by ca, for 127.0.0.1 and
#                               localhost (SAN), serverAuth
#     server2.crt server2.key   another of lacunad's (CN "lacuna server 2"),
#                               for a certificate reload
#     client.crt client.key     a client's, signed by ca, clientAuth
#     expired.crt expired.key   a client's, signed by ca, expired (its
#                               notAfter is a day before its notBefore,
#                               which is now: openssl 3.0's x509 -days -1)
#     other-ca.crt other-ca.key another CA, trusted by nobody
#     rogue.crt rogue.key       a client's, signed by other-ca
#   Sets TLS_CERTS=DIR; a failure is a hard error.

_tls_ca() { # NAME SUBJECT
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=$2" -keyout "$TLS_CERTS/$1.key" -out "$TLS_CERTS/$1.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
		2>/dev/null
}

_tls_cert() { # NAME SUBJECT CA DAYS EXTENSIONS
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
		-keyout "$TLS_CERTS/$1.key" -out "$TLS_CERTS/$1.csr" 2>/dev/null &&
		openssl x509 -req -in "$TLS_CERTS/$1.csr" -CA "$TLS_CERTS/$3.crt" \
			-CAkey "$TLS_CERTS/$3.key" -CAcreateserial -days "$4" \
			-out "$TLS_CERTS/$1.crt" -extfile <(printf '%s\n' "$5") 2>/dev/null
}

tls_make_certs() {
	TLS_CERTS=$1
	lt_require_cmd openssl
	mkdir -p "$TLS_CERTS" || lt_hard "mkdir $TLS_CERTS"
	_tls_ca ca "lacuna test CA" &&
		_tls_ca other-ca "lacuna other CA" &&
		_tls_cert server localhost ca 2 "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth" &&
		_tls_cert server2 "lacuna server 2" ca 2 "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth" &&
		_tls_cert client "lacuna test client" ca 2 "extendedKeyUsage=clientAuth" &&
		_tls_cert expired "lacuna expired client" ca -1 "extendedKeyUsage=clientAuth" &&
		_tls_cert rogue "lacuna rogue client" other-ca 2 "extendedKeyUsage=clientAuth" ||
		lt_hard "openssl could not make the test certificates"
	chmod 600 "$TLS_CERTS"/*.key
	openssl verify -CAfile "$TLS_CERTS/ca.crt" "$TLS_CERTS/client.crt" >/dev/null 2>&1 ||
		lt_hard "openssl verify: the client certificate does not verify"
	! openssl verify -CAfile "$TLS_CERTS/ca.crt" "$TLS_CERTS/expired.crt" >/dev/null 2>&1 ||
		lt_hard "openssl verify: the expired certificate verifies"
}
