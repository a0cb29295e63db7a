// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdma_hostile: an RPC-over-RDMA peer that breaks the rules, one way at
 * a time, against lacunad's RDMA port, and checks the server survives.
 *
 *   rdma_hostile HOST [PORT]        (PORT defaults to 20049)
 *
 * Operation
 * ---------
 * Each case runs on a fresh connection, with a second, well-behaved
 * connection (the bystander) open beside it. The case sends what it
 * sends and waits for the server's reaction: an answer, an RDMA_ERROR,
 * or the end of the connection (a DISCONNECTED event, or our queue
 * pair failing). After the case, the bystander must still answer an RPC
 * NULL call (program 100003, version 4, procedure 0), so a hostile peer
 * costs the server its own connection only, and so must a connection
 * opened afresh: the server is still accepting and serving.
 *
 * Cases (what passes):
 *   bad_vers          transport header version 2: RDMA_ERROR ERR_VERS
 *   short_fixed       a 12-byte message: ERR_CHUNK or disconnect
 *   short_list        a header cut inside its read list: ERR_CHUNK or
 *                     disconnect
 *   msgp, done        the obsolete RDMA_MSGP and RDMA_DONE: ERR_CHUNK or
 *                     disconnect
 *   read_segs         RPCRDMA_READ_SEGS_MAX + 1 read segments: ERR_CHUNK
 *                     or disconnect
 *   write_segs        a write chunk of RPCRDMA_CHUNK_SEGS_MAX + 1
 *                     segments: ERR_CHUNK or disconnect
 *   read_bad_rkey     a position-zero read chunk (the whole call) with a
 *   read_bad_offset   handle we never registered, or our handle and an
 *                     address past our registration: the server's RDMA
 *                     Read fails; disconnect (or ERR_CHUNK)
 *   reply_chunk_ok    (the control for the next case) a COMPOUND whose
 *                     reply is longer than our 1 KiB inline receive
 *                     size: the reply comes as RDMA_NOMSG through our
 *                     reply chunk
 *   reply_bad_rkey    the same with a reply chunk handle we never
 *                     registered: the server's RDMA Write fails;
 *                     disconnect (or RDMA_ERROR)
 *   credits           more NULL calls at once than the credits the
 *                     server granted: disconnect, RDMA_ERROR, or (a
 *                     tolerant server) every call answered; not silence
 *   big_send          a Send of twice the server's inline receive size:
 *                     disconnect
 *   bad_private       garbage connection private data: rejected, or
 *                     accepted with RFC 8166 defaults and a NULL call
 *                     answered
 *
 * Output: one line per case, "ok CASE: what happened" or
 * "FAIL CASE: ...". Exit status 0 when every case passed and the server
 * is alive at the end, 1 otherwise, 2 usage, 77 when no RDMA device
 * can be used here.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../../tools/rdma_cm.h"
#include "rpcrdma.h"
#include "xdr.h"

#define DEFAULT_PORT "20049"
#define NSEND 160    /* send buffers, one per message in flight */
#define SEND_SZ 8192 /* each: big enough for big_send */
#define NRECV 160    /* receive buffers posted */
#define RECV_SZ 4096
#define TARGET_SZ 65536 /* what the server may read or write */
#define WAIT_MS 10000	/* for a reaction */
#define MSG_MAX 512

#define NFS_PROGRAM 100003
#define NFS_V4 4
#define OP_GETFH 10
#define OP_PUTROOTFH 24

#define WR_SEND 1ULL
#define WR_RECV 2ULL

struct peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem; /* sends, receives, target */
	size_t mem_len;
	bool connected;
	struct rpcrdma_cm_priv srv; /* the server's private data */
	unsigned int next_send;
	uint32_t credits;  /* from the last reply */
	char why[MSG_MAX]; /* what ended the connection */
};

enum rx_kind { RX_MSG, RX_GONE, RX_TIMEOUT };

struct rx {
	uint8_t data[RECV_SZ];
	uint32_t len;
};

static const char *host, *port;
static uint32_t next_xid = 0x4c430000;
static struct rpcrdma_hdr hdr; /* of the last message decoded */

static int msgf(char *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int msgf(char *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, MSG_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

/* Append to the message @m. */
static void appendf(char *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void appendf(char *m, const char *fmt, ...)
{
	size_t n = strlen(m);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m + n, MSG_MAX - n, fmt, ap);
	va_end(ap);
}

static uint8_t *send_buf(struct peer *p, unsigned int i)
{
	return p->mem + (size_t)i * SEND_SZ;
}

static uint8_t *recv_buf(struct peer *p, unsigned int i)
{
	return p->mem + (size_t)NSEND * SEND_SZ + (size_t)i * RECV_SZ;
}

static uint8_t *target(struct peer *p)
{
	return p->mem + (size_t)NSEND * SEND_SZ + (size_t)NRECV * RECV_SZ;
}

/* ------------------------------------------------------------ connections */

static int post_recv(struct peer *p, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_buf(p, i),
			       .length = RECV_SZ,
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV << 32 | i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

static void peer_close(struct peer *p)
{
	if (p->connected)
		rdma_disconnect(p->id);
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->mem);
	memset(p, 0, sizeof(*p));
}

/* The next CM event, which must be @want; private data copied when asked. */
static int cm_expect(struct peer *p, enum rdma_cm_event_type want, uint8_t *priv, size_t *plen,
		     char *m)
{
	enum rdma_cm_event_type got;
	int rc, status;

	rc = rdma_cm_next(p->ec, WAIT_MS, want, priv, plen, &got, &status);
	if (rc == -ETIMEDOUT)
		return msgf(m, "no %s in %d s", rdma_event_str(want), WAIT_MS / 1000);
	if (rc)
		return msgf(m, "waiting for %s: %s", rdma_event_str(want), strerror(-rc));
	if (got == want)
		return 0;
	if (got == RDMA_CM_EVENT_REJECTED) {
		msgf(m, "connection rejected (reason %d)", status);
		return -ECONNREFUSED;
	}
	return msgf(m, "%s (status %d) instead of %s", rdma_event_str(got), status,
		    rdma_event_str(want));
}

/*
 * Connect with @priv (@plen bytes) as private data. 0, -ECONNREFUSED
 * when the server rejected us, -ENODEV when there is no RDMA here, -1
 * otherwise; a message in @m.
 */
static int peer_open(struct peer *p, const void *priv, size_t plen, char *m)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = NSEND,
						.max_recv_wr = NRECV,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct rdma_conn_param cp = { .private_data = priv,
				      .private_data_len = (uint8_t)plen,
				      .responder_resources = 4,
				      .initiator_depth = 4,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	uint8_t spriv[64];
	size_t splen = sizeof(spriv);
	unsigned int i;
	int rc;

	memset(p, 0, sizeof(*p));
	p->credits = 1;
	if (getaddrinfo(host, port, &hints, &ai))
		return msgf(m, "getaddrinfo %s: cannot resolve", host);
	p->ec = rdma_create_event_channel();
	if (!p->ec) {
		freeaddrinfo(ai);
		msgf(m, "rdma_create_event_channel: %s", strerror(errno));
		return -ENODEV;
	}
	if (rdma_create_id(p->ec, &p->id, p, RDMA_PS_TCP)) {
		p->id = NULL;
		freeaddrinfo(ai);
		return msgf(m, "rdma_create_id: %s", strerror(errno));
	}
	rc = rdma_resolve_addr(p->id, NULL, ai->ai_addr, 5000);
	freeaddrinfo(ai);
	if (rc)
		return msgf(m, "rdma_resolve_addr: %s", strerror(errno));
	if (cm_expect(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL, m))
		return -1;
	if (rdma_resolve_route(p->id, 5000))
		return msgf(m, "rdma_resolve_route: %s", strerror(errno));
	if (cm_expect(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, m))
		return -1;
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->ch = p->pd ? ibv_create_comp_channel(p->id->verbs) : NULL;
	p->cq = p->ch ? ibv_create_cq(p->id->verbs, NSEND + NRECV, NULL, p->ch, 0) : NULL;
	if (!p->cq)
		return msgf(m, "ibv_alloc_pd/ibv_create_comp_channel/ibv_create_cq: %s",
			    strerror(errno));
	qa.send_cq = qa.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return msgf(m, "rdma_create_qp: %s", strerror(errno));
	p->mem_len = (size_t)NSEND * SEND_SZ + (size_t)NRECV * RECV_SZ + TARGET_SZ;
	p->mem = calloc(1, p->mem_len);
	if (!p->mem)
		return msgf(m, "calloc: %s", strerror(ENOMEM));
	p->mr = ibv_reg_mr(p->pd, p->mem, p->mem_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr)
		return msgf(m, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < NRECV; i++)
		if ((rc = post_recv(p, i)))
			return msgf(m, "ibv_post_recv: %s", strerror(rc));
	if (rdma_connect(p->id, &cp))
		return msgf(m, "rdma_connect: %s", strerror(errno));
	rc = cm_expect(p, RDMA_CM_EVENT_ESTABLISHED, spriv, &splen, m);
	if (rc)
		return rc;
	p->connected = true;
	rpcrdma_cm_priv_dec(spriv, splen, &p->srv);
	return 0;
}

/* A connection with well-formed private data (our inline sizes: @recv_max). */
static int peer_open_good(struct peer *p, uint32_t recv_max, char *m)
{
	struct rpcrdma_cm_priv mine = { .send_max = RECV_SZ, .recv_max = recv_max };
	uint8_t priv[RPCRDMA_CM_PRIV_LEN];

	rpcrdma_cm_priv_enc(priv, &mine);
	return peer_open(p, priv, sizeof(priv), m);
}

static int peer_send(struct peer *p, const void *buf, size_t len)
{
	unsigned int i = p->next_send++ % NSEND;
	struct ibv_sge sge = { .addr = (uintptr_t)send_buf(p, i),
			       .length = (uint32_t)len,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND << 32 | i,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (len > SEND_SZ)
		return -EMSGSIZE;
	memcpy(send_buf(p, i), buf, len);
	return -ibv_post_send(p->id->qp, &wr, &bad);
}

/* The next message from the server, the end of the connection, or silence. */
static enum rx_kind peer_wait(struct peer *p, int ms, struct rx *rx)
{
	struct timespec t0, t1;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *ctx;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf[2] = { { .fd = p->ch->fd, .events = POLLIN },
					{ .fd = p->ec->fd, .events = POLLIN } };
		long left;
		int n;

		if (!p->connected)
			return RX_GONE;
		/* armed before draining: nothing arriving in between is missed */
		ibv_req_notify_cq(p->cq, 0);
		while ((n = ibv_poll_cq(p->cq, 1, &wc)) > 0) {
			unsigned int i = (unsigned int)wc.wr_id;

			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(p->why, sizeof(p->why), "our %s failed: %s",
					 wc.wr_id >> 32 == WR_SEND ? "Send" : "Receive",
					 ibv_wc_status_str(wc.status));
				p->connected = false;
				rdma_disconnect(p->id);
				return RX_GONE;
			}
			if (wc.wr_id >> 32 != WR_RECV)
				continue;
			rx->len = wc.byte_len;
			memcpy(rx->data, recv_buf(p, i), wc.byte_len);
			post_recv(p, i);
			if (rx->len >= RPCRDMA_HDR_FIXED)
				p->credits = xdr_get_u32(rx->data + 8);
			return RX_MSG;
		}
		if (n < 0) {
			snprintf(p->why, sizeof(p->why), "ibv_poll_cq failed");
			p->connected = false;
			return RX_GONE;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = ms -
		       ((t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0)
			return RX_TIMEOUT;
		if (poll(pf, 2, (int)(left < 200 ? left : 200)) <= 0)
			continue;
		if (pf[1].revents & POLLIN) {
			struct rdma_cm_event *ev;

			if (!rdma_get_cm_event(p->ec, &ev)) {
				enum rdma_cm_event_type t = ev->event;

				rdma_ack_cm_event(ev);
				if (t == RDMA_CM_EVENT_DISCONNECTED ||
				    t == RDMA_CM_EVENT_DEVICE_REMOVAL) {
					snprintf(p->why, sizeof(p->why), "the server disconnected");
					/* take what arrived before it first */
					while ((n = ibv_poll_cq(p->cq, 1, &wc)) > 0) {
						if (wc.status == IBV_WC_SUCCESS &&
						    wc.wr_id >> 32 == WR_RECV) {
							unsigned int i = (unsigned int)wc.wr_id;

							rx->len = wc.byte_len;
							memcpy(rx->data, recv_buf(p, i),
							       wc.byte_len);
							p->connected = false;
							return RX_MSG;
						}
					}
					p->connected = false;
					return RX_GONE;
				}
			}
		}
		if (pf[0].revents & POLLIN && !ibv_get_cq_event(p->ch, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

/* ------------------------------------------------------------ messages */

/* An RPC NULL call to NFSv4 with AUTH_NONE: 40 bytes at @b. */
static size_t enc_null(uint8_t *b, uint32_t xid)
{
	const uint32_t w[] = { xid, 0 /* CALL */, 2, NFS_PROGRAM, NFS_V4, 0, 0, 0, 0, 0 };
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		xdr_put_u32(b + 4 * i, w[i]);
	return sizeof(w);
}

/*
 * An NFSv4.0 COMPOUND of PUTROOTFH and 127 GETFH with AUTH_SYS root:
 * its reply is some kilobytes, more than a 1 KiB inline receive.
 */
static size_t enc_big_compound(uint8_t *b, uint32_t xid)
{
	const uint32_t head[] = {
		xid,
		0,
		2,
		NFS_PROGRAM,
		NFS_V4,
		1,
		1,
		24,
		0,
		4,
		0x686f7374 /* "host" */,
		0,
		0,
		0, /* AUTH_SYS, root, no gids */
		0,
		0, /* verifier */
		0,
		0,
		128, /* tag, minor version 0, ops */
		OP_PUTROOTFH,
	};
	size_t n = 0, i;

	for (i = 0; i < sizeof(head) / sizeof(head[0]); i++, n += 4)
		xdr_put_u32(b + n, head[i]);
	for (i = 0; i < 127; i++, n += 4)
		xdr_put_u32(b + n, OP_GETFH);
	return n;
}

/* Is @rx an RDMA_MSG with an accepted, successful RPC reply to @xid? */
static int check_reply(const struct rx *rx, uint32_t xid, char *m)
{
	struct xdr_in x;
	uint32_t v[4], vlen, st;
	int rc = rpcrdma_dec_hdr(rx->data, rx->len, &hdr);

	if (rc)
		return msgf(m, "an undecodable transport header (%s)", strerror(-rc));
	if (hdr.proc == RDMA_ERROR)
		return msgf(m, "RDMA_ERROR %s", hdr.err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
	if (hdr.proc != RDMA_MSG)
		return msgf(m, "transport procedure %u, not RDMA_MSG", hdr.proc);
	if (hdr.xid != xid)
		return msgf(m, "a reply with xid %#x to %#x", hdr.xid, xid);
	xdr_in_init(&x, rx->data + hdr.hdr_len, rx->len - hdr.hdr_len);
	if (xdr_dec_u32(&x, &v[0]) || xdr_dec_u32(&x, &v[1]) || xdr_dec_u32(&x, &v[2]) ||
	    xdr_dec_u32(&x, &v[3]) || xdr_dec_u32(&x, &vlen) || xdr_dec_skip(&x, vlen) ||
	    xdr_dec_u32(&x, &st))
		return msgf(m, "a truncated RPC reply");
	if (v[0] != xid || v[1] != 1 || v[2] != 0 || st != 0)
		return msgf(m, "RPC reply xid %#x type %u stat %u accept_stat %u", v[0], v[1], v[2],
			    st);
	return 0;
}

/* A NULL call on @p and its answer. */
static int null_call(struct peer *p, char *m)
{
	uint8_t b[256];
	uint32_t xid = next_xid++;
	struct rx rx;
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);

	if (h < 0 || peer_send(p, b, (size_t)h + enc_null(b + h, xid)))
		return msgf(m, "cannot post the NULL call");
	switch (peer_wait(p, WAIT_MS, &rx)) {
	case RX_TIMEOUT:
		return msgf(m, "no answer to a NULL call in %d s", WAIT_MS / 1000);
	case RX_GONE:
		return msgf(m, "the NULL call ended the connection (%s)", p->why);
	case RX_MSG:
		break;
	}
	return check_reply(&rx, xid, m);
}

/* ------------------------------------------------------------ cases */

/*
 * What the server did about a message it should refuse: ERR_CHUNK or
 * a disconnect pass (and ERR_VERS when @vers); an answer or silence fail.
 */
static int expect_refusal(struct peer *p, bool vers, char *m)
{
	struct rx rx;
	int rc;

	switch (peer_wait(p, WAIT_MS, &rx)) {
	case RX_TIMEOUT:
		return msgf(m, "no reaction in %d s (the message was silently dropped)",
			    WAIT_MS / 1000);
	case RX_GONE:
		if (vers)
			return msgf(m, "no ERR_VERS: %s", p->why);
		msgf(m, "dropped the connection (%s)", p->why);
		return 0;
	case RX_MSG:
		break;
	}
	rc = rpcrdma_dec_hdr(rx.data, rx.len, &hdr);
	if (rc)
		return msgf(m, "answered with an undecodable header (%s)", strerror(-rc));
	if (hdr.proc != RDMA_ERROR)
		return msgf(m, "answered with transport procedure %u instead of refusing",
			    hdr.proc);
	if (vers && hdr.err != ERR_VERS)
		return msgf(m, "RDMA_ERROR %u, not ERR_VERS", hdr.err);
	if (vers) {
		msgf(m, "RDMA_ERROR ERR_VERS (versions %u to %u)", hdr.vers_low, hdr.vers_high);
		return hdr.vers_low <= 1 && hdr.vers_high >= 1 ? 0 : -1;
	}
	msgf(m, "RDMA_ERROR %s", hdr.err == ERR_CHUNK ? "ERR_CHUNK" : "ERR_VERS");
	return hdr.err == ERR_CHUNK ? 0 : -1;
}

static int send_or_fail(struct peer *p, const void *b, size_t len, char *m)
{
	int rc = peer_send(p, b, len);

	return rc ? msgf(m, "ibv_post_send: %s", strerror(-rc)) : 0;
}

static int case_bad_vers(struct peer *p, char *m)
{
	uint8_t b[256];
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), next_xid, 1, RDMA_MSG);

	xdr_put_u32(b + 4, 2);
	if (send_or_fail(p, b, (size_t)h + enc_null(b + h, next_xid++), m))
		return -1;
	return expect_refusal(p, true, m);
}

static int case_short_fixed(struct peer *p, char *m)
{
	uint8_t b[16];

	rpcrdma_enc_hdr_plain(b, sizeof(b), next_xid++, 1, RDMA_MSG);
	return send_or_fail(p, b, 12, m) ? -1 : expect_refusal(p, false, m);
}

static int case_short_list(struct peer *p, char *m)
{
	uint8_t b[32];

	rpcrdma_enc_hdr_plain(b, sizeof(b), next_xid++, 1, RDMA_MSG);
	xdr_put_u32(b + 16, 1); /* a read segment follows... and does not */
	xdr_put_u32(b + 20, 0);
	return send_or_fail(p, b, 24, m) ? -1 : expect_refusal(p, false, m);
}

static int obsolete(struct peer *p, uint32_t proc, char *m)
{
	uint8_t b[256];
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), next_xid, 1, RDMA_MSG);

	xdr_put_u32(b + 12, proc);
	if (proc == RDMA_MSGP) { /* align, threshold, then the lists and the call */
		memmove(b + 24, b + 16, (size_t)h - 16);
		xdr_put_u32(b + 16, 4);
		xdr_put_u32(b + 20, 1024);
		h += 8;
	}
	if (send_or_fail(p, b, (size_t)h + enc_null(b + h, next_xid++), m))
		return -1;
	return expect_refusal(p, false, m);
}

static int case_msgp(struct peer *p, char *m)
{
	return obsolete(p, RDMA_MSGP, m);
}

static int case_done(struct peer *p, char *m)
{
	return obsolete(p, RDMA_DONE, m);
}

static int case_read_segs(struct peer *p, char *m)
{
	struct rpcrdma_seg segs[RPCRDMA_READ_SEGS_MAX + 1];
	uint32_t pos[RPCRDMA_READ_SEGS_MAX + 1];
	uint8_t *t = target(p), b[SEND_SZ];
	uint32_t xid = next_xid++;
	unsigned int i;
	int h;

	/* a NULL call split into 4-byte position-zero segments: all readable */
	enc_null(t, xid);
	for (i = 0; i <= RPCRDMA_READ_SEGS_MAX; i++) {
		segs[i] = (struct rpcrdma_seg){ .handle = p->mr->rkey,
						.length = 4,
						.offset = (uintptr_t)t + 4 * (i % 10) };
		pos[i] = 0;
	}
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_NOMSG, segs, pos,
				 RPCRDMA_READ_SEGS_MAX + 1, NULL, NULL, 0, NULL);
	if (h < 0)
		return msgf(m, "rpcrdma_enc_call_hdr: %s", strerror(-h));
	return send_or_fail(p, b, (size_t)h, m) ? -1 : expect_refusal(p, false, m);
}

static int case_write_segs(struct peer *p, char *m)
{
	struct rpcrdma_seg segs[RPCRDMA_CHUNK_SEGS_MAX + 1];
	struct rpcrdma_chunk wc = { .first = 0, .nsegs = RPCRDMA_CHUNK_SEGS_MAX + 1 };
	uint8_t b[SEND_SZ];
	uint32_t xid = next_xid++;
	unsigned int i;
	int h;

	for (i = 0; i <= RPCRDMA_CHUNK_SEGS_MAX; i++) {
		segs[i] = (struct rpcrdma_seg){ .handle = p->mr->rkey,
						.length = 512,
						.offset = (uintptr_t)target(p) + 512 * i };
		wc.length += 512;
	}
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_MSG, NULL, NULL, 0, segs, &wc, 1, NULL);
	if (h < 0)
		return msgf(m, "rpcrdma_enc_call_hdr: %s", strerror(-h));
	if (send_or_fail(p, b, (size_t)h + enc_null(b + h, xid), m))
		return -1;
	return expect_refusal(p, false, m);
}

/* The whole call in a position-zero read chunk the server cannot read. */
static int bad_read(struct peer *p, bool bad_key, char *m)
{
	uint8_t b[256];
	uint32_t xid = next_xid++, pos = 0;
	struct rpcrdma_seg seg = { .handle = p->mr->rkey,
				   .length = (uint32_t)enc_null(target(p), xid),
				   .offset = (uintptr_t)target(p) };
	int h;

	if (bad_key)
		seg.handle ^= 0x00ffff00;
	else
		seg.offset = (uintptr_t)p->mem + p->mem_len + (1 << 20);
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_NOMSG, &seg, &pos, 1, NULL, NULL, 0,
				 NULL);
	if (h < 0 || send_or_fail(p, b, (size_t)h, m))
		return msgf(m, "cannot send the call");
	return expect_refusal(p, false, m);
}

static int case_read_bad_rkey(struct peer *p, char *m)
{
	return bad_read(p, true, m);
}

static int case_read_bad_offset(struct peer *p, char *m)
{
	return bad_read(p, false, m);
}

/* The big COMPOUND with a reply chunk over our target (handle spoilt when @bad). */
static int reply_chunk(struct peer *p, bool bad, char *m)
{
	struct rpcrdma_seg seg = { .handle = p->mr->rkey,
				   .length = TARGET_SZ,
				   .offset = (uintptr_t)target(p) };
	struct rpcrdma_chunk rc = { .first = 0, .nsegs = 1, .length = TARGET_SZ };
	uint8_t b[SEND_SZ];
	uint32_t xid = next_xid++, v[3];
	struct rx rx;
	int h;

	if (bad)
		seg.handle ^= 0x00ffff00;
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_MSG, NULL, NULL, 0, &seg, NULL, 0, &rc);
	if (h < 0 || send_or_fail(p, b, (size_t)h + enc_big_compound(b + h, xid), m))
		return msgf(m, "cannot send the call");
	switch (peer_wait(p, WAIT_MS, &rx)) {
	case RX_TIMEOUT:
		return msgf(m, "no reaction in %d s", WAIT_MS / 1000);
	case RX_GONE:
		if (!bad)
			return msgf(m, "the connection ended (%s)", p->why);
		msgf(m, "dropped the connection (%s)", p->why);
		return 0;
	case RX_MSG:
		break;
	}
	if (rpcrdma_dec_hdr(rx.data, rx.len, &hdr))
		return msgf(m, "answered with an undecodable header");
	if (bad && hdr.proc == RDMA_ERROR) {
		msgf(m, "RDMA_ERROR %s", hdr.err == ERR_CHUNK ? "ERR_CHUNK" : "ERR_VERS");
		return 0;
	}
	if (hdr.proc == RDMA_MSG)
		return msgf(m, "a reply of %u bytes inline, past our 1 KiB receive size", rx.len);
	if (bad)
		return msgf(m, "transport procedure %u, though its RDMA Writes must have failed",
			    hdr.proc);
	if (hdr.proc != RDMA_NOMSG || !hdr.has_reply || hdr.xid != xid)
		return msgf(m,
			    "transport procedure %u (xid %#x), not RDMA_NOMSG with the reply chunk",
			    hdr.proc, hdr.xid);
	if (hdr.reply.length < 24 || hdr.reply.length > TARGET_SZ)
		return msgf(m, "a reply chunk said to hold %llu bytes",
			    (unsigned long long)hdr.reply.length);
	v[0] = xdr_get_u32(target(p));
	v[1] = xdr_get_u32(target(p) + 4);
	v[2] = xdr_get_u32(target(p) + 8);
	if (v[0] != xid || v[1] != 1 || v[2] != 0)
		return msgf(m, "the reply chunk does not hold the RPC reply (xid %#x type %u)",
			    v[0], v[1]);
	msgf(m, "RDMA_NOMSG, %llu bytes of reply in the reply chunk",
	     (unsigned long long)hdr.reply.length);
	return 0;
}

static int case_reply_chunk_ok(struct peer *p, char *m)
{
	return reply_chunk(p, false, m);
}

static int case_reply_bad_rkey(struct peer *p, char *m)
{
	return reply_chunk(p, true, m);
}

static int case_credits(struct peer *p, char *m)
{
	uint8_t b[256];
	unsigned int n, i, got = 0;
	struct rx rx;
	char e[MSG_MAX];

	if (null_call(p, e))
		return msgf(m, "first NULL call: %s", e);
	n = p->credits + 4;
	if (p->credits < 1 || n > NSEND || n > NRECV)
		return msgf(m, "the server granted %u credits, more than this test sends",
			    p->credits);
	for (i = 0; i < n; i++) {
		uint32_t xid = next_xid++;
		int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);

		if (send_or_fail(p, b, (size_t)h + enc_null(b + h, xid), m))
			return -1;
	}
	for (;;) {
		switch (peer_wait(p, WAIT_MS, &rx)) {
		case RX_TIMEOUT:
			return msgf(m, "%u calls against %u credits: %u answered, then silence", n,
				    n - 4, got);
		case RX_GONE:
			msgf(m, "%u calls against %u credits: %u answered, then %s", n, n - 4, got,
			     p->why);
			return 0;
		case RX_MSG:
			if (!rpcrdma_dec_hdr(rx.data, rx.len, &hdr) && hdr.proc == RDMA_ERROR) {
				msgf(m, "%u calls against %u credits: %u answered, then RDMA_ERROR",
				     n, n - 4, got);
				return 0;
			}
			if (++got == n) {
				msgf(m, "%u calls against %u credits: all answered (tolerated)", n,
				     n - 4);
				return 0;
			}
		}
	}
}

static int case_big_send(struct peer *p, char *m)
{
	uint8_t b[SEND_SZ];
	uint32_t xid = next_xid++, len = 2 * p->srv.recv_max;
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);
	struct rx rx;

	if (len > SEND_SZ)
		len = SEND_SZ;
	memset(b + h, 0, sizeof(b) - (size_t)h);
	enc_null(b + h, xid);
	if (send_or_fail(p, b, len, m))
		return -1;
	switch (peer_wait(p, WAIT_MS, &rx)) {
	case RX_TIMEOUT:
		return msgf(m, "no reaction to a %u-byte Send in %d s", len, WAIT_MS / 1000);
	case RX_GONE:
		msgf(m, "a %u-byte Send (its inline receive is %u): %s", len, p->srv.recv_max,
		     p->why);
		return 0;
	case RX_MSG:
		break;
	}
	return msgf(m, "a %u-byte Send was answered (%u bytes): its receive size is not %u", len,
		    rx.len, p->srv.recv_max);
}

struct hcase {
	const char *name;
	int (*run)(struct peer *p, char *m);
	uint32_t recv_max; /* our inline receive size on its connection */
};

static const struct hcase cases[] = {
	{ "bad_vers", case_bad_vers, RECV_SZ },
	{ "short_fixed", case_short_fixed, RECV_SZ },
	{ "short_list", case_short_list, RECV_SZ },
	{ "msgp", case_msgp, RECV_SZ },
	{ "done", case_done, RECV_SZ },
	{ "read_segs", case_read_segs, RECV_SZ },
	{ "write_segs", case_write_segs, RECV_SZ },
	{ "read_bad_rkey", case_read_bad_rkey, RECV_SZ },
	{ "read_bad_offset", case_read_bad_offset, RECV_SZ },
	{ "reply_chunk_ok", case_reply_chunk_ok, 1024 },
	{ "reply_bad_rkey", case_reply_bad_rkey, 1024 },
	{ "credits", case_credits, RECV_SZ },
	{ "big_send", case_big_send, RECV_SZ },
};

/* Garbage private data: refused, or taken as none and the connection works. */
static int case_bad_private(char *m)
{
	uint8_t junk[40];
	struct peer p;
	char e[MSG_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(0xa5 ^ (i * 37));
	rc = peer_open(&p, junk, sizeof(junk), e);
	if (rc == -ECONNREFUSED) {
		peer_close(&p);
		msgf(m, "%s", e);
		return 0;
	}
	if (rc) {
		peer_close(&p);
		return msgf(m, "connect: %s", e);
	}
	rc = null_call(&p, e);
	if (rc)
		msgf(m, "accepted, then %s", e);
	else
		msgf(m, "accepted (server inline %u/%u), NULL call answered", p.srv.send_max,
		     p.srv.recv_max);
	peer_close(&p);
	return rc;
}

/* A fresh connection answers a NULL call. */
static int alive(char *m)
{
	struct peer p;
	char e[MSG_MAX];
	int rc = peer_open_good(&p, RECV_SZ, e);

	if (!rc)
		rc = null_call(&p, e);
	peer_close(&p);
	return rc ? msgf(m, "%s", e) : 0;
}

int main(int argc, char **argv)
{
	char m[MSG_MAX], e[MSG_MAX];
	struct peer p, by;
	unsigned int i, failed = 0;
	int rc;

	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: rdma_hostile HOST [PORT]\n");
		return 2;
	}
	host = argv[1];
	port = argc > 2 ? argv[2] : DEFAULT_PORT;
	setvbuf(stdout, NULL, _IOLBF, 0);

	rc = peer_open_good(&p, RECV_SZ, e);
	if (rc == -ENODEV) {
		printf("SKIP: no RDMA here (%s)\n", e);
		return 77;
	}
	if (!rc)
		rc = null_call(&p, e);
	peer_close(&p);
	if (rc) {
		printf("FAIL setup: the server does not answer a NULL call: %s\n", e);
		return 1;
	}
	for (i = 0; i <= sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name =
			i < sizeof(cases) / sizeof(cases[0]) ? cases[i].name : "bad_private";
		bool pass;

		if (peer_open_good(&by, RECV_SZ, e)) {
			printf("FAIL %s: the bystander connection: %s\n", name, e);
			peer_close(&by);
			failed++;
			break;
		}
		if (i < sizeof(cases) / sizeof(cases[0])) {
			rc = peer_open_good(&p, cases[i].recv_max, e);
			if (rc) {
				msgf(m, "connect: %s", e);
				pass = false;
			} else {
				pass = cases[i].run(&p, m) == 0;
			}
			peer_close(&p);
		} else {
			pass = case_bad_private(m) == 0;
		}
		if (pass && null_call(&by, e)) {
			pass = false;
			appendf(m, "; but the bystander connection: %s", e);
		}
		peer_close(&by);
		if (pass && alive(e)) {
			pass = false;
			appendf(m, "; but a fresh connection: %s", e);
		}
		printf("%s %s: %s\n", pass ? "ok" : "FAIL", name, m);
		failed += !pass;
	}
	if (alive(e)) {
		printf("FAIL end: the server is not answering: %s\n", e);
		return 1;
	}
	printf("%s: %u of %zu cases failed; the server answers NULL calls\n",
	       failed ? "FAIL" : "ok", failed, sizeof(cases) / sizeof(cases[0]) + 1);
	return failed ? 1 : 0;
}
