// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc's TCP transport: one connection, calls sent as one record
 * fragment behind its mark, replies reassembled with common/rpc.h's
 * record reader straight into one buffer of rec_max bytes (a longer
 * reply, or one in more than RPC_REC_FRAGS_MAX fragments, ends the
 * connection), or silence for NFSC_REPLY_TIMEOUT seconds. Counts every
 * byte sent and received, marks included.
 *
 * As root the connection comes from a reserved port, as bindresvport(3),
 * libnfs and the kernel client do: servers' exports are `secure` by
 * default and take AUTH_SYS only from ports below 1024 (exports(5)). When
 * none is free, or not as root, it comes from an ordinary port, and the
 * transport says so (resvport) for the error message to explain an
 * NFS4ERR_PERM.
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
#include <time.h>
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

int nfsc_rec_recv(struct nfsc_xprt *t, struct rpc_rec *rec, bool *dead,
		  ssize_t (*rd)(void *arg, void *buf, size_t len), void *arg, const uint8_t **msg,
		  size_t *len)
{
	if (*dead) {
		snprintf(t->err, sizeof(t->err), "recv: %s", strerror(ENOTCONN));
		return -ENOTCONN;
	}
	rpc_rec_next(rec, NULL, 0);
	while (!rpc_rec_ready(rec)) {
		void *p;
		size_t want = rpc_rec_space(rec, &p);
		ssize_t r;
		int rc;

		if (!want) {
			rc = rec->err ? rec->err : -EPROTO;
			snprintf(t->err, sizeof(t->err), "%s",
				 rc == -EMSGSIZE ? "reply longer than the session allows"
						 : "reply in too many record fragments");
			*dead = true;
			return rc;
		}
		r = rd(arg, p, want);
		if (r == -ETIMEDOUT) {
			snprintf(t->err, sizeof(t->err), "no reply from the server in %d s",
				 NFSC_REPLY_TIMEOUT);
			*dead = true;
			return -ETIMEDOUT;
		}
		if (r < 0) {
			*dead = true;
			return (int)r;
		}
		if (r == 0) {
			snprintf(t->err, sizeof(t->err), "the server closed the connection");
			*dead = true;
			return -ECONNRESET;
		}
		rpc_rec_commit(rec, (size_t)r); /* an error: rpc_rec_space() says 0 */
	}
	*msg = rec->buf;
	*len = rec->len;
	return 0;
}

static ssize_t tcp_read(void *arg, void *buf, size_t len)
{
	struct tcp_xprt *x = arg;

	for (;;) {
		ssize_t r = recv(x->fd, buf, len, 0);
		int rc = -errno;

		if (r >= 0) {
			x->t.bytes_in += (uint64_t)r;
			return r;
		}
		if (rc == -EINTR)
			continue;
		if (rc == -EAGAIN || rc == -EWOULDBLOCK)
			return -ETIMEDOUT;
		snprintf(x->t.err, sizeof(x->t.err), "recv: %s", strerror(-rc));
		return rc;
	}
}

static int tcp_recv(struct nfsc_xprt *t, const uint8_t **msg, size_t *len)
{
	struct tcp_xprt *x = (struct tcp_xprt *)t;

	return nfsc_rec_recv(t, &x->rec, &x->dead, tcp_read, x, msg, len);
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

#define RESV_LOW 512 /* bindresvport(3)'s range: 512..1023 */

/* The port of @sa (AF_INET or AF_INET6) set to @port. */
static void set_port(struct sockaddr_storage *sa, uint16_t port)
{
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

/*
 * A socket connected to @a from a reserved port, tried from a random
 * start and skipping ports in use; -1 (errno ENOENT) when none could be
 * had, else -1 with the errno of a failure that is not about the port.
 */
static int connect_resv(const struct addrinfo *a)
{
	unsigned int n = IPPORT_RESERVED - RESV_LOW, start, i;
	struct sockaddr_storage local = { .ss_family = (sa_family_t)a->ai_family };
	struct timespec ts;
	int fd, one = 1;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = (unsigned int)(ts.tv_nsec ^ getpid()) % n;
	for (i = 0; i < n; i++) {
		set_port(&local, (uint16_t)(RESV_LOW + (start + i) % n));
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			return -1;
		/* a port of ours in TIME_WAIT towards another server stays usable */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, (struct sockaddr *)&local, a->ai_addrlen) &&
		    !connect(fd, a->ai_addr, a->ai_addrlen))
			return fd;
		if (errno != EADDRINUSE && errno != EADDRNOTAVAIL) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		close(fd);
	}
	errno = ENOENT;
	return -1;
}

uint16_t nfsc_local_port(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len))
		return 0;
	if (sa.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
	if (sa.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&sa)->sin_port);
	return 0;
}

int nfsc_tcp_socket(const char *host, const char *port, int *out, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai, *a;
	struct timeval tmo = { .tv_sec = NFSC_REPLY_TIMEOUT };
	int one = 1, rc, fd = -1, saved = 0;

	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "%s: %s", host,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (a = ai; a && fd < 0; a = a->ai_next) {
		if (geteuid() == 0 && (a->ai_family == AF_INET || a->ai_family == AF_INET6)) {
			fd = connect_resv(a);
			if (fd >= 0)
				break;
			if (errno != ENOENT && errno != EACCES && errno != EPERM) {
				saved = errno;
				continue;
			}
			/* no reserved port to be had: an ordinary one */
		}
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
	*out = fd;
	return 0;
}

int nfsc_tcp_connect(const char *host, const char *port, size_t rec_max, struct nfsc_xprt **out,
		     char *err, size_t errlen)
{
	struct tcp_xprt *x;
	int rc, fd;

	rc = nfsc_tcp_socket(host, port, &fd, err, errlen);
	if (rc)
		return rc;
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
	x->t.sport = nfsc_local_port(fd);
	x->t.resvport = x->t.sport && x->t.sport < IPPORT_RESERVED;
	x->fd = fd;
	x->max = rec_max;
	rpc_rec_init(&x->rec, x->buf, rec_max);
	*out = &x->t;
	return 0;
}
