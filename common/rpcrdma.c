// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC-over-RDMA version 1 (RFC 8166) transport headers and RFC 8797
 * connection private data: the decoder of a received header, the
 * encoders of call, reply and error headers, and the private data
 * exchanged when a connection is set up. What each function accepts
 * and refuses is described in rpcrdma.h.
 *
 * The decoder reads only through the bounded XDR cursor (xdr.h): every
 * count is compared with its *_MAX before anything is stored under it,
 * so the fixed arrays of struct rpcrdma_hdr cannot be overrun, and the
 * work done is bounded by the input's length. The encoders write into
 * a flat caller buffer and never past its @room.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "rpcrdma.h"
#include "xdr.h"

/* bytes of one segment on the wire: handle, length, offset */
#define RPCRDMA_SEG_XDR 16

/* ------------------------------------------------------------ decoding */

static int rpcrdma_dec_seg(struct xdr_in *x, struct rpcrdma_seg *s)
{
	size_t pos = x->pos;

	if (xdr_dec_u32(x, &s->handle) || xdr_dec_u32(x, &s->length) ||
	    xdr_dec_u64(x, &s->offset)) {
		x->pos = pos;
		return -EBADMSG;
	}
	return 0;
}

/*
 * The read list: {1, position, segment}... 0. Consecutive segments at
 * one position form a read chunk.
 */
static int rpcrdma_dec_read_list(struct xdr_in *x, struct rpcrdma_hdr *h)
{
	struct rpcrdma_read_chunk *rc = NULL;
	struct rpcrdma_seg seg;
	uint32_t position;
	bool more;

	for (;;) {
		if (xdr_dec_bool(x, &more))
			return -EBADMSG;
		if (!more)
			return 0;
		if (h->nread_segs == RPCRDMA_READ_SEGS_MAX)
			return -E2BIG;
		if (xdr_dec_u32(x, &position) || rpcrdma_dec_seg(x, &seg))
			return -EBADMSG;
		if (seg.length == 0 || position % XDR_UNIT)
			return -EINVAL;
		if (rc && position < rc->position)
			return -EINVAL;
		if (!rc || position != rc->position) {
			if (h->nread_chunks == RPCRDMA_READ_CHUNKS_MAX)
				return -E2BIG;
			rc = &h->read[h->nread_chunks++];
			rc->position = position;
			rc->first = h->nread_segs;
		}
		if (rc->length + seg.length > UINT32_MAX)
			return -EINVAL;
		rc->length += seg.length;
		rc->nsegs++;
		h->read_segs[h->nread_segs++] = seg;
	}
}

/* A counted array of segments into h->segs: a write chunk or the reply chunk. */
static int rpcrdma_dec_chunk(struct xdr_in *x, struct rpcrdma_hdr *h, struct rpcrdma_chunk *c)
{
	uint32_t n, i;

	if (xdr_dec_u32(x, &n))
		return -EBADMSG;
	if (n > RPCRDMA_CHUNK_SEGS_MAX || n > RPCRDMA_SEGS_MAX - h->nsegs)
		return -E2BIG;
	if (n > xdr_in_left(x) / RPCRDMA_SEG_XDR)
		return -EBADMSG;
	c->first = h->nsegs;
	c->nsegs = 0;
	c->length = 0;
	for (i = 0; i < n; i++) {
		struct rpcrdma_seg *s = &h->segs[h->nsegs];

		/* the bytes are there (checked above): this cannot fail */
		if (rpcrdma_dec_seg(x, s))
			return -EBADMSG;
		if (c->length + s->length > UINT32_MAX)
			return -EINVAL;
		c->length += s->length;
		c->nsegs++;
		h->nsegs++;
	}
	return 0;
}

static int rpcrdma_dec_write_list(struct xdr_in *x, struct rpcrdma_hdr *h)
{
	bool more;
	int rc;

	for (;;) {
		if (xdr_dec_bool(x, &more))
			return -EBADMSG;
		if (!more)
			return 0;
		if (h->nwrite == RPCRDMA_WRITE_CHUNKS_MAX)
			return -E2BIG;
		rc = rpcrdma_dec_chunk(x, h, &h->write[h->nwrite]);
		if (rc)
			return rc;
		h->nwrite++;
	}
}

static int rpcrdma_dec_error(struct xdr_in *x, struct rpcrdma_hdr *h)
{
	if (xdr_dec_u32(x, &h->err))
		return -EBADMSG;
	switch (h->err) {
	case ERR_VERS:
		if (xdr_dec_u32(x, &h->vers_low) || xdr_dec_u32(x, &h->vers_high))
			return -EBADMSG;
		return 0;
	case ERR_CHUNK:
		return 0;
	default:
		return -EBADMSG;
	}
}

int rpcrdma_dec_hdr(const void *buf, size_t len, struct rpcrdma_hdr *h)
{
	struct xdr_in x;
	bool has_reply;
	int rc;

	memset(h, 0, sizeof(*h));
	xdr_in_init(&x, buf, len);
	if (xdr_in_left(&x) < RPCRDMA_HDR_FIXED)
		return -EBADMSG;
	/* 16 bytes are there: these cannot fail */
	(void)xdr_dec_u32(&x, &h->xid);
	(void)xdr_dec_u32(&x, &h->vers);
	(void)xdr_dec_u32(&x, &h->credits);
	(void)xdr_dec_u32(&x, &h->proc);
	if (h->vers != RPCRDMA_VERSION)
		return -EPROTONOSUPPORT;

	switch (h->proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		rc = rpcrdma_dec_read_list(&x, h);
		if (rc)
			return rc;
		rc = rpcrdma_dec_write_list(&x, h);
		if (rc)
			return rc;
		if (xdr_dec_bool(&x, &has_reply))
			return -EBADMSG;
		if (has_reply) {
			rc = rpcrdma_dec_chunk(&x, h, &h->reply);
			if (rc)
				return rc;
			h->has_reply = true;
		}
		break;
	case RDMA_ERROR:
		rc = rpcrdma_dec_error(&x, h);
		if (rc)
			return rc;
		break;
	default:
		/* RDMA_MSGP, RDMA_DONE (obsolete) and unknown procedures */
		return -EBADMSG;
	}
	h->hdr_len = x.pos;
	return 0;
}

/* ------------------------------------------------------------ encoding */

/* A flat output buffer; writes past @room are counted, not made. */
struct rpcrdma_wr {
	uint8_t *p;
	size_t room;
	size_t n;
};

static void rpcrdma_put32(struct rpcrdma_wr *w, uint32_t v)
{
	if (w->n <= w->room && w->room - w->n >= 4)
		xdr_put_u32(w->p + w->n, v);
	w->n += 4;
}

static void rpcrdma_put64(struct rpcrdma_wr *w, uint64_t v)
{
	rpcrdma_put32(w, (uint32_t)(v >> 32));
	rpcrdma_put32(w, (uint32_t)v);
}

static void rpcrdma_put_seg(struct rpcrdma_wr *w, const struct rpcrdma_seg *s, uint32_t length)
{
	rpcrdma_put32(w, s->handle);
	rpcrdma_put32(w, length);
	rpcrdma_put64(w, s->offset);
}

static void rpcrdma_put_fixed(struct rpcrdma_wr *w, uint32_t xid, uint32_t credits, uint32_t proc)
{
	rpcrdma_put32(w, xid);
	rpcrdma_put32(w, RPCRDMA_VERSION);
	rpcrdma_put32(w, credits);
	rpcrdma_put32(w, proc);
}

/*
 * A chunk's counted array of segments; with @fill, each segment's
 * length is what was written into it, *fill bytes in all, in order.
 */
static void rpcrdma_put_chunk(struct rpcrdma_wr *w, const struct rpcrdma_seg *segs,
			      const struct rpcrdma_chunk *c, const uint64_t *fill)
{
	uint64_t left = fill ? *fill : 0;
	uint32_t len;
	unsigned int i;

	rpcrdma_put32(w, c->nsegs);
	for (i = 0; i < c->nsegs; i++) {
		const struct rpcrdma_seg *s = &segs[c->first + i];

		len = s->length;
		if (fill) {
			if (len > left)
				len = (uint32_t)left;
			left -= len;
		}
		rpcrdma_put_seg(w, s, len);
	}
}

static int rpcrdma_wr_done(const struct rpcrdma_wr *w)
{
	if (w->n > w->room || w->n > INT_MAX)
		return -EMSGSIZE;
	return (int)w->n;
}

int rpcrdma_enc_hdr_plain(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc)
{
	struct rpcrdma_wr w = { .p = buf, .room = room };

	if (proc != RDMA_MSG && proc != RDMA_NOMSG)
		return -EINVAL;
	rpcrdma_put_fixed(&w, xid, credits, proc);
	rpcrdma_put32(&w, 0); /* no read list */
	rpcrdma_put32(&w, 0); /* no write list */
	rpcrdma_put32(&w, 0); /* no reply chunk */
	return rpcrdma_wr_done(&w);
}

int rpcrdma_enc_reply_hdr(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc,
			  const struct rpcrdma_seg *segs, const struct rpcrdma_chunk *write,
			  unsigned int nwrite, const uint64_t *written,
			  const struct rpcrdma_chunk *reply, uint64_t reply_written)
{
	struct rpcrdma_wr w = { .p = buf, .room = room };
	static const uint64_t none;
	unsigned int i;

	if (proc != RDMA_MSG && proc != RDMA_NOMSG)
		return -EINVAL;
	rpcrdma_put_fixed(&w, xid, credits, proc);
	rpcrdma_put32(&w, 0); /* replies carry no read list */
	for (i = 0; i < nwrite; i++) {
		rpcrdma_put32(&w, 1);
		rpcrdma_put_chunk(&w, segs, &write[i], written ? &written[i] : &none);
	}
	rpcrdma_put32(&w, 0);
	if (reply) {
		rpcrdma_put32(&w, 1);
		rpcrdma_put_chunk(&w, segs, reply, &reply_written);
	} else {
		rpcrdma_put32(&w, 0);
	}
	return rpcrdma_wr_done(&w);
}

int rpcrdma_enc_call_hdr(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc,
			 const struct rpcrdma_seg *read_segs, const uint32_t *read_pos,
			 unsigned int nread, const struct rpcrdma_seg *segs,
			 const struct rpcrdma_chunk *wchunks, unsigned int nwrite,
			 const struct rpcrdma_chunk *reply)
{
	struct rpcrdma_wr w = { .p = buf, .room = room };
	unsigned int i;

	if (proc != RDMA_MSG && proc != RDMA_NOMSG)
		return -EINVAL;
	rpcrdma_put_fixed(&w, xid, credits, proc);
	for (i = 0; i < nread; i++) {
		rpcrdma_put32(&w, 1);
		rpcrdma_put32(&w, read_pos[i]);
		rpcrdma_put_seg(&w, &read_segs[i], read_segs[i].length);
	}
	rpcrdma_put32(&w, 0);
	for (i = 0; i < nwrite; i++) {
		rpcrdma_put32(&w, 1);
		rpcrdma_put_chunk(&w, segs, &wchunks[i], NULL);
	}
	rpcrdma_put32(&w, 0);
	if (reply) {
		rpcrdma_put32(&w, 1);
		rpcrdma_put_chunk(&w, segs, reply, NULL);
	} else {
		rpcrdma_put32(&w, 0);
	}
	return rpcrdma_wr_done(&w);
}

int rpcrdma_enc_error(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t err)
{
	struct rpcrdma_wr w = { .p = buf, .room = room };

	if (err != ERR_VERS && err != ERR_CHUNK)
		return -EINVAL;
	rpcrdma_put_fixed(&w, xid, credits, RDMA_ERROR);
	rpcrdma_put32(&w, err);
	if (err == ERR_VERS) {
		rpcrdma_put32(&w, RPCRDMA_VERSION);
		rpcrdma_put32(&w, RPCRDMA_VERSION);
	}
	return rpcrdma_wr_done(&w);
}

/* ------------------------------------------------ RFC 8797 private data */

/*
 * Layout (RFC 8797 §4): magic (32-bit, network order), version, flags,
 * send size, receive size: one byte each, a size byte meaning
 * (byte + 1) KiB.
 */
#define RPCRDMA_CM_UNIT 1024

bool rpcrdma_cm_priv_dec(const void *buf, size_t len, struct rpcrdma_cm_priv *p)
{
	const uint8_t *b = buf;

	p->flags = 0;
	p->send_max = RPCRDMA_INLINE_DEFAULT;
	p->recv_max = RPCRDMA_INLINE_DEFAULT;
	if (!b || len < RPCRDMA_CM_PRIV_LEN)
		return false;
	if (xdr_get_u32(b) != RPCRDMA_CM_MAGIC || b[4] != RPCRDMA_CM_VERSION)
		return false;
	/* flags this version does not define are ignored */
	p->flags = b[5] & RPCRDMA_CM_FLAG_REMOTE_INV;
	p->send_max = ((uint32_t)b[6] + 1) * RPCRDMA_CM_UNIT;
	p->recv_max = ((uint32_t)b[7] + 1) * RPCRDMA_CM_UNIT;
	return true;
}

/* a size in bytes as its one-byte code: whole KiB, 1..256 */
static uint8_t rpcrdma_cm_size(uint32_t bytes)
{
	uint32_t units = bytes / RPCRDMA_CM_UNIT;

	if (units < 1)
		units = 1;
	if (units > 256)
		units = 256;
	return (uint8_t)(units - 1);
}

void rpcrdma_cm_priv_enc(void *buf, const struct rpcrdma_cm_priv *p)
{
	uint8_t *b = buf;

	xdr_put_u32(b, RPCRDMA_CM_MAGIC);
	b[4] = RPCRDMA_CM_VERSION;
	b[5] = p->flags & RPCRDMA_CM_FLAG_REMOTE_INV;
	b[6] = rpcrdma_cm_size(p->send_max);
	b[7] = rpcrdma_cm_size(p->recv_max);
}
