// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC-with-TLS (RFC 9289), client side, with OpenSSL 3.0: the AUTH_TLS
 * probe, the TLS 1.3 handshake and the encrypted stream after it. See
 * nfs_tls.h for the whole story.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "nfs_tls.h"
#include "rpc.h"
#include "tls13_rec.h"
#include "xdr.h"

#define PROBE_PROG 100003 /* NFS */
#define PROBE_VERS 4

/* OpenSSL's reason for the oldest error queued, or @dflt. */
static const char *ssl_reason(const char *dflt)
{
	unsigned long e = ERR_peek_error();
	const char *r;

	if (e && ERR_SYSTEM_ERROR(e))
		return strerror(ERR_GET_REASON(e));
	r = e ? ERR_reason_error_string(e) : NULL;
	return r ? r : dflt;
}

/* The oldest error queued is an alert the server sent. */
static bool ssl_alert(void)
{
	unsigned long e = ERR_peek_error();

	return e && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET;
}

static int tls_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The message into err, OpenSSL's error queue cleared; returns rc. */
static int tls_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	ERR_clear_error();
	return rc;
}

/* ------------------------------------------------------------ probe */

static int send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @len bytes, or -ECONNRESET on a close, -ETIMEDOUT on the socket's timeout. */
static int recv_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#define NO_TLS "the server does not support RPC-with-TLS"

/* The reply to the probe: 0 when it is STARTTLS. */
static int probe_reply(const uint8_t *buf, size_t len, uint32_t xid, char *err, size_t errlen)
{
	struct xdr_in x;
	uint32_t v, type, stat, flavor;
	const uint8_t *body;
	uint32_t blen;

	xdr_in_init(&x, buf, len);
	if (xdr_dec_u32(&x, &v) || xdr_dec_u32(&x, &type) || xdr_dec_u32(&x, &stat)) {
		snprintf(err, errlen, NO_TLS " (its reply to the AUTH_TLS probe is truncated)");
		return -EPROTONOSUPPORT;
	}
	if (v != xid || type != RPC_REPLY) {
		snprintf(err, errlen,
			 NO_TLS " (it answered the AUTH_TLS probe with something else "
				"than its reply)");
		return -EPROTONOSUPPORT;
	}
	if (stat != RPC_MSG_ACCEPTED) {
		uint32_t why = 0, auth = 0;

		xdr_dec_u32(&x, &why);
		xdr_dec_u32(&x, &auth);
		snprintf(err, errlen, NO_TLS " (it refused the AUTH_TLS probe: %s %u)",
			 why == RPC_AUTH_ERROR ? "auth_stat" : "reject_stat",
			 why == RPC_AUTH_ERROR ? auth : why);
		return -EPROTONOSUPPORT;
	}
	if (xdr_dec_u32(&x, &flavor) || xdr_dec_opaque(&x, &body, &blen, RPC_AUTH_BODY_MAX) ||
	    xdr_dec_u32(&x, &stat)) {
		snprintf(err, errlen, NO_TLS " (its reply to the AUTH_TLS probe is truncated)");
		return -EPROTONOSUPPORT;
	}
	if (flavor != RPC_AUTH_NONE || blen != strlen(NFS_TLS_STARTTLS) ||
	    memcmp(body, NFS_TLS_STARTTLS, blen)) {
		snprintf(err, errlen,
			 NO_TLS " (no STARTTLS verifier in its reply to the "
				"AUTH_TLS probe)");
		return -EPROTONOSUPPORT;
	}
	if (stat != RPC_SUCCESS) {
		snprintf(err, errlen, NO_TLS " (the AUTH_TLS probe got accept_stat %u)", stat);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/* The NULL call with AUTH_TLS and its STARTTLS reply, in the clear. */
static int probe(struct nfs_tls *t, int fd, char *err, size_t errlen)
{
	uint8_t call[4 + 10 * 4], reply[NFS_TLS_PROBE_REPLY_MAX];
	const uint32_t words[] = { 0, RPC_CALL,	    RPC_VERS, PROBE_PROG,    PROBE_VERS,
				   0, RPC_AUTH_TLS, 0,	      RPC_AUTH_NONE, 0 };
	struct timespec ts;
	size_t len = 0, i;
	uint32_t xid;
	bool last = false;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	xid = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec ^ ((uint32_t)getpid() << 16);
	xdr_put_u32(call, RPC_REC_LAST | (uint32_t)(sizeof(call) - 4));
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		xdr_put_u32(call + 4 + 4 * i, i ? words[i] : xid);
	rc = send_all(fd, call, sizeof(call));
	if (rc) {
		snprintf(err, errlen, "send of the AUTH_TLS probe: %s", strerror(-rc));
		return rc;
	}
	t->probe_out = sizeof(call);
	while (!last) {
		uint8_t m[4];
		uint32_t flen;

		rc = recv_all(fd, m, sizeof(m));
		if (!rc) {
			t->probe_in += sizeof(m);
			last = xdr_get_u32(m) & RPC_REC_LAST;
			flen = xdr_get_u32(m) & ~RPC_REC_LAST;
			if (flen > sizeof(reply) - len) {
				snprintf(err, errlen,
					 NO_TLS " (its reply to the AUTH_TLS probe is "
						"over %zu bytes)",
					 sizeof(reply));
				return -EPROTONOSUPPORT;
			}
			rc = recv_all(fd, reply + len, flen);
			len += flen;
			t->probe_in += flen;
		}
		if (rc == -ECONNRESET) {
			snprintf(err, errlen,
				 NO_TLS " (it closed the connection after the "
					"AUTH_TLS probe)");
			return -EPROTONOSUPPORT;
		}
		if (rc == -ETIMEDOUT) {
			snprintf(err, errlen, NO_TLS " (no reply to the AUTH_TLS probe)");
			return -EPROTONOSUPPORT;
		}
		if (rc) {
			snprintf(err, errlen, "recv of the AUTH_TLS probe's reply: %s",
				 strerror(-rc));
			return rc;
		}
	}
	return probe_reply(reply, len, xid, err, errlen);
}

/* ------------------------------------------------------------ handshake */

static int ctx_setup(struct nfs_tls *t, const struct nfs_tls_opts *o, char *err, size_t errlen)
{
	static const unsigned char alpn[] = "\x06" NFS_TLS_ALPN;

	t->ctx = SSL_CTX_new(TLS_client_method());
	if (!t->ctx)
		return tls_fail(-ENOMEM, err, errlen, "SSL_CTX_new: %s", ssl_reason("failed"));
	if (!SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION))
		return tls_fail(-EINVAL, err, errlen, "SSL_CTX_set_min_proto_version: %s",
				ssl_reason("failed"));
	/* exactly the suites common/tls13_rec.h does, in OpenSSL's default order */
	if (!SSL_CTX_set_ciphersuites(t->ctx, NFS_TLS_SUITES))
		return tls_fail(-EINVAL, err, errlen, "SSL_CTX_set_ciphersuites: %s",
				ssl_reason("failed"));
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	if (o->ca) {
		if (!SSL_CTX_load_verify_locations(t->ctx, o->ca, NULL))
			return tls_fail(-EINVAL, err, errlen, "--ca %s: %s", o->ca,
					ssl_reason("cannot load it"));
	} else if (!SSL_CTX_set_default_verify_paths(t->ctx)) {
		return tls_fail(-EINVAL, err, errlen, "the system's trust store: %s",
				ssl_reason("cannot load it"));
	}
	if (o->cert) {
		const char *key = o->key ? o->key : o->cert;

		if (SSL_CTX_use_certificate_chain_file(t->ctx, o->cert) != 1)
			return tls_fail(-EINVAL, err, errlen, "--cert %s: %s", o->cert,
					ssl_reason("cannot load it"));
		if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1)
			return tls_fail(-EINVAL, err, errlen, "--key %s: %s", key,
					ssl_reason("cannot load it"));
		if (SSL_CTX_check_private_key(t->ctx) != 1)
			return tls_fail(-EINVAL, err, errlen, "--key %s: %s", key,
					ssl_reason("does not match the certificate"));
		t->mtls = true;
	}
	/* 0 is success here */
	if (SSL_CTX_set_alpn_protos(t->ctx, alpn, sizeof(alpn) - 1))
		return tls_fail(-ENOMEM, err, errlen, "SSL_CTX_set_alpn_protos: %s",
				ssl_reason("failed"));
	return 0;
}

/* What the server's certificate must name: an address or a DNS name. */
static int host_setup(struct nfs_tls *t, const char *host, char *err, size_t errlen)
{
	unsigned char a[sizeof(struct in6_addr)];

	if (!host || !*host)
		return 0;
	if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1) {
		if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host))
			return tls_fail(-EINVAL, err, errlen,
					"X509_VERIFY_PARAM_set1_ip_asc %s: %s", host,
					ssl_reason("failed"));
		return 0;
	}
	if (!SSL_set1_host(t->ssl, host) || !SSL_set_tlsext_host_name(t->ssl, host))
		return tls_fail(-EINVAL, err, errlen, "SSL_set1_host %s: %s", host,
				ssl_reason("failed"));
	return 0;
}

static int handshake_fail(struct nfs_tls *t, char *err, size_t errlen, int ret)
{
	long v = SSL_get_verify_result(t->ssl);
	int e = SSL_get_error(t->ssl, ret);

	if (v != X509_V_OK)
		return tls_fail(-EKEYREJECTED, err, errlen,
				"TLS handshake: the server's certificate failed verification: %s%s",
				X509_verify_cert_error_string(v),
				v == X509_V_ERR_HOSTNAME_MISMATCH ||
						v == X509_V_ERR_IP_ADDRESS_MISMATCH
					? " (it does not name the host in the URL)"
				: v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
						v == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
						v == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
					? " (is --ca the CA that signed it?)"
					: "");
	if (e == SSL_ERROR_SYSCALL && !ERR_peek_error()) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return tls_fail(-ECONNABORTED, err, errlen,
					"TLS handshake failed: no answer from the server");
		return tls_fail(-ECONNABORTED, err, errlen, "TLS handshake failed: %s",
				errno ? strerror(errno) : "the server closed the connection");
	}
	return tls_fail(-ECONNABORTED, err, errlen, "TLS handshake failed: %s%s",
			ssl_alert() ? "the server sent " : "", ssl_reason("unknown error"));
}

/* Records by tls13_rec from now on: the only record path there is. */
static int own_records(struct nfs_tls *t, char *err, size_t errlen)
{
	int rc = -ENOMEM;

	t->rec = calloc(1, sizeof(*t->rec));
	t->rbuf = malloc(NFS_TLS_RBUF);
	t->wbuf = malloc(NFS_TLS_WBUF);
	if (t->rec && t->rbuf && t->wbuf && !(rc = tls13_take(t->ssl, false, t->rec)))
		return 0;
	free(t->rec);
	free(t->rbuf);
	free(t->wbuf);
	t->rec = NULL;
	t->rbuf = t->wbuf = NULL;
	if (rc != -EINVAL)
		return tls_fail(rc, err, errlen, "TLS records for %s: %s",
				SSL_CIPHER_get_name(SSL_get_current_cipher(t->ssl)), strerror(-rc));
	return tls_fail(-ECONNABORTED, err, errlen,
			"TLS records for %s: suite not handled or no secrets kept",
			SSL_CIPHER_get_name(SSL_get_current_cipher(t->ssl)));
}

int nfs_tls_start(struct nfs_tls *t, int fd, const struct nfs_tls_opts *o, char *err, size_t errlen)
{
	struct sigaction sa;
	int rc, ret;

	*t = (struct nfs_tls){ 0 };
	if (!sigaction(SIGPIPE, NULL, &sa) && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
	ERR_clear_error();
	rc = ctx_setup(t, o, err, errlen);
	if (!rc && tls13_capture(t->ctx))
		rc = tls_fail(-ENOMEM, err, errlen, "tls13_capture: %s", strerror(ENOMEM));
	if (rc)
		goto out_free;
	rc = probe(t, fd, err, errlen);
	if (rc)
		goto out_free;
	t->ssl = SSL_new(t->ctx);
	if (!t->ssl) {
		rc = tls_fail(-ENOMEM, err, errlen, "SSL_new: %s", ssl_reason("failed"));
		goto out_free;
	}
	if (!SSL_set_fd(t->ssl, fd)) {
		rc = tls_fail(-ENOMEM, err, errlen, "SSL_set_fd: %s", ssl_reason("failed"));
		goto out_free;
	}
	rc = host_setup(t, o->host, err, errlen);
	if (rc)
		goto out_free;
	errno = 0;
	ret = SSL_connect(t->ssl);
	if (ret != 1) {
		rc = handshake_fail(t, err, errlen, ret);
		goto out_free;
	}
	snprintf(t->desc, sizeof(t->desc), "%s %s", SSL_get_version(t->ssl),
		 SSL_CIPHER_get_name(SSL_get_current_cipher(t->ssl)));
	t->fd = fd;
	rc = own_records(t, err, errlen);
	if (rc)
		goto out_free;
	return 0;

out_free:
	SSL_free(t->ssl);
	SSL_CTX_free(t->ctx);
	t->ssl = NULL;
	t->ctx = NULL;
	return rc;
}

/* ------------------------------------------------------------ stream */

/* A send(2) that failed: a message and an errno. */
static int own_send_fail(int rc, const char *what, char *err, size_t errlen)
{
	if (rc == -EPIPE || rc == -ECONNRESET)
		return tls_fail(-ECONNRESET, err, errlen, "%s: the server closed the connection",
				what);
	if (rc == -EAGAIN || rc == -EWOULDBLOCK)
		return tls_fail(-ETIMEDOUT, err, errlen, "%s: timed out", what);
	return tls_fail(rc, err, errlen, "%s: %s", what, strerror(-rc));
}

static int own_send(struct nfs_tls *t, const uint8_t *p, size_t len, const char *what, char *err,
		    size_t errlen)
{
	int rc = send_all(t->fd, p, len);

	if (rc)
		return own_send_fail(rc, what, err, errlen);
	t->rec_out += len;
	return 0;
}

static int own_write(struct nfs_tls *t, const void *buf, size_t len, char *err, size_t errlen)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	size_t off = 0, fill = 0, n, rl;
	int rc;

	while (off < len) {
		n = len - off > TLS13_PLAIN_MAX ? TLS13_PLAIN_MAX : len - off;
		if (tls13_seal(t->rec, TLS13_CT_APPDATA, &v, 1, off, n, t->wbuf + fill, &rl))
			return tls_fail(-ECONNABORTED, err, errlen,
					"TLS write: sealing a record failed");
		fill += rl;
		off += n;
		if (off == len || NFS_TLS_WBUF - fill < TLS13_PLAIN_MAX + TLS13_OVERHEAD) {
			rc = own_send(t, t->wbuf, fill, "TLS write", err, errlen);
			if (rc)
				return rc;
			fill = 0;
		}
	}
	return 0;
}

/* Our KeyUpdate, when the server asked for one. */
static int own_answer(struct nfs_tls *t, char *err, size_t errlen)
{
	uint8_t ku[TLS13_OVERHEAD + 5];
	size_t n;

	if (tls13_send_pending(t->rec, ku, &n))
		return tls_fail(-ECONNABORTED, err, errlen, "TLS: sealing a KeyUpdate failed");
	return n ? own_send(t, ku, n, "TLS write", err, errlen) : 0;
}

/* OpenSSL's words for alert @a ("tlsv1 alert unknown ca"), as its own records would say. */
static const char *alert_reason(uint8_t a)
{
	const char *r = ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, SSL_AD_REASON_OFFSET + a));

	return r ? r : SSL_alert_desc_string_long(a);
}

static ssize_t own_read(struct nfs_tls *t, void *buf, size_t len, char *err, size_t errlen)
{
	uint8_t *rec;
	ssize_t rl, r;
	size_t n;
	int rc;

	for (;;) {
		if (t->plen) {
			n = len < t->plen ? len : t->plen;
			memcpy(buf, t->plain, n);
			t->plain += n;
			t->plen -= n;
			return (ssize_t)n;
		}
		if (t->rec->eof)
			return 0;
		rl = tls13_rec_len(t->rbuf + t->roff, t->rlen - t->roff);
		if (rl < 0)
			return tls_fail(-ECONNABORTED, err, errlen,
					"TLS read: the server sent a record that is not TLS 1.3's");
		if (!rl || t->rlen - t->roff < (size_t)rl) {
			if (NFS_TLS_RBUF - t->roff < TLS13_REC_MAX) { /* room for a whole record */
				memmove(t->rbuf, t->rbuf + t->roff, t->rlen - t->roff);
				t->rlen -= t->roff;
				t->roff = 0;
			}
			r = recv(t->fd, t->rbuf + t->rlen, NFS_TLS_RBUF - t->rlen, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return tls_fail(-ETIMEDOUT, err, errlen, "TLS read: timed out");
			if (r < 0 && errno == ECONNRESET)
				return 0;
			if (r < 0)
				return tls_fail(-errno, err, errlen, "TLS read: %s",
						strerror(errno));
			if (!r)
				return 0; /* the server closed the connection */
			t->rlen += (size_t)r;
			t->rec_in += (uint64_t)r;
			continue;
		}
		rec = t->rbuf + t->roff;
		t->roff += (size_t)rl;
		/* straight into the caller's buffer when a whole record fits */
		if (len >= (size_t)rl - TLS13_HDR - TLS13_TAG) {
			rc = tls13_recv(t->rec, rec, (size_t)rl, buf, &n);
			if (rc == 1 && n)
				return (ssize_t)n;
		} else {
			rc = tls13_recv(t->rec, rec, (size_t)rl, rec + TLS13_HDR, &n);
			t->plain = rec + TLS13_HDR;
			t->plen = rc == 1 ? n : 0;
		}
		if (rc == -ECONNRESET)
			return tls_fail(-ECONNABORTED, err, errlen,
					"TLS read: the server ended the connection with %s%s",
					alert_reason(t->rec->alert),
					t->rec->alert == TLS13_AD_CERTIFICATE_REQUIRED
						? " (give a client certificate: --cert, --key)"
						: "");
		if (rc < 0)
			return tls_fail(
				-ECONNABORTED, err, errlen,
				"TLS read: a record that does not decrypt or is not allowed");
		rc = own_answer(t, err, errlen);
		if (rc)
			return rc;
		if (t->roff == t->rlen)
			t->roff = t->rlen = 0;
	}
}

int nfs_tls_write(struct nfs_tls *t, const void *buf, size_t len, char *err, size_t errlen)
{
	return own_write(t, buf, len, err, errlen);
}

ssize_t nfs_tls_read(struct nfs_tls *t, void *buf, size_t len, char *err, size_t errlen)
{
	return own_read(t, buf, len, err, errlen);
}

void nfs_tls_wire(const struct nfs_tls *t, uint64_t *in, uint64_t *out)
{
	*in = t->probe_in;
	*out = t->probe_out;
	if (t->ssl) {
		*in += BIO_number_read(SSL_get_rbio(t->ssl));
		*out += BIO_number_written(SSL_get_wbio(t->ssl));
	}
	*in += t->rec_in;
	*out += t->rec_out;
}

void nfs_tls_end(struct nfs_tls *t, bool notify)
{
	if (t->rec) {
		uint8_t a[TLS13_OVERHEAD + 2];
		size_t n;

		/* best effort: a server that is gone does not stop us */
		if (notify && !tls13_close_notify(t->rec, a, &n) &&
		    send(t->fd, a, n, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
			t->rec_out += n;
		tls13_conn_free(t->rec);
		free(t->rec);
		free(t->rbuf);
		free(t->wbuf);
		t->rec = NULL;
		t->rbuf = t->wbuf = NULL;
	}
	SSL_free(t->ssl);
	SSL_CTX_free(t->ctx);
	ERR_clear_error();
	t->ssl = NULL;
	t->ctx = NULL;
}
