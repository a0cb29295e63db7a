// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC-with-TLS (RFC 9289) on lacunad's TCP connections: the AUTH_TLS
 * probe, the hand-off to the handshake thread and back, and RPC records
 * inside TLS. docs/tls.md is the user's view; xprt/tls/gw_tls.h has the
 * context and the handshake thread.
 *
 * Operation
 * ---------
 * Probe. With a certificate configured, a whole record on a plain
 * connection that is a NULL call with an AUTH_TLS credential is answered
 * here, not by the workers: MSG_ACCEPTED SUCCESS with an AUTH_NONE
 * verifier holding "STARTTLS". The connection (GW_CONN_STARTTLS) stops
 * reading records: its recv is cancelled, and every byte that arrived
 * after the probe (in the same buffer, in the spill, or in a completion
 * racing the cancel) is kept in c->pre, the start of the ClientHello. A
 * probe with calls of the connection still in flight is refused (their
 * replies could not be sent in the clear once TLS starts): the
 * connection is closed. Without a certificate, or on a connection
 * already in TLS, a probe goes to RPC like any call, which answers
 * AUTH_ERROR AUTH_BADCRED (common/rpc.h).
 *
 * Handshake. Once the reply is sent and no operation of the loop reads
 * or writes the socket, the connection goes to the handshake thread
 * (GW_CONN_HANDSHAKE; one pseudo-operation in c->ops keeps it alive),
 * unless tls_handshakes_max are already running: then it is closed and
 * counted. The thread gives it back done or failed; a failed one is
 * closed and counted by reason.
 *
 * Records. In GW_CONN_TLS the records are common/tls13_rec.h's (c->trec,
 * from the secrets the handshake's keylog callback kept): whole records
 * are opened where io_uring received them, into plaintext on the stack,
 * a record cut by the end of a receive waits in c->rx for its rest, and
 * the plaintext is fed to the record reassembler exactly as a plain
 * connection's bytes (stalls set the plaintext aside in the spill).
 * Replies are sealed straight from their iovecs into c->tx, a large
 * chunk of the pool taken as the replies take theirs (one per
 * connection, sending; when the pool has none, a buffer of
 * GW_TCP_TX_HEAP bytes of the heap, so that replies holding chunks can
 * still go and give them back), a record of at most 16 KiB of plaintext
 * at a time and only while the chunk has room for it; a reply whose
 * bytes are all sealed leaves the queue (its chunks go back) and the
 * ciphertext goes out with the same one sendmsg at a time as plain
 * replies. The chunk goes back to the pool when nothing is left to seal
 * or send. Our KeyUpdate (the client asked for one) is sealed at the
 * start of c->tx before the records that use the next key; close_notify
 * at the end. A close_notify is the end of the stream; a record that
 * does not decrypt or breaks TLS 1.3's rules, a fatal alert, or more
 * than GW_TLS_KEYUPDATE_MAX KeyUpdates in a minute closes the
 * connection, counted. This is the one record path: the SSL only
 * holds the handshake's result (its cipher for the log, the records
 * that came with the client's Finished in its rbio, handed over once),
 * and nothing is read or written through it afterwards. The contexts
 * offer only the suites tls13_rec does (gw_tls.c); when tls13_take
 * fails all the same (out of memory), the connection is closed,
 * counted as a handshake failure.
 *
 * Reload. On every tick the loop compares the configuration snapshot
 * with the one its context was made from; a new one makes a new context
 * (the files are read again), which replaces the old for handshakes
 * that start afterwards. Established connections keep their SSL, which
 * holds its own reference on the context it was made from. A new
 * certificate that does not load is logged and the old context stays.
 *
 * Threads: everything here runs on the loop thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gw_tcp.h"
#include "log.h"
#include "trace.h"

/* ciphertext buffer when the pool has no chunk to spare: four full records */
#define GW_TCP_TX_HEAP (4 * (GW_TLS_REC_PLAIN + GW_TLS_REC_OVERHEAD))

_Static_assert(sizeof(((struct gw_tls_hs_job *)0)->peer) ==
		       sizeof(((struct gw_conn_info *)0)->tls_peer),
	       "the identity fits the connection's");

static void gw_tcp_tls_fail(struct gw_conn *c, enum gw_tls_fail why)
{
	struct gw_tcp *t = c->tcp;
	char a[64];

	gw_stat_add(&t->srv->stats.tls_failures[why], 1);
	LTRACE(lacunad, tls__fail, c->info.id, (int)why, gw_tls_fail_names[why]);
	log_info("tls: connection %llu from %s: %s: closed", (unsigned long long)c->info.id,
		 net_addr_str(&c->info.peer, a, sizeof(a)), gw_tls_fail_names[why]);
	gw_conn_close(c, true, gw_tls_fail_names[why]);
}

/* ---------------------------------------------------------------- the context */

void gw_tcp_tls_load(struct gw_tcp *t)
{
	struct gw_snap *sn = gw_snap_get(t->srv);
	bool first = !t->tls_snap;
	SSL_CTX *ctx;

	if (sn == t->tls_snap) {
		gw_snap_put(sn);
		return;
	}
	t->hs_max = sn->cfg->tls_handshakes_max ? sn->cfg->tls_handshakes_max : 64;
	t->hs_timeout = sn->cfg->tls_handshake_timeout ? sn->cfg->tls_handshake_timeout : 10;
	if (!gw_tls_ctx_new(sn->cfg, &ctx)) {
		if (ctx && first) {
			log_info("tls: RPC-with-TLS served (certificate %s%s%s)", sn->cfg->tls_cert,
				 sn->cfg->tls_ca && *sn->cfg->tls_ca ? ", client certificates from "
								     : "",
				 sn->cfg->tls_ca && *sn->cfg->tls_ca ? sn->cfg->tls_ca : "");
			gw_tls_ktls_probe();
		} else if (ctx) {
			log_info("tls: certificate reloaded from %s", sn->cfg->tls_cert);
		} else if (t->tls_ctx) {
			log_info("tls: no certificate configured any more: TLS not served");
		}
		SSL_CTX_free(t->tls_ctx);
		t->tls_ctx = ctx;
	} else if (t->tls_ctx) {
		log_err("tls: the new certificate could not be used: the previous one stays");
	}
	if (t->tls_snap)
		gw_snap_put(t->tls_snap);
	t->tls_snap = sn; /* held: a later snapshot cannot take its address */
}

void gw_tcp_tls_fini(struct gw_tcp *t)
{
	gw_tls_hs_stop(t->hs);
	t->hs = NULL;
	SSL_CTX_free(t->tls_ctx);
	t->tls_ctx = NULL;
	if (t->tls_snap)
		gw_snap_put(t->tls_snap);
	t->tls_snap = NULL;
}

/* ---------------------------------------------------------------- probe and handshake */

bool gw_tcp_tls_probe(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	uint32_t xid;

	if (!t->tls_ctx || c->tls != GW_CONN_PLAIN ||
	    !gw_tls_is_probe(c->rec.buf, c->rec.len, &xid))
		return false;
	if (c->nreq) {
		gw_tcp_tls_fail(c, GW_TLS_FAIL_PROBE);
		return true;
	}
	gw_conn_drop_record(c);
	gw_tls_probe_reply(xid, c->probe);
	c->probe_sent = 0;
	c->tls = GW_CONN_STARTTLS;
	gw_stat_add(&t->srv->stats.tls_probes, 1);
	LTRACE(lacunad, tls__probe, c->info.id, xid);
	gw_conn_cancel_recv(c);
	gw_conn_kick(c);
	return true;
}

static void gw_tcp_tls_pre(struct gw_conn *c, const uint8_t *d, size_t len)
{
	uint8_t *p;

	if (!len)
		return;
	if (c->pre_len + len > GW_TLS_PRE_MAX) {
		gw_tcp_tls_fail(c, GW_TLS_FAIL_NOT_TLS);
		return;
	}
	p = realloc(c->pre, c->pre_len + len);
	if (!p) {
		log_err("tls: realloc: %s", strerror(ENOMEM));
		gw_conn_close(c, true, "out of memory");
		return;
	}
	memcpy(p + c->pre_len, d, len);
	c->pre = p;
	c->pre_len += len;
}

static void gw_tcp_hs_notify(void *arg)
{
	gw_tcp_notify(arg);
}

void gw_tcp_tls_settle(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct gw_tls_hs_job *j;

	if (c->probe_sent < GW_TLS_PROBE_REPLY_LEN || c->recv_armed || c->cancel_pending ||
	    c->send_busy || t->stopping)
		return;
	if (!t->tls_ctx) { /* a reload took the certificate away meanwhile */
		gw_conn_close(c, false, "TLS no longer configured");
		return;
	}
	if (t->hs_active >= t->hs_max) {
		gw_tcp_tls_fail(c, GW_TLS_FAIL_BUSY);
		return;
	}
	if (!t->hs && gw_tls_hs_start(&t->hs, gw_tcp_hs_notify, t)) {
		gw_conn_close(c, false, "no handshake thread");
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		log_err("tls: calloc: %s", strerror(ENOMEM));
		gw_conn_close(c, false, "out of memory");
		return;
	}
	j->owner = c;
	j->fd = c->fd;
	SSL_CTX_up_ref(t->tls_ctx);
	j->ctx = t->tls_ctx;
	j->pre = c->pre;
	j->pre_len = c->pre_len;
	c->pre = NULL;
	c->pre_len = 0;
	j->timeout = t->hs_timeout;
	c->tls = GW_CONN_HANDSHAKE;
	c->ops++; /* the handshake: the connection stays until it is back */
	t->hs_active++;
	gw_tls_hs_submit(t->hs, j);
}

static void gw_tcp_tls_own_input(struct gw_conn *c, const uint8_t *d, size_t len);

/*
 * Records by tls13_rec from now on, from the handshake's secrets; false
 * (and the connection closed, a handshake failure) when they cannot be had.
 */
static bool gw_tcp_tls_keys(struct gw_conn *c)
{
	char a[64];
	int rc = -ENOMEM;

	c->trec = calloc(1, sizeof(*c->trec));
	if (!c->trec || (rc = tls13_take(c->ssl, true, c->trec))) {
		log_err("tls: connection %llu from %s: no record layer for %s: %s",
			(unsigned long long)c->info.id, net_addr_str(&c->info.peer, a, sizeof(a)),
			SSL_get_cipher_name(c->ssl),
			rc == -EINVAL ? "suite not handled or no secrets kept" : strerror(-rc));
		free(c->trec);
		c->trec = NULL;
		gw_tcp_tls_fail(c, GW_TLS_FAIL_HANDSHAKE);
		return false;
	}
	return true;
}

/* What arrived past the client's Finished is still ciphertext in the SSL's rbio. */
static void gw_tcp_tls_own(struct gw_conn *c)
{
	BIO *rb = SSL_get_rbio(c->ssl);
	uint8_t buf[4096];
	int n;

	while (!c->closing && (n = BIO_read(rb, buf, sizeof(buf))) > 0)
		gw_tcp_tls_own_input(c, buf, (size_t)n);
}

static void gw_tcp_tls_established(struct gw_conn *c, struct gw_tls_hs_job *j)
{
	struct gw_tcp *t = c->tcp;
	char a[64];

	c->ssl = j->ssl;
	if (!gw_tcp_tls_keys(c))
		return;
	c->ku.since = gw_tcp_now();
	c->tls = GW_CONN_TLS;
	/* no request of the connection is out: workers see it with the next one */
	c->info.xprtsec = j->mtls ? GW_XPRTSEC_MTLS : GW_XPRTSEC_TLS;
	if (j->mtls)
		memcpy(c->info.tls_peer, j->peer, sizeof(c->info.tls_peer));
	gw_stat_add(&t->srv->stats.tls_handshakes, 1);
	gw_stat_add(j->mtls ? &t->srv->stats.tls_conns_mtls : &t->srv->stats.tls_conns_tls, 1);
	LTRACE(lacunad, tls__done, c->info.id, j->mtls ? 1 : 0, SSL_get_cipher_name(c->ssl));
	log_info("tls: connection %llu from %s: %s %s%s%s", (unsigned long long)c->info.id,
		 net_addr_str(&c->info.peer, a, sizeof(a)), SSL_get_version(c->ssl),
		 SSL_get_cipher_name(c->ssl), j->mtls ? ", client " : "", j->mtls ? j->peer : "");
	gw_tcp_tls_own(c);
}

void gw_tcp_tls_take(struct gw_tcp *t)
{
	struct gw_tls_hs_job *j, *next;
	struct gw_conn *c;

	if (!t->hs)
		return;
	for (j = gw_tls_hs_done(t->hs); j; j = next) {
		next = j->next;
		c = j->owner;
		c->ops--;
		t->hs_active--;
		if (j->fail >= 0) {
			if (!c->closing)
				gw_tcp_tls_fail(c, (enum gw_tls_fail)j->fail);
		} else if (c->closing) {
			SSL_free(j->ssl);
		} else {
			gw_tcp_tls_established(c, j);
		}
		free(j);
		gw_conn_kick(c);
	}
}

/* ---------------------------------------------------------------- records */

/* A buffer for what the connection sends by itself (a KeyUpdate, close_notify). */
static bool gw_tcp_tls_tx_room(struct gw_conn *c, size_t n)
{
	if (!c->tx) {
		c->tx = malloc(GW_TCP_TX_HEAP);
		if (!c->tx)
			return false;
		c->tx_cap = GW_TCP_TX_HEAP;
		c->tx_chunk = false;
	}
	return c->tx_cap - c->tx_len >= n;
}

/* Our KeyUpdate when the client asked for one, once the ciphertext buffer has room. */
static void gw_tcp_tls_own_ctl(struct gw_conn *c)
{
	size_t n;

	if (!c->trec->ku_send || !gw_tcp_tls_tx_room(c, TLS13_OVERHEAD + 5))
		return;
	if (tls13_send_pending(c->trec, c->tx + c->tx_len, &n)) {
		gw_tcp_tls_fail(c, GW_TLS_FAIL_RECORD);
		return;
	}
	c->tx_len += n;
}

/* One whole record. */
static void gw_tcp_tls_own_rec(struct gw_conn *c, const uint8_t *rec, size_t rl)
{
	uint8_t buf[TLS13_CIPHER_MAX];
	unsigned int ku = c->trec->ku_recvd;
	size_t n;
	int r;

	r = tls13_recv(c->trec, rec, rl, buf, &n);
	if (r < 0) {
		gw_tcp_tls_fail(c, GW_TLS_FAIL_RECORD);
		return;
	}
	if (c->trec->ku_recvd != ku) {
		gw_tls_ku_note(&c->ku);
		if (c->ku.storm) {
			gw_tcp_tls_fail(c, GW_TLS_FAIL_KEYUPDATE);
			return;
		}
	}
	if (c->trec->eof)
		c->rd_eof = true; /* close_notify: the end of the stream */
	else if (r == 1 && n)
		gw_conn_input_plain(c, buf, n);
}

/*
 * Ciphertext as io_uring received it: whole records are opened where they
 * lie, into plaintext on the stack; a record cut by the end of @d waits
 * in c->rx for the rest.
 */
static void gw_tcp_tls_own_input(struct gw_conn *c, const uint8_t *d, size_t len)
{
	ssize_t rl;
	size_t n;

	while (len && !c->closing && !c->trec->eof) {
		if (c->rx_len) {
			n = c->rx_len < TLS13_HDR ? TLS13_HDR - c->rx_len : 0;
			if (!n) {
				rl = tls13_rec_len(c->rx, c->rx_len);
				if (rl < 0) {
					gw_tcp_tls_fail(c, GW_TLS_FAIL_RECORD);
					return;
				}
				n = (size_t)rl - c->rx_len;
			}
			if (n > len)
				n = len;
			memcpy(c->rx + c->rx_len, d, n);
			c->rx_len += n;
			d += n;
			len -= n;
			rl = tls13_rec_len(c->rx, c->rx_len);
			if (rl > 0 && c->rx_len == (size_t)rl) {
				c->rx_len = 0;
				gw_tcp_tls_own_rec(c, c->rx, (size_t)rl);
			}
			continue;
		}
		rl = tls13_rec_len(d, len);
		if (rl < 0) {
			gw_tcp_tls_fail(c, GW_TLS_FAIL_RECORD);
			return;
		}
		if (!rl || len < (size_t)rl) {
			if (!c->rx) {
				c->rx = malloc(TLS13_REC_MAX);
				if (!c->rx) {
					log_err("tls: malloc: %s", strerror(ENOMEM));
					gw_conn_close(c, true, "out of memory");
					return;
				}
			}
			memcpy(c->rx, d, len);
			c->rx_len = len;
			return;
		}
		gw_tcp_tls_own_rec(c, d, (size_t)rl);
		d += rl;
		len -= (size_t)rl;
	}
	if (!c->closing && c->trec->ku_send)
		gw_conn_kick(c); /* the answer goes out with the next send */
}

void gw_tcp_tls_input(struct gw_conn *c, const uint8_t *d, size_t len)
{
	struct gw_tcp *t = c->tcp;

	if (c->tls != GW_CONN_TLS) {
		gw_tcp_tls_pre(c, d, len);
		return;
	}
	gw_stat_add(&t->srv->stats.tls_bytes_in, len);
	gw_tcp_tls_own_input(c, d, len);
}

/* The ciphertext buffer goes back (nothing in it is left to send). */
static void gw_tcp_tls_tx_put(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;

	if (c->tx_chunk) {
		chunk_put(t->large, c->tx);
		t->freed = true;
	} else {
		free(c->tx);
	}
	c->tx = NULL;
	c->tx_cap = 0;
	c->tx_chunk = false;
}

/*
 * Seal queued replies straight from their iovecs into c->tx, records of
 * up to 16 KiB that may span the reply's segments, while it has room.
 */
static void gw_tcp_tls_own_encrypt(struct gw_conn *c)
{
	const struct iovec *seg;
	unsigned int nseg, i;
	size_t total, n, room, rl;

	while (c->sq_head) {
		seg = xdr_out_iov(&c->sq_head->w.req.reply, &nseg);
		for (total = 0, i = 0; i < nseg; i++)
			total += seg[i].iov_len;
		while (c->sent < total) {
			room = c->tx_cap - c->tx_len;
			if (room < TLS13_OVERHEAD + 1024)
				return; /* full: the rest after this send */
			n = total - c->sent;
			if (n > TLS13_PLAIN_MAX)
				n = TLS13_PLAIN_MAX;
			if (n > room - TLS13_OVERHEAD)
				n = room - TLS13_OVERHEAD;
			if (tls13_seal(c->trec, TLS13_CT_APPDATA, seg, nseg, c->sent, n,
				       c->tx + c->tx_len, &rl)) {
				gw_tcp_tls_fail(c, GW_TLS_FAIL_RECORD);
				return;
			}
			c->tx_len += rl;
			c->sent += n;
		}
		gw_conn_sq_pop(c);
	}
}

/* Seal queued replies into c->tx while it has room for a whole record. */
static void gw_tcp_tls_encrypt(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	void *chunk;

	if (!c->sq_head) {
		if (!c->tx_len)
			gw_tcp_tls_tx_put(c); /* nothing more to encrypt, nothing to send */
		return;
	}
	/*
	 * No owner, as the replies' chunks: charged to the connection, its
	 * records (which go back only once their replies are sent) could
	 * leave none for the ciphertext. When the pool has none, replies
	 * go on through a small buffer of the heap: they hold chunks that
	 * only their sending gives back.
	 */
	if (!c->tx_chunk && !c->tx_len && !chunk_get(t->large, NULL, &chunk)) {
		free(c->tx);
		c->tx = chunk;
		c->tx_cap = t->large_size;
		c->tx_chunk = true;
	} else if (!c->tx) {
		c->tx = malloc(GW_TCP_TX_HEAP);
		if (!c->tx) {
			log_err("tls: malloc: %s", strerror(ENOMEM));
			gw_conn_close(c, false, "out of memory");
			return;
		}
		c->tx_cap = GW_TCP_TX_HEAP;
	}
	gw_tcp_tls_own_encrypt(c);
}

void gw_tcp_tls_send(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct io_uring_sqe *sqe;

	if (c->send_busy || c->closing)
		return;
	if (!gw_conn_send_iov(c))
		return;
	if (c->tls == GW_CONN_STARTTLS) {
		if (c->probe_sent >= GW_TLS_PROBE_REPLY_LEN)
			return;
		c->iov[0].iov_base = c->probe + c->probe_sent;
		c->iov[0].iov_len = GW_TLS_PROBE_REPLY_LEN - c->probe_sent;
	} else if (c->tls == GW_CONN_TLS) {
		if (c->tx_off == c->tx_len) {
			c->tx_off = c->tx_len = 0;
			if (c->trec->ku_send) {
				gw_tcp_tls_own_ctl(c); /* before records sealed with the next key */
				if (c->closing)
					return;
			}
			gw_tcp_tls_encrypt(c);
			if (c->closing || c->tx_off == c->tx_len)
				return;
		}
		c->iov[0].iov_base = c->tx + c->tx_off;
		c->iov[0].iov_len = c->tx_len - c->tx_off;
	} else {
		return;
	}
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = 1;
	sqe = gw_tcp_sqe(t);
	io_uring_prep_sendmsg(sqe, c->fd, &c->msg, MSG_NOSIGNAL);
	gw_conn_sqe(c, sqe, GW_TCP_OP_SEND);
	c->send_busy = true;
}

void gw_tcp_tls_sent(struct gw_conn *c, size_t n)
{
	struct gw_tcp *t = c->tcp;

	if (c->tls == GW_CONN_STARTTLS) {
		c->probe_sent += (uint8_t)n;
	} else {
		gw_stat_add(&t->srv->stats.tls_bytes_out, (long long)n);
		c->tx_off += n;
	}
}

bool gw_tcp_tls_linger(struct gw_conn *c)
{
	if (c->tls != GW_CONN_TLS)
		return false;
	if (!c->notified) {
		size_t n;

		c->notified = true; /* close_notify; the peer's is not awaited */
		if (gw_tcp_tls_tx_room(c, TLS13_OVERHEAD + 2) &&
		    !tls13_close_notify(c->trec, c->tx + c->tx_len, &n))
			c->tx_len += n;
	}
	return gw_tcp_tls_tx_pending(c) || c->send_busy;
}

void gw_tcp_tls_free(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;

	if (c->tls == GW_CONN_TLS)
		gw_stat_add(c->info.xprtsec == GW_XPRTSEC_MTLS ? &t->srv->stats.tls_conns_mtls
							       : &t->srv->stats.tls_conns_tls,
			    -1);
	SSL_free(c->ssl); /* and its memory BIOs */
	c->ssl = NULL;
	if (c->trec) {
		tls13_conn_free(c->trec);
		free(c->trec);
		c->trec = NULL;
	}
	free(c->rx);
	c->rx = NULL;
	c->rx_len = 0;
	gw_tcp_tls_tx_put(c);
	free(c->pre);
	c->pre = NULL;
}

/* ---------------------------------------------------------------- counters */

void gw_tcp_tls_stats(const struct gw_srv *s, FILE *f)
{
	const struct gw_stats *st = &s->stats;
	unsigned int i;

	fprintf(f, "tls_probes %llu\ntls_handshakes %llu\n", st->tls_probes, st->tls_handshakes);
	for (i = 0; i < GW_TLS_FAIL_N; i++)
		fprintf(f, "tls_failures_%s %llu\n", gw_tls_fail_names[i], st->tls_failures[i]);
	fprintf(f, "tls_bytes_in %llu\ntls_bytes_out %llu\ntls_conns %llu\nmtls_conns %llu\n",
		st->tls_bytes_in, st->tls_bytes_out, st->tls_conns_tls, st->tls_conns_mtls);
}

void gw_tcp_tls_metrics(const struct gw_srv *s, FILE *f)
{
	const struct gw_stats *st = &s->stats;
	unsigned int i;

	mx_one(f, "lacunad_tls_probes_total", "counter", "AUTH_TLS probes answered with STARTTLS",
	       st->tls_probes);
	mx_one(f, "lacunad_tls_handshakes_total", "counter", "TLS handshakes completed",
	       st->tls_handshakes);
	mx_header(f, "lacunad_tls_failures_total", "counter",
		  "TLS handshakes failed and TLS connections closed, by reason");
	for (i = 0; i < GW_TLS_FAIL_N; i++)
		fprintf(f, "lacunad_tls_failures_total{reason=\"%s\"} %llu\n", gw_tls_fail_names[i],
			st->tls_failures[i]);
	mx_two(f, "lacunad_tls_bytes_total", "counter", "Bytes of TLS records received and sent",
	       "direction", "in", st->tls_bytes_in, "out", st->tls_bytes_out);
	mx_two(f, "lacunad_tls_connections", "gauge",
	       "Connections in TLS, without and with a verified client certificate", "xprtsec",
	       "tls", st->tls_conns_tls, "mtls", st->tls_conns_mtls);
}
