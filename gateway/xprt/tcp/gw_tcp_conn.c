// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunad's TCP connections: records in, replies out, and a connection's
 * life from accept to free. The loop that drives them, and how the two
 * work together (receiving, back-pressure, sending, lifetime), is
 * described at the top of gw_tcp.c. Everything here runs on the loop
 * thread.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_tcp.h"
#include "log.h"
#include "nfs4_state.h"

_Static_assert(GW_TCP_SEND_IOV >= XDR_OUT_SEGS_MAX, "a whole reply fits one send");
_Static_assert(offsetof(struct gw_tcp_req, w) == 0, "gw_workers_done() gives back &req->w");

/* ---------------------------------------------------------------- connections */

void gw_conn_sqe(struct gw_conn *c, struct io_uring_sqe *sqe, unsigned int op)
{
	io_uring_sqe_set_data64(sqe, (uintptr_t)c | op);
	c->ops++;
}

void gw_conn_kick(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	if (!c->kicked) {
		c->kicked = true;
		list_add_tail(&c->kick, &t->kick);
	}
}

/* A record's chunk goes back to its pool. */
static void gw_tcp_rec_put(struct gw_tcp *t, struct chunk_pool *pool, void *rec)
{
	if (pool == t->large)
		t->large_recs--;
	chunk_put(pool, rec);
	t->freed = true;
}

static void gw_tcp_req_finish(struct gw_tcp_req *r)
{
	struct gw_tcp *t = r->conn->tcp;
	struct gw_conn *c = r->conn;

	xdr_out_release(&r->w.req.reply);
	gw_tcp_rec_put(t, r->pool, r->rec);
	free(r);
	c->nreq--;
	c->addr->reqs--;
	gw_tcp_spare_put(c);
	gw_conn_kick(c);
}

/* The record in progress no longer counts against its address. */
static void gw_conn_uncount_record(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	if (!c->rec_counted)
		return;
	c->rec_counted = false;
	c->addr->records--;
	t->freed = true; /* a connection waiting for it may go on */
}

void gw_conn_drop_record(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	gw_conn_uncount_record(c);
	if (c->rec.buf)
		gw_tcp_rec_put(t, c->rec_pool, c->rec.buf);
	rpc_rec_init(&c->rec, NULL, 0);
	c->mark_got = 0;
	gw_tcp_spare_put(c);
}

static void gw_conn_free_spill(struct gw_conn *c)
{
	free(c->spill);
	c->spill = NULL;
	c->spill_off = c->spill_len = c->spill_cap = 0;
}

void gw_conn_flush_sendq(struct gw_conn *c)
{
	struct gw_tcp_req *r;

	if (c->send_busy)
		return;
	while ((r = c->sq_head)) {
		c->sq_head = r->snext;
		gw_tcp_req_finish(r);
	}
	c->sq_tail = NULL;
	c->sent = 0;
	c->sq_bytes = 0;
}

/* Stop everything on @c; it is freed once its operations and requests are done. */
void gw_conn_close(struct gw_conn *c, bool dropped, const char *why)
{
	struct gw_tcp *t = c->tcp;
	struct io_uring_sqe *sqe;
	char a[64];

	if (c->closing)
		return;
	c->closing = true;
	gw_tcp_limits_closing(c);
	log_debug("tcp: connection %llu from %s closed: %s", (unsigned long long)c->info.id,
		  net_addr_str(&c->info.peer, a, sizeof(a)), why);
	LTRACE(lacunad, conn__close, c->info.id, 0, dropped, why);
	if (dropped)
		gw_stat_add(&t->srv->stats.conns_dropped, 1);
	shutdown(c->fd, SHUT_RDWR);
	if (c->ops) {
		sqe = gw_tcp_sqe(t);
		io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
		gw_conn_sqe(c, sqe, GW_TCP_OP_CANCEL);
	}
	gw_conn_drop_record(c);
	gw_conn_free_spill(c);
	list_del(&c->pwait);
	gw_tcp_client_unwait(c);
	gw_conn_flush_sendq(c);
	gw_conn_kick(c);
}

static void gw_conn_free(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;

	gw_tcp_tls_free(c);
	if (chunk_owner_busy(&c->own_large) || chunk_owner_busy(&c->own_small))
		log_err("tcp: connection %llu freed with chunks charged to it",
			(unsigned long long)c->info.id);
	close(c->fd);
	gw_tcp_limits_release(c);
	nfs4_state_conn_closed(t->srv, c->info.id);
	list_del(&c->all);
	list_del(&c->kick);
	list_del(&c->pwait);
	t->nconns--;
	gw_stat_add(&t->srv->stats.conns_open, -1);
	free(c->iov);
	free(c);
}

void gw_conn_new(struct gw_tcp *t, int fd)
{
	struct gw_snap *sn;
	struct gw_conn *c;
	int one = 1;
	char a[64];

	c = calloc(1, sizeof(*c));
	if (!c) {
		log_err("tcp: calloc: %s: refusing a connection", strerror(ENOMEM));
		close(fd);
		return;
	}
	c->tcp = t;
	c->fd = fd;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		log_warn("tcp: setsockopt(TCP_NODELAY): %s", strerror(errno));
	c->info.peer_len = sizeof(c->info.peer);
	if (getpeername(fd, (struct sockaddr *)&c->info.peer, &c->info.peer_len))
		c->info.peer_len = 0; /* the peer is already gone: the recv will say so */
	c->info.resvport = net_port_reserved(&c->info.peer);
	c->info.xprtsec = GW_XPRTSEC_NONE;
	c->info.id = ++t->next_id;
	sn = gw_snap_get(t->srv);
	c->rec_max = sn->cfg->max_record;
	gw_snap_put(sn);
	c->req_max = t->lim.conn_requests;
	rpc_rec_init(&c->rec, NULL, 0);
	chunk_owner_init(&c->own_large, t->large, GW_TCP_LARGE_CAP * t->large_size);
	chunk_owner_init(&c->own_small, t->small, c->req_max * t->small_size);
	list_init(&c->kick);
	list_init(&c->pwait);
	list_add_tail(&c->all, &t->all);
	t->nconns++;
	gw_stat_add(&t->srv->stats.conns_accepted, 1);
	gw_stat_add(&t->srv->stats.conns_open, 1);
	LTRACE(lacunad, conn__accept, c->info.id, 0);
	log_debug("tcp: connection %llu from %s", (unsigned long long)c->info.id,
		  net_addr_str(&c->info.peer, a, sizeof(a)));
	if (gw_tcp_limits_admit(c)) {
		gw_conn_close(c, false, "over the connection limits");
		return; /* freed when settled */
	}
	gw_conn_kick(c); /* arms the recv */
}

/* ---------------------------------------------------------------- receiving */

void gw_conn_cancel_recv(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct io_uring_sqe *sqe;

	if (!c->recv_armed || c->cancel_pending)
		return;
	sqe = gw_tcp_sqe(t);
	io_uring_prep_cancel64(sqe, (uintptr_t)c | GW_TCP_OP_RECV, 0);
	gw_conn_sqe(c, sqe, GW_TCP_OP_CANCEL);
	c->cancel_pending = true;
}

static int gw_conn_stall(struct gw_conn *c, enum gw_stall why)
{
	struct gw_tcp *t = c->tcp;
	time_t now;

	c->stall = why;
	if (why == GW_STALL_CLIENT && list_empty(&c->pwait))
		list_add_tail(&c->pwait, &t->pwait);
	if (why == GW_STALL_POOL) {
		now = time(NULL);
		if (list_empty(&t->pwait) && now - t->pool_logged >= GW_TCP_POOL_LOG_SEC) {
			log_warn("tcp: chunk pool exhausted: receiving paused");
			t->pool_logged = now;
		}
		if (list_empty(&c->pwait))
			list_add_tail(&c->pwait, &t->pwait);
	}
	gw_conn_cancel_recv(c);
	return -EAGAIN;
}

/* The mark of a new record is in c->mark: take a buffer for the record. */
static int gw_conn_rec_start(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	uint32_t m = xdr_get_u32(c->mark);
	uint32_t flen = m & RPC_REC_FRAG_LEN_MAX;
	struct chunk_owner *own = &c->own_large;
	struct chunk_pool *pool = t->large;
	size_t max = c->rec_max < t->large_size ? c->rec_max : t->large_size;
	void *chunk;
	int ret;

	if (flen > c->rec_max) {
		log_info("tcp: connection %llu: fragment of %u bytes over max_record %u: dropped",
			 (unsigned long long)c->info.id, flen, c->rec_max);
		return -EMSGSIZE;
	}
	if (c->nreq >= c->req_max ||
	    c->sq_bytes + (c->tx_len - c->tx_off) >= t->lim.conn_reply_bytes) {
		if (c->was_stalled != GW_STALL_INFLIGHT)
			gw_limit_hit(&t->srv->stats.conn_stalls, "conn_stalls", c->info.id);
		return gw_conn_stall(c, GW_STALL_INFLIGHT);
	}
	if ((m & RPC_REC_LAST) && flen <= t->small_size) {
		pool = t->small;
		own = &c->own_small;
		max = t->small_size;
	}
	/* records leave part of the large pool to the replies, and each address its share */
	if (!gw_tcp_client_may_start(c, pool == t->large)) {
		if (c->was_stalled != GW_STALL_CLIENT)
			gw_limit_hit(&t->srv->stats.client_stalls, "client_stalls", c->info.id);
		return gw_conn_stall(c, GW_STALL_CLIENT);
	}
	if (pool == t->large && t->large_recs >= t->large_recs_max)
		return gw_conn_stall(c, GW_STALL_POOL);
	ret = chunk_get(pool, own, &chunk);
	if (ret == -ENOBUFS)
		return gw_conn_stall(c, GW_STALL_OWNER);
	if (ret)
		return gw_conn_stall(c, GW_STALL_POOL);
	if (pool == t->large) {
		t->large_recs++;
		c->addr->records++;
		c->rec_counted = true;
	}
	/*
	 * record_timeout counts from the mark's first byte; only a record
	 * that waited for room (lacunad did not read it) starts a new clock
	 */
	if (c->was_stalled != GW_STALL_NONE)
		c->rec_since = gw_tcp_now();
	c->stall = c->was_stalled = GW_STALL_NONE;
	rpc_rec_init(&c->rec, chunk, max);
	c->rec_pool = pool;
	c->mark_got = 0;
	if (rpc_rec_feed(&c->rec, c->mark, sizeof(c->mark)) < 0) {
		log_info("tcp: connection %llu: fragment of %u bytes does not fit a %zu-byte "
			 "buffer: dropped",
			 (unsigned long long)c->info.id, flen, max);
		return -EMSGSIZE;
	}
	return 0;
}

/* A whole record: queue it for the workers. */
static int gw_conn_rec_done(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct gw_tcp_req *r = malloc(sizeof(*r));

	if (!r) {
		log_err("tcp: malloc: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r->conn = c;
	r->rec = c->rec.buf;
	r->pool = c->rec_pool;
	r->snext = NULL;
	gw_work_init(&r->w, &c->info, c->rec.buf, c->rec.len, true, c->rec_max);
	r->w.flow = &c->flow;
	c->used = true;
	c->addr->reqs++;
	gw_conn_uncount_record(c);
	rpc_rec_init(&c->rec, NULL, 0);
	c->nreq++;
	gw_work_batch_add(&t->batch, &r->w);
	return 0;
}

/*
 * Feed @len bytes of the stream to @c's records. Returns the bytes
 * consumed: fewer when the connection stalled or was closed.
 */
static size_t gw_conn_feed(struct gw_conn *c, const uint8_t *d, size_t len)
{
	size_t done = 0;
	ssize_t n;

	c->was_stalled = c->stall;
	c->stall = GW_STALL_NONE;
	for (;;) {
		if (!c->rec.buf) {
			if (!c->mark_got && done < len)
				c->rec_since = gw_tcp_now();
			while (c->mark_got < sizeof(c->mark) && done < len)
				c->mark[c->mark_got++] = d[done++];
			if (c->mark_got < sizeof(c->mark))
				break;
			n = gw_conn_rec_start(c);
			if (n == -EAGAIN)
				break;
			if (n < 0)
				goto drop;
		}
		if (done < len && !rpc_rec_ready(&c->rec)) {
			n = rpc_rec_feed(&c->rec, d + done, len - done);
			if (n < 0) {
				log_info("tcp: connection %llu: broken record stream (%s): dropped",
					 (unsigned long long)c->info.id, strerror((int)-n));
				goto drop;
			}
			done += (size_t)n;
		}
		if (!rpc_rec_ready(&c->rec))
			break;
		if (gw_tcp_tls_probe(c))
			break; /* what follows is the handshake's */
		if (gw_conn_rec_done(c))
			goto drop;
	}
	return done;
drop:
	gw_conn_close(c, true, "bad record");
	return done;
}

static void gw_conn_spill(struct gw_conn *c, const uint8_t *d, size_t n)
{
	size_t left = c->spill_len - c->spill_off, cap;
	uint8_t *p;

	if (c->spill_off) {
		memmove(c->spill, c->spill + c->spill_off, left);
		c->spill_off = 0;
		c->spill_len = left;
	}
	if (left + n > GW_TCP_SPILL_MAX) {
		log_info("tcp: connection %llu: %zu bytes received while stalled: dropped",
			 (unsigned long long)c->info.id, left + n);
		gw_conn_close(c, true, "too much received while stalled");
		return;
	}
	if (left + n > c->spill_cap) {
		cap = c->spill_cap ? 2 * c->spill_cap : GW_TCP_BUF_SIZE;
		if (cap < left + n)
			cap = left + n;
		p = realloc(c->spill, cap);
		if (!p) {
			log_err("tcp: realloc: %s", strerror(ENOMEM));
			gw_conn_close(c, true, "out of memory");
			return;
		}
		c->spill = p;
		c->spill_cap = cap;
	}
	memcpy(c->spill + c->spill_len, d, n);
	c->spill_len += n;
}

void gw_conn_input_plain(struct gw_conn *c, const uint8_t *d, size_t len)
{
	size_t n = 0;

	if (c->stall == GW_STALL_NONE && c->spill_off == c->spill_len)
		n = gw_conn_feed(c, d, len);
	if (n < len && !c->closing) {
		if (c->tls == GW_CONN_STARTTLS)
			gw_tcp_tls_input(c, d + n, len - n); /* past the probe */
		else
			gw_conn_spill(c, d + n, len - n);
	}
}

static void gw_conn_input(struct gw_conn *c, const uint8_t *d, size_t len)
{
	struct gw_tcp *t = c->tcp;

	if (c->closing || t->stopping)
		return; /* nothing new is started once stopping */
	if (c->tls != GW_CONN_PLAIN)
		gw_tcp_tls_input(c, d, len);
	else
		gw_conn_input_plain(c, d, len);
}

/* Try again what stalled @c: first the bytes set aside. */
static void gw_conn_resume(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	size_t n;

	list_del(&c->pwait);
	gw_tcp_client_unwait(c);
	if (c->stall == GW_STALL_NONE || c->closing || t->stopping)
		return;
	n = gw_conn_feed(c, c->spill ? c->spill + c->spill_off : NULL, c->spill_len - c->spill_off);
	if (c->closing)
		return;
	c->spill_off += n;
	if (c->tls == GW_CONN_STARTTLS && c->spill_off < c->spill_len) {
		/* the probe came from the spill: the rest is the handshake's */
		gw_tcp_tls_input(c, c->spill + c->spill_off, c->spill_len - c->spill_off);
		c->spill_off = c->spill_len;
	}
	if (c->spill_off == c->spill_len)
		gw_conn_free_spill(c);
}

static void gw_conn_arm_recv(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct io_uring_sqe *sqe = gw_tcp_sqe(t);

	io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = GW_TCP_BGID;
	gw_conn_sqe(c, sqe, GW_TCP_OP_RECV);
	c->recv_armed = true;
}

void gw_tcp_buf_return(struct gw_tcp *t, unsigned int bid)
{
	io_uring_buf_ring_add(t->br, t->bufs + (size_t)bid * GW_TCP_BUF_SIZE, GW_TCP_BUF_SIZE,
			      (unsigned short)bid, io_uring_buf_ring_mask(GW_TCP_BUF_COUNT),
			      (int)t->br_added++);
}

static void gw_conn_on_recv(struct gw_conn *c, const struct io_uring_cqe *cqe)
{
	struct gw_tcp *t = c->tcp;
	unsigned int bid;

	if (!(cqe->flags & IORING_CQE_F_MORE)) {
		c->recv_armed = false;
		c->ops--;
	}
	if (cqe->flags & IORING_CQE_F_BUFFER) {
		bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		if (cqe->res > 0) {
			gw_tcp_touch(c);
			gw_stat_add(&t->srv->stats.bytes_in, cqe->res);
			gw_stat_add(&t->srv->stats.tcp_bytes_in, cqe->res);
			gw_conn_input(c, t->bufs + (size_t)bid * GW_TCP_BUF_SIZE, (size_t)cqe->res);
		}
		gw_tcp_buf_return(t, bid);
	}
	if (cqe->res == 0)
		c->rd_eof = true;
	else if (cqe->res == -ENOBUFS)
		c->nobuf = true; /* re-armed once this batch's buffers are back */
	else if (cqe->res == -EINVAL && !c->closing)
		log_err("tcp: multishot recv with provided buffers: %s (Linux 6.0 or later "
			"is needed)",
			strerror(EINVAL));
	if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -ECANCELED)
		gw_conn_close(c, false, strerror(-cqe->res));
	gw_conn_kick(c);
}

/* ---------------------------------------------------------------- sending */

/* The connection's send iovecs, made on its first send; false: out of memory, closed. */
bool gw_conn_send_iov(struct gw_conn *c)
{
	if (c->iov)
		return true;
	c->iov = malloc(GW_TCP_SEND_IOV * sizeof(*c->iov));
	if (!c->iov) {
		log_err("tcp: malloc: %s", strerror(ENOMEM));
		gw_conn_close(c, false, "out of memory");
		return false;
	}
	return true;
}

static void gw_conn_send(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	const struct iovec *seg;
	struct gw_tcp_req *r = c->sq_head;
	struct io_uring_sqe *sqe;
	unsigned int nseg, n = 0, i = 0;
	size_t skip = c->sent;

	if (c->tls != GW_CONN_PLAIN) {
		gw_tcp_tls_send(c);
		return;
	}
	if (c->send_busy || c->closing || !r)
		return;
	if (!gw_conn_send_iov(c))
		return;
	/* the rest of the head, then whole replies while they fit */
	seg = xdr_out_iov(&r->w.req.reply, &nseg);
	while (i < nseg && skip >= seg[i].iov_len)
		skip -= seg[i++].iov_len;
	for (; i < nseg; i++, skip = 0) {
		c->iov[n].iov_base = (uint8_t *)seg[i].iov_base + skip;
		c->iov[n++].iov_len = seg[i].iov_len - skip;
	}
	for (r = r->snext; r; r = r->snext) {
		seg = xdr_out_iov(&r->w.req.reply, &nseg);
		if (n + nseg > GW_TCP_SEND_IOV)
			break;
		memcpy(c->iov + n, seg, nseg * sizeof(*seg));
		n += nseg;
	}
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = n;
	sqe = gw_tcp_sqe(t);
	io_uring_prep_sendmsg(sqe, c->fd, &c->msg, MSG_NOSIGNAL);
	gw_conn_sqe(c, sqe, GW_TCP_OP_SEND);
	c->send_busy = true;
}

static void gw_conn_on_send(struct gw_conn *c, int res)
{
	struct gw_tcp *t = c->tcp;
	struct gw_tcp_req *r;
	size_t n, left;

	c->ops--;
	c->send_busy = false;
	if (res == -EINTR || res == -EAGAIN) {
		gw_conn_kick(c); /* sent again when settled */
		return;
	}
	if (res < 0) {
		gw_conn_close(c, false, strerror(-res));
		gw_conn_flush_sendq(c); /* not done by a close while the send was out */
		gw_conn_kick(c);
		return;
	}
	gw_stat_add(&t->srv->stats.bytes_out, res);
	gw_stat_add(&t->srv->stats.tcp_bytes_out, res);
	if (res > 0) {
		gw_tcp_touch(c);
		c->send_since = c->active;
	}
	n = (size_t)res;
	if (c->tls != GW_CONN_PLAIN) {
		gw_tcp_tls_sent(c, n); /* the probe's reply or ciphertext, not the replies */
		n = 0;
	}
	for (; n && (r = c->sq_head);) {
		left = xdr_out_len(&r->w.req.reply) - c->sent;
		if (n < left) {
			c->sent += n;
			break;
		}
		n -= left;
		gw_conn_sq_pop(c);
	}
	if (c->closing)
		gw_conn_flush_sendq(c);
	gw_conn_kick(c);
}

void gw_conn_sq_pop(struct gw_conn *c)
{
	struct gw_tcp_req *r = c->sq_head;

	c->sent = 0;
	c->sq_bytes -= xdr_out_len(&r->w.req.reply);
	c->sq_head = r->snext;
	if (!c->sq_head)
		c->sq_tail = NULL;
	gw_tcp_req_finish(r);
}

void gw_tcp_take_replies(struct gw_tcp *t)
{
	struct gw_work *wk, *next;
	struct gw_tcp_req *r;
	struct gw_conn *c;

	for (wk = gw_workers_done(t->workers); wk; wk = next) {
		next = wk->next;
		r = (struct gw_tcp_req *)wk;
		c = r->conn;
		if (c->closing || !xdr_out_len(&r->w.req.reply)) {
			gw_tcp_req_finish(r);
			continue;
		}
		if (c->sq_tail) {
			c->sq_tail->snext = r;
		} else {
			c->sq_head = r;
			c->send_since = gw_tcp_now();
		}
		c->sq_tail = r;
		c->sq_bytes += xdr_out_len(&r->w.req.reply);
		gw_conn_kick(c);
	}
}

/* ---------------------------------------------------------------- settling */

/* Bring @c's operations in line with its state. */
static void gw_conn_settle(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	bool spilled = c->spill_off < c->spill_len;

	if (c->closing) {
		/* see below */
	} else if (t->stopping) {
		if (!c->nreq && !gw_tcp_tls_tx_pending(c)) /* TLS: encrypted replies sent */
			gw_conn_close(c, false, "server stopping");
	} else if (c->rd_eof && c->stall == GW_STALL_NONE && !spilled) {
		gw_conn_drop_record(c); /* a truncated record is lost */
		if (!c->nreq && !gw_tcp_tls_linger(c))
			gw_conn_close(c, false, "end of stream");
	}
	if (c->closing) {
		if (!c->ops && !c->nreq)
			gw_conn_free(c);
		return;
	}
	if (t->stopping) {
		gw_conn_cancel_recv(c);
	} else if (c->tls == GW_CONN_STARTTLS || c->tls == GW_CONN_HANDSHAKE) {
		/* not read by the loop until the handshake is done */
	} else if (!c->recv_armed && !c->cancel_pending && !c->nobuf && !c->rd_eof &&
		   c->stall == GW_STALL_NONE && !spilled) {
		gw_conn_arm_recv(c);
	}
	gw_conn_send(c);
	if (c->tls == GW_CONN_STARTTLS && !c->closing)
		gw_tcp_tls_settle(c);
}

void gw_conn_resume_pool_waiters(struct gw_tcp *t, bool all)
{
	struct list_head *l;
	struct gw_conn *c;
	unsigned int n = 0, max = 0;

	/* each waiter resumed at most once: one that stalls again goes to the tail */
	for (l = t->pwait.next; l != &t->pwait; l = l->next)
		max++;
	while (n++ < max && !list_empty(&t->pwait)) {
		c = container_of(t->pwait.next, struct gw_conn, pwait);
		gw_conn_resume(c);
		gw_conn_kick(c);
		if (c->stall == GW_STALL_POOL && !all)
			break;
	}
}

void gw_conn_settle_kicked(struct gw_tcp *t)
{
	struct gw_conn *c;
	bool freed;

	do {
		while (!list_empty(&t->kick)) {
			c = container_of(t->kick.next, struct gw_conn, kick);
			list_del(&c->kick);
			c->kicked = false;
			c->nobuf = false; /* this batch's buffers are back in the ring */
			if (c->stall == GW_STALL_INFLIGHT || c->stall == GW_STALL_OWNER)
				gw_conn_resume(c);
			gw_conn_settle(c);
		}
		freed = t->freed;
		t->freed = false;
		if (freed)
			gw_conn_resume_pool_waiters(t, false);
	} while (!list_empty(&t->kick));
}

void gw_conn_cqe(struct gw_conn *c, unsigned int op, const struct io_uring_cqe *cqe)
{
	switch (op) {
	case GW_TCP_OP_RECV:
		gw_conn_on_recv(c, cqe);
		break;
	case GW_TCP_OP_SEND:
		gw_conn_on_send(c, cqe->res);
		break;
	default: /* GW_TCP_OP_CANCEL */
		c->ops--;
		c->cancel_pending = false;
		gw_conn_kick(c);
		break;
	}
}
