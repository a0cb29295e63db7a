// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdma_hostile: an RPC-over-RDMA peer that breaks the rules, one way at
 * a time, against lacunad's RDMA port, and checks the server survives.
 *
 *   rdma_hostile HOST [PORT]        (PORT defaults to 20049)
 *   rdma_hostile --conn-limit N HOST [PORT]
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
 * With --conn-limit N, only this case runs, against a server that
 * allows N RDMA connections from us (max_rdma_connections_per_client,
 * or max_rdma_connections with nobody else connected), 1 to 64:
 *   conn_limit        N connections open and answer NULL calls; the
 *                     request for one more is refused (rejected, or
 *                     dropped before its NULL call is answered) and the
 *                     N still answer; once one of them is closed a new
 *                     connection is accepted (tried every 250 ms while
 *                     the server lets the closed one go, for up to
 *                     30 s) and answers, and one more is refused again.
 *                     The first of the N, opened first and checked
 *                     last, is the bystander. Its last line,
 *                     "rejected=R dropped=D", counts the requests the
 *                     server rejected and those it dropped at once.
 *
 * Output: one line per case, "ok CASE: what happened" or
 * "FAIL CASE: ...". Exit status 0 when every case passed and the server
 * is alive at the end, 1 otherwise, 2 usage, 77 when no RDMA device
 * can be used here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma_peer.h"
#include "xdr.h"

#define DEFAULT_PORT "20049"

#define OP_GETFH 10
#define OP_PUTROOTFH 24

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
		RP_NFS_PROGRAM,
		RP_NFS_V4,
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

/* ------------------------------------------------------------ cases */

/*
 * What the server did about a message it should refuse: ERR_CHUNK or
 * a disconnect pass (and ERR_VERS when @vers); an answer or silence fail.
 */
static int expect_refusal(struct rp_peer *p, bool vers, char *m)
{
	struct rp_rx rx;
	int rc;

	switch (rp_wait(p, RP_WAIT_MS, &rx)) {
	case RP_TIMEOUT:
		return rp_msgf(m, "no reaction in %d s (the message was silently dropped)",
			       RP_WAIT_MS / 1000);
	case RP_GONE:
		if (vers)
			return rp_msgf(m, "no ERR_VERS: %s", p->why);
		rp_msgf(m, "dropped the connection (%s)", p->why);
		return 0;
	case RP_MSG:
		break;
	}
	rc = rpcrdma_dec_hdr(rx.data, rx.len, &rp_hdr);
	if (rc)
		return rp_msgf(m, "answered with an undecodable header (%s)", strerror(-rc));
	if (rp_hdr.proc != RDMA_ERROR)
		return rp_msgf(m, "answered with transport procedure %u instead of refusing",
			       rp_hdr.proc);
	if (vers && rp_hdr.err != ERR_VERS)
		return rp_msgf(m, "RDMA_ERROR %u, not ERR_VERS", rp_hdr.err);
	if (vers) {
		rp_msgf(m, "RDMA_ERROR ERR_VERS (versions %u to %u)", rp_hdr.vers_low,
			rp_hdr.vers_high);
		return rp_hdr.vers_low <= 1 && rp_hdr.vers_high >= 1 ? 0 : -1;
	}
	rp_msgf(m, "RDMA_ERROR %s", rp_hdr.err == ERR_CHUNK ? "ERR_CHUNK" : "ERR_VERS");
	return rp_hdr.err == ERR_CHUNK ? 0 : -1;
}

static int send_or_fail(struct rp_peer *p, const void *b, size_t len, char *m)
{
	int rc = rp_send(p, b, len);

	return rc ? rp_msgf(m, "ibv_post_send: %s", strerror(-rc)) : 0;
}

static int case_bad_vers(struct rp_peer *p, char *m)
{
	uint8_t b[256];
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), rp_next_xid, 1, RDMA_MSG);

	xdr_put_u32(b + 4, 2);
	if (send_or_fail(p, b, (size_t)h + rp_enc_null(b + h, rp_next_xid++), m))
		return -1;
	return expect_refusal(p, true, m);
}

static int case_short_fixed(struct rp_peer *p, char *m)
{
	uint8_t b[16];

	rpcrdma_enc_hdr_plain(b, sizeof(b), rp_next_xid++, 1, RDMA_MSG);
	return send_or_fail(p, b, 12, m) ? -1 : expect_refusal(p, false, m);
}

static int case_short_list(struct rp_peer *p, char *m)
{
	uint8_t b[32];

	rpcrdma_enc_hdr_plain(b, sizeof(b), rp_next_xid++, 1, RDMA_MSG);
	xdr_put_u32(b + 16, 1); /* a read segment follows... and does not */
	xdr_put_u32(b + 20, 0);
	return send_or_fail(p, b, 24, m) ? -1 : expect_refusal(p, false, m);
}

static int obsolete(struct rp_peer *p, uint32_t proc, char *m)
{
	uint8_t b[256];
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), rp_next_xid, 1, RDMA_MSG);

	xdr_put_u32(b + 12, proc);
	if (proc == RDMA_MSGP) { /* align, threshold, then the lists and the call */
		memmove(b + 24, b + 16, (size_t)h - 16);
		xdr_put_u32(b + 16, 4);
		xdr_put_u32(b + 20, 1024);
		h += 8;
	}
	if (send_or_fail(p, b, (size_t)h + rp_enc_null(b + h, rp_next_xid++), m))
		return -1;
	return expect_refusal(p, false, m);
}

static int case_msgp(struct rp_peer *p, char *m)
{
	return obsolete(p, RDMA_MSGP, m);
}

static int case_done(struct rp_peer *p, char *m)
{
	return obsolete(p, RDMA_DONE, m);
}

static int case_read_segs(struct rp_peer *p, char *m)
{
	struct rpcrdma_seg segs[RPCRDMA_READ_SEGS_MAX + 1];
	uint32_t pos[RPCRDMA_READ_SEGS_MAX + 1];
	uint8_t *t = rp_target(p), b[RP_SEND_SZ];
	uint32_t xid = rp_next_xid++;
	unsigned int i;
	int h;

	/* a NULL call split into 4-byte position-zero segments: all readable */
	rp_enc_null(t, xid);
	for (i = 0; i <= RPCRDMA_READ_SEGS_MAX; i++) {
		segs[i] = (struct rpcrdma_seg){ .handle = p->mr->rkey,
						.length = 4,
						.offset = (uintptr_t)t + 4 * (i % 10) };
		pos[i] = 0;
	}
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_NOMSG, segs, pos,
				 RPCRDMA_READ_SEGS_MAX + 1, NULL, NULL, 0, NULL);
	if (h < 0)
		return rp_msgf(m, "rpcrdma_enc_call_hdr: %s", strerror(-h));
	return send_or_fail(p, b, (size_t)h, m) ? -1 : expect_refusal(p, false, m);
}

static int case_write_segs(struct rp_peer *p, char *m)
{
	struct rpcrdma_seg segs[RPCRDMA_CHUNK_SEGS_MAX + 1];
	struct rpcrdma_chunk wc = { .first = 0, .nsegs = RPCRDMA_CHUNK_SEGS_MAX + 1 };
	uint8_t b[RP_SEND_SZ];
	uint32_t xid = rp_next_xid++;
	unsigned int i;
	int h;

	for (i = 0; i <= RPCRDMA_CHUNK_SEGS_MAX; i++) {
		segs[i] = (struct rpcrdma_seg){ .handle = p->mr->rkey,
						.length = 512,
						.offset = (uintptr_t)rp_target(p) + 512 * i };
		wc.length += 512;
	}
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_MSG, NULL, NULL, 0, segs, &wc, 1, NULL);
	if (h < 0)
		return rp_msgf(m, "rpcrdma_enc_call_hdr: %s", strerror(-h));
	if (send_or_fail(p, b, (size_t)h + rp_enc_null(b + h, xid), m))
		return -1;
	return expect_refusal(p, false, m);
}

/* The whole call in a position-zero read chunk the server cannot read. */
static int bad_read(struct rp_peer *p, bool bad_key, char *m)
{
	uint8_t b[256];
	uint32_t xid = rp_next_xid++, pos = 0;
	struct rpcrdma_seg seg = { .handle = p->mr->rkey,
				   .length = (uint32_t)rp_enc_null(rp_target(p), xid),
				   .offset = (uintptr_t)rp_target(p) };
	int h;

	if (bad_key)
		seg.handle ^= 0x00ffff00;
	else
		seg.offset = (uintptr_t)p->mem + p->mem_len + (1 << 20);
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_NOMSG, &seg, &pos, 1, NULL, NULL, 0,
				 NULL);
	if (h < 0 || send_or_fail(p, b, (size_t)h, m))
		return rp_msgf(m, "cannot send the call");
	return expect_refusal(p, false, m);
}

static int case_read_bad_rkey(struct rp_peer *p, char *m)
{
	return bad_read(p, true, m);
}

static int case_read_bad_offset(struct rp_peer *p, char *m)
{
	return bad_read(p, false, m);
}

/* The big COMPOUND with a reply chunk over our target (handle spoilt when @bad). */
static int reply_chunk(struct rp_peer *p, bool bad, char *m)
{
	struct rpcrdma_seg seg = { .handle = p->mr->rkey,
				   .length = RP_TARGET_SZ,
				   .offset = (uintptr_t)rp_target(p) };
	struct rpcrdma_chunk rc = { .first = 0, .nsegs = 1, .length = RP_TARGET_SZ };
	uint8_t b[RP_SEND_SZ];
	uint32_t xid = rp_next_xid++, v[3];
	struct rp_rx rx;
	int h;

	if (bad)
		seg.handle ^= 0x00ffff00;
	h = rpcrdma_enc_call_hdr(b, sizeof(b), xid, 1, RDMA_MSG, NULL, NULL, 0, &seg, NULL, 0, &rc);
	if (h < 0 || send_or_fail(p, b, (size_t)h + enc_big_compound(b + h, xid), m))
		return rp_msgf(m, "cannot send the call");
	switch (rp_wait(p, RP_WAIT_MS, &rx)) {
	case RP_TIMEOUT:
		return rp_msgf(m, "no reaction in %d s", RP_WAIT_MS / 1000);
	case RP_GONE:
		if (!bad)
			return rp_msgf(m, "the connection ended (%s)", p->why);
		rp_msgf(m, "dropped the connection (%s)", p->why);
		return 0;
	case RP_MSG:
		break;
	}
	if (rpcrdma_dec_hdr(rx.data, rx.len, &rp_hdr))
		return rp_msgf(m, "answered with an undecodable header");
	if (bad && rp_hdr.proc == RDMA_ERROR) {
		rp_msgf(m, "RDMA_ERROR %s", rp_hdr.err == ERR_CHUNK ? "ERR_CHUNK" : "ERR_VERS");
		return 0;
	}
	if (rp_hdr.proc == RDMA_MSG)
		return rp_msgf(m, "a reply of %u bytes inline, past our 1 KiB receive size",
			       rx.len);
	if (bad)
		return rp_msgf(m, "transport procedure %u, though its RDMA Writes must have failed",
			       rp_hdr.proc);
	if (rp_hdr.proc != RDMA_NOMSG || !rp_hdr.has_reply || rp_hdr.xid != xid)
		return rp_msgf(
			m, "transport procedure %u (xid %#x), not RDMA_NOMSG with the reply chunk",
			rp_hdr.proc, rp_hdr.xid);
	if (rp_hdr.reply.length < 24 || rp_hdr.reply.length > RP_TARGET_SZ)
		return rp_msgf(m, "a reply chunk said to hold %llu bytes",
			       (unsigned long long)rp_hdr.reply.length);
	v[0] = xdr_get_u32(rp_target(p));
	v[1] = xdr_get_u32(rp_target(p) + 4);
	v[2] = xdr_get_u32(rp_target(p) + 8);
	if (v[0] != xid || v[1] != 1 || v[2] != 0)
		return rp_msgf(m, "the reply chunk does not hold the RPC reply (xid %#x type %u)",
			       v[0], v[1]);
	rp_msgf(m, "RDMA_NOMSG, %llu bytes of reply in the reply chunk",
		(unsigned long long)rp_hdr.reply.length);
	return 0;
}

static int case_reply_chunk_ok(struct rp_peer *p, char *m)
{
	return reply_chunk(p, false, m);
}

static int case_reply_bad_rkey(struct rp_peer *p, char *m)
{
	return reply_chunk(p, true, m);
}

static int case_credits(struct rp_peer *p, char *m)
{
	uint8_t b[256];
	unsigned int n, i, got = 0;
	struct rp_rx rx;
	char e[RP_MSG_MAX];

	if (rp_null_call(p, e))
		return rp_msgf(m, "first NULL call: %s", e);
	n = p->credits + 4;
	if (p->credits < 1 || n > RP_NSEND || n > RP_NRECV)
		return rp_msgf(m, "the server granted %u credits, more than this test sends",
			       p->credits);
	for (i = 0; i < n; i++) {
		uint32_t xid = rp_next_xid++;
		int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);

		if (send_or_fail(p, b, (size_t)h + rp_enc_null(b + h, xid), m))
			return -1;
	}
	for (;;) {
		switch (rp_wait(p, RP_WAIT_MS, &rx)) {
		case RP_TIMEOUT:
			return rp_msgf(m, "%u calls against %u credits: %u answered, then silence",
				       n, n - 4, got);
		case RP_GONE:
			rp_msgf(m, "%u calls against %u credits: %u answered, then %s", n, n - 4,
				got, p->why);
			return 0;
		case RP_MSG:
			if (!rpcrdma_dec_hdr(rx.data, rx.len, &rp_hdr) &&
			    rp_hdr.proc == RDMA_ERROR) {
				rp_msgf(m,
					"%u calls against %u credits: %u answered, then RDMA_ERROR",
					n, n - 4, got);
				return 0;
			}
			if (++got == n) {
				rp_msgf(m, "%u calls against %u credits: all answered (tolerated)",
					n, n - 4);
				return 0;
			}
		}
	}
}

static int case_big_send(struct rp_peer *p, char *m)
{
	uint8_t b[RP_SEND_SZ];
	uint32_t xid = rp_next_xid++, len = 2 * p->srv.recv_max;
	int h = rpcrdma_enc_hdr_plain(b, sizeof(b), xid, 1, RDMA_MSG);
	struct rp_rx rx;

	if (len > RP_SEND_SZ)
		len = RP_SEND_SZ;
	memset(b + h, 0, sizeof(b) - (size_t)h);
	rp_enc_null(b + h, xid);
	if (send_or_fail(p, b, len, m))
		return -1;
	switch (rp_wait(p, RP_WAIT_MS, &rx)) {
	case RP_TIMEOUT:
		return rp_msgf(m, "no reaction to a %u-byte Send in %d s", len, RP_WAIT_MS / 1000);
	case RP_GONE:
		rp_msgf(m, "a %u-byte Send (its inline receive is %u): %s", len, p->srv.recv_max,
			p->why);
		return 0;
	case RP_MSG:
		break;
	}
	return rp_msgf(m, "a %u-byte Send was answered (%u bytes): its receive size is not %u", len,
		       rx.len, p->srv.recv_max);
}

struct hcase {
	const char *name;
	int (*run)(struct rp_peer *p, char *m);
	uint32_t recv_max; /* our inline receive size on its connection */
};

static const struct hcase cases[] = {
	{ "bad_vers", case_bad_vers, RP_RECV_SZ },
	{ "short_fixed", case_short_fixed, RP_RECV_SZ },
	{ "short_list", case_short_list, RP_RECV_SZ },
	{ "msgp", case_msgp, RP_RECV_SZ },
	{ "done", case_done, RP_RECV_SZ },
	{ "read_segs", case_read_segs, RP_RECV_SZ },
	{ "write_segs", case_write_segs, RP_RECV_SZ },
	{ "read_bad_rkey", case_read_bad_rkey, RP_RECV_SZ },
	{ "read_bad_offset", case_read_bad_offset, RP_RECV_SZ },
	{ "reply_chunk_ok", case_reply_chunk_ok, 1024 },
	{ "reply_bad_rkey", case_reply_bad_rkey, 1024 },
	{ "credits", case_credits, RP_RECV_SZ },
	{ "big_send", case_big_send, RP_RECV_SZ },
};

/* Garbage private data: refused, or taken as none and the connection works. */
static int case_bad_private(char *m)
{
	uint8_t junk[40];
	struct rp_peer p;
	char e[RP_MSG_MAX];
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(0xa5 ^ (i * 37));
	rc = rp_open(&p, junk, sizeof(junk), e);
	if (rc == -ECONNREFUSED) {
		rp_close(&p);
		rp_msgf(m, "%s", e);
		return 0;
	}
	if (rc) {
		rp_close(&p);
		return rp_msgf(m, "connect: %s", e);
	}
	rc = rp_null_call(&p, e);
	if (rc)
		rp_msgf(m, "accepted, then %s", e);
	else
		rp_msgf(m, "accepted (server inline %u/%u), NULL call answered", p.srv.send_max,
			p.srv.recv_max);
	rp_close(&p);
	return rc;
}

/* A fresh connection answers a NULL call. */
static int alive(char *m)
{
	struct rp_peer p;
	char e[RP_MSG_MAX];
	int rc = rp_open_good(&p, RP_RECV_SZ, e);

	if (!rc)
		rc = rp_null_call(&p, e);
	rp_close(&p);
	return rc ? rp_msgf(m, "%s", e) : 0;
}

/* ------------------------------------------------------------ conn_limit */

#define LIMIT_MAX 64
#define LIMIT_RETRY_MS 250
#define LIMIT_RETRIES 120 /* 30 s for the server to let a closed connection go */

static unsigned int lim_rejected, lim_dropped;

/*
 * One more connection: 0 when it is open and answers a NULL call, 1 when
 * the server refused it (rejected, or dropped before answering), -ENODEV
 * without RDMA, -1 otherwise; @p stays open only on 0.
 */
static int lim_try(struct rp_peer *p, char *m)
{
	char e[RP_MSG_MAX];
	int rc = rp_open_good(p, RP_RECV_SZ, e);

	if (!rc && !rp_null_call(p, e))
		return 0;
	if (rc == -ECONNREFUSED) {
		lim_rejected++;
		rp_msgf(m, "%s", e);
		rc = 1;
	} else if (!rc && !p->connected) {
		lim_dropped++;
		rp_msgf(m, "accepted, then %s", e);
		rc = 1;
	} else {
		rp_msgf(m, "%s", e);
		rc = rc == -ENODEV ? -ENODEV : -1;
	}
	rp_close(p);
	return rc;
}

/* Every one of @c[0..@n) answers a NULL call. */
static int lim_all_answer(struct rp_peer *c, unsigned int n, char *m)
{
	char e[RP_MSG_MAX];
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rp_null_call(&c[i], e))
			return rp_msgf(m, "connection %u%s: %s", i + 1, i ? "" : " (the bystander)",
				       e);
	return 0;
}

/* The request for connection @n + 1 is refused. */
static int lim_refused(unsigned int n, char *m)
{
	struct rp_peer p;
	char e[RP_MSG_MAX];
	int rc = lim_try(&p, e);

	if (rc == 1) {
		rp_msgf(m, "%s", e);
		return 0;
	}
	if (!rc) {
		rp_close(&p);
		return rp_msgf(m,
			       "connection %u accepted and answered a NULL call: the limit of %u "
			       "is not enforced",
			       n + 1, n);
	}
	return rp_msgf(m, "connection %u: %s", n + 1, e);
}

static int case_conn_limit(unsigned int n, char *m)
{
	struct rp_peer c[LIMIT_MAX];
	char e[RP_MSG_MAX];
	unsigned int nopen, tries;
	int rc, ret = -1;

	for (nopen = 0; nopen < n; nopen++) {
		rc = lim_try(&c[nopen], e);
		if (rc == -ENODEV && !nopen) {
			rp_msgf(m, "%s", e);
			return -ENODEV;
		}
		if (rc) {
			rp_msgf(m, "connection %u of the %u allowed: %s", nopen + 1, n, e);
			goto out;
		}
	}
	if (lim_refused(n, e)) {
		rp_msgf(m, "%u connections open; %s", n, e);
		goto out;
	}
	rp_msgf(m, "%u connections open; connection %u refused (%s)", n, n + 1, e);
	if (lim_all_answer(c, n, e)) {
		rp_appendf(m, "; but then %s", e);
		goto out;
	}
	rp_appendf(m, "; the %u still answer", n);
	/* the last one closed: its place is free once the server let it go */
	rp_close(&c[--nopen]);
	for (tries = 1;; tries++) {
		rc = lim_try(&c[nopen], e);
		if (!rc)
			break;
		if (rc < 0 || tries == LIMIT_RETRIES) {
			rp_appendf(m, "; one closed, but no new connection in %u tries: %s", tries,
				   e);
			goto out;
		}
		usleep(LIMIT_RETRY_MS * 1000);
	}
	nopen++;
	rp_appendf(m, "; one closed, a new one accepted (try %u)", tries);
	if (lim_refused(n, e)) {
		rp_appendf(m, "; but then %s", e);
		goto out;
	}
	rp_appendf(m, "; connection %u refused again", n + 1);
	if (lim_all_answer(c, n, e)) {
		rp_appendf(m, "; but then %s", e);
		goto out;
	}
	ret = 0;
out:
	while (nopen)
		rp_close(&c[--nopen]);
	return ret;
}

static int conn_limit_main(const char *arg)
{
	char m[RP_MSG_MAX], *end;
	unsigned long n = strtoul(arg, &end, 10);
	int rc;

	if (*end || n < 1 || n > LIMIT_MAX) {
		fprintf(stderr, "rdma_hostile: --conn-limit: 1 to %d, not %s\n", LIMIT_MAX, arg);
		return 2;
	}
	rc = case_conn_limit((unsigned int)n, m);
	if (rc == -ENODEV) {
		printf("SKIP: no RDMA here (%s)\n", m);
		return 77;
	}
	printf("%s conn_limit: %s\n", rc ? "FAIL" : "ok", m);
	printf("rejected=%u dropped=%u\n", lim_rejected, lim_dropped);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	char m[RP_MSG_MAX], e[RP_MSG_MAX];
	struct rp_peer p, by;
	unsigned int i, failed = 0;
	const char *limit = NULL;
	int rc;

	if (argc > 2 && !strcmp(argv[1], "--conn-limit")) {
		limit = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: rdma_hostile [--conn-limit N] HOST [PORT]\n");
		return 2;
	}
	rp_host = argv[1];
	rp_port = argc > 2 ? argv[2] : DEFAULT_PORT;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (limit)
		return conn_limit_main(limit);

	rc = rp_open_good(&p, RP_RECV_SZ, e);
	if (rc == -ENODEV) {
		printf("SKIP: no RDMA here (%s)\n", e);
		return 77;
	}
	if (!rc)
		rc = rp_null_call(&p, e);
	rp_close(&p);
	if (rc) {
		printf("FAIL setup: the server does not answer a NULL call: %s\n", e);
		return 1;
	}
	for (i = 0; i <= sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name =
			i < sizeof(cases) / sizeof(cases[0]) ? cases[i].name : "bad_private";
		bool pass;

		if (rp_open_good(&by, RP_RECV_SZ, e)) {
			printf("FAIL %s: the bystander connection: %s\n", name, e);
			rp_close(&by);
			failed++;
			break;
		}
		if (i < sizeof(cases) / sizeof(cases[0])) {
			rc = rp_open_good(&p, cases[i].recv_max, e);
			if (rc) {
				rp_msgf(m, "connect: %s", e);
				pass = false;
			} else {
				pass = cases[i].run(&p, m) == 0;
			}
			rp_close(&p);
		} else {
			pass = case_bad_private(m) == 0;
		}
		if (pass && rp_null_call(&by, e)) {
			pass = false;
			rp_appendf(m, "; but the bystander connection: %s", e);
		}
		rp_close(&by);
		if (pass && alive(e)) {
			pass = false;
			rp_appendf(m, "; but a fresh connection: %s", e);
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
