// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The handshake thread of RPC-with-TLS (gw_tls.h): TLS handshakes run
 * here, never on the workers that serve COMPOUNDs nor on a transport's
 * event loop.
 *
 * Operation
 * ---------
 * The transport hands over a connection after the STARTTLS reply has
 * gone out and its own receive is cancelled: the socket, a reference on
 * the TLS context in force, and the bytes that had already arrived past
 * the probe (the start of the ClientHello). The thread makes an SSL
 * whose rbio and wbio are memory BIOs, so that once the handshake is
 * done the SSL moves to the transport's loop as it is: the loop feeds
 * the rbio with what io_uring receives and replaces the wbio with its own
 * (gw_tcp_tls.c). Bytes are moved between the socket and the BIOs with
 * recv and send MSG_DONTWAIT, waiting in one poll() over every socket in
 * handshake and an eventfd that says new jobs are queued.
 *
 * A handshake fails, and its job comes back with the reason, when its
 * first bytes are not a TLS handshake record (plain RPC after STARTTLS,
 * garbage), when OpenSSL refuses it (a version below 1.3, an alert, a
 * certificate that does not verify, ALPN without "sunrpc"), when the
 * peer goes away, or when tls_handshake_timeout passes. The transport
 * bounds how many run at once (tls_handshakes_max) and closes the
 * connection when a job comes back failed. A transport closing the
 * connection meanwhile shuts the socket down, which makes the handshake
 * fail at once; the job always comes back, so the connection is freed
 * only afterwards.
 *
 * Threads: gw_tls_hs_submit() and gw_tls_hs_done() from the transport's
 * loop; lock is the lock of the two lists and is never held across I/O.
 */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gw_tls.h"
#include "log.h"

#define GW_TLS_HS_MAX 1024 /* sockets one poll() waits on */

struct gw_tls_hs {
	pthread_t thread;
	int efd;
	pthread_mutex_t lock; /* guards todo, done, stop */
	struct gw_tls_hs_job *todo, *done;
	bool stop;
	gw_tls_hs_notify_fn *notify;
	void *arg;
	/* the thread's own */
	struct gw_tls_hs_job *active[GW_TLS_HS_MAX];
	unsigned int nactive;
};

static void gw_tls_hs_finish(struct gw_tls_hs *h, struct gw_tls_hs_job *j)
{
	bool was_empty;

	if (j->fail >= 0 && j->ssl) {
		SSL_free(j->ssl);
		j->ssl = NULL;
	}
	free(j->pre);
	j->pre = NULL;
	pthread_mutex_lock(&h->lock);
	was_empty = !h->done;
	j->next = h->done;
	h->done = j;
	pthread_mutex_unlock(&h->lock);
	if (was_empty)
		h->notify(h->arg);
}

/* The identity of the client's certificate: its first DNS or email SAN, else its subject. */
static void gw_tls_hs_peer(struct gw_tls_hs_job *j, X509 *x)
{
	GENERAL_NAMES *sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	const GENERAL_NAME *g;
	const unsigned char *s;
	int i, n;

	j->peer[0] = 0;
	for (i = 0; sans && i < sk_GENERAL_NAME_num(sans) && !j->peer[0]; i++) {
		g = sk_GENERAL_NAME_value(sans, i);
		if (g->type != GEN_DNS && g->type != GEN_EMAIL)
			continue;
		s = ASN1_STRING_get0_data(g->d.ia5);
		n = ASN1_STRING_length(g->d.ia5);
		if (n > 0 && (size_t)n < sizeof(j->peer) && !memchr(s, 0, (size_t)n))
			snprintf(j->peer, sizeof(j->peer), "%s:%.*s",
				 g->type == GEN_DNS ? "DNS" : "email", n, (const char *)s);
	}
	GENERAL_NAMES_free(sans);
	if (!j->peer[0])
		X509_NAME_oneline(X509_get_subject_name(x), j->peer, sizeof(j->peer));
}

/* The reason of a handshake OpenSSL refused. */
static int gw_tls_hs_reason(SSL *ssl)
{
	unsigned long e = ERR_peek_last_error();
	int r = ERR_GET_REASON(e);

	if (SSL_get_verify_result(ssl) != X509_V_OK || r == SSL_R_CERTIFICATE_VERIFY_FAILED)
		return GW_TLS_FAIL_VERIFY;
	switch (r) {
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_WRONG_VERSION_NUMBER:
	case SSL_R_VERSION_TOO_LOW:
	case SSL_R_NO_PROTOCOLS_AVAILABLE:
	case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
		return GW_TLS_FAIL_VERSION;
	case SSL_R_NO_APPLICATION_PROTOCOL:
		return GW_TLS_FAIL_ALPN;
	case SSL_R_HTTP_REQUEST:
	case SSL_R_HTTPS_PROXY_REQUEST:
	case SSL_R_PACKET_LENGTH_TOO_LONG:
		return GW_TLS_FAIL_NOT_TLS;
	default:
		return GW_TLS_FAIL_HANDSHAKE;
	}
}

/* Send what the wbio holds: 0 when it is all out, -EAGAIN, or -errno. */
static int gw_tls_hs_flush(struct gw_tls_hs_job *j)
{
	BIO *w = SSL_get_wbio(j->ssl);
	uint8_t buf[16384];
	char *p;
	long len;
	ssize_t n;

	while ((len = BIO_get_mem_data(w, &p)) > 0) {
		n = send(j->fd, p, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN
											 : -errno;
		while (n > 0) {
			int k = BIO_read(w, buf,
					 n > (ssize_t)sizeof(buf) ? (int)sizeof(buf) : (int)n);

			if (k <= 0)
				break;
			n -= k;
		}
	}
	return 0;
}

/* The first bytes of the stream: a TLS handshake record (type 22, version 3.x)? */
/*
 * Do @n bytes at @d, the stream's from byte @at on, go on as a TLS
 * handshake record begins (22, then 3)? The first byte may come alone.
 */
static bool gw_tls_hs_looks_tls(const uint8_t *d, size_t n, uint64_t at)
{
	size_t i;

	for (i = 0; i < n && at + i < 2; i++)
		if (d[i] != (at + i ? 3 : 22))
			return false;
	return true;
}

static void gw_tls_hs_in(struct gw_tls_hs_job *j, const uint8_t *d, size_t n)
{
	BIO *rb = SSL_get_rbio(j->ssl);
	uint64_t at = BIO_number_written(rb); /* bytes of the stream before @d */

	if (!j->checked && !gw_tls_hs_looks_tls(d, n, at)) {
		j->fail = GW_TLS_FAIL_NOT_TLS;
		return;
	}
	j->checked = at + n >= 2;
	BIO_write(rb, d, (int)n);
}

/* Move @j on as far as it goes without waiting: true when it is finished. */
static bool gw_tls_hs_step(struct gw_tls_hs_job *j)
{
	uint8_t buf[16384];
	ssize_t n;
	int r, err;

	j->want_write = false;
	for (;;) {
		r = gw_tls_hs_flush(j);
		if (r == -EAGAIN) {
			j->want_write = true;
			return false;
		}
		if (r < 0 && j->fail < 0 && !j->done)
			j->fail = GW_TLS_FAIL_HANDSHAKE; /* the peer is gone */
		if (j->fail >= 0 || r < 0)
			return true;
		if (j->done)
			return true;
		ERR_clear_error();
		r = SSL_do_handshake(j->ssl);
		if (r == 1) {
			j->done = true;
			continue; /* the last flight out first */
		}
		err = SSL_get_error(j->ssl, r);
		if (err != SSL_ERROR_WANT_READ) {
			j->fail = err == SSL_ERROR_SSL ? gw_tls_hs_reason(j->ssl)
						       : GW_TLS_FAIL_HANDSHAKE;
			gw_tls_hs_flush(j); /* the alert, if it goes */
			return true;
		}
		if (BIO_ctrl_pending(SSL_get_wbio(j->ssl)))
			continue;
		n = recv(j->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return false;
		if (n <= 0) {
			j->fail = GW_TLS_FAIL_HANDSHAKE; /* the peer went away */
			return true;
		}
		gw_tls_hs_in(j, buf, (size_t)n);
		if (j->fail >= 0)
			return true;
	}
}

/* A new job: its SSL, the bytes that came with it. false: it failed at once. */
static bool gw_tls_hs_begin(struct gw_tls_hs_job *j)
{
	BIO *rb, *wb;

	j->fail = -1;
	clock_gettime(CLOCK_MONOTONIC, &j->deadline);
	j->deadline.tv_sec += j->timeout ? j->timeout : 10;
	ERR_clear_error();
	j->ssl = SSL_new(j->ctx);
	SSL_CTX_free(j->ctx); /* the SSL holds its own reference */
	j->ctx = NULL;
	rb = BIO_new(BIO_s_mem());
	wb = BIO_new(BIO_s_mem());
	if (!j->ssl || !rb || !wb) {
		BIO_free(rb);
		BIO_free(wb);
		log_err("tls: SSL_new: out of memory");
		j->fail = GW_TLS_FAIL_HANDSHAKE;
		return false;
	}
	BIO_set_mem_eof_return(rb, -1);
	BIO_set_mem_eof_return(wb, -1);
	SSL_set_bio(j->ssl, rb, wb);
	SSL_set_accept_state(j->ssl);
	if (j->pre_len)
		gw_tls_hs_in(j, j->pre, j->pre_len);
	free(j->pre);
	j->pre = NULL;
	return j->fail < 0;
}

static void gw_tls_hs_result(struct gw_tls_hs_job *j)
{
	X509 *x;

	if (j->fail >= 0)
		return;
	x = SSL_get0_peer_certificate(j->ssl);
	/* with SSL_VERIFY_PEER a certificate that does not verify fails the handshake */
	j->mtls = x && SSL_get_verify_result(j->ssl) == X509_V_OK;
	if (j->mtls)
		gw_tls_hs_peer(j, x);
}

static int gw_tls_hs_ms_left(const struct gw_tls_hs_job *j, const struct timespec *now)
{
	long long ms = (long long)(j->deadline.tv_sec - now->tv_sec) * 1000 +
		       (j->deadline.tv_nsec - now->tv_nsec) / 1000000;

	return ms < 0 ? 0 : ms > 1000000 ? 1000000 : (int)ms;
}

static void *gw_tls_hs_main(void *arg)
{
	struct gw_tls_hs *h = arg;
	struct pollfd pfd[GW_TLS_HS_MAX + 1];
	struct gw_tls_hs_job *j, *next;
	struct timespec now;
	unsigned int i, k;
	uint64_t v;
	int timeout, ms;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&h->lock);
		j = h->todo;
		h->todo = NULL;
		stop = h->stop;
		pthread_mutex_unlock(&h->lock);
		for (; j; j = next) {
			next = j->next;
			if (h->nactive == GW_TLS_HS_MAX) {
				j->fail = GW_TLS_FAIL_BUSY;
				SSL_CTX_free(j->ctx);
				j->ctx = NULL;
				gw_tls_hs_finish(h, j);
				continue;
			}
			if (!gw_tls_hs_begin(j) || gw_tls_hs_step(j)) {
				gw_tls_hs_result(j);
				gw_tls_hs_finish(h, j);
				continue;
			}
			h->active[h->nactive++] = j;
		}
		if (stop && !h->nactive)
			break;
		/* deadlines, then one poll over what is left */
		clock_gettime(CLOCK_MONOTONIC, &now);
		timeout = -1;
		for (i = 0; i < h->nactive;) {
			j = h->active[i];
			ms = gw_tls_hs_ms_left(j, &now);
			if (!ms) {
				j->fail = GW_TLS_FAIL_TIMEOUT;
				gw_tls_hs_finish(h, j);
				h->active[i] = h->active[--h->nactive];
				continue;
			}
			if (timeout < 0 || ms < timeout)
				timeout = ms;
			pfd[i + 1].fd = j->fd;
			pfd[i + 1].events = j->want_write ? POLLOUT : POLLIN;
			pfd[i + 1].revents = 0;
			i++;
		}
		pfd[0].fd = h->efd;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		if (poll(pfd, h->nactive + 1, timeout) < 0 && errno != EINTR)
			log_err("tls: poll: %s", strerror(errno));
		if (pfd[0].revents & POLLIN) {
			if (read(h->efd, &v, sizeof(v)) < 0) {
				/* counted down by the next write */
			}
		}
		for (i = 0, k = 0; i < h->nactive; i++) {
			j = h->active[i];
			if (pfd[i + 1].revents && gw_tls_hs_step(j)) {
				gw_tls_hs_result(j);
				gw_tls_hs_finish(h, j);
				continue;
			}
			h->active[k++] = j;
		}
		h->nactive = k;
	}
	return NULL;
}

static void gw_tls_hs_kick(struct gw_tls_hs *h)
{
	uint64_t one = 1;

	if (write(h->efd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the thread wakes anyway */
	}
}

int gw_tls_hs_start(struct gw_tls_hs **out, gw_tls_hs_notify_fn *notify, void *arg)
{
	struct gw_tls_hs *h = calloc(1, sizeof(*h));
	sigset_t all, old;
	int ret;

	if (!h) {
		log_err("tls: calloc: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	h->notify = notify;
	h->arg = arg;
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->efd < 0) {
		ret = -errno;
		log_err("tls: eventfd: %s", strerror(-ret));
		free(h);
		return ret;
	}
	pthread_mutex_init(&h->lock, NULL);
	/* signals go to the threads that expect them */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&h->thread, NULL, gw_tls_hs_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		log_err("tls: pthread_create: %s", strerror(-ret));
		close(h->efd);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return ret;
	}
	*out = h;
	return 0;
}

void gw_tls_hs_submit(struct gw_tls_hs *h, struct gw_tls_hs_job *j)
{
	pthread_mutex_lock(&h->lock);
	j->next = h->todo;
	h->todo = j;
	pthread_mutex_unlock(&h->lock);
	gw_tls_hs_kick(h);
}

struct gw_tls_hs_job *gw_tls_hs_done(struct gw_tls_hs *h)
{
	struct gw_tls_hs_job *j;

	pthread_mutex_lock(&h->lock);
	j = h->done;
	h->done = NULL;
	pthread_mutex_unlock(&h->lock);
	return j;
}

void gw_tls_hs_stop(struct gw_tls_hs *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = true;
	pthread_mutex_unlock(&h->lock);
	gw_tls_hs_kick(h);
	pthread_join(h->thread, NULL);
	if (h->done)
		log_err("tls: handshakes finished after their transport stopped");
	close(h->efd);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
