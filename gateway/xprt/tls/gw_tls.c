// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC-with-TLS (RFC 9289): the server's TLS context, the AUTH_TLS probe
 * and the kernel TLS probe (gw_tls.h).
 *
 * The context asks for TLS 1.3 and nothing older, issues no session
 * tickets (every connection makes a full handshake, as the Linux client
 * does anyway), and selects ALPN "sunrpc" when the client offers it. A
 * client offering no ALPN at all (the Linux client through tlshd) is
 * served; one offering ALPN without "sunrpc" is refused with
 * no_application_protocol, as RFC 9289 section 4.1 asks. With tls_ca set
 * a client certificate is requested and, when one is sent, verified
 * against it; a client without one is still served (the connection is
 * then "tls", not "mtls"), so one server serves both kinds of export.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gw_tls.h"
#include "log.h"
#include "rpc.h"
#include "tls13_rec.h"

const char *const gw_tls_fail_names[GW_TLS_FAIL_N] = {
	[GW_TLS_FAIL_TIMEOUT] = "timeout",
	[GW_TLS_FAIL_NOT_TLS] = "not_tls",
	[GW_TLS_FAIL_VERSION] = "version",
	[GW_TLS_FAIL_HANDSHAKE] = "handshake",
	[GW_TLS_FAIL_VERIFY] = "verify",
	[GW_TLS_FAIL_BUSY] = "busy",
	[GW_TLS_FAIL_ALPN] = "alpn",
	[GW_TLS_FAIL_PROBE] = "probe",
	[GW_TLS_FAIL_KEYUPDATE] = "key_update",
	[GW_TLS_FAIL_RECORD] = "record",
};

static const unsigned char gw_tls_alpn[] = "\x06sunrpc";

/* The last OpenSSL error of this thread, for a log line. */
static const char *gw_tls_err(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (!e)
		return "no OpenSSL error";
	ERR_error_string_n(e, buf, len);
	return buf;
}

static int gw_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
			      const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, gw_tls_alpn, sizeof(gw_tls_alpn) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

void gw_tls_ku_note(struct gw_tls_ku *k)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec - k->since >= 60) {
		k->since = ts.tv_sec;
		k->n = 0;
	}
	if (++k->n > GW_TLS_KEYUPDATE_MAX)
		k->storm = true;
}

static bool gw_tls_set(const char *s)
{
	return s && *s;
}

int gw_tls_ctx_new(const struct gw_config *cfg, SSL_CTX **out)
{
	STACK_OF(X509_NAME) *cas;
	SSL_CTX *ctx;
	char e[256];

	*out = NULL;
	if (!gw_tls_set(cfg->tls_cert) && !gw_tls_set(cfg->tls_key))
		return 0;
	if (!gw_tls_set(cfg->tls_cert) || !gw_tls_set(cfg->tls_key)) {
		log_err("tls: tls_cert and tls_key go together: TLS not served");
		return -EINVAL;
	}
	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		log_err("tls: SSL_CTX_new: %s", gw_tls_err(e, sizeof(e)));
		return -ENOMEM;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		log_err("tls: SSL_CTX_set_min_proto_version: %s", gw_tls_err(e, sizeof(e)));
		goto out_free;
	}
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	/*
	 * Exactly the suites common/tls13_rec does (OpenSSL's default three,
	 * whatever openssl.cnf says): the records after the handshake are its.
	 */
	if (!SSL_CTX_set_ciphersuites(ctx, cfg->tls_prefer_aes128 ? GW_TLS_SUITES_AES128
								  : GW_TLS_SUITES) ||
	    (cfg->tls_prefer_aes128 &&
	     !SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE))) {
		log_err("tls: SSL_CTX_set_ciphersuites: %s", gw_tls_err(e, sizeof(e)));
		goto out_free;
	}
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1) {
		log_err("tls: SSL_CTX_use_certificate_chain_file %s: %s", cfg->tls_cert,
			gw_tls_err(e, sizeof(e)));
		goto out_free;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1) {
		log_err("tls: SSL_CTX_use_PrivateKey_file %s: %s", cfg->tls_key,
			gw_tls_err(e, sizeof(e)));
		goto out_free;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		log_err("tls: SSL_CTX_check_private_key: %s does not match %s: %s", cfg->tls_key,
			cfg->tls_cert, gw_tls_err(e, sizeof(e)));
		goto out_free;
	}
	if (gw_tls_set(cfg->tls_ca)) {
		if (SSL_CTX_load_verify_locations(ctx, cfg->tls_ca, NULL) != 1) {
			log_err("tls: SSL_CTX_load_verify_locations %s: %s", cfg->tls_ca,
				gw_tls_err(e, sizeof(e)));
			goto out_free;
		}
		cas = SSL_load_client_CA_file(cfg->tls_ca);
		if (cas)
			SSL_CTX_set_client_CA_list(ctx, cas);
		/* asked for, verified when sent, not required: tls and mtls from one server */
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	} else {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	}
	SSL_CTX_set_alpn_select_cb(ctx, gw_tls_alpn_select, NULL);
	if (tls13_capture(ctx)) { /* no records without the secrets */
		log_err("tls: tls13_capture: %s: TLS not served", strerror(ENOMEM));
		goto out_free;
	}
	*out = ctx;
	return 0;

out_free:
	SSL_CTX_free(ctx);
	return -EINVAL;
}

/*
 * call body: xid, CALL, rpcvers 2, prog, vers, proc 0, cred flavor
 * AUTH_TLS and its length (RFC 9289 says empty; any body is skipped),
 * verifier AUTH_NONE and its length.
 */
bool gw_tls_is_probe(const uint8_t *rec, size_t len, uint32_t *xid)
{
	struct xdr_in x;
	uint32_t v[6], clen;
	const uint8_t *body;
	unsigned int i;

	xdr_in_init(&x, rec, len);
	for (i = 0; i < 6; i++)
		if (xdr_dec_u32(&x, &v[i]))
			return false;
	if (v[1] != RPC_CALL || v[2] != RPC_VERS || v[5] != 0)
		return false;
	if (xdr_dec_u32(&x, &clen) || clen != RPC_AUTH_TLS)
		return false;
	if (xdr_dec_opaque(&x, &body, &clen, RPC_AUTH_BODY_MAX))
		return false;
	*xid = v[0];
	return true;
}

void gw_tls_probe_reply(uint32_t xid, uint8_t out[GW_TLS_PROBE_REPLY_LEN])
{
	uint32_t w[9] = {
		htonl(RPC_REC_LAST | (GW_TLS_PROBE_REPLY_LEN - 4)),
		htonl(xid),
		htonl(RPC_REPLY),
		htonl(RPC_MSG_ACCEPTED),
		htonl(RPC_AUTH_NONE),
		htonl(8),
		0,
		0,
		htonl(RPC_SUCCESS),
	};

	memcpy(&w[6], "STARTTLS", 8);
	memcpy(out, w, sizeof(w));
}

bool gw_tls_ktls_probe(void)
{
	char buf[256] = "";
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_ulp", "r");
	bool ok = false;
	char *tok, *save;
	int fd;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			for (tok = strtok_r(buf, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save))
				ok |= !strcmp(tok, "tls");
		fclose(f);
	}
	if (!ok) {
		/* the module may load on demand: ENOTCONN says it is there, ENOENT not */
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			ok = setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == 0 ||
			     errno == ENOTCONN;
			close(fd);
		}
	}
	if (ok)
		log_info("tls: kernel TLS available but not used: records encrypted in user space");
	else
		log_info("tls: kernel TLS not available, records encrypted in user space");
	return ok;
}
