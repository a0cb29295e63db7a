// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the TLS 1.3 record layer (common/tls13_rec.c): the
 * application traffic keys of RFC 8448 section 3 by HKDF-Expand-Label,
 * then, against OpenSSL on the other end of a handshake made in memory
 * (with every suite it offers for TLS 1.3): records sealed here that
 * OpenSSL reads and records OpenSSL writes that are opened here, in
 * both roles; a KeyUpdate asking for ours, answered, with data both
 * ways after it; a record with one bit changed, a record too long, an
 * unexpected handshake message and a fatal alert refused; close_notify
 * both ways.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls13_rec.h"

static void unhex(const char *h, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (uint8_t)(OPENSSL_hexchar2int((unsigned char)h[2 * i]) << 4 |
				   OPENSSL_hexchar2int((unsigned char)h[2 * i + 1]));
}

static void test_rfc8448_keys(void **state)
{
	static const struct {
		const char *secret, *key, *iv;
	} v[] = {
		/* client and server application traffic secrets, RFC 8448 section 3 */
		{ "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5",
		  "17422dda596ed5d9acd890e3c63f5051", "5b78923dee08579033e523d9" },
		{ "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643",
		  "9f02283b6c9c07efc26bb9f2ac92e356", "cf782b88dd83549aadf1e984" },
	};
	uint8_t secret[32], key[16], iv[12], want_key[16], want_iv[12];
	unsigned int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		unhex(v[i].secret, secret, sizeof(secret));
		unhex(v[i].key, want_key, sizeof(want_key));
		unhex(v[i].iv, want_iv, sizeof(want_iv));
		assert_int_equal(tls13_expand_label(32, secret, "key", key, sizeof(key)), 0);
		assert_int_equal(tls13_expand_label(32, secret, "iv", iv, sizeof(iv)), 0);
		assert_memory_equal(key, want_key, sizeof(key));
		assert_memory_equal(iv, want_iv, sizeof(iv));
	}
	assert_int_equal(tls13_expand_label(20, secret, "key", key, sizeof(key)), -EINVAL);
}

/* ---------------------------------------------------------------- a handshake in memory */

struct pair {
	SSL_CTX *sctx, *cctx;
	SSL *s, *c;
	BIO *s_in, *s_out, *c_in, *c_out; /* each SSL's read and write BIO */
};

static EVP_PKEY *pkey;
static X509 *cert;

static int make_cert(void **state)
{
	X509_NAME *n;

	(void)state;
	pkey = EVP_EC_gen("P-256");
	cert = X509_new();
	if (!pkey || !cert)
		return -1;
	ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
	X509_gmtime_adj(X509_getm_notBefore(cert), 0);
	X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
	X509_set_pubkey(cert, pkey);
	n = X509_get_subject_name(cert);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"test", -1, -1, 0);
	X509_set_issuer_name(cert, n);
	return X509_sign(cert, pkey, EVP_sha256()) > 0 ? 0 : -1;
}

static int free_cert(void **state)
{
	(void)state;
	X509_free(cert);
	EVP_PKEY_free(pkey);
	return 0;
}

/* Move what one side wrote to the other. */
static void pump(struct pair *p)
{
	uint8_t buf[65536];
	int n;

	while ((n = BIO_read(p->c_out, buf, sizeof(buf))) > 0)
		BIO_write(p->s_in, buf, n);
	while ((n = BIO_read(p->s_out, buf, sizeof(buf))) > 0)
		BIO_write(p->c_in, buf, n);
}

static void pair_make(struct pair *p, const char *suite)
{
	int i, rs = 0, rc = 0;

	memset(p, 0, sizeof(*p));
	p->sctx = SSL_CTX_new(TLS_server_method());
	p->cctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(p->sctx);
	assert_non_null(p->cctx);
	SSL_CTX_set_min_proto_version(p->sctx, TLS1_3_VERSION);
	SSL_CTX_set_min_proto_version(p->cctx, TLS1_3_VERSION);
	SSL_CTX_set_num_tickets(p->sctx, 0);
	assert_int_equal(SSL_CTX_use_certificate(p->sctx, cert), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey(p->sctx, pkey), 1);
	assert_int_equal(SSL_CTX_set_ciphersuites(p->cctx, suite), 1);
	assert_int_equal(tls13_capture(p->sctx), 0);
	assert_int_equal(tls13_capture(p->cctx), 0);
	p->s = SSL_new(p->sctx);
	p->c = SSL_new(p->cctx);
	p->s_in = BIO_new(BIO_s_mem());
	p->s_out = BIO_new(BIO_s_mem());
	p->c_in = BIO_new(BIO_s_mem());
	p->c_out = BIO_new(BIO_s_mem());
	SSL_set_bio(p->s, p->s_in, p->s_out);
	SSL_set_bio(p->c, p->c_in, p->c_out);
	SSL_set_accept_state(p->s);
	SSL_set_connect_state(p->c);
	for (i = 0; i < 20 && (rs != 1 || rc != 1); i++) {
		if (rc != 1)
			rc = SSL_do_handshake(p->c);
		pump(p);
		if (rs != 1)
			rs = SSL_do_handshake(p->s);
		pump(p);
	}
	assert_int_equal(rs, 1);
	assert_int_equal(rc, 1);
	assert_string_equal(SSL_CIPHER_get_name(SSL_get_current_cipher(p->s)), suite);
}

static void pair_free(struct pair *p)
{
	SSL_free(p->s);
	SSL_free(p->c);
	SSL_CTX_free(p->sctx);
	SSL_CTX_free(p->cctx);
}

/* One record of @b into @rec; its length. */
static size_t take_rec(BIO *b, uint8_t *rec)
{
	ssize_t rl;

	assert_int_equal(BIO_read(b, rec, TLS13_HDR), TLS13_HDR);
	rl = tls13_rec_len(rec, TLS13_HDR);
	assert_true(rl > 0);
	assert_int_equal(BIO_read(b, rec + TLS13_HDR, (int)rl - TLS13_HDR), (int)rl - TLS13_HDR);
	return (size_t)rl;
}

static uint8_t rec[TLS13_REC_MAX], big[3 * TLS13_PLAIN_MAX], got[3 * TLS13_PLAIN_MAX];

/* OpenSSL writes @len bytes on @from; opened here as @me; compared. */
static void openssl_to_us(struct tls13_conn *me, SSL *from, BIO *wire, size_t len)
{
	size_t have = 0, n, w;
	int r;

	assert_int_equal(SSL_write_ex(from, big, len, &w), 1);
	while (have < len) {
		n = take_rec(wire, rec);
		r = tls13_recv(me, rec, n, rec + TLS13_HDR, &w);
		assert_true(r == 1 || (r == 0 && !w && !me->eof)); /* 0: a KeyUpdate */
		memcpy(got + have, rec + TLS13_HDR, w);
		have += w;
	}
	assert_int_equal(have, len);
	assert_memory_equal(got, big, len);
	assert_int_equal(BIO_pending(wire), 0);
}

/* @len bytes sealed here from three iovecs, as records of 16 KiB; read by OpenSSL on @to. */
static void us_to_openssl(struct tls13_conn *me, SSL *to, BIO *wire, size_t len)
{
	struct iovec v[3] = {
		{ .iov_base = big, .iov_len = 7 },
		{ .iov_base = big + 7, .iov_len = len / 2 - 7 },
		{ .iov_base = big + len / 2, .iov_len = len - len / 2 },
	};
	size_t off, n, rl, have = 0, r;

	for (off = 0; off < len; off += n) {
		n = len - off > TLS13_PLAIN_MAX ? TLS13_PLAIN_MAX : len - off;
		assert_int_equal(tls13_seal(me, TLS13_CT_APPDATA, v, 3, off, n, rec, &rl), 0);
		assert_int_equal(rl, n + TLS13_OVERHEAD);
		BIO_write(wire, rec, (int)rl);
	}
	while (have < len) {
		assert_int_equal(SSL_read_ex(to, got + have, len - have, &r), 1);
		have += r;
	}
	assert_memory_equal(got, big, len);
}

static void both_ways(const char *suite)
{
	struct tls13_conn s, c;
	struct pair p;
	size_t n, rl;
	unsigned int i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	pair_make(&p, suite);
	assert_int_equal(tls13_take(p.s, true, &s), 0);
	assert_int_equal(tls13_take(p.c, false, &c), 0);
	tls13_conn_free(&s);
	tls13_conn_free(&c);
	assert_int_equal(tls13_take(p.s, true, &s), -EINVAL); /* the secrets are taken once */
	pair_free(&p);
	pair_make(&p, suite);
	assert_int_equal(tls13_take(p.s, true, &s), 0);
	/* the server here, OpenSSL the client */
	openssl_to_us(&s, p.c, p.c_out, 1);
	openssl_to_us(&s, p.c, p.c_out, sizeof(big));
	us_to_openssl(&s, p.c, p.c_in, sizeof(big));
	us_to_openssl(&s, p.c, p.c_in, 100);
	/* the client asks for a KeyUpdate: ours answers, both keys move on */
	assert_int_equal(SSL_key_update(p.c, SSL_KEY_UPDATE_REQUESTED), 1);
	openssl_to_us(&s, p.c, p.c_out, 5000); /* the KeyUpdate record comes first */
	assert_int_equal(s.ku_recvd, 1);
	assert_true(s.ku_send);
	assert_int_equal(tls13_send_pending(&s, rec, &rl), 0);
	assert_false(s.ku_send);
	BIO_write(p.c_in, rec, (int)rl);
	us_to_openssl(&s, p.c, p.c_in, 20000);
	openssl_to_us(&s, p.c, p.c_out, 3000);
	assert_int_equal(tls13_send_pending(&s, rec, &rl), 0);
	assert_int_equal(rl, 0);
	/* close_notify from the client: the end */
	assert_int_equal(SSL_shutdown(p.c), 0);
	n = take_rec(p.c_out, rec);
	assert_int_equal(tls13_recv(&s, rec, n, rec + TLS13_HDR, &rl), 0);
	assert_true(s.eof);
	assert_int_equal(tls13_close_notify(&s, rec, &rl), 0);
	BIO_write(p.c_in, rec, (int)rl);
	assert_int_equal(SSL_read_ex(p.c, got, 1, &n), 0);
	assert_int_equal(SSL_get_error(p.c, 0), SSL_ERROR_ZERO_RETURN);
	tls13_conn_free(&s);
	pair_free(&p);

	/* the client here, OpenSSL the server */
	pair_make(&p, suite);
	assert_int_equal(tls13_take(p.c, false, &c), 0);
	us_to_openssl(&c, p.s, p.s_in, sizeof(big));
	openssl_to_us(&c, p.s, p.s_out, sizeof(big));
	assert_int_equal(SSL_key_update(p.s, SSL_KEY_UPDATE_NOT_REQUESTED), 1);
	openssl_to_us(&c, p.s, p.s_out, 10);
	assert_false(c.ku_send);
	us_to_openssl(&c, p.s, p.s_in, 10);
	tls13_conn_free(&c);
	pair_free(&p);
	ERR_clear_error();
}

static void test_aes128(void **state)
{
	(void)state;
	both_ways("TLS_AES_128_GCM_SHA256");
}

static void test_aes256(void **state)
{
	(void)state;
	both_ways("TLS_AES_256_GCM_SHA384");
}

static void test_chacha(void **state)
{
	(void)state;
	both_ways("TLS_CHACHA20_POLY1305_SHA256");
}

/* Records that must be refused, each on a fresh connection. */
static void test_bad_records(void **state)
{
	static const uint8_t finished[8] = { 20, 0, 0, 4, 1, 2, 3, 4 };
	static const uint8_t alert[2] = { 2, 40 }; /* fatal handshake_failure */
	struct iovec v;
	struct tls13_conn s;
	struct pair p;
	size_t n, rl;
	int bad;

	(void)state;
	memset(big, 0x5a, sizeof(big));
	for (bad = 0; bad < 6; bad++) {
		pair_make(&p, "TLS_AES_128_GCM_SHA256");
		assert_int_equal(tls13_take(p.s, true, &s), 0);
		assert_int_equal(SSL_write_ex(p.c, big, 1000, &n), 1);
		n = take_rec(p.c_out, rec);
		switch (bad) {
		case 0: /* one bit of the ciphertext */
			rec[TLS13_HDR + 10] ^= 1;
			break;
		case 1: /* a header that is not TLS 1.3's */
			rec[2] = 1;
			assert_int_equal(tls13_rec_len(rec, TLS13_HDR), -EBADMSG);
			break;
		case 2: /* a record longer than 2^14 + 256 */
			rec[3] = 0x41;
			rec[4] = 0x01;
			assert_int_equal(tls13_rec_len(rec, TLS13_HDR), -EBADMSG);
			break;
		case 3: /* a Finished after the handshake, sealed with the right key */
		case 4: /* a fatal alert */
			tls13_conn_free(&s);
			/* the client's own conn seals, the server's opens */
			{
				struct tls13_conn c;
				struct pair q;

				pair_free(&p);
				pair_make(&q, "TLS_AES_128_GCM_SHA256");
				p = q;
				assert_int_equal(tls13_take(p.s, true, &s), 0);
				assert_int_equal(tls13_take(p.c, false, &c), 0);
				v.iov_base = (void *)(bad == 3 ? finished : alert);
				v.iov_len = bad == 3 ? sizeof(finished) : sizeof(alert);
				assert_int_equal(
					tls13_seal(&c,
						   bad == 3 ? TLS13_CT_HANDSHAKE : TLS13_CT_ALERT,
						   &v, 1, 0, v.iov_len, rec, &n),
					0);
				tls13_conn_free(&c);
			}
			break;
		case 5: /* a record replayed: the sequence number moved on */
			assert_int_equal(tls13_recv(&s, rec, n, big + 20000, &rl), 1);
			break;
		}
		assert_int_equal(tls13_recv(&s, rec, n, rec + TLS13_HDR, &rl),
				 bad == 4 ? -ECONNRESET : -EBADMSG);
		assert_int_equal(s.alert, bad == 4 ? 40 : 0);
		tls13_conn_free(&s);
		pair_free(&p);
	}
	ERR_clear_error();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc8448_keys), cmocka_unit_test(test_aes128),
		cmocka_unit_test(test_aes256),	     cmocka_unit_test(test_chacha),
		cmocka_unit_test(test_bad_records),
	};

	return cmocka_run_group_tests(tests, make_cert, free_cert);
}
