// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc's RPC-over-RDMA transport (RFC 8166, RFC 8267, RFC 8797): the
 * same send()/recv() as the TCP transport, over one reliable-connected
 * queue pair set up with librdmacm. Built only with HAVE_RDMA.
 *
 * Operation
 * ---------
 * Connection. rdma_resolve_addr, rdma_resolve_route, then rdma_connect
 * carrying RFC 8797 private data: we send and receive inline messages of
 * up to RDMA_INLINE bytes and never use Send With Invalidate. The
 * server's private data in the ESTABLISHED event gives its inline
 * thresholds (RFC 8166's 1024 bytes when it sends none); calls are kept
 * within its receive size. One protection domain, one completion queue
 * for sends and receives, one completion channel to sleep on.
 *
 * Memory, registered once at connect time:
 *   - RDMA_RECVS receive buffers of RDMA_INLINE bytes, all posted
 *     before connecting, each reposted once the reply read from it has
 *     been used (at the next recv());
 *   - per call slot: a send buffer (RDMA_INLINE bytes), a long-call
 *     buffer the server may RDMA Read (IBV_ACCESS_REMOTE_READ), and,
 *     writable by the server (IBV_ACCESS_REMOTE_WRITE), a reply buffer
 *     of rec_max bytes and a READ data area of NFSC_IO_MAX bytes with
 *     RDMA_HEADROOM bytes before it.
 * There are RDMA_CALLS + 1 slots: at most RDMA_CALLS calls are in
 * flight (max_calls caps the session's slots), and the slot whose reply
 * recv() returned last is not reused before the next recv(), so the
 * reply stays valid as the transport contract says.
 *
 * Calls. Every call offers its slot's reply buffer as the reply chunk
 * (one segment). A READ (ddp_read != 0) also offers a write list of one
 * chunk of ddp_read bytes in the slot's data area: READ data is
 * DDP-eligible (RFC 8267 §4.2), READ_PLUS data is not, so a READ_PLUS
 * reply comes inline or through the reply chunk. A call fitting the
 * server's inline receive size goes as RDMA_MSG; a longer one (a LOOKUP
 * of many long names) goes as RDMA_NOMSG with a position-zero read
 * chunk over the slot's long-call buffer. The transport header asks for
 * RDMA_CALLS credits.
 *
 * Replies. A receive completion carries a transport header: its
 * credits (clamped to 1..RDMA_CALLS) bound the calls on the wire, and
 * send() waits for a reply while that many are out. recv() decodes the
 * header (rpcrdma_dec_hdr), finds the call by xid and gets the whole
 * RPC reply with nfsc_rdma_reply(): inline after the header (RDMA_MSG),
 * in the reply buffer (RDMA_NOMSG), and for a READ whose data the
 * server wrote into the write chunk, rebuilt in the data area's
 * headroom around the data, which is not copied. RDMA_ERROR, a
 * malformed header or a reply to no call in flight ends the connection
 * with a message; so does a failed work completion, a disconnect event,
 * or silence for NFSC_REPLY_TIMEOUT seconds. bytes_in counts what came
 * by Send and by RDMA Write; bytes_out what went by Send and what the
 * server read.
 */
#ifdef HAVE_RDMA

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "nfs_client.h"
#include "rdma_cm.h"
#include "rpcrdma.h"

#define RDMA_CALLS 8		       /* credits asked for: calls in flight at most */
#define RDMA_SLOTS (RDMA_CALLS + 1)    /* + the slot of the reply being read */
#define RDMA_RECVS (RDMA_CALLS + 1)    /* + the receive buffer being read */
#define RDMA_INLINE 4096	       /* our inline send and receive size */
#define RDMA_HEADROOM NFSC_REPLY_SLACK /* room for a READ reply's XDR before its data */
#define RDMA_RESOLVE_MS 5000	       /* address and route resolution */
#define RDMA_CONNECT_MS 10000	       /* from rdma_connect to ESTABLISHED */
#define RDMA_RD_ATOM 4		       /* RDMA Reads in flight, each way */
#define RDMA_WC_BATCH 8

#define WR_RECV 1ULL
#define WR_SEND 2ULL
#define WR_ID(kind, i) ((kind) << 32 | (uint64_t)(i))

/* One call in flight and what it offered. */
struct rdma_slot {
	uint8_t *sbuf;	/* send buffer: transport header + inline call */
	uint8_t *lbuf;	/* long call, read by the server */
	uint8_t *rbuf;	/* reply chunk */
	uint8_t *wdata; /* write chunk (READ data), RDMA_HEADROOM after its area's start */
	uint32_t xid;
	uint32_t wlen; /* write chunk offered, 0: none */
	bool busy;     /* sent, reply not yet returned */
};

struct rdma_xprt {
	struct nfsc_xprt t;
	bool dead, connected;
	char where[NFSC_HOST_MAX + 16]; /* "HOST port PORT" */

	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *local_mr, *call_mr, *remote_mr;
	uint8_t *local, *calls, *remote; /* the three registered regions */
	size_t local_len, calls_len, remote_len;

	size_t rec_max;	    /* reply chunk offered */
	size_t inline_send; /* the longest Send the server takes */
	struct rpcrdma_cm_priv srv;
	uint32_t credits;    /* granted by the server's last reply */
	unsigned int onwire; /* calls sent whose reply has not arrived */

	struct rdma_slot slot[RDMA_SLOTS];
	int held_slot, held_recv; /* of the reply recv() returned last, or -1 */

	/* receive completions not yet handed out, oldest first */
	struct {
		unsigned int idx;
		uint32_t len;
	} ready[RDMA_RECVS];
	unsigned int ready_head, nready;

	struct rpcrdma_hdr hdr; /* of the last reply */
};

static int rdma_fail(struct rdma_xprt *x, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rdma_fail(struct rdma_xprt *x, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->t.err, sizeof(x->t.err), fmt, ap);
	va_end(ap);
	x->dead = true;
	return rc;
}

static uint8_t *recv_buf(struct rdma_xprt *x, unsigned int i)
{
	return x->local + (size_t)(RDMA_SLOTS + i) * RDMA_INLINE;
}

static int post_recv(struct rdma_xprt *x, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(x, i),
		.length = RDMA_INLINE,
		.lkey = x->local_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_ID(WR_RECV, i), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(x->id->qp, &wr, &bad);

	return rc ? rdma_fail(x, -rc, "ibv_post_recv: %s", strerror(rc)) : 0;
}

/* ------------------------------------------------------------ completions */

/* The credits of a reply that just arrived: it is no longer on the wire. */
static void note_reply(struct rdma_xprt *x, const uint8_t *buf, uint32_t len)
{
	uint32_t cr;

	if (x->onwire)
		x->onwire--;
	if (len < RPCRDMA_HDR_FIXED || xdr_get_u32(buf + 4) != RPCRDMA_VERSION)
		return; /* recv() says what is wrong with it */
	cr = xdr_get_u32(buf + 8);
	x->credits = cr < 1 ? 1 : cr > RDMA_CALLS ? RDMA_CALLS : cr;
}

static int reap(struct rdma_xprt *x)
{
	struct ibv_wc wc[RDMA_WC_BATCH];
	int n, i;

	n = ibv_poll_cq(x->cq, RDMA_WC_BATCH, wc);
	if (n < 0)
		return rdma_fail(x, -EIO, "ibv_poll_cq failed");
	for (i = 0; i < n; i++) {
		uint64_t kind = wc[i].wr_id >> 32;
		unsigned int idx = (unsigned int)wc[i].wr_id;

		if (wc[i].status != IBV_WC_SUCCESS) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				return rdma_fail(x, -ECONNRESET, "the connection was closed");
			return rdma_fail(x, -EIO, "RDMA %s: %s",
					 kind == WR_RECV ? "receive" : "send",
					 ibv_wc_status_str(wc[i].status));
		}
		if (kind != WR_RECV)
			continue;
		if (idx >= RDMA_RECVS || x->nready == RDMA_RECVS)
			return rdma_fail(x, -EIO, "a receive completion for no buffer");
		x->ready[(x->ready_head + x->nready) % RDMA_RECVS].idx = idx;
		x->ready[(x->ready_head + x->nready) % RDMA_RECVS].len = wc[i].byte_len;
		x->nready++;
		note_reply(x, recv_buf(x, idx), wc[i].byte_len);
	}
	return n;
}

/* A connection manager event while connected: the end of it, mostly. */
static int cm_event(struct rdma_xprt *x)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	if (rdma_get_cm_event(x->ec, &ev))
		return rdma_fail(x, -errno, "rdma_get_cm_event: %s", strerror(errno));
	type = ev->event;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		x->connected = false;
		return rdma_fail(x, -ECONNRESET, "the server closed the connection");
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		x->connected = false;
		return rdma_fail(x, -ENODEV, "the RDMA device went away");
	default:
		return 0;
	}
}

/*
 * Wait for completions until a reply is ready (@need_reply) or, for
 * send(), until fewer calls than the credits are on the wire.
 */
static int wait_for(struct rdma_xprt *x, bool need_reply)
{
	struct timespec t0, t1;
	struct ibv_cq *cq;
	void *ctx;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = x->ch->fd, .events = POLLIN },
			{ .fd = x->ec->fd, .events = POLLIN },
		};
		long left;

		if (need_reply ? x->nready > 0 : x->onwire < x->credits)
			return 0;
		rc = reap(x);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		if (ibv_req_notify_cq(x->cq, 0))
			return rdma_fail(x, -EIO, "ibv_req_notify_cq failed");
		rc = reap(x); /* what arrived before the notification was armed */
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = NFSC_REPLY_TIMEOUT * 1000L -
		       ((t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0)
			return rdma_fail(x, -ETIMEDOUT, "no reply from the server in %d s",
					 NFSC_REPLY_TIMEOUT);
		rc = poll(p, 2, (int)left);
		if (rc < 0 && errno != EINTR)
			return rdma_fail(x, -errno, "poll: %s", strerror(errno));
		if (rc > 0 && (p[1].revents & POLLIN)) {
			rc = cm_event(x);
			if (rc)
				return rc;
		}
		if (rc > 0 && (p[0].revents & POLLIN)) {
			if (ibv_get_cq_event(x->ch, &cq, &ctx))
				return rdma_fail(x, -EIO, "ibv_get_cq_event failed");
			ibv_ack_cq_events(cq, 1);
		}
	}
}

/* ------------------------------------------------------------ send, recv */

static int rdma_send(struct nfsc_xprt *t, const struct iovec *iov, unsigned int n,
		     uint32_t ddp_read)
{
	struct rdma_xprt *x = (struct rdma_xprt *)t;
	struct rpcrdma_seg segs[2], rseg;
	struct rpcrdma_chunk wch = { .first = 0, .nsegs = 1 }, rch;
	uint32_t pos0 = 0, proc, xid;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct rdma_slot *s = NULL;
	size_t len = 0, off;
	unsigned int i, nseg = 0;
	int hlen, rc;

	if (x->dead)
		return rdma_fail(x, -ENOTCONN, "the connection is lost");
	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (!n || iov[0].iov_len < 4 || len > NFSC_CALL_MAX)
		return -EMSGSIZE;
	if (ddp_read > NFSC_IO_MAX)
		return -EINVAL;
	for (i = 0; i < RDMA_SLOTS && !s; i++)
		if (!x->slot[i].busy && (int)i != x->held_slot)
			s = &x->slot[i];
	if (!s)
		return rdma_fail(x, -EBUSY, "more calls than the transport carries (%d)",
				 RDMA_CALLS);
	rc = wait_for(x, false);
	if (rc)
		return rc;
	xid = xdr_get_u32(iov[0].iov_base);

	/* the chunks: a write chunk for READ data, the reply chunk */
	if (ddp_read) {
		segs[nseg++] = (struct rpcrdma_seg){ .handle = x->remote_mr->rkey,
						     .length = ddp_read,
						     .offset = (uintptr_t)s->wdata };
	}
	rch = (struct rpcrdma_chunk){ .first = nseg, .nsegs = 1, .length = x->rec_max };
	segs[nseg++] = (struct rpcrdma_seg){ .handle = x->remote_mr->rkey,
					     .length = (uint32_t)x->rec_max,
					     .offset = (uintptr_t)s->rbuf };
	wch.length = ddp_read;

	/* inline if the whole message fits the server's receive size */
	hlen = rpcrdma_enc_call_hdr(s->sbuf, RDMA_INLINE, xid, RDMA_CALLS, RDMA_MSG, NULL, NULL, 0,
				    segs, &wch, ddp_read ? 1 : 0, &rch);
	if (hlen < 0)
		return rdma_fail(x, hlen, "rpcrdma_enc_call_hdr: %s", strerror(-hlen));
	proc = (size_t)hlen + len <= x->inline_send ? RDMA_MSG : RDMA_NOMSG;
	if (proc == RDMA_NOMSG) {
		rseg = (struct rpcrdma_seg){ .handle = x->call_mr->rkey,
					     .length = (uint32_t)len,
					     .offset = (uintptr_t)s->lbuf };
		hlen = rpcrdma_enc_call_hdr(s->sbuf, RDMA_INLINE, xid, RDMA_CALLS, RDMA_NOMSG,
					    &rseg, &pos0, 1, segs, &wch, ddp_read ? 1 : 0, &rch);
		if (hlen < 0)
			return rdma_fail(x, hlen, "rpcrdma_enc_call_hdr: %s", strerror(-hlen));
	}
	off = proc == RDMA_MSG ? (size_t)hlen : 0;
	for (i = 0; i < n; i++) {
		memcpy((proc == RDMA_MSG ? s->sbuf : s->lbuf) + off, iov[i].iov_base,
		       iov[i].iov_len);
		off += iov[i].iov_len;
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)s->sbuf,
				.length = (uint32_t)(proc == RDMA_MSG ? (size_t)hlen + len
								      : (size_t)hlen),
				.lkey = x->local_mr->lkey };
	wr.wr_id = WR_ID(WR_SEND, (unsigned int)(s - x->slot));
	rc = ibv_post_send(x->id->qp, &wr, &bad);
	if (rc)
		return rdma_fail(x, -rc, "ibv_post_send: %s", strerror(rc));
	s->busy = true;
	s->xid = xid;
	s->wlen = ddp_read;
	x->onwire++;
	t->bytes_out += sge.length + (proc == RDMA_NOMSG ? len : 0);
	return 0;
}

static int rdma_recv(struct nfsc_xprt *t, const uint8_t **msg, size_t *len)
{
	struct rdma_xprt *x = (struct rdma_xprt *)t;
	struct rpcrdma_hdr *h = &x->hdr;
	struct rdma_slot *s = NULL;
	const uint8_t *buf;
	unsigned int idx, i;
	uint32_t blen;
	int rc;

	if (x->dead)
		return rdma_fail(x, -ENOTCONN, "the connection is lost");
	/* what the previous reply held is free again */
	if (x->held_recv >= 0) {
		rc = post_recv(x, (unsigned int)x->held_recv);
		if (rc)
			return rc;
		x->held_recv = -1;
	}
	x->held_slot = -1;
	rc = wait_for(x, true);
	if (rc)
		return rc;
	idx = x->ready[x->ready_head].idx;
	blen = x->ready[x->ready_head].len;
	x->ready_head = (x->ready_head + 1) % RDMA_RECVS;
	x->nready--;
	x->held_recv = (int)idx;
	buf = recv_buf(x, idx);
	t->bytes_in += blen;

	rc = rpcrdma_dec_hdr(buf, blen, h);
	if (rc == -EPROTONOSUPPORT)
		return rdma_fail(x, -EPROTO, "a reply in RPC-over-RDMA version %u", h->vers);
	if (rc == -EBADMSG && (h->proc == RDMA_MSGP || h->proc == RDMA_DONE))
		return rdma_fail(x, -EPROTO, "a reply of the obsolete procedure %s",
				 h->proc == RDMA_MSGP ? "RDMA_MSGP" : "RDMA_DONE");
	if (rc)
		return rdma_fail(x, -EPROTO, "a malformed RPC-over-RDMA reply header (%s)",
				 strerror(-rc));
	if (h->proc == RDMA_ERROR) {
		nfsc_rdma_reply(h, buf, blen, NULL, 0, NULL, 0, 0, msg, len, t->err,
				sizeof(t->err));
		x->dead = true;
		return -EPROTO;
	}
	for (i = 0; i < RDMA_SLOTS && !s; i++)
		if (x->slot[i].busy && x->slot[i].xid == h->xid)
			s = &x->slot[i];
	if (!s)
		return rdma_fail(x, -EPROTO,
				 "an RPC-over-RDMA reply with xid %#x matches no call in flight",
				 h->xid);
	rc = nfsc_rdma_reply(h, buf, blen, s->rbuf, x->rec_max, s->wlen ? s->wdata : NULL, s->wlen,
			     RDMA_HEADROOM, msg, len, t->err, sizeof(t->err));
	if (rc) {
		x->dead = true;
		return rc;
	}
	if (h->has_reply && h->proc == RDMA_NOMSG)
		t->bytes_in += h->reply.length;
	if (h->nwrite)
		t->bytes_in += h->write[0].length;
	s->busy = false;
	x->held_slot = (int)(s - x->slot);
	return 0;
}

/* ------------------------------------------------------------ setup, teardown */

static void rdma_destroy(struct nfsc_xprt *t)
{
	struct rdma_xprt *x = (struct rdma_xprt *)t;

	if (x->connected)
		rdma_disconnect(x->id);
	if (x->id && x->id->qp)
		rdma_destroy_qp(x->id);
	if (x->remote_mr)
		ibv_dereg_mr(x->remote_mr);
	if (x->call_mr)
		ibv_dereg_mr(x->call_mr);
	if (x->local_mr)
		ibv_dereg_mr(x->local_mr);
	if (x->cq)
		ibv_destroy_cq(x->cq);
	if (x->ch)
		ibv_destroy_comp_channel(x->ch);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->id)
		rdma_destroy_id(x->id);
	if (x->ec)
		rdma_destroy_event_channel(x->ec);
	free(x->local);
	free(x->calls);
	free(x->remote);
	free(x);
}

static const struct nfsc_xprt_ops rdma_ops = {
	.send = rdma_send,
	.recv = rdma_recv,
	.destroy = rdma_destroy,
};

/*
 * The next connection manager event, which must be @want; its private
 * data copied to @priv (up to @plen bytes, *plen set) when asked.
 */
static int cm_expect(struct rdma_xprt *x, enum rdma_cm_event_type want, int ms, uint8_t *priv,
		     size_t *plen)
{
	enum rdma_cm_event_type got;
	int rc, status;

	rc = rdma_cm_next(x->ec, ms, want, priv, plen, &got, &status);
	if (rc == -ETIMEDOUT)
		return rdma_fail(x, rc, "connect to %s: no answer in %d s (waiting for %s)",
				 x->where, ms / 1000, rdma_event_str(want));
	if (rc)
		return rdma_fail(x, rc, "connect to %s: waiting for %s: %s", x->where,
				 rdma_event_str(want), strerror(-rc));
	if (got == want)
		return 0;
	switch (got) {
	case RDMA_CM_EVENT_REJECTED:
		/* IB CM reason 8: invalid service ID, nobody listens there */
		if (status == 8)
			return rdma_fail(x, -ECONNREFUSED, "connect to %s: %s", x->where,
					 strerror(ECONNREFUSED));
		return rdma_fail(x, -ECONNREFUSED,
				 "connect to %s: the server rejected the connection (reason %d)",
				 x->where, status);
	case RDMA_CM_EVENT_ADDR_ERROR:
		return rdma_fail(x, -EHOSTUNREACH,
				 "connect to %s: address not reachable over RDMA (%s)", x->where,
				 strerror(status < 0 ? -status : status));
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return rdma_fail(x, -EHOSTUNREACH, "connect to %s: %s (%s)", x->where,
				 rdma_event_str(got), strerror(status < 0 ? -status : status));
	default:
		return rdma_fail(x, -EPROTO, "connect to %s: %s instead of %s (status %d)",
				 x->where, rdma_event_str(got), rdma_event_str(want), status);
	}
}

static int alloc_region(struct rdma_xprt *x, uint8_t **p, size_t len)
{
	void *m;
	int rc = posix_memalign(&m, 4096, len);

	if (rc)
		return rdma_fail(x, -rc, "posix_memalign: %s", strerror(rc));
	memset(m, 0, len);
	*p = m;
	return 0;
}

static int reg(struct rdma_xprt *x, struct ibv_mr **mr, void *p, size_t len, int access)
{
	*mr = ibv_reg_mr(x->pd, p, len, access);
	if (!*mr)
		return rdma_fail(x, -errno, "ibv_reg_mr of %zu bytes: %s", len, strerror(errno));
	return 0;
}

/* PD, CQ, QP, registered memory, receives posted. */
static int setup_verbs(struct rdma_xprt *x)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * RDMA_SLOTS,
			 .max_recv_wr = RDMA_RECVS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	size_t rstride = (x->rec_max + 4095) & ~(size_t)4095;
	size_t wstride = RDMA_HEADROOM + NFSC_IO_MAX + 4096;
	unsigned int i;
	int rc;

	x->pd = ibv_alloc_pd(x->id->verbs);
	if (!x->pd)
		return rdma_fail(x, -errno, "ibv_alloc_pd: %s", strerror(errno));
	x->ch = ibv_create_comp_channel(x->id->verbs);
	if (!x->ch)
		return rdma_fail(x, -errno, "ibv_create_comp_channel: %s", strerror(errno));
	x->cq = ibv_create_cq(x->id->verbs, 2 * RDMA_SLOTS + RDMA_RECVS, x, x->ch, 0);
	if (!x->cq)
		return rdma_fail(x, -errno, "ibv_create_cq: %s", strerror(errno));
	qa.send_cq = x->cq;
	qa.recv_cq = x->cq;
	if (rdma_create_qp(x->id, x->pd, &qa))
		return rdma_fail(x, -errno, "rdma_create_qp: %s", strerror(errno));

	x->local_len = (size_t)(RDMA_SLOTS + RDMA_RECVS) * RDMA_INLINE;
	x->calls_len = (size_t)RDMA_SLOTS * NFSC_CALL_MAX;
	x->remote_len = (size_t)RDMA_SLOTS * (rstride + wstride);
	rc = alloc_region(x, &x->local, x->local_len);
	if (!rc)
		rc = alloc_region(x, &x->calls, x->calls_len);
	if (!rc)
		rc = alloc_region(x, &x->remote, x->remote_len);
	if (!rc)
		rc = reg(x, &x->local_mr, x->local, x->local_len, IBV_ACCESS_LOCAL_WRITE);
	if (!rc)
		rc = reg(x, &x->call_mr, x->calls, x->calls_len, IBV_ACCESS_REMOTE_READ);
	if (!rc)
		rc = reg(x, &x->remote_mr, x->remote, x->remote_len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (rc)
		return rc;
	for (i = 0; i < RDMA_SLOTS; i++) {
		struct rdma_slot *s = &x->slot[i];
		uint8_t *r = x->remote + (size_t)i * (rstride + wstride);

		s->sbuf = x->local + (size_t)i * RDMA_INLINE;
		s->lbuf = x->calls + (size_t)i * NFSC_CALL_MAX;
		s->rbuf = r;
		s->wdata = r + rstride + RDMA_HEADROOM;
	}
	for (i = 0; i < RDMA_RECVS; i++) {
		rc = post_recv(x, i);
		if (rc)
			return rc;
	}
	return 0;
}

int nfsc_rdma_connect(const char *host, const char *port, size_t rec_max, struct nfsc_xprt **out,
		      char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct rpcrdma_cm_priv mine = { .flags = 0,
					.send_max = RDMA_INLINE,
					.recv_max = RDMA_INLINE };
	uint8_t cpriv[RPCRDMA_CM_PRIV_LEN], spriv[64];
	size_t splen = sizeof(spriv);
	struct rdma_conn_param cp = { .private_data = cpriv,
				      .private_data_len = sizeof(cpriv),
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct ibv_device_attr da;
	struct addrinfo *ai;
	struct rdma_xprt *x;
	int rc;

	if (rec_max > UINT32_MAX - 4096)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "malloc: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	x->t.ops = &rdma_ops;
	x->t.max_calls = RDMA_CALLS;
	x->t.resvport =
		true; /* servers take RDMA connections as from a reserved port (nfsd, lacunad) */
	x->rec_max = rec_max;
	x->credits = 1; /* until the server says more */
	x->held_slot = -1;
	x->held_recv = -1;
	snprintf(x->where, sizeof(x->where), "%s port %s", host, port);

	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "%s: %s", host,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		free(x);
		return -EHOSTUNREACH;
	}
	x->ec = rdma_create_event_channel();
	if (!x->ec) {
		rc = rdma_fail(x, -errno, "rdma_create_event_channel: %s (no RDMA here?)",
			       strerror(errno));
		goto out_free_ai;
	}
	if (rdma_create_id(x->ec, &x->id, x, RDMA_PS_TCP)) {
		x->id = NULL;
		rc = rdma_fail(x, -errno, "rdma_create_id: %s", strerror(errno));
		goto out_free_ai;
	}
	if (rdma_resolve_addr(x->id, NULL, ai->ai_addr, RDMA_RESOLVE_MS)) {
		rc = rdma_fail(x, -errno, "connect to %s: rdma_resolve_addr: %s", x->where,
			       strerror(errno));
		goto out_free_ai;
	}
	freeaddrinfo(ai);
	ai = NULL;
	rc = cm_expect(x, RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_RESOLVE_MS + 1000, NULL, NULL);
	if (rc)
		goto out_destroy;
	if (rdma_resolve_route(x->id, RDMA_RESOLVE_MS)) {
		rc = rdma_fail(x, -errno, "connect to %s: rdma_resolve_route: %s", x->where,
			       strerror(errno));
		goto out_destroy;
	}
	rc = cm_expect(x, RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_RESOLVE_MS + 1000, NULL, NULL);
	if (rc)
		goto out_destroy;
	rc = setup_verbs(x);
	if (rc)
		goto out_destroy;
	/* the server reads long calls from us: accept its RDMA Reads */
	if (ibv_query_device(x->id->verbs, &da) == 0) {
		cp.responder_resources =
			(uint8_t)(da.max_qp_rd_atom < RDMA_RD_ATOM ? da.max_qp_rd_atom
								   : RDMA_RD_ATOM);
		cp.initiator_depth =
			(uint8_t)(da.max_qp_init_rd_atom < RDMA_RD_ATOM ? da.max_qp_init_rd_atom
									: RDMA_RD_ATOM);
	}
	rpcrdma_cm_priv_enc(cpriv, &mine);
	if (rdma_connect(x->id, &cp)) {
		rc = rdma_fail(x, -errno, "connect to %s: rdma_connect: %s", x->where,
			       strerror(errno));
		goto out_destroy;
	}
	rc = cm_expect(x, RDMA_CM_EVENT_ESTABLISHED, RDMA_CONNECT_MS, spriv, &splen);
	if (rc)
		goto out_destroy;
	x->connected = true;
	rpcrdma_cm_priv_dec(spriv, splen, &x->srv);
	x->inline_send = x->srv.recv_max < RDMA_INLINE ? x->srv.recv_max : RDMA_INLINE;
	*out = &x->t;
	return 0;

out_free_ai:
	if (ai)
		freeaddrinfo(ai);
out_destroy:
	snprintf(err, errlen, "%s", x->t.err);
	rdma_destroy(&x->t);
	return rc;
}

#endif /* HAVE_RDMA */
