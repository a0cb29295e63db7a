// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Latency histograms and the /metrics HTTP responder (metrics.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"

const uint64_t mx_bounds_ns[MX_BUCKETS] = {
	5000,	    10000,	25000,	    50000,	100000,	    250000,	500000,
	1000000,    2500000,	5000000,    10000000,	25000000,   50000000,	100000000,
	250000000,  500000000,	1000000000, 2500000000, 5000000000, 10000000000,
};

unsigned long long mx_hist_count(const struct mx_hist *h)
{
	unsigned long long n = 0;
	unsigned int i;

	for (i = 0; i <= MX_BUCKETS; i++)
		n += atomic_load_explicit(&h->b[i], memory_order_relaxed);
	return n;
}

void mx_header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void mx_one(FILE *f, const char *name, const char *type, const char *help, unsigned long long v)
{
	mx_header(f, name, type, help);
	fprintf(f, "%s %llu\n", name, v);
}

void mx_two(FILE *f, const char *name, const char *type, const char *help, const char *label,
	    const char *a, unsigned long long va, const char *b, unsigned long long vb)
{
	mx_header(f, name, type, help);
	fprintf(f, "%s{%s=\"%s\"} %llu\n%s{%s=\"%s\"} %llu\n", name, label, a, va, name, label, b,
		vb);
}

void mx_hist_write(FILE *f, const char *name, const char *labels, const struct mx_hist *h)
{
	const char *sep = labels[0] ? "," : "";
	unsigned long long n = 0;
	unsigned int i;

	for (i = 0; i <= MX_BUCKETS; i++) {
		n += atomic_load_explicit(&h->b[i], memory_order_relaxed);
		if (i < MX_BUCKETS)
			fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
				(double)mx_bounds_ns[i] / 1e9, n);
		else
			fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, n);
	}
	fprintf(f, "%s_sum{%s} %.9f\n%s_count{%s} %llu\n", name, labels,
		(double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e9, name, labels,
		n);
}

/* ---------------------------------------------------------------- the responder */

struct mx_conn {
	int fd; /* -1: free slot */
	char in[MX_REQ_MAX];
	size_t inlen;
	char *out; /* the whole reply once the request is in */
	size_t outlen, outoff;
	uint64_t deadline; /* ms, monotonic */
};

struct mx_http {
	int lfd;
	int wake; /* eventfd: stop */
	pthread_t thr;
	mx_render_fn *render;
	void *arg;
	struct mx_conn conns[MX_CONNS_MAX];
};

static uint64_t now_ms(void)
{
	return mx_now_ns() / 1000000;
}

static void conn_close(struct mx_conn *c)
{
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->inlen = c->outlen = c->outoff = 0;
}

static int set_reply(struct mx_conn *c, const char *status, const char *body, size_t blen)
{
	int n;

	n = asprintf(&c->out,
		     "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%.*s",
		     status, blen, (int)blen, body);
	if (n < 0) {
		c->out = NULL;
		return -ENOMEM;
	}
	c->outlen = (size_t)n;
	return 0;
}

/* The request in c->in is complete (or too large): build the reply. */
static int answer(struct mx_http *h, struct mx_conn *c, bool too_large)
{
	char *line_end, *sp1, *sp2, *body = NULL;
	size_t blen = 0;
	FILE *f;
	int err;

	if (too_large)
		return set_reply(c, "431 Request Header Fields Too Large", "too large\n", 10);
	line_end = memchr(c->in, '\n', c->inlen);
	*line_end = '\0';
	if (line_end > c->in && line_end[-1] == '\r')
		line_end[-1] = '\0';
	sp1 = strchr(c->in, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || (strcmp(sp2 + 1, "HTTP/1.0") && strcmp(sp2 + 1, "HTTP/1.1")))
		return set_reply(c, "400 Bad Request", "bad request\n", 12);
	*sp1 = *sp2 = '\0';
	if (strcmp(c->in, "GET") || strcmp(sp1 + 1, "/metrics"))
		return set_reply(c, "404 Not Found", "not found\n", 10);
	f = open_memstream(&body, &blen);
	if (!f)
		return -ENOMEM;
	h->render(f, h->arg);
	if (fclose(f)) {
		free(body);
		return -ENOMEM;
	}
	err = set_reply(c, "200 OK", body, blen);
	free(body);
	return err;
}

/* Readable: take what came, answer once the headers end. */
static void conn_read(struct mx_http *h, struct mx_conn *c)
{
	ssize_t n = read(c->fd, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen);
	bool full, done;

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	c->inlen += (size_t)n;
	c->in[c->inlen] = '\0';
	full = c->inlen == sizeof(c->in) - 1;
	done = strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n");
	if (!done && !full)
		return;
	/* a NUL byte is no HTTP: drop the connection */
	if (memchr(c->in, '\0', c->inlen) || answer(h, c, !done))
		conn_close(c);
}

static void conn_write(struct mx_conn *c)
{
	ssize_t n = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	c->outoff += (size_t)n;
	if (c->outoff == c->outlen)
		conn_close(c);
}

static void accept_one(struct mx_http *h)
{
	unsigned int i;
	int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (i = 0; i < MX_CONNS_MAX; i++) {
		if (h->conns[i].fd < 0) {
			h->conns[i].fd = fd;
			h->conns[i].deadline = now_ms() + MX_TIMEOUT_MS;
			return;
		}
	}
	close(fd);
}

static void *mx_thread(void *arg)
{
	struct mx_http *h = arg;
	struct pollfd pfd[MX_CONNS_MAX + 2];
	int idx[MX_CONNS_MAX + 2];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		unsigned int i, n = 0, busy = 0;
		uint64_t now = now_ms();

		pfd[n++] = (struct pollfd){ .fd = h->wake, .events = POLLIN };
		for (i = 0; i < MX_CONNS_MAX; i++) {
			struct mx_conn *c = &h->conns[i];

			if (c->fd < 0)
				continue;
			if (now >= c->deadline) {
				conn_close(c);
				continue;
			}
			busy++;
			idx[n] = (int)i;
			pfd[n++] = (struct pollfd){ .fd = c->fd, .events = c->out ? POLLOUT : POLLIN };
		}
		/* full: new connections wait in the backlog until one times out or ends */
		if (busy < MX_CONNS_MAX) {
			idx[n] = -1;
			pfd[n++] = (struct pollfd){ .fd = h->lfd, .events = POLLIN };
		}
		if (poll(pfd, n, 500) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		for (i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (idx[i] < 0)
				accept_one(h);
			else if (h->conns[idx[i]].out)
				conn_write(&h->conns[idx[i]]);
			else
				conn_read(h, &h->conns[idx[i]]);
		}
	}
	return NULL;
}

int mx_http_start(const struct sockaddr *sa, socklen_t len, mx_render_fn *render, void *arg,
		  struct mx_http **out)
{
	struct mx_http *h = calloc(1, sizeof(*h));
	unsigned int i;
	int one = 1, err;

	if (!h)
		return -ENOMEM;
	h->render = render;
	h->arg = arg;
	for (i = 0; i < MX_CONNS_MAX; i++)
		h->conns[i].fd = -1;
	h->wake = eventfd(0, EFD_CLOEXEC);
	if (h->wake < 0) {
		err = -errno;
		log_err("metrics: eventfd: %s", strerror(errno));
		goto out_free;
	}
	h->lfd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0) {
		err = -errno;
		log_err("metrics: socket: %s", strerror(errno));
		goto out_wake;
	}
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->lfd, sa, len) < 0 || listen(h->lfd, MX_CONNS_MAX) < 0) {
		err = -errno;
		log_err("metrics: bind/listen: %s", strerror(errno));
		goto out_sock;
	}
	err = -pthread_create(&h->thr, NULL, mx_thread, h);
	if (err) {
		log_err("metrics: pthread_create: %s", strerror(-err));
		goto out_sock;
	}
	*out = h;
	return 0;
out_sock:
	close(h->lfd);
out_wake:
	close(h->wake);
out_free:
	free(h);
	return err;
}

void mx_http_stop(struct mx_http *h)
{
	uint64_t one = 1;
	unsigned int i;

	if (!h)
		return;
	if (write(h->wake, &one, sizeof(one)) != sizeof(one))
		log_warn("metrics: eventfd write: %s", strerror(errno));
	pthread_join(h->thr, NULL);
	for (i = 0; i < MX_CONNS_MAX; i++)
		if (h->conns[i].fd >= 0)
			conn_close(&h->conns[i]);
	close(h->lfd);
	close(h->wake);
	free(h);
}
