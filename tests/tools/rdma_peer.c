// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdma_peer: the RPC-over-RDMA client side of the RDMA test tools. It
 * connects to a server's RDMA port with librdmacm (RFC 8797 private
 * data or whatever the caller passes), registers one buffer for its
 * sends, its receives and a target the server may read or write, sends
 * messages, waits for the server's next message or the end of the
 * connection, and makes and checks an RPC NULL call.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../tools/rdma_cm.h"
#include "rdma_peer.h"
#include "xdr.h"

#define WR_SEND 1ULL
#define WR_RECV 2ULL

const char *rp_host, *rp_port;
uint32_t rp_next_xid = 0x4c430000;
struct rpcrdma_hdr rp_hdr;

int rp_msgf(char *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, RP_MSG_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

/* Append to the message @m. */
void rp_appendf(char *m, const char *fmt, ...)
{
	size_t n = strlen(m);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m + n, RP_MSG_MAX - n, fmt, ap);
	va_end(ap);
}

static uint8_t *send_buf(struct rp_peer *p, unsigned int i)
{
	return p->mem + (size_t)i * RP_SEND_SZ;
}

static uint8_t *recv_buf(struct rp_peer *p, unsigned int i)
{
	return p->mem + (size_t)RP_NSEND * RP_SEND_SZ + (size_t)i * RP_RECV_SZ;
}

uint8_t *rp_target(struct rp_peer *p)
{
	return p->mem + (size_t)RP_NSEND * RP_SEND_SZ + (size_t)RP_NRECV * RP_RECV_SZ;
}

/* ------------------------------------------------------------ connections */

static int post_recv(struct rp_peer *p, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_buf(p, i),
			       .length = RP_RECV_SZ,
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV << 32 | i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

void rp_close(struct rp_peer *p)
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
static int cm_expect(struct rp_peer *p, enum rdma_cm_event_type want, uint8_t *priv, size_t *plen,
		     char *m)
{
	enum rdma_cm_event_type got;
	int rc, status;

	rc = rdma_cm_next(p->ec, RP_WAIT_MS, want, priv, plen, &got, &status);
	if (rc == -ETIMEDOUT)
		return rp_msgf(m, "no %s in %d s", rdma_event_str(want), RP_WAIT_MS / 1000);
	if (rc)
		return rp_msgf(m, "waiting for %s: %s", rdma_event_str(want), strerror(-rc));
	if (got == want)
		return 0;
	if (got == RDMA_CM_EVENT_REJECTED) {
		rp_msgf(m, "connection rejected (reason %d)", status);
		return -ECONNREFUSED;
	}
	return rp_msgf(m, "%s (status %d) instead of %s", rdma_event_str(got), status,
		       rdma_event_str(want));
}

/*
 * Connect with @priv (@plen bytes) as private data. 0, -ECONNREFUSED
 * when the server rejected us, -ENODEV when there is no RDMA here, -1
 * otherwise; a message in @m.
 */
int rp_open(struct rp_peer *p, const void *priv, size_t plen, char *m)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = RP_NSEND,
						.max_recv_wr = RP_NRECV,
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
	if (getaddrinfo(rp_host, rp_port, &hints, &ai))
		return rp_msgf(m, "getaddrinfo %s: cannot resolve", rp_host);
	p->ec = rdma_create_event_channel();
	if (!p->ec) {
		freeaddrinfo(ai);
		rp_msgf(m, "rdma_create_event_channel: %s", strerror(errno));
		return -ENODEV;
	}
	if (rdma_create_id(p->ec, &p->id, p, RDMA_PS_TCP)) {
		p->id = NULL;
		freeaddrinfo(ai);
		return rp_msgf(m, "rdma_create_id: %s", strerror(errno));
	}
	rc = rdma_resolve_addr(p->id, NULL, ai->ai_addr, 5000);
	freeaddrinfo(ai);
	if (rc)
		return rp_msgf(m, "rdma_resolve_addr: %s", strerror(errno));
	if (cm_expect(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL, m))
		return -1;
	if (rdma_resolve_route(p->id, 5000))
		return rp_msgf(m, "rdma_resolve_route: %s", strerror(errno));
	if (cm_expect(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, m))
		return -1;
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->ch = p->pd ? ibv_create_comp_channel(p->id->verbs) : NULL;
	p->cq = p->ch ? ibv_create_cq(p->id->verbs, RP_NSEND + RP_NRECV, NULL, p->ch, 0) : NULL;
	if (!p->cq)
		return rp_msgf(m, "ibv_alloc_pd/ibv_create_comp_channel/ibv_create_cq: %s",
			       strerror(errno));
	qa.send_cq = qa.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return rp_msgf(m, "rdma_create_qp: %s", strerror(errno));
	p->mem_len = (size_t)RP_NSEND * RP_SEND_SZ + (size_t)RP_NRECV * RP_RECV_SZ + RP_TARGET_SZ;
	p->mem = calloc(1, p->mem_len);
	if (!p->mem)
		return rp_msgf(m, "calloc: %s", strerror(ENOMEM));
	p->mr = ibv_reg_mr(p->pd, p->mem, p->mem_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr)
		return rp_msgf(m, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < RP_NRECV; i++)
		if ((rc = post_recv(p, i)))
			return rp_msgf(m, "ibv_post_recv: %s", strerror(rc));
	if (rdma_connect(p->id, &cp))
		return rp_msgf(m, "rdma_connect: %s", strerror(errno));
	rc = cm_expect(p, RDMA_CM_EVENT_ESTABLISHED, spriv, &splen, m);
	if (rc)
		return rc;
	p->connected = true;
	rpcrdma_cm_priv_dec(spriv, splen, &p->srv);
	return 0;
}

/* A connection with well-formed private data (our inline sizes: @recv_max). */
int rp_open_good(struct rp_peer *p, uint32_t recv_max, char *m)
{
	struct rpcrdma_cm_priv mine = { .send_max = RP_RECV_SZ, .recv_max = recv_max };
	uint8_t priv[RPCRDMA_CM_PRIV_LEN];

	rpcrdma_cm_priv_enc(priv, &mine);
	return rp_open(p, priv, sizeof(priv), m);
}

int rp_send(struct rp_peer *p, const void *buf, size_t len)
{
	unsigned int i = p->next_send++ % RP_NSEND;
	struct ibv_sge sge = { .addr = (uintptr_t)send_buf(p, i),
			       .length = (uint32_t)len,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND << 32 | i,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (len > RP_SEND_SZ)
		return -EMSGSIZE;
	memcpy(send_buf(p, i), buf, len);
	return -ibv_post_send(p->id->qp, &wr, &bad);
}

/* The next message from the server, the end of the connection, or silence. */
enum rp_rx_kind rp_wait(struct rp_peer *p, int ms, struct rp_rx *rx)
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
			return RP_GONE;
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
				return RP_GONE;
			}
			if (wc.wr_id >> 32 != WR_RECV)
				continue;
			rx->len = wc.byte_len;
			memcpy(rx->data, recv_buf(p, i), wc.byte_len);
			post_recv(p, i);
			if (rx->len >= RPCRDMA_HDR_FIXED)
				p->credits = xdr_get_u32(rx->data + 8);
			return RP_MSG;
		}
		if (n < 0) {
			snprintf(p->why, sizeof(p->why), "ibv_poll_cq failed");
			p->connected = false;
			return RP_GONE;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = ms -
		       ((t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0)
			return RP_TIMEOUT;
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
							return RP_MSG;
						}
					}
					p->connected = false;
					return RP_GONE;
				}
			}
		}
		if (pf[0].revents & POLLIN && !ibv_get_cq_event(p->ch, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

/* ------------------------------------------------------------ messages */

/* An RPC NULL call to NFSv4 with AUTH_NONE: 40 bytes at @b. */
size_t rp_enc_null(uint8_t *b, uint32_t xid)
{
	const uint32_t w[] = { xid, 0 /* CALL */, 2, RP_NFS_PROGRAM, RP_NFS_V4, 0, 0, 0, 0, 0 };
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		xdr_put_u32(b + 4 * i, w[i]);
	return sizeof(w);
}

/* Is @rx an RDMA_MSG with an accepted, successful RPC reply to @xid? */
int rp_check_reply(const struct rp_rx *rx, uint32_t xid, char *m)
{
	struct xdr_in x;
	uint32_t v[4], vlen, st;
	int rc = rpcrdma_dec_hdr(rx->data, rx->len, &rp_hdr);

	if (rc)
		return rp_msgf(m, "an undecodable transport header (%s)", strerror(-rc));
	if (rp_hdr.proc == RDMA_ERROR)
		return rp_msgf(m, "RDMA_ERROR %s",
			       rp_hdr.err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
	if (rp_hdr.proc != RDMA_MSG)
		return rp_msgf(m, "transport procedure %u, not RDMA_MSG", rp_hdr.proc);
	if (rp_hdr.xid != xid)
		return rp_msgf(m, "a reply with xid %#x to %#x", rp_hdr.xid, xid);
	xdr_in_init(&x, rx->data + rp_hdr.hdr_len, rx->len - rp_hdr.hdr_len);
	if (xdr_dec_u32(&x, &v[0]) || xdr_dec_u32(&x, &v[1]) || xdr_dec_u32(&x, &v[2]) ||
	    xdr_dec_u32(&x, &v[3]) || xdr_dec_u32(&x, &vlen) || xdr_dec_skip(&x, vlen) ||
	    xdr_dec_u32(&x, &st))
		return rp_msgf(m, "a truncated RPC reply");
	if (v[0] != xid || v[1] != 1 || v[2] != 0 || st != 0)
		return rp_msgf(m, "RPC reply xid %#x type %u stat %u accept_stat %u", v[0], v[1],
			       v[2], st);
	return 0;
}

/* A NULL call on @p and its answer. */
int rp_null_call(struct rp_peer *p, char *m)
{
	uint8_t b[256];
	uint32_t xid = rp_next_xid++;
	struct rp_rx rx;
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);

	if (h < 0 || rp_send(p, b, (size_t)h + rp_enc_null(b + h, xid)))
		return rp_msgf(m, "cannot post the NULL call");
	switch (rp_wait(p, RP_WAIT_MS, &rx)) {
	case RP_TIMEOUT:
		return rp_msgf(m, "no answer to a NULL call in %d s", RP_WAIT_MS / 1000);
	case RP_GONE:
		return rp_msgf(m, "the NULL call ended the connection (%s)", p->why);
	case RP_MSG:
		break;
	}
	return rp_check_reply(&rx, xid, m);
}
