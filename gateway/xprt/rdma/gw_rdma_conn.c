// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One RPC-over-RDMA connection of lacunad: receives, RDMA Reads of read
 * chunks, replies with RDMA Writes into write and reply chunks, and the
 * teardown of a connection that broke or was closed.
 *
 * Operation
 * ---------
 * Every connection has its own CQ (on its device's completion channel),
 * an RC queue pair, GW_RDMA_CREDITS + GW_RDMA_RECV_SLACK receive buffers
 * of GW_RDMA_INLINE_RECV bytes and one send buffer per request slot.
 * Those are small and registered once per connection; the bulk memory,
 * the server's large pool (READ data, READ_PLUS arenas, reply heads and
 * tails, pulled calls), is registered once per device (gw_rdma.c), so
 * nothing is registered on the hot path.
 *
 * A Receive carries a transport header and, for RDMA_MSG, the call. The
 * header is decoded into a request slot (rpcrdma.h checks every count
 * against its limit); a header that cannot be used gets RDMA_ERROR
 * (ERR_VERS, or ERR_CHUNK). A call with no read chunk is copied out of
 * the receive buffer into a small pool chunk and the buffer is posted
 * again at once. A call with read chunks (WRITE data at its position, or
 * a long call in a position-zero chunk) is rebuilt in a large pool chunk:
 * the inline parts are copied around the places where the chunks go,
 * each chunk's XDR pad is zeroed, and one RDMA Read per segment pulls the
 * chunks in; the last Read is signaled and its completion hands the call
 * to the workers.
 *
 * The reply comes back from a worker as an xdr_out over pool chunks.
 * Its DDP-eligible items (READ data, marked by xdr_enc_opaque_ddp) go to
 * the call's write chunks, in order, with RDMA Writes straight from the
 * pool; the rest of the reply, without those items' bytes and pads (the
 * length words stay, RFC 8166 §3.4.5), goes inline in the Send when it
 * fits the client's inline receive size, else into the reply chunk with
 * RDMA Writes and an RDMA_NOMSG header; with neither, ERR_CHUNK. The
 * Writes and the Send are posted as one chain; only the Send is
 * signaled: RC ordering puts the Writes' data in place before the client
 * sees the Send, and its completion retires the whole chain, so the
 * reply's chunks are released then.
 *
 * Flow control. The client may have GW_RDMA_CREDITS calls outstanding
 * (every reply header grants that many); one more is a protocol error
 * and the connection is dropped. Send queue slots are counted: a
 * request whose Reads or reply would not fit waits on the connection's
 * wait queue, in order, until completions free room.
 *
 * Teardown. Closing disconnects and moves the QP to the error state;
 * calls at a worker are waited for, then the loop destroys the QP (which
 * ends every access to the memory of work still posted), the CQ and the
 * buffers, and releases what the request slots held (gw_rdma.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_rdma.h"
#include "log.h"

enum gw_wr_kind {
	WR_RECV = 1, /* index: receive buffer */
	WR_SEND,     /* index: request slot; retires the slot's chain */
	WR_READ,     /* index: request slot; the last Read of a call */
	WR_PART,     /* an unsignaled part of a chain (seen only flushed) */
};

#define WR_ID(kind, idx) ((uint64_t)(kind) << 32 | (uint32_t)(idx))
#define WR_KIND(id) ((unsigned int)((id) >> 32))
#define WR_IDX(id) ((uint32_t)(id))

/* ------------------------------------------------------------ slots */

static struct gw_rreq *gw_rreq_get(struct gw_rconn *c)
{
	struct gw_rreq *r = c->free;

	if (r) {
		c->free = r->next;
		r->next = NULL;
	}
	return r;
}

static void gw_rreq_put(struct gw_rreq *r)
{
	struct gw_rconn *c = r->c;

	if (r->rec) {
		chunk_put(r->rec_pool, r->rec);
		r->rec = NULL;
	}
	r->st = RQ_FREE;
	r->sq_used = 0;
	r->next = c->free;
	c->free = r;
}

/* ------------------------------------------------------------ posting */

static int gw_rconn_post_recv(struct gw_rconn *c, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rbuf + (size_t)i * c->recv_size),
		.length = c->recv_size,
		.lkey = c->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_ID(WR_RECV, i), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(c->qp, &wr, &bad);
	if (ret) {
		log_info("rdma: connection %llu: ibv_post_recv: %s", GW_RCONN_NO(c), strerror(ret));
		return -ret;
	}
	c->recv_posted++;
	return 0;
}

static void gw_chain_reset(struct gw_rconn *c)
{
	struct gw_rdma_loop *t = c->loop;
	t->chain.nwr = 0;
	t->chain.nsge = 0;
	t->chain.bytes = 0;
	t->chain.max_sge = c->dev->attr.max_sge < GW_RDMA_SGE_MAX
				   ? (unsigned int)c->dev->attr.max_sge
				   : GW_RDMA_SGE_MAX;
	if (!t->chain.max_sge)
		t->chain.max_sge = 1;
}

static struct ibv_send_wr *gw_chain_wr(struct gw_rdma_loop *t, enum ibv_wr_opcode op, uint64_t id)
{
	struct ibv_send_wr *wr;

	if (t->chain.nwr >= GW_RDMA_WR_MAX + 1)
		return NULL;
	wr = &t->chain.wr[t->chain.nwr++];
	memset(wr, 0, sizeof(*wr));
	wr->opcode = op;
	wr->wr_id = id;
	wr->sg_list = &t->chain.sge[t->chain.nsge];
	return wr;
}

/* Post the chain; its last WR is the signaled one. */
static int gw_chain_post(struct gw_rconn *c, struct gw_rreq *r)
{
	struct gw_rdma_loop *t = c->loop;
	struct ibv_send_wr *bad;
	unsigned int i;
	int ret;

	for (i = 0; i + 1 < t->chain.nwr; i++)
		t->chain.wr[i].next = &t->chain.wr[i + 1];
	t->chain.wr[t->chain.nwr - 1].next = NULL;
	t->chain.wr[t->chain.nwr - 1].send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(c->qp, &t->chain.wr[0], &bad);
	if (ret) {
		log_info("rdma: connection %llu: ibv_post_send: %s", GW_RCONN_NO(c), strerror(ret));
		return -ret;
	}
	r->sq_used = t->chain.nwr;
	c->sq_free -= t->chain.nwr;
	return 0;
}

/* lkey of the registered memory holding [p, p + len), or -EFAULT */
static int gw_rdma_lkey(const struct gw_rconn *c, const uint8_t *p, size_t len, uint32_t *lkey)
{
	const struct ibv_mr *mr = c->dev->pool_mr;
	const uint8_t *base = mr->addr;

	if (p >= base && len <= mr->length && (size_t)(p - base) <= mr->length - len) {
		*lkey = mr->lkey;
		return 0;
	}
	return -EFAULT;
}

/*
 * Append RDMA Writes placing bytes [off, off + len) of @out at the
 * remote segments @segs[0..@nsegs), from remote byte *@roff on (updated;
 * counted across the segments in order). -EMSGSIZE when they do not fit,
 * -E2BIG past the chain's capacity, -EFAULT for unregistered memory.
 */
static int gw_chain_write(struct gw_rconn *c, const struct xdr_out *out, size_t off, size_t len,
			  const struct rpcrdma_seg *segs, unsigned int nsegs, uint64_t *roff)
{
	struct gw_rdma_loop *t = c->loop;
	struct ibv_send_wr *wr = NULL;
	unsigned int si = 0, r = 0;
	uint64_t rpos = *roff;
	size_t so = off;
	int ret;

	if (!len)
		return 0;
	/* the remote segment and the offset in it where writing resumes */
	while (r < nsegs && rpos >= segs[r].length) {
		rpos -= segs[r].length;
		r++;
	}
	/* the reply segment holding @off */
	while (si < out->nseg && so >= out->seg[si].iov_len) {
		so -= out->seg[si].iov_len;
		si++;
	}
	while (len) {
		const uint8_t *p;
		size_t take;
		uint32_t lkey;

		if (si >= out->nseg)
			return -EINVAL;
		if (r >= nsegs)
			return -EMSGSIZE;
		p = (const uint8_t *)out->seg[si].iov_base + so;
		take = out->seg[si].iov_len - so;
		if (take > len)
			take = len;
		if (take > segs[r].length - rpos)
			take = segs[r].length - rpos;
		ret = gw_rdma_lkey(c, p, take, &lkey);
		if (ret)
			return ret;
		if (!wr) {
			if (t->chain.nwr >= GW_RDMA_WR_MAX)
				return -E2BIG;
			wr = gw_chain_wr(t, IBV_WR_RDMA_WRITE, WR_ID(WR_PART, 0));
			wr->wr.rdma.remote_addr = segs[r].offset + rpos;
			wr->wr.rdma.rkey = segs[r].handle;
		}
		t->chain.sge[t->chain.nsge].addr = (uintptr_t)p;
		t->chain.sge[t->chain.nsge].length = (uint32_t)take;
		t->chain.sge[t->chain.nsge].lkey = lkey;
		t->chain.nsge++;
		wr->num_sge++;
		t->chain.bytes += take;
		len -= take;
		*roff += take;
		so += take;
		rpos += take;
		if (so == out->seg[si].iov_len) {
			si++;
			so = 0;
		}
		if (rpos == segs[r].length) {
			r++;
			rpos = 0;
			wr = NULL;
		} else if ((unsigned int)wr->num_sge == t->chain.max_sge) {
			wr = NULL;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ errors and replies */

static uint8_t *gw_rreq_sbuf(const struct gw_rreq *r)
{
	return r->c->sbuf + (size_t)r->slot * r->c->send_size;
}

static int gw_rreq_post_send(struct gw_rreq *r, size_t len)
{
	struct gw_rdma_loop *t = r->c->loop;
	struct gw_rconn *c = r->c;
	struct ibv_send_wr *wr;

	wr = gw_chain_wr(t, IBV_WR_SEND, WR_ID(WR_SEND, r->slot));
	if (!wr)
		return -E2BIG;
	t->chain.sge[t->chain.nsge].addr = (uintptr_t)gw_rreq_sbuf(r);
	t->chain.sge[t->chain.nsge].length = (uint32_t)len;
	t->chain.sge[t->chain.nsge].lkey = c->smr->lkey;
	t->chain.nsge++;
	wr->num_sge = 1;
	if (t->chain.nwr > c->sq_free)
		return -EAGAIN;
	t->chain.bytes += len;
	return gw_chain_post(c, r);
}

/* RDMA_ERROR for @r's call: 0, -EAGAIN (no room yet), or -errno */
static int gw_rreq_send_error(struct gw_rreq *r)
{
	struct gw_rdma_loop *t = r->c->loop;
	struct gw_rconn *c = r->c;
	int n, ret;

	gw_chain_reset(c);
	n = rpcrdma_enc_error(gw_rreq_sbuf(r), c->send_size, r->hdr.xid, c->credits, r->err);
	if (n < 0)
		return n;
	ret = gw_rreq_post_send(r, (size_t)n);
	if (ret)
		return ret;
	r->st = RQ_SENDING;
	gw_stat_add(&t->srv->stats.bytes_out, n);
	gw_stat_add(&t->srv->stats.rdma_bytes_out, n);
	gw_stat_add(&t->srv->stats.rdma_errors, 1);
	return 0;
}

/*
 * Gap @i (0..@nd) of @out around its first @nd DDP items, which go
 * through write chunks: bytes [*from, *to), what stays in the reply.
 */
static void gw_ddp_gap(const struct xdr_out *out, unsigned int nd, unsigned int i, size_t *from,
		       size_t *to)
{
	*from = i ? out->ddp[i - 1].off + XDR_ALIGN(out->ddp[i - 1].len) : 0;
	*to = i < nd ? out->ddp[i].off : out->len;
}

/*
 * The reply of @r: RDMA Writes for its DDP items, then the rest inline
 * or through the reply chunk, then the Send. 0, -EAGAIN (no room yet),
 * -EMSGSIZE (fits nowhere the client offered) or -errno.
 */
static int gw_rreq_send_reply(struct gw_rreq *r)
{
	struct gw_rdma_loop *t = r->c->loop;
	struct gw_rconn *c = r->c;
	const struct rpcrdma_hdr *h = &r->hdr;
	struct xdr_out *out = &r->w.req.reply;
	uint64_t written[RPCRDMA_WRITE_CHUNKS_MAX] = { 0 };
	uint64_t roff, rwritten = 0;
	unsigned int i, nd;
	size_t pos, end, rlen, n;
	uint8_t *sb = gw_rreq_sbuf(r);
	int hl, ret;

	gw_chain_reset(c);
	nd = out->nddp < h->nwrite ? out->nddp : h->nwrite;
	for (i = 0; i < nd; i++) {
		if (out->ddp[i].len > h->write[i].length) {
			/* the client's chunk is too small: the item stays in the reply */
			nd = i;
			break;
		}
		roff = 0;
		ret = gw_chain_write(c, out, out->ddp[i].off, out->ddp[i].len,
				     &h->segs[h->write[i].first], h->write[i].nsegs, &roff);
		if (ret)
			return ret;
		written[i] = roff;
	}
	rlen = 0;
	for (i = 0; i <= nd; i++) {
		gw_ddp_gap(out, nd, i, &pos, &end);
		rlen += end - pos;
	}

	hl = rpcrdma_enc_reply_hdr(sb, c->send_size, h->xid, c->credits, RDMA_MSG, h->segs,
				   h->write, h->nwrite, written, h->has_reply ? &h->reply : NULL,
				   0);
	if (hl < 0)
		return hl;
	if ((size_t)hl + rlen <= c->send_size) {
		/* inline: the reply without the DDP items' bytes and pads */
		n = (size_t)hl;
		for (i = 0; i <= nd; i++) {
			gw_ddp_gap(out, nd, i, &pos, &end);
			n += xdr_out_copy(out, pos, sb + n, end - pos);
		}
	} else if (h->has_reply && rlen <= h->reply.length) {
		roff = 0;
		for (i = 0; i <= nd; i++) {
			gw_ddp_gap(out, nd, i, &pos, &end);
			ret = gw_chain_write(c, out, pos, end - pos, &h->segs[h->reply.first],
					     h->reply.nsegs, &roff);
			if (ret)
				return ret;
		}
		rwritten = roff;
		hl = rpcrdma_enc_reply_hdr(sb, c->send_size, h->xid, c->credits, RDMA_NOMSG,
					   h->segs, h->write, h->nwrite, written, &h->reply,
					   rwritten);
		if (hl < 0)
			return hl;
		n = (size_t)hl;
	} else {
		return -EMSGSIZE;
	}
	ret = gw_rreq_post_send(r, n);
	if (ret)
		return ret;
	r->st = RQ_SENDING;
	gw_stat_add(&t->srv->stats.bytes_out, (long long)t->chain.bytes);
	gw_stat_add(&t->srv->stats.rdma_bytes_out, (long long)t->chain.bytes);
	for (i = 0; i < nd; i++)
		gw_stat_add(&t->srv->stats.rdma_write_bytes, (long long)written[i]);
	if (rwritten) {
		gw_stat_add(&t->srv->stats.rdma_reply_bytes, (long long)rwritten);
		gw_stat_add(&t->srv->stats.rdma_reply_chunk_replies, 1);
	} else {
		gw_stat_add(&t->srv->stats.rdma_inline_replies, 1);
	}
	return 0;
}

/* ------------------------------------------------------------ reads */

/* One RDMA Read per read segment, into r->rec at the planned places. */
static int gw_rreq_post_reads(struct gw_rreq *r)
{
	struct gw_rdma_loop *t = r->c->loop;
	struct gw_rconn *c = r->c;
	const struct rpcrdma_hdr *h = &r->hdr;
	struct ibv_send_wr *wr;
	unsigned int i, j;
	uint32_t lkey;
	int ret;

	gw_chain_reset(c);
	for (i = 0; i < h->nread_chunks; i++) {
		uint8_t *dst = (uint8_t *)r->rec + r->read_dst[i];

		for (j = 0; j < h->read[i].nsegs; j++) {
			const struct rpcrdma_seg *s = &h->read_segs[h->read[i].first + j];

			ret = gw_rdma_lkey(c, dst, s->length, &lkey);
			if (ret)
				return ret;
			wr = gw_chain_wr(t, IBV_WR_RDMA_READ, WR_ID(WR_PART, 0));
			if (!wr || t->chain.nwr > GW_RDMA_WR_MAX)
				return -E2BIG;
			t->chain.sge[t->chain.nsge].addr = (uintptr_t)dst;
			t->chain.sge[t->chain.nsge].length = s->length;
			t->chain.sge[t->chain.nsge].lkey = lkey;
			t->chain.nsge++;
			wr->num_sge = 1;
			wr->wr.rdma.remote_addr = s->offset;
			wr->wr.rdma.rkey = s->handle;
			dst += s->length;
			t->chain.bytes += s->length;
		}
	}
	if (!t->chain.nwr)
		return -EINVAL;
	r->pulled = t->chain.bytes;
	t->chain.wr[t->chain.nwr - 1].wr_id = WR_ID(WR_READ, r->slot);
	if (t->chain.nwr > c->sq_free)
		return -EAGAIN;
	ret = gw_chain_post(c, r);
	if (ret)
		return ret;
	r->st = RQ_READING;
	return 0;
}

/* ------------------------------------------------------------ the wait queue */

static int gw_rreq_try(struct gw_rreq *r)
{
	int ret;

	switch (r->st) {
	case RQ_WAIT_READ:
		return gw_rreq_post_reads(r);
	case RQ_WAIT_SEND:
		ret = gw_rreq_send_reply(r);
		if (ret == -EAGAIN || !ret)
			return ret;
		if (!r->c->warned_chunk) {
			r->c->warned_chunk = true;
			log_info("rdma: connection %llu: reply of %zu bytes fits no chunk the "
				 "client "
				 "offered (%s): RDMA_ERROR ERR_CHUNK",
				 GW_RCONN_NO(r->c), xdr_out_len(&r->w.req.reply), strerror(-ret));
		}
		xdr_out_release(&r->w.req.reply);
		r->err = ERR_CHUNK;
		r->st = RQ_WAIT_ERR;
		/* fall through */
	case RQ_WAIT_ERR:
		return gw_rreq_send_error(r);
	default:
		return -EINVAL;
	}
}

/* Drop @r before it was posted: its reply, if it has one, and its slot. */
static void gw_rreq_discard(struct gw_rreq *r)
{
	if (r->st == RQ_WAIT_SEND)
		xdr_out_release(&r->w.req.reply);
	gw_rreq_put(r);
}

/* @r could not be posted: its connection is beyond saving. */
static void gw_rreq_post_failed(struct gw_rconn *c, struct gw_rreq *r)
{
	gw_rreq_discard(r);
	gw_rconn_close(c, true, "cannot post work requests");
}

/* Run @r now when nothing waits before it and there is room, else queue it. */
static void gw_rreq_start(struct gw_rreq *r)
{
	struct gw_rconn *c = r->c;
	int ret = -EAGAIN;

	if (!c->wait_head)
		ret = gw_rreq_try(r);
	if (ret == -EAGAIN) {
		r->next = NULL;
		if (c->wait_tail)
			c->wait_tail->next = r;
		else
			c->wait_head = r;
		c->wait_tail = r;
		return;
	}
	if (ret)
		gw_rreq_post_failed(c, r);
}

static void gw_rconn_kick(struct gw_rconn *c)
{
	struct gw_rreq *r;
	int ret;

	while ((r = c->wait_head) && c->st != RC_CLOSING) {
		ret = gw_rreq_try(r);
		if (ret == -EAGAIN)
			return;
		c->wait_head = r->next;
		if (!c->wait_head)
			c->wait_tail = NULL;
		r->next = NULL;
		if (ret) {
			gw_rreq_post_failed(c, r);
			return;
		}
	}
}

/* ------------------------------------------------------------ calls */

static void gw_rreq_dispatch(struct gw_rreq *r, size_t len)
{
	struct gw_rdma_loop *t = r->c->loop;
	struct gw_rconn *c = r->c;

	r->st = RQ_WORKER;
	gw_work_init(&r->w, &c->info, r->rec, len, false, t->rec_max);
	c->at_worker++;
	gw_work_batch_add(&t->batch, &r->w);
}

static void gw_rreq_fail(struct gw_rreq *r, uint32_t err)
{
	if (r->rec) {
		chunk_put(r->rec_pool, r->rec);
		r->rec = NULL;
	}
	r->c->inflight--;
	r->err = err;
	r->st = RQ_WAIT_ERR;
	gw_rreq_start(r);
}

/*
 * Lay out a call with read chunks in a large pool chunk: the inline
 * parts of @body copied around the chunks' places, pads zeroed. The
 * total length, or -EMSGSIZE / -EINVAL for chunks that cannot be placed.
 */
static ssize_t gw_rreq_plan(struct gw_rreq *r, const uint8_t *body, size_t blen, size_t room)
{
	const struct rpcrdma_hdr *h = &r->hdr;
	uint8_t *dst = r->rec;
	size_t spos = 0, ipos = 0, gap, pad;
	unsigned int i;

	for (i = 0; i < h->nread_chunks; i++) {
		const struct rpcrdma_read_chunk *ch = &h->read[i];

		if (ch->position < spos)
			return -EINVAL; /* inside an earlier chunk */
		gap = ch->position - spos;
		if (gap > blen - ipos)
			return -EINVAL; /* past the inline message */
		pad = XDR_PAD(ch->length);
		if (gap + ch->length + pad > room - spos)
			return -EMSGSIZE;
		memcpy(dst + spos, body + ipos, gap);
		spos += gap;
		ipos += gap;
		r->read_dst[i] = spos;
		spos += ch->length;
		memset(dst + spos, 0, pad);
		spos += pad;
	}
	if (blen - ipos > room - spos)
		return -EMSGSIZE;
	memcpy(dst + spos, body + ipos, blen - ipos);
	return (ssize_t)(spos + blen - ipos);
}

/* A pool chunk for @r's call; 0 or -errno (logged). */
static int gw_rreq_buffer(struct gw_rreq *r, struct chunk_pool *pool)
{
	int ret = chunk_get(pool, NULL, &r->rec);

	if (ret) {
		log_info("rdma: connection %llu: no buffer for a call: %s", GW_RCONN_NO(r->c),
			 strerror(-ret));
		return ret;
	}
	r->rec_pool = pool;
	return 0;
}

static void gw_rconn_on_recv(struct gw_rconn *c, const struct ibv_wc *wc)
{
	struct gw_rdma_loop *t = c->loop;
	struct chunk_pool *pool;
	unsigned int i = WR_IDX(wc->wr_id);
	const uint8_t *buf = c->rbuf + (size_t)i * c->recv_size;
	struct rpcrdma_hdr *h;
	struct gw_rreq *r;
	const uint8_t *body;
	size_t blen, room;
	ssize_t len;
	int ret;

	c->recv_posted--;
	if (c->st == RC_CLOSING)
		return;
	if (wc->status != IBV_WC_SUCCESS) {
		log_info("rdma: connection %llu: receive failed: %s", GW_RCONN_NO(c),
			 ibv_wc_status_str(wc->status));
		gw_rconn_close(c, true, "receive failed");
		return;
	}
	gw_stat_add(&t->srv->stats.bytes_in, wc->byte_len);
	gw_stat_add(&t->srv->stats.rdma_bytes_in, wc->byte_len);
	r = gw_rreq_get(c);
	if (!r) {
		gw_rconn_close(c, true, "more calls than credits");
		return;
	}
	h = &r->hdr;
	ret = rpcrdma_dec_hdr(buf, wc->byte_len, h);
	if (ret && wc->byte_len < RPCRDMA_HDR_FIXED) {
		gw_rreq_put(r);
		gw_rconn_close(c, true, "transport header shorter than 16 bytes");
		return;
	}
	if (ret || (h->proc != RDMA_MSG && h->proc != RDMA_NOMSG)) {
		if (gw_rconn_post_recv(c, i))
			goto out_close;
		if (!ret && h->proc == RDMA_ERROR) {
			log_info("rdma: connection %llu: client sent RDMA_ERROR %u", GW_RCONN_NO(c),
				 h->err);
			gw_rreq_put(r);
			return;
		}
		log_info("rdma: connection %llu: bad transport header (xid %#x, version %u, proc "
			 "%u): %s",
			 GW_RCONN_NO(c), h->xid, h->vers, h->proc, strerror(ret ? -ret : EBADMSG));
		c->inflight++;
		gw_rreq_fail(r, ret == -EPROTONOSUPPORT ? ERR_VERS : ERR_CHUNK);
		return;
	}
	if (++c->inflight > c->credits) {
		gw_rreq_put(r);
		gw_rconn_close(c, true, "more calls than credits");
		return;
	}
	body = buf + h->hdr_len;
	blen = h->proc == RDMA_MSG ? wc->byte_len - h->hdr_len : 0;
	if (!h->nread_chunks) {
		if (h->proc == RDMA_NOMSG || !blen) {
			if (gw_rconn_post_recv(c, i))
				goto out_put;
			gw_rreq_fail(r, ERR_CHUNK);
			return;
		}
		pool = t->srv->small ? t->srv->small : t->srv->pool;
		if (blen > chunk_pool_chunk_size(pool))
			pool = t->srv->pool;
		if (gw_rreq_buffer(r, pool))
			goto out_put;
		memcpy(r->rec, body, blen);
		if (gw_rconn_post_recv(c, i))
			goto out_put;
		gw_rreq_dispatch(r, blen);
		return;
	}
	if (!c->read_depth) {
		if (gw_rconn_post_recv(c, i))
			goto out_put;
		log_info(
			"rdma: connection %llu: read chunks from a client that allows no RDMA Read",
			GW_RCONN_NO(c));
		gw_rreq_fail(r, ERR_CHUNK);
		return;
	}
	if (gw_rreq_buffer(r, t->srv->pool))
		goto out_put;
	room = chunk_pool_chunk_size(r->rec_pool);
	if (room > t->rec_max)
		room = t->rec_max;
	len = gw_rreq_plan(r, body, blen, room);
	if (gw_rconn_post_recv(c, i))
		goto out_put;
	if (len < 0) {
		log_info("rdma: connection %llu: xid %#x: read chunks cannot be placed: %s",
			 GW_RCONN_NO(c), h->xid, strerror((int)-len));
		gw_rreq_fail(r, ERR_CHUNK);
		return;
	}
	r->w.req.len = (size_t)len;
	r->st = RQ_WAIT_READ;
	gw_rreq_start(r);
	return;

out_put:
	c->inflight--;
	gw_rreq_put(r);
out_close:
	gw_rconn_close(c, true, "cannot take a call");
}

/* ------------------------------------------------------------ completions */

static void gw_rconn_on_send(struct gw_rconn *c, struct gw_rreq *r, const struct ibv_wc *wc)
{
	struct gw_rdma_loop *t = c->loop;
	c->sq_free += r->sq_used;
	if (r->st == RQ_READING) {
		/* the last RDMA Read of a call */
		if (wc->status != IBV_WC_SUCCESS || c->st == RC_CLOSING) {
			if (c->st != RC_CLOSING)
				log_info("rdma: connection %llu: RDMA Read of xid %#x failed: %s",
					 GW_RCONN_NO(c), r->hdr.xid, ibv_wc_status_str(wc->status));
			c->inflight--;
			gw_rreq_put(r);
			gw_rconn_close(c, true, "RDMA Read failed");
			return;
		}
		r->sq_used = 0;
		gw_stat_add(&t->srv->stats.bytes_in, (long long)r->pulled);
		gw_stat_add(&t->srv->stats.rdma_bytes_in, (long long)r->pulled);
		gw_stat_add(&t->srv->stats.rdma_read_bytes, (long long)r->pulled);
		gw_rreq_dispatch(r, r->w.req.len);
		gw_rconn_kick(c);
		return;
	}
	/* a reply or an RDMA_ERROR went out (or was flushed) */
	xdr_out_release(&r->w.req.reply);
	gw_rreq_put(r);
	if (wc->status != IBV_WC_SUCCESS && c->st != RC_CLOSING) {
		log_info("rdma: connection %llu: send failed: %s", GW_RCONN_NO(c),
			 ibv_wc_status_str(wc->status));
		gw_rconn_close(c, true, "send failed");
		return;
	}
	gw_rconn_kick(c);
}

static void gw_rconn_wc(struct gw_rconn *c, const struct ibv_wc *wc)
{
	uint32_t idx = WR_IDX(wc->wr_id);

	switch (WR_KIND(wc->wr_id)) {
	case WR_RECV:
		gw_rconn_on_recv(c, wc);
		break;
	case WR_SEND:
	case WR_READ:
		if (idx < GW_RDMA_SLOTS)
			gw_rconn_on_send(c, &c->slots[idx], wc);
		break;
	case WR_PART:
		/* unsignaled: seen only when it failed; the chain's last WR follows */
		if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR &&
		    c->st != RC_CLOSING) {
			log_info("rdma: connection %llu: RDMA %s failed: %s", GW_RCONN_NO(c),
				 wc->opcode == IBV_WC_RDMA_READ ? "Read" : "Write",
				 ibv_wc_status_str(wc->status));
			gw_rconn_close(c, true, "RDMA operation failed");
		}
		break;
	}
}

void gw_rconn_poll(struct gw_rconn *c)
{
	struct ibv_wc wc[32];
	int i, n;

	while ((n = ibv_poll_cq(c->cq, 32, wc)) > 0)
		for (i = 0; i < n; i++)
			gw_rconn_wc(c, &wc[i]);
	if (n < 0 && c->st != RC_CLOSING)
		gw_rconn_close(c, true, "ibv_poll_cq failed");
}

void gw_rconn_worker_done(struct gw_rreq *r)
{
	struct gw_rconn *c = r->c;

	c->at_worker--;
	if (c->st == RC_CLOSING) {
		xdr_out_release(&r->w.req.reply);
		gw_rreq_put(r);
		return;
	}
	/* the call's buffer is not needed by the reply */
	chunk_put(r->rec_pool, r->rec);
	r->rec = NULL;
	c->inflight--;
	if (!xdr_out_len(&r->w.req.reply)) {
		gw_rreq_put(r); /* nothing to answer */
		return;
	}
	r->st = RQ_WAIT_SEND;
	gw_rreq_start(r);
}

/* ------------------------------------------------------------ life */

void gw_rconn_close(struct gw_rconn *c, bool dropped, const char *why)
{
	struct gw_rdma_loop *t = c->loop;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct gw_rreq *r;

	if (c->st == RC_CLOSING)
		return;
	log_debug("rdma: connection %llu closing: %s", GW_RCONN_NO(c), why);
	if (dropped)
		gw_stat_add(&t->srv->stats.conns_dropped, 1);
	if (c->st == RC_CONNECTED)
		rdma_disconnect(c->id);
	c->st = RC_CLOSING;
	/* waiting requests never reach the queue */
	while ((r = c->wait_head)) {
		c->wait_head = r->next;
		gw_rreq_discard(r);
	}
	c->wait_tail = NULL;
	if (c->qp && ibv_modify_qp(c->qp, &attr, IBV_QP_STATE))
		log_info("rdma: connection %llu: ibv_modify_qp(ERR): %s", GW_RCONN_NO(c),
			 strerror(errno));
}

bool gw_rconn_quiet(const struct gw_rconn *c)
{
	return c->st == RC_CLOSING && !c->at_worker;
}

int gw_rconn_setup(struct gw_rconn *c, const struct rpcrdma_cm_priv *peer)
{
	struct gw_rdev *d = c->dev;
	struct ibv_qp_init_attr qa;
	unsigned int i, cqe;
	int ret;

	if (!c->credits || c->credits > GW_RDMA_CREDITS)
		c->credits = GW_RDMA_CREDITS; /* gw_rdma_admit() may have set fewer */
	c->recv_size = GW_RDMA_INLINE_RECV;
	c->send_size =
		peer->recv_max < GW_RDMA_INLINE_SEND_MAX ? peer->recv_max : GW_RDMA_INLINE_SEND_MAX;
	if (c->send_size < RPCRDMA_INLINE_MIN)
		c->send_size = RPCRDMA_INLINE_MIN;
	c->nrecv = GW_RDMA_CREDITS + GW_RDMA_RECV_SLACK;
	c->sq_depth = GW_RDMA_SQ_DEPTH;
	if (d->attr.max_qp_wr > 0 && (unsigned int)d->attr.max_qp_wr < c->sq_depth + 1)
		c->sq_depth = (unsigned int)d->attr.max_qp_wr - 1;
	if (c->sq_depth < GW_RDMA_WR_MAX + 1 || (unsigned int)d->attr.max_qp_wr < c->nrecv + 1) {
		log_err("rdma: device %s: queues of %d work requests are too small",
			ibv_get_device_name(d->verbs->device), d->attr.max_qp_wr);
		return -EOPNOTSUPP;
	}
	c->sq_free = c->sq_depth;
	cqe = c->nrecv + 1 + c->sq_depth + 1;

	c->slots = calloc(GW_RDMA_SLOTS, sizeof(*c->slots));
	c->rbuf = aligned_alloc(4096, (size_t)c->nrecv * c->recv_size);
	c->sbuf = aligned_alloc(4096, (size_t)GW_RDMA_SLOTS * c->send_size);
	if (!c->slots || !c->rbuf || !c->sbuf) {
		log_err("rdma: connection buffers: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = GW_RDMA_SLOTS; i-- > 0;) {
		c->slots[i].c = c;
		c->slots[i].slot = i;
		c->slots[i].next = c->free;
		c->free = &c->slots[i];
	}
	c->rmr =
		ibv_reg_mr(d->pd, c->rbuf, (size_t)c->nrecv * c->recv_size, IBV_ACCESS_LOCAL_WRITE);
	c->smr = ibv_reg_mr(d->pd, c->sbuf, (size_t)GW_RDMA_SLOTS * c->send_size, 0);
	if (!c->rmr || !c->smr) {
		ret = -errno;
		log_err("rdma: ibv_reg_mr (connection buffers): %s", strerror(-ret));
		return ret;
	}
	c->cq = ibv_create_cq(d->verbs, (int)cqe, c, d->cc, 0);
	if (!c->cq) {
		ret = -errno;
		log_err("rdma: ibv_create_cq(%u): %s", cqe, strerror(-ret));
		return ret;
	}
	if (ibv_req_notify_cq(c->cq, 0)) {
		log_err("rdma: ibv_req_notify_cq failed");
		return -EIO;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_context = c;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = c->sq_depth + 1;
	qa.cap.max_recv_wr = c->nrecv + 1;
	qa.cap.max_send_sge =
		(uint32_t)(d->attr.max_sge < GW_RDMA_SGE_MAX ? d->attr.max_sge : GW_RDMA_SGE_MAX);
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, d->pd, &qa)) {
		ret = -errno;
		log_err("rdma: rdma_create_qp: %s", strerror(-ret));
		return ret;
	}
	c->qp = c->id->qp;
	for (i = 0; i < c->nrecv; i++) {
		ret = gw_rconn_post_recv(c, i);
		if (ret)
			return ret;
	}
	return 0;
}

void gw_rconn_teardown(struct gw_rconn *c)
{
	unsigned int i;

	/*
	 * Destroying the QP ends all access to what its posted work requests
	 * point at (flushes are not waited for: not every provider delivers
	 * them for work posted after the error), so the slots' replies and
	 * calls can be released after it.
	 */
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	if (c->cq) {
		if (c->cq_events)
			ibv_ack_cq_events(c->cq, c->cq_events);
		c->cq_events = 0;
		ibv_destroy_cq(c->cq);
		c->cq = NULL;
	}
	if (c->rmr)
		ibv_dereg_mr(c->rmr);
	if (c->smr)
		ibv_dereg_mr(c->smr);
	if (c->slots)
		for (i = 0; i < GW_RDMA_SLOTS; i++) {
			if (c->slots[i].st == RQ_SENDING)
				xdr_out_release(&c->slots[i].w.req.reply);
			if (c->slots[i].rec)
				chunk_put(c->slots[i].rec_pool, c->slots[i].rec);
		}
	free(c->rbuf);
	free(c->sbuf);
	free(c->slots);
	c->rmr = c->smr = NULL;
	c->rbuf = c->sbuf = NULL;
	c->slots = NULL;
}
