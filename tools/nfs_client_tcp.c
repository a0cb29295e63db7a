// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc's TCP transport: one connection, calls sent as one record
 * fragment behind its mark, replies reassembled with common/rpc.h's
 * record reader straight into one buffer of rec_max bytes (a longer
 * reply, or one in more than RPC_REC_FRAGS_MAX fragments, ends the
 * connection), or silence for NFSC_REPLY_TIMEOUT seconds. Counts every
 * byte sent and received, marks included.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "nfs_client.h"
#include "rpc.h"

struct tcp_xprt {
	struct nfsc_xprt t;
	int fd;
	bool dead;
	struct rpc_rec rec;
	uint8_t *buf;
	size_t max;
};

static int tcp_fail(struct tcp_xprt *x, int rc, const char *what)
{
	snprintf(x->t.err, sizeof(x->t.err), "%s: %s", what, strerror(-rc));
	x->dead = true;
	return rc;
}

static int tcp_send(struct nfsc_xprt *t, const struct iovec *iov, unsigned int n,
		    uint32_t ddp_read)
{
	struct tcp_xprt *x = (struct tcp_xprt *)t;
	struct iovec v[8];
	struct msghdr msg = { .msg_iov = v };
	uint8_t mark[4];
	size_t len = 0, left;
	unsigned int i;

	(void)ddp_read; /* a byte stream: everything goes inline */
	if (x->dead)
		return tcp_fail(x, -ENOTCONN, "send");
	if (n + 1 > sizeof(v) / sizeof(v[0]))
		return -EINVAL;
	v[0] = (struct iovec){ .iov_base = mark, .iov_len = sizeof(mark) };
	for (i = 0; i < n; i++) {
		v[i + 1] = iov[i];
		len += iov[i].iov_len;
	}
	if (len > RPC_REC_FRAG_LEN_MAX)
		return -EMSGSIZE;
	xdr_put_u32(mark, RPC_REC_LAST | (uint32_t)len);
	msg.msg_iovlen = n + 1;
	left = len + sizeof(mark);
	while (left) {
		ssize_t r = sendmsg(x->fd, &msg, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tcp_fail(x, -errno, "sendmsg");
		t->bytes_out += (uint64_t)r;
		left -= (size_t)r;
		while (r > 0) {
			if ((size_t)r >= msg.msg_iov->iov_len) {
				r -= (ssize_t)msg.msg_iov->iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			} else {
				msg.msg_iov->iov_base = (uint8_t *)msg.msg_iov->iov_base + r;
				msg.msg_iov->iov_len -= (size_t)r;
				r = 0;
			}
		}
	}
	return 0;
}

static int tcp_recv(struct nfsc_xprt *t, const uint8_t **msg, size_t *len)
{
	struct tcp_xprt *x = (struct tcp_xprt *)t;

	if (x->dead)
		return tcp_fail(x, -ENOTCONN, "recv");
	rpc_rec_next(&x->rec, NULL, 0);
	while (!rpc_rec_ready(&x->rec)) {
		void *p;
		size_t want = rpc_rec_space(&x->rec, &p);
		ssize_t r;
		int rc;

		if (!want) {
			rc = x->rec.err ? x->rec.err : -EPROTO;
			snprintf(t->err, sizeof(t->err), "%s",
				 rc == -EMSGSIZE ? "reply longer than the session allows"
						 : "reply in too many record fragments");
			x->dead = true;
			return rc;
		}
		r = recv(x->fd, p, want, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			snprintf(t->err, sizeof(t->err), "no reply from the server in %d s",
				 NFSC_REPLY_TIMEOUT);
			x->dead = true;
			return -ETIMEDOUT;
		}
		if (r < 0)
			return tcp_fail(x, -errno, "recv");
		if (r == 0) {
			snprintf(t->err, sizeof(t->err), "the server closed the connection");
			x->dead = true;
			return -ECONNRESET;
		}
		t->bytes_in += (uint64_t)r;
		rpc_rec_commit(&x->rec, (size_t)r); /* an error: rpc_rec_space() says 0 */
	}
	*msg = x->rec.buf;
	*len = x->rec.len;
	return 0;
}

static void tcp_destroy(struct nfsc_xprt *t)
{
	struct tcp_xprt *x = (struct tcp_xprt *)t;

	close(x->fd);
	free(x->buf);
	free(x);
}

static const struct nfsc_xprt_ops tcp_ops = {
	.send = tcp_send,
	.recv = tcp_recv,
	.destroy = tcp_destroy,
};

int nfsc_tcp_connect(const char *host, const char *port, size_t rec_max, struct nfsc_xprt **out,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai, *a;
	struct timeval tmo = { .tv_sec = NFSC_REPLY_TIMEOUT };
	struct tcp_xprt *x;
	int one = 1, rc, fd = -1, saved = 0;

	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "%s: %s", host,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen)) {
			saved = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		snprintf(err, errlen, "connect to %s port %s: %s", host, port, strerror(saved));
		return -saved;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	x = calloc(1, sizeof(*x));
	if (x)
		x->buf = malloc(rec_max);
	if (!x || !x->buf) {
		snprintf(err, errlen, "malloc: %s", strerror(ENOMEM));
		free(x);
		close(fd);
		return -ENOMEM;
	}
	x->t.ops = &tcp_ops;
	x->fd = fd;
	x->max = rec_max;
	rpc_rec_init(&x->rec, x->buf, rec_max);
	*out = &x->t;
	return 0;
}
