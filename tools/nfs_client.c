// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc, the client: calls encoded into one bounded buffer, session
 * setup and teardown, lookup and OPEN, I/O calls on the session's slots
 * and the two range walkers. How it all fits is the Operation essay in
 * nfs_client.h; replies are decoded with nfs_client_dec.c's checked
 * decoders over common/xdr.h's bounded cursor.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfs4.h"
#include "nfs_client_priv.h"

static const char *const op_names[] = {
	[OP_CLOSE] = "CLOSE",
	[OP_DELEGRETURN] = "DELEGRETURN",
	[OP_GETATTR] = "GETATTR",
	[OP_GETFH] = "GETFH",
	[OP_LOOKUP] = "LOOKUP",
	[OP_OPEN] = "OPEN",
	[OP_PUTFH] = "PUTFH",
	[OP_PUTROOTFH] = "PUTROOTFH",
	[OP_READ] = "READ",
	[OP_EXCHANGE_ID] = "EXCHANGE_ID",
	[OP_CREATE_SESSION] = "CREATE_SESSION",
	[OP_DESTROY_SESSION] = "DESTROY_SESSION",
	[OP_SEQUENCE] = "SEQUENCE",
	[OP_DESTROY_CLIENTID] = "DESTROY_CLIENTID",
	[OP_RECLAIM_COMPLETE] = "RECLAIM_COMPLETE",
	[OP_READ_PLUS] = "READ_PLUS",
	[OP_SEEK] = "SEEK",
};

const char *nfsc_op_name(uint32_t op)
{
	return op < sizeof(op_names) / sizeof(op_names[0]) && op_names[op] ? op_names[op] : "op";
}

int nfsc_fail(struct nfsc *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* "NFS4ERR_ACCESS (Permission denied)", or the bare name */
const char *nfsc_stat_text(uint32_t st, char *buf, size_t len)
{
	int e = nfsc_stat_errno(st);

	if (e)
		snprintf(buf, len, "%s (%s)", nfsc_stat_name(st), strerror(e));
	else
		snprintf(buf, len, "%s", nfsc_stat_name(st));
	return buf;
}

/* An operation failed with @st: -EREMOTEIO, "WHAT: NFS4ERR_..." */
int nfsc_fail_stat(struct nfsc *c, uint32_t st, const char *what)
{
	char t[96];

	c->status = st;
	return nfsc_fail(c, -EREMOTEIO, "%s: %s", what, nfsc_stat_text(st, t, sizeof(t)));
}

void nfsc_note(struct nfsc *c, const char *fmt, ...)
{
	char msg[NFSC_ERR_MAX];
	va_list ap;

	if (!c->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->note(c->note_arg, msg);
}

/* ------------------------------------------------------------ encoding */

void nfsc_put32(struct nfsc_enc *e, uint32_t v)
{
	if (e->over || sizeof(e->buf) - e->len < 4) {
		e->over = true;
		return;
	}
	xdr_put_u32(e->buf + e->len, v);
	e->len += 4;
}

void nfsc_put64(struct nfsc_enc *e, uint64_t v)
{
	nfsc_put32(e, (uint32_t)(v >> 32));
	nfsc_put32(e, (uint32_t)v);
}

void nfsc_put_fixed(struct nfsc_enc *e, const void *p, size_t n)
{
	if (e->over || n > sizeof(e->buf) || XDR_ALIGN(n) > sizeof(e->buf) - e->len) {
		e->over = true;
		return;
	}
	memcpy(e->buf + e->len, p, n);
	memset(e->buf + e->len + n, 0, XDR_PAD(n));
	e->len += XDR_ALIGN(n);
}

void nfsc_put_opaque(struct nfsc_enc *e, const void *p, uint32_t n)
{
	nfsc_put32(e, n);
	nfsc_put_fixed(e, p, n);
}

void nfsc_put_op(struct nfsc_enc *e, uint32_t op)
{
	nfsc_put32(e, op);
	e->nops++;
}

/* RPC call header (AUTH_SYS) and COMPOUND4args up to its op count. */
struct nfsc_enc *nfsc_call_begin(struct nfsc *c, uint32_t *xid)
{
	struct nfsc_enc *e = &c->enc;
	uint32_t mlen = (uint32_t)strlen(c->machine), i;

	e->len = 0;
	e->nops = 0;
	e->ddp_read = 0;
	e->over = false;
	*xid = ++c->xid;
	nfsc_put32(e, *xid);
	nfsc_put32(e, RPC_CALL);
	nfsc_put32(e, RPC_VERS);
	nfsc_put32(e, NFS4_PROGRAM);
	nfsc_put32(e, NFS4_VERSION);
	nfsc_put32(e, NFS4_PROC_COMPOUND);
	nfsc_put32(e, RPC_AUTH_SYS);
	nfsc_put32(e, 4 + 4 + XDR_ALIGN(mlen) + 4 + 4 + 4 + 4 * c->ngids);
	nfsc_put32(e, 0); /* stamp */
	nfsc_put_opaque(e, c->machine, mlen);
	nfsc_put32(e, c->uid);
	nfsc_put32(e, c->gid);
	nfsc_put32(e, c->ngids);
	for (i = 0; i < c->ngids; i++)
		nfsc_put32(e, c->gids[i]);
	nfsc_put32(e, RPC_AUTH_NONE); /* verifier */
	nfsc_put32(e, 0);
	nfsc_put32(e, 0); /* empty tag */
	nfsc_put32(e, c->minor);
	e->nops_at = e->len;
	nfsc_put32(e, 0);
	return e;
}

void nfsc_op_sequence(struct nfsc *c, struct nfsc_enc *e, unsigned int slot)
{
	nfsc_put_op(e, OP_SEQUENCE);
	nfsc_put_fixed(e, c->sessionid, NFSC_SESSIONID_SIZE);
	nfsc_put32(e, ++c->slot[slot].seq);
	nfsc_put32(e, slot);
	nfsc_put32(e, c->nslots - 1); /* highest slot in use */
	nfsc_put32(e, 0);	      /* cachethis */
}

void nfsc_op_putfh(struct nfsc_enc *e, const struct nfsc_file *f)
{
	nfsc_put_op(e, OP_PUTFH);
	nfsc_put_opaque(e, f->fh, f->fh_len);
}

int nfsc_call_send(struct nfsc *c, struct nfsc_enc *e)
{
	struct iovec iov = { .iov_base = e->buf, .iov_len = e->len };
	int rc;

	if (e->over)
		return nfsc_fail(c, -EMSGSIZE, "a call longer than %d bytes", NFSC_CALL_MAX);
	if (c->dead)
		return nfsc_fail(c, -ENOTCONN, "the connection is lost");
	xdr_put_u32(e->buf + e->nops_at, e->nops);
	rc = c->t->ops->send(c->t, &iov, 1, e->ddp_read);
	if (rc) {
		c->dead = true;
		return nfsc_fail(c, rc, "%s", c->t->err);
	}
	return 0;
}

/* ------------------------------------------------------------ replies */

int nfsc_reply_recv(struct nfsc *c, struct nfsc_reply *r)
{
	const uint8_t *msg, *tag;
	size_t len;
	uint32_t tlen;
	int rc;

	if (c->dead)
		return nfsc_fail(c, -ENOTCONN, "the connection is lost");
	rc = c->t->ops->recv(c->t, &msg, &len);
	if (rc) {
		c->dead = true;
		return nfsc_fail(c, rc, "%s", c->t->err);
	}
	xdr_in_init(&r->x, msg, len);
	rc = nfsc_dec_rpc_reply(&r->x, &r->xid, c->err, sizeof(c->err));
	if (rc)
		return rc;
	if (xdr_dec_u32(&r->x, &r->status) || xdr_dec_opaque(&r->x, &tag, &tlen, NFSC_OPAQUE_MAX) ||
	    xdr_dec_count(&r->x, &r->nres, NFS4_OPS_MAX, 8))
		return nfsc_fail(c, -EBADMSG,
				 "COMPOUND reply truncated or malformed in its header");
	return 0;
}

/* One call on its own, nothing else in flight. */
int nfsc_call_sync(struct nfsc *c, struct nfsc_enc *e, uint32_t xid, struct nfsc_reply *r)
{
	int rc;

	if (c->inflight)
		return nfsc_fail(c, -EBUSY, "a call while I/O is in flight");
	rc = nfsc_call_send(c, e);
	if (!rc)
		rc = nfsc_reply_recv(c, r);
	if (!rc && r->xid != xid) {
		c->dead = true; /* nothing said on this connection can be trusted */
		rc = nfsc_fail(c, -EPROTO, "a reply with xid %#" PRIx32 " to call %#" PRIx32,
			       r->xid, xid);
	}
	return rc;
}

/* The next result: its op must be @op (or OP_ILLEGAL); its status in *st. */
int nfsc_reply_op(struct nfsc *c, struct nfsc_reply *r, uint32_t op, uint32_t *st)
{
	uint32_t resop;

	if (!r->nres)
		return nfsc_fail(c, -EPROTO, "%s: no result in the reply (COMPOUND status %s)",
				 nfsc_op_name(op), nfsc_stat_name(r->status));
	r->nres--;
	if (xdr_dec_u32(&r->x, &resop) || xdr_dec_u32(&r->x, st))
		return nfsc_fail(c, -EBADMSG, "%s: reply truncated", nfsc_op_name(op));
	if (resop == OP_ILLEGAL) {
		*st = NFS4ERR_OP_ILLEGAL;
		return 0;
	}
	if (resop != op)
		return nfsc_fail(c, -EPROTO,
				 "%s: the reply holds the result of op %" PRIu32 " instead",
				 nfsc_op_name(op), resop);
	return 0;
}

int nfsc_reply_ok(struct nfsc *c, struct nfsc_reply *r, uint32_t op)
{
	uint32_t st;
	int rc = nfsc_reply_op(c, r, op, &st);

	if (!rc && st)
		rc = nfsc_fail_stat(c, st, nfsc_op_name(op));
	return rc;
}

int nfsc_truncated(struct nfsc *c, uint32_t op)
{
	return nfsc_fail(c, -EBADMSG, "%s: reply truncated or malformed", nfsc_op_name(op));
}

int nfsc_dec_sequence(struct nfsc *c, struct nfsc_reply *r, unsigned int slot)
{
	uint8_t sid[NFSC_SESSIONID_SIZE];
	uint32_t seq, sl, hi, target, flags;
	int rc = nfsc_reply_ok(c, r, OP_SEQUENCE);

	if (rc)
		return rc;
	if (xdr_dec_opaque_fixed_copy(&r->x, sid, sizeof(sid)) || xdr_dec_u32(&r->x, &seq) ||
	    xdr_dec_u32(&r->x, &sl) || xdr_dec_u32(&r->x, &hi) || xdr_dec_u32(&r->x, &target) ||
	    xdr_dec_u32(&r->x, &flags))
		return nfsc_truncated(c, OP_SEQUENCE);
	if (memcmp(sid, c->sessionid, sizeof(sid)) || sl != slot || seq != c->slot[slot].seq)
		return nfsc_fail(c, -EPROTO,
				 "SEQUENCE: the reply is for slot %" PRIu32 " seqid %" PRIu32
				 " (or another session); the call was for slot %u seqid %" PRIu32,
				 sl, seq, slot, c->slot[slot].seq);
	return 0;
}

int nfsc_dec_bitmap(struct xdr_in *x, uint32_t *w, uint32_t *n)
{
	uint32_t i, v;

	if (xdr_dec_count(x, n, NFSC_BITMAP_MAX, 4))
		return -EBADMSG;
	for (i = 0; i < *n; i++) {
		(void)xdr_dec_u32(x, &v); /* the count was checked against the bytes left */
		if (w)
			w[i] = v;
	}
	return 0;
}

int nfsc_skip_opaque(struct xdr_in *x, uint32_t max)
{
	const uint8_t *p;
	uint32_t n;

	return xdr_dec_opaque(x, &p, &n, max);
}

/* ------------------------------------------------------------ session */

int nfsc_create(struct nfsc **out)
{
	struct nfsc *c = calloc(1, sizeof(*c));
	gid_t g[RPC_AUTH_SYS_GIDS_MAX];
	int n, i;

	if (!c)
		return -ENOMEM;
	c->segs = calloc(NFSC_RP_SEGS_MAX, sizeof(*c->segs));
	if (!c->segs) {
		free(c);
		return -ENOMEM;
	}
	c->minor = 2;
	c->xid = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	if (gethostname(c->machine, sizeof(c->machine) - 1) || !c->machine[0])
		strcpy(c->machine, "localhost");
	c->uid = (uint32_t)getuid();
	c->gid = (uint32_t)getgid();
	n = getgroups(RPC_AUTH_SYS_GIDS_MAX, g);
	for (i = 0; i < n; i++)
		c->gids[c->ngids++] = (uint32_t)g[i];
	*out = c;
	return 0;
}

void nfsc_attach(struct nfsc *c, struct nfsc_xprt *t)
{
	c->t = t;
}

int nfsc_connect(struct nfsc *c, const char *host, const char *port)
{
	int rc = nfsc_tcp_connect(host, port, NFSC_REC_MAX, &c->t, c->err, sizeof(c->err));

	if (rc)
		c->t = NULL;
	return rc;
}

void nfsc_set_note(struct nfsc *c, void (*fn)(void *arg, const char *msg), void *arg)
{
	c->note = fn;
	c->note_arg = arg;
}

const char *nfsc_error(const struct nfsc *c)
{
	return c->err;
}

uint32_t nfsc_status(const struct nfsc *c)
{
	return c->status;
}

uint32_t nfsc_minor(const struct nfsc *c)
{
	return c->minor;
}

unsigned int nfsc_slots(const struct nfsc *c)
{
	return c->nslots;
}

const struct nfsc_xprt *nfsc_xprt(const struct nfsc *c)
{
	return c->t;
}

static int dec_exchange_id(struct nfsc *c, struct nfsc_reply *r)
{
	uint32_t flags, how, n, i, v;
	uint64_t v64;
	struct xdr_in *x = &r->x;

	if (xdr_dec_u64(x, &c->clientid) || xdr_dec_u32(x, &c->cs_seq))
		return nfsc_truncated(c, OP_EXCHANGE_ID);
	c->have_client = true;
	if (xdr_dec_u32(x, &flags) || xdr_dec_u32(x, &how))
		return nfsc_truncated(c, OP_EXCHANGE_ID);
	if (how == SP4_MACH_CRED) {
		if (nfsc_dec_bitmap(x, NULL, &n) || nfsc_dec_bitmap(x, NULL, &n))
			return nfsc_truncated(c, OP_EXCHANGE_ID);
	} else if (how != SP4_NONE) {
		return nfsc_fail(c, -EPROTO,
				 "EXCHANGE_ID: the server insists on state protection %" PRIu32,
				 how);
	}
	/* server_owner4, server scope, implementation id */
	if (xdr_dec_u64(x, &v64) || nfsc_skip_opaque(x, NFSC_OPAQUE_MAX) ||
	    nfsc_skip_opaque(x, NFSC_OPAQUE_MAX) || xdr_dec_count(x, &n, NFS4_IMPL_ID_MAX, 20))
		return nfsc_truncated(c, OP_EXCHANGE_ID);
	for (i = 0; i < n; i++)
		if (nfsc_skip_opaque(x, NFSC_OPAQUE_MAX) || nfsc_skip_opaque(x, NFSC_OPAQUE_MAX) ||
		    xdr_dec_u64(x, &v64) || xdr_dec_u32(x, &v))
			return nfsc_truncated(c, OP_EXCHANGE_ID);
	return 0;
}

static int exchange_id(struct nfsc *c)
{
	char owner[NFSC_OWNER_MAX];
	uint8_t verf[NFS4_VERIFIER_SIZE];
	struct timespec ts;
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid;
	int len, rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	len = snprintf(owner, sizeof(owner), "lacuna/%s/%ld/%lld.%09ld", c->machine, (long)getpid(),
		       (long long)ts.tv_sec, ts.tv_nsec);
	xdr_put_u32(verf, (uint32_t)ts.tv_sec);
	xdr_put_u32(verf + 4, (uint32_t)ts.tv_nsec);
	for (;;) {
		e = nfsc_call_begin(c, &xid);
		nfsc_put_op(e, OP_EXCHANGE_ID);
		nfsc_put_fixed(e, verf, sizeof(verf));
		nfsc_put_opaque(e, owner, (uint32_t)len);
		nfsc_put32(e, 0); /* flags */
		nfsc_put32(e, SP4_NONE);
		nfsc_put32(e, 0); /* no implementation id */
		rc = nfsc_call_sync(c, e, xid, &r);
		if (rc)
			return rc;
		if (r.status != NFS4ERR_MINOR_VERS_MISMATCH || r.nres || c->minor != 2)
			break;
		c->minor = 1;
		nfsc_note(
			c,
			"the server does not speak NFSv4.2: using NFSv4.1 (no READ_PLUS, no SEEK)");
	}
	rc = nfsc_reply_ok(c, &r, OP_EXCHANGE_ID);
	return rc ? rc : dec_exchange_id(c, &r);
}

/* channel_attrs4 without RDMA: headerpadsize 0, the five sizes, no rdma_ird */
static void put_chan_attrs(struct nfsc_enc *e, uint32_t req, uint32_t resp, uint32_t cached,
			   uint32_t ops, uint32_t reqs)
{
	const uint32_t v[] = { 0, req, resp, cached, ops, reqs, 0 };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		nfsc_put32(e, v[i]);
}

/* channel_attrs4: fills v[6] with its fixed words */
static int dec_chan_attrs(struct xdr_in *x, uint32_t *v)
{
	uint32_t i, n, ird;

	for (i = 0; i < 6; i++)
		if (xdr_dec_u32(x, &v[i]))
			return -EBADMSG;
	if (xdr_dec_count(x, &n, 1, 4))
		return -EBADMSG;
	return n ? xdr_dec_u32(x, &ird) : 0;
}

static int create_session(struct nfsc *c)
{
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid, seq, flags, fore[6], back[6], resp;
	int rc;

	e = nfsc_call_begin(c, &xid);
	nfsc_put_op(e, OP_CREATE_SESSION);
	nfsc_put64(e, c->clientid);
	nfsc_put32(e, c->cs_seq);
	nfsc_put32(e, 0); /* no persistence, no back channel on this connection */
	put_chan_attrs(e, NFSC_CALL_MAX, NFSC_REC_MAX, NFSC_CACHED_MAX, NFSC_MAXOPS,
		       NFSC_SLOTS_MAX);
	put_chan_attrs(e, 4096, 4096, 0, 2, 1);
	nfsc_put32(e, NFSC_CB_PROGRAM);
	nfsc_put32(e, 1); /* one callback security flavor: */
	nfsc_put32(e, RPC_AUTH_NONE);
	rc = nfsc_call_sync(c, e, xid, &r);
	if (!rc)
		rc = nfsc_reply_ok(c, &r, OP_CREATE_SESSION);
	if (rc)
		return rc;
	if (xdr_dec_opaque_fixed_copy(&r.x, c->sessionid, NFSC_SESSIONID_SIZE) ||
	    xdr_dec_u32(&r.x, &seq) || xdr_dec_u32(&r.x, &flags) || dec_chan_attrs(&r.x, fore) ||
	    dec_chan_attrs(&r.x, back))
		return nfsc_truncated(c, OP_CREATE_SESSION);
	c->have_session = true;
	resp = fore[2] < NFSC_REC_MAX ? fore[2] : NFSC_REC_MAX;
	c->maxresp = fore[2];
	c->maxops = fore[4];
	c->nslots = fore[5] < NFSC_SLOTS_MAX ? fore[5] : NFSC_SLOTS_MAX;
	if (c->t->max_calls && c->nslots > c->t->max_calls)
		c->nslots = c->t->max_calls;
	if (!c->nslots)
		return nfsc_fail(c, -EPROTO, "CREATE_SESSION: no slot granted");
	if (resp < 8192)
		return nfsc_fail(c, -EPROTO, "CREATE_SESSION: replies limited to %" PRIu32 " bytes",
				 resp);
	if (c->maxops < 5)
		return nfsc_fail(c, -EPROTO,
				 "CREATE_SESSION: %" PRIu32
				 " operations per COMPOUND, fewer than the 5 needed",
				 c->maxops);
	c->io_size = (resp - 4096) & ~4095U;
	if (c->io_size > NFSC_IO_MAX)
		c->io_size = NFSC_IO_MAX;
	return 0;
}

struct nfsc_enc *nfsc_begin_seq(struct nfsc *c, uint32_t *xid)
{
	struct nfsc_enc *e = nfsc_call_begin(c, xid);

	nfsc_op_sequence(c, e, 0);
	return e;
}

int nfsc_session(struct nfsc *c)
{
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid, st;
	int rc;

	rc = exchange_id(c);
	if (!rc)
		rc = create_session(c);
	if (rc)
		return rc;
	e = nfsc_begin_seq(c, &xid);
	nfsc_put_op(e, OP_RECLAIM_COMPLETE);
	nfsc_put32(e, 0); /* rca_one_fs */
	rc = nfsc_call_sync(c, e, xid, &r);
	if (!rc)
		rc = nfsc_dec_sequence(c, &r, 0);
	if (!rc)
		rc = nfsc_reply_op(c, &r, OP_RECLAIM_COMPLETE, &st);
	if (!rc && st && st != NFS4ERR_COMPLETE_ALREADY)
		rc = nfsc_fail_stat(c, st, "RECLAIM_COMPLETE");
	return rc;
}

int nfsc_end(struct nfsc *c)
{
	struct nfsc_reply r;
	struct nfsc_enc *e;
	uint32_t xid;
	int rc;

	if (c->have_session) {
		c->have_session = false;
		e = nfsc_call_begin(c, &xid);
		nfsc_put_op(e, OP_DESTROY_SESSION);
		nfsc_put_fixed(e, c->sessionid, NFSC_SESSIONID_SIZE);
		rc = nfsc_call_sync(c, e, xid, &r);
		if (!rc)
			rc = nfsc_reply_ok(c, &r, OP_DESTROY_SESSION);
		if (rc)
			return rc;
	}
	if (c->have_client) {
		c->have_client = false;
		e = nfsc_call_begin(c, &xid);
		nfsc_put_op(e, OP_DESTROY_CLIENTID);
		nfsc_put64(e, c->clientid);
		rc = nfsc_call_sync(c, e, xid, &r);
		if (!rc)
			rc = nfsc_reply_ok(c, &r, OP_DESTROY_CLIENTID);
		if (rc)
			return rc;
	}
	return 0;
}

void nfsc_drain(struct nfsc *c)
{
	char err[NFSC_ERR_MAX];
	struct nfsc_io *io;

	memcpy(err, c->err, sizeof(err));
	while (c->inflight && !c->dead) {
		unsigned int before = c->inflight;

		/* a reply matching no call: give the connection up */
		if (nfsc_io_wait(c, &io) && c->inflight == before)
			c->dead = true;
	}
	memcpy(c->err, err, sizeof(err));
}

void nfsc_destroy(struct nfsc *c)
{
	if (!c)
		return;
	if (c->t && !c->dead) {
		nfsc_drain(c);
		if (c->file)
			nfsc_close(c, c->file);
		nfsc_end(c);
	}
	if (c->t)
		c->t->ops->destroy(c->t);
	free(c->segs);
	free(c);
}
