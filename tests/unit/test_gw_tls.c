// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC-with-TLS pieces of lacunad that need no server (xprt/tls/gw_tls.h):
 * the AUTH_TLS probe recognised only as RFC 9289 writes it (a NULL call
 * with an AUTH_TLS credential, any program) and never in a truncated
 * record; the STARTTLS reply byte for byte; the TLS context refused for
 * a key without its certificate, a missing file, a key that does not
 * match; and the handshake thread, over a socketpair, taking a TLS 1.3
 * handshake from an OpenSSL client, refusing plain RPC instead of a
 * ClientHello, and timing out a silent peer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "gw_tls.h"
#include "rpc.h"

static size_t put32(uint8_t *p, size_t off, uint32_t v)
{
	v = htonl(v);
	memcpy(p + off, &v, 4);
	return off + 4;
}

/* A call header: xid 0x1234, prog 100003 vers 4, @proc, credential @flavor (empty). */
static size_t call(uint8_t *p, uint32_t proc, uint32_t flavor)
{
	size_t n = 0;

	n = put32(p, n, 0x1234);
	n = put32(p, n, RPC_CALL);
	n = put32(p, n, RPC_VERS);
	n = put32(p, n, 100003);
	n = put32(p, n, 4);
	n = put32(p, n, proc);
	n = put32(p, n, flavor);
	n = put32(p, n, 0);
	n = put32(p, n, RPC_AUTH_NONE);
	return put32(p, n, 0);
}

static void test_probe(void **state)
{
	uint8_t rec[64];
	uint32_t xid = 0;
	size_t n, i;

	(void)state;
	n = call(rec, 0, RPC_AUTH_TLS);
	assert_true(gw_tls_is_probe(rec, n, &xid));
	assert_int_equal(xid, 0x1234);
	for (i = 0; i < 8 * 4; i++) /* short of the credential's body length */
		assert_false(gw_tls_is_probe(rec, i, &xid));
	n = call(rec, 1, RPC_AUTH_TLS);
	assert_false(gw_tls_is_probe(rec, n, &xid)); /* not NULL */
	n = call(rec, 0, RPC_AUTH_SYS);
	assert_false(gw_tls_is_probe(rec, n, &xid)); /* not AUTH_TLS */
	n = call(rec, 0, RPC_AUTH_TLS);
	put32(rec, 4, RPC_REPLY);
	assert_false(gw_tls_is_probe(rec, n, &xid));
	n = call(rec, 0, RPC_AUTH_TLS);
	put32(rec, 8, 3); /* rpcvers */
	assert_false(gw_tls_is_probe(rec, n, &xid));
}

static void test_probe_reply(void **state)
{
	static const uint8_t want[GW_TLS_PROBE_REPLY_LEN] = {
		0x80, 0, 0, 32, 0xde, 0xad, 0xbe, 0xef, 0,   0,	  0,   1,   0,	 0,   0, 0, 0, 0,
		0,    0, 0, 0,	0,    8,    'S',  'T',	'A', 'R', 'T', 'T', 'L', 'S', 0, 0, 0, 0,
	};
	uint8_t out[GW_TLS_PROBE_REPLY_LEN];

	(void)state;
	gw_tls_probe_reply(0xdeadbeef, out);
	assert_memory_equal(out, want, sizeof(want));
}

/* ---------------------------------------------------------------- certificates */

static char dir[64];
static char cert[96], key[96], key2[96];

static EVP_PKEY *write_key(const char *path)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	FILE *f = fopen(path, "w");

	assert_non_null(k);
	assert_non_null(f);
	assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	return k;
}

static int setup(void **state)
{
	EVP_PKEY *k;
	X509 *x;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_gw_tls.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(key2, sizeof(key2), "%s/key2.pem", dir);
	k = write_key(key);
	EVP_PKEY_free(write_key(key2));
	x = X509_new();
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"localhost", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_set_pubkey(x, k);
	assert_true(X509_sign(x, k, EVP_sha256()) > 0);
	f = fopen(cert, "w");
	assert_non_null(f);
	PEM_write_X509(f, x);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(k);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_ctx(void **state)
{
	struct gw_config cfg;
	SSL_CTX *ctx = (SSL_CTX *)1;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), 0);
	assert_null(ctx); /* no certificate: no TLS */
	cfg.tls_key = key;
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), -EINVAL);
	cfg.tls_cert = cert;
	cfg.tls_key = key2;
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), -EINVAL); /* not its key */
	cfg.tls_key = "/nonexistent/key.pem";
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), -EINVAL);
	cfg.tls_key = key;
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), 0);
	assert_non_null(ctx);
	assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
	assert_int_equal(SSL_CTX_get_num_tickets(ctx), 0);
	SSL_CTX_free(ctx);
}

/* ---------------------------------------------------------------- the handshake thread */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int notified;

static void notify(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	notified++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

static struct gw_tls_hs_job *wait_job(struct gw_tls_hs *h)
{
	struct gw_tls_hs_job *j;

	for (;;) {
		j = gw_tls_hs_done(h);
		if (j)
			return j;
		pthread_mutex_lock(&lock);
		while (!notified)
			pthread_cond_wait(&cond, &lock);
		notified = 0;
		pthread_mutex_unlock(&lock);
	}
}

static SSL_CTX *server_ctx(void)
{
	struct gw_config cfg;
	SSL_CTX *ctx;

	memset(&cfg, 0, sizeof(cfg));
	cfg.tls_cert = cert;
	cfg.tls_key = key;
	assert_int_equal(gw_tls_ctx_new(&cfg, &ctx), 0);
	return ctx;
}

static struct gw_tls_hs_job *job(int fd, SSL_CTX *ctx, unsigned int timeout)
{
	struct gw_tls_hs_job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->fd = fd;
	j->ctx = ctx;
	j->timeout = timeout;
	return j;
}

static void *client(void *arg)
{
	int fd = *(int *)arg;
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	SSL *s = SSL_new(c);
	long ok;

	SSL_set_fd(s, fd);
	ok = SSL_connect(s) == 1;
	SSL_free(s);
	SSL_CTX_free(c);
	return (void *)ok;
}

static void test_handshake(void **state)
{
	struct gw_tls_hs_job *j;
	struct gw_tls_hs *h;
	SSL_CTX *ctx = server_ctx();
	pthread_t th;
	void *ok;
	int sv[2];

	(void)state;
	assert_int_equal(gw_tls_hs_start(&h, notify, NULL), 0);

	/* a TLS 1.3 client */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pthread_create(&th, NULL, client, &sv[1]), 0);
	SSL_CTX_up_ref(ctx);
	gw_tls_hs_submit(h, job(sv[0], ctx, 10));
	j = wait_job(h);
	pthread_join(th, &ok);
	assert_true(ok != NULL);
	assert_int_equal(j->fail, -1);
	assert_non_null(j->ssl);
	assert_false(j->mtls);
	assert_int_equal(SSL_version(j->ssl), TLS1_3_VERSION);
	SSL_free(j->ssl);
	free(j);
	close(sv[0]);
	close(sv[1]);

	/* plain RPC instead of a ClientHello */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], "\x80\x00\x00\x28", 4), 4);
	SSL_CTX_up_ref(ctx);
	gw_tls_hs_submit(h, job(sv[0], ctx, 10));
	j = wait_job(h);
	assert_int_equal(j->fail, GW_TLS_FAIL_NOT_TLS);
	assert_null(j->ssl);
	free(j);
	close(sv[0]);
	close(sv[1]);

	/* a peer that sends nothing */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	SSL_CTX_up_ref(ctx);
	gw_tls_hs_submit(h, job(sv[0], ctx, 1));
	j = wait_job(h);
	assert_int_equal(j->fail, GW_TLS_FAIL_TIMEOUT);
	free(j);
	close(sv[0]);
	close(sv[1]);

	gw_tls_hs_stop(h);
	SSL_CTX_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_probe_reply),
		cmocka_unit_test(test_ctx),
		cmocka_unit_test(test_handshake),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
