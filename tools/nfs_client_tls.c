// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc's RPC-with-TLS transport (RFC 9289): the TCP transport's
 * connection (a reserved port as root, nfsc_tcp_socket), the AUTH_TLS
 * probe and a TLS 1.3 handshake (nfs_tls.c), then the same records as
 * over TCP, marks included, inside TLS. A call is copied behind its
 * mark into one buffer and written at once (TLS records of 16 KiB);
 * replies are reassembled with common/rpc.h's record reader straight
 * into one buffer of rec_max bytes, as the TCP transport does. The
 * bytes counted are those that crossed the socket: the probe, the
 * handshake and TLS's framing included.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfs_client.h"
#include "nfs_tls.h"
#include "rpc.h"

struct tls_xprt {
	struct nfsc_xprt t;
	int fd;
	bool dead;
	struct nfs_tls tls;
	struct rpc_rec rec;
	uint8_t *buf;
	uint8_t *sbuf; /* a call behind its mark */
	size_t scap;
};

static void tls_count(struct tls_xprt *x)
{
	nfs_tls_wire(&x->tls, &x->t.bytes_in, &x->t.bytes_out);
}

static int tls_send(struct nfsc_xprt *t, const struct iovec *iov, unsigned int n, uint32_t ddp_read)
{
	struct tls_xprt *x = (struct tls_xprt *)t;
	size_t len = 0, at = 4;
	unsigned int i;
	int rc;

	(void)ddp_read; /* a byte stream: everything goes inline */
	if (x->dead) {
		snprintf(t->err, sizeof(t->err), "send: %s", strerror(ENOTCONN));
		return -ENOTCONN;
	}
	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len > RPC_REC_FRAG_LEN_MAX)
		return -EMSGSIZE;
	if (len + 4 > x->scap) {
		uint8_t *p = realloc(x->sbuf, len + 4);

		if (!p) {
			snprintf(t->err, sizeof(t->err), "malloc: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		x->sbuf = p;
		x->scap = len + 4;
	}
	xdr_put_u32(x->sbuf, RPC_REC_LAST | (uint32_t)len);
	for (i = 0; i < n; i++) {
		if (iov[i].iov_len)
			memcpy(x->sbuf + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	rc = nfs_tls_write(&x->tls, x->sbuf, at, t->err, sizeof(t->err));
	tls_count(x);
	if (rc)
		x->dead = true;
	return rc;
}

static ssize_t tls_read(void *arg, void *buf, size_t len)
{
	struct tls_xprt *x = arg;
	ssize_t r = nfs_tls_read(&x->tls, buf, len, x->t.err, sizeof(x->t.err));

	tls_count(x);
	return r;
}

static int tls_recv(struct nfsc_xprt *t, const uint8_t **msg, size_t *len)
{
	struct tls_xprt *x = (struct tls_xprt *)t;

	return nfsc_rec_recv(t, &x->rec, &x->dead, tls_read, x, msg, len);
}

static void tls_destroy(struct nfsc_xprt *t)
{
	struct tls_xprt *x = (struct tls_xprt *)t;

	/* no close_notify on a connection that failed */
	nfs_tls_end(&x->tls, !x->dead);
	close(x->fd);
	free(x->sbuf);
	free(x->buf);
	free(x);
}

static const struct nfsc_xprt_ops tls_ops = {
	.send = tls_send,
	.recv = tls_recv,
	.destroy = tls_destroy,
};

int nfsc_tls_connect(const char *host, const char *port, size_t rec_max,
		     const struct nfs_tls_opts *o, struct nfsc_xprt **out, char *err, size_t errlen)
{
	struct nfs_tls_opts opts = *o;
	struct tls_xprt *x;
	int rc, fd;

	rc = nfsc_tcp_socket(host, port, &fd, err, errlen);
	if (rc)
		return rc;
	x = calloc(1, sizeof(*x));
	if (x)
		x->buf = malloc(rec_max);
	if (!x || !x->buf) {
		snprintf(err, errlen, "malloc: %s", strerror(ENOMEM));
		rc = -ENOMEM;
		goto out_free;
	}
	if (!opts.host)
		opts.host = host;
	rc = nfs_tls_start(&x->tls, fd, &opts, err, errlen);
	if (rc)
		goto out_free;
	x->t.ops = &tls_ops;
	x->t.sport = nfsc_local_port(fd);
	x->t.resvport = x->t.sport && x->t.sport < IPPORT_RESERVED;
	x->t.tls = true;
	x->t.mtls = x->tls.mtls;
	snprintf(x->t.sec, sizeof(x->t.sec), "%s", x->tls.desc);
	x->fd = fd;
	rpc_rec_init(&x->rec, x->buf, rec_max);
	tls_count(x);
	*out = &x->t;
	return 0;

out_free:
	if (x)
		free(x->buf);
	free(x);
	close(fd);
	return rc;
}
