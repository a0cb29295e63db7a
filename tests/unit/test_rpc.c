// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of ONC RPC: record reassembly (records of several
 * fragments, empty fragments and records, a stream split into two and
 * three pieces at every position, received directly with
 * rpc_rec_space/commit in pieces of every size, the maximum record size
 * and one byte past it, too many fragments, errors being sticky);
 * classification of calls (each verdict and error of the order in
 * rpc.h, every boundary of the AUTH_SYS credential, a valid call
 * truncated at every byte); the exact bytes of every reply header and
 * of the record mark; rpc_enc_call round-tripping through rpc_classify.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc.h"

#define NFS_PROG 100003
#define PRIV_PROG 400123
#define BIT(f) RPC_FLAVOR_BIT(f)

/* { prog, vers_low, vers_high, nprocs, flavors } */
static const struct rpc_program progs[] = {
	{ NFS_PROG, 4, 4, 2, BIT(RPC_AUTH_NONE) | BIT(RPC_AUTH_SYS) },
	{ NFS_PROG, 2, 3, 22, BIT(RPC_AUTH_SYS) },
	{ PRIV_PROG, 1, 1, 3, BIT(RPC_AUTH_SYS) },
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

/* ---------------------------------------------------------------- wire builder */

struct wb {
	uint8_t b[4096];
	size_t n;
};

static void w32(struct wb *w, uint32_t v)
{
	xdr_put_u32(w->b + w->n, v);
	w->n += 4;
}

static void wbytes(struct wb *w, const void *p, size_t n)
{
	if (n)
		memcpy(w->b + w->n, p, n);
	memset(w->b + w->n + n, 0, XDR_PAD(n));
	w->n += XDR_ALIGN(n);
}

static void wopaque(struct wb *w, const void *p, size_t n)
{
	w32(w, (uint32_t)n);
	wbytes(w, p, n);
}

/* an authsys_parms body */
static size_t sys_body(uint8_t *dst, const char *name, size_t namelen, uint32_t ngids)
{
	struct wb w = { .n = 0 };
	uint32_t i;

	w32(&w, 0x5eed);
	wopaque(&w, name, namelen);
	w32(&w, 1000);
	w32(&w, 100);
	w32(&w, ngids);
	for (i = 0; i < ngids; i++)
		w32(&w, 500 + i);
	memcpy(dst, w.b, w.n);
	return w.n;
}

struct callspec {
	uint32_t xid, mtype, rpcvers, prog, vers, proc;
	uint32_t cflavor, clen_override; /* override != 0: announced body length */
	const uint8_t *cbody;
	size_t clen;
	uint32_t vflavor;
	const uint8_t *vbody;
	size_t vlen;
	size_t nargs; /* bytes of arguments: 0xa0, 0xa1... */
};

static size_t build(struct wb *w, const struct callspec *c)
{
	size_t i, hdr;

	w->n = 0;
	w32(w, c->xid);
	w32(w, c->mtype);
	w32(w, c->rpcvers);
	w32(w, c->prog);
	w32(w, c->vers);
	w32(w, c->proc);
	w32(w, c->cflavor);
	w32(w, c->clen_override ? c->clen_override : (uint32_t)c->clen);
	wbytes(w, c->cbody, c->clen);
	w32(w, c->vflavor);
	w32(w, (uint32_t)c->vlen);
	wbytes(w, c->vbody, c->vlen);
	hdr = w->n;
	for (i = 0; i < c->nargs; i++)
		w->b[w->n++] = (uint8_t)(0xa0 + i);
	return hdr;
}

static struct callspec nfs_call(void)
{
	return (struct callspec){ .xid = 0xcafe0001,
				  .mtype = RPC_CALL,
				  .rpcvers = 2,
				  .prog = NFS_PROG,
				  .vers = 4,
				  .proc = 1 };
}

static enum rpc_verdict classify(const struct wb *w, struct rpc_call *call)
{
	return rpc_classify(w->b, w->n, progs, NPROGS, call);
}

static void expect_auth_err(const struct callspec *c, uint32_t auth_stat)
{
	struct rpc_call call;
	struct wb w;

	build(&w, c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(call.xid, c->xid);
	assert_int_equal(call.err.reply_stat, RPC_MSG_DENIED);
	assert_int_equal(call.err.stat, RPC_AUTH_ERROR);
	assert_int_equal(call.err.auth_stat, auth_stat);
}

static void expect_accept_err(const struct callspec *c, uint32_t stat)
{
	struct rpc_call call;
	struct wb w;

	build(&w, c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(call.err.reply_stat, RPC_MSG_ACCEPTED);
	assert_int_equal(call.err.stat, stat);
}

/* ---------------------------------------------------------------- records */

#define RMAX 64

struct got {
	unsigned int n;
	size_t len[8];
	uint8_t rec[8][RMAX];
};

static void collect(struct rpc_rec *r, struct got *g)
{
	assert_true(g->n < 8);
	g->len[g->n] = r->len;
	memcpy(g->rec[g->n], r->buf, r->len);
	g->n++;
	rpc_rec_next(r, NULL, 0);
}

static int feed_all(struct rpc_rec *r, const uint8_t *d, size_t len, struct got *g)
{
	ssize_t c;

	while (len) {
		c = rpc_rec_feed(r, d, len);
		if (c < 0)
			return (int)c;
		d += c;
		len -= (size_t)c;
		if (rpc_rec_ready(r))
			collect(r, g);
	}
	return 0;
}

/* Frame @len bytes of pattern @seed as fragments of the given sizes. */
static size_t frame(uint8_t *dst, uint8_t seed, const size_t *frags, int nfrags)
{
	size_t n = 0, k;
	int i;

	for (i = 0; i < nfrags; i++) {
		xdr_put_u32(dst + n, (uint32_t)frags[i] | (i == nfrags - 1 ? RPC_REC_LAST : 0));
		n += 4;
		for (k = 0; k < frags[i]; k++)
			dst[n++] = seed++;
	}
	return n;
}

static const size_t fa[] = { 5, 0, 11, 3 }, fb[] = { 8 }, fc[] = { 0 }, fd[] = { 0, 0, 2 };
static const struct {
	const size_t *frags;
	int n;
	uint8_t seed;
	size_t len;
} recs[] = { { fa, 4, 10, 19 }, { fb, 1, 50, 8 }, { fc, 1, 0, 0 }, { fd, 3, 90, 2 } };
#define NRECS 4

static size_t stream(uint8_t *s)
{
	size_t n = 0;
	int i;

	for (i = 0; i < NRECS; i++)
		n += frame(s + n, recs[i].seed, recs[i].frags, recs[i].n);
	return n;
}

static void expect_recs(const struct got *g)
{
	size_t k;
	int i;

	assert_int_equal(g->n, NRECS);
	for (i = 0; i < NRECS; i++) {
		assert_int_equal(g->len[i], recs[i].len);
		for (k = 0; k < recs[i].len; k++)
			assert_int_equal(g->rec[i][k], (uint8_t)(recs[i].seed + k));
	}
}

static void test_rec_splits(void **state)
{
	uint8_t s[256], buf[RMAX];
	struct rpc_rec r;
	struct got g;
	size_t n = stream(s), i, j;

	/* whole, then split in two and in three at every position */
	for (i = 0; i <= n; i++) {
		for (j = i; j <= n; j++) {
			memset(&g, 0, sizeof(g));
			rpc_rec_init(&r, buf, RMAX);
			assert_int_equal(feed_all(&r, s, i, &g), 0);
			assert_int_equal(feed_all(&r, s + i, j - i, &g), 0);
			assert_int_equal(feed_all(&r, s + j, n - j, &g), 0);
			expect_recs(&g);
			assert_false(rpc_rec_ready(&r));
			assert_int_equal(r.len, 0);
		}
	}
	/* a byte at a time */
	memset(&g, 0, sizeof(g));
	rpc_rec_init(&r, buf, RMAX);
	for (i = 0; i < n; i++)
		assert_int_equal(feed_all(&r, s + i, 1, &g), 0);
	expect_recs(&g);
	/* nothing is consumed while a record waits to be taken */
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(rpc_rec_feed(&r, s, n), 4 + 5 + 4 + 4 + 11 + 4 + 3);
	assert_true(rpc_rec_ready(&r));
	assert_int_equal(rpc_rec_feed(&r, s, n), 0);
}

/* Receiving straight into the record, in pieces of every size. */
static void test_rec_direct(void **state)
{
	uint8_t s[256], buf[RMAX], other[RMAX];
	size_t n = stream(s), at, piece, room, k;
	struct rpc_rec r;
	struct got g;
	void *p;

	for (piece = 1; piece <= n; piece++) {
		memset(&g, 0, sizeof(g));
		rpc_rec_init(&r, buf, RMAX);
		for (at = 0; at < n;) {
			room = rpc_rec_space(&r, &p);
			assert_true(room > 0);
			assert_non_null(p);
			k = piece < room ? piece : room;
			if (k > n - at)
				k = n - at;
			memcpy(p, s + at, k);
			at += k;
			assert_int_equal(rpc_rec_commit(&r, k), 0);
			if (rpc_rec_ready(&r)) {
				assert_int_equal(rpc_rec_space(&r, &p), 0);
				collect(&r, &g);
			}
		}
		expect_recs(&g);
	}
	rpc_rec_init(&r, buf, RMAX);
	room = rpc_rec_space(&r, &p);
	assert_int_equal(room, 4);
	assert_int_equal(rpc_rec_commit(&r, 5), -EINVAL);
	assert_int_equal(rpc_rec_commit(&r, 0), 0);
	/* the next record may go to another buffer */
	memset(&g, 0, sizeof(g));
	assert_int_equal(feed_all(&r, s, 4 + 5 + 4 + 4 + 11 + 4 + 3, &g), 0);
	assert_int_equal(g.n, 1);
	rpc_rec_next(&r, other, RMAX);
	assert_int_equal(rpc_rec_feed(&r, s + 35, 12), 12);
	assert_true(rpc_rec_ready(&r));
	assert_ptr_equal(r.buf, other);
	assert_int_equal(other[0], 50);
}

static void test_rec_max(void **state)
{
	uint8_t s[4 * 8 + 2 * RMAX], buf[RMAX];
	size_t one[] = { RMAX }, over[] = { RMAX + 1 }, two[] = { RMAX - 7, 8 }, n;
	struct rpc_rec r;
	struct got g = { 0 };
	void *p;

	/* exactly the max */
	n = frame(s, 1, one, 1);
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(feed_all(&r, s, n, &g), 0);
	assert_int_equal(g.len[0], RMAX);
	/* one past it, in one fragment: refused at the mark, before any body */
	n = frame(s, 1, over, 1);
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(rpc_rec_feed(&r, s, 4), -EMSGSIZE);
	assert_int_equal(rpc_rec_feed(&r, s + 4, n - 4), -EMSGSIZE); /* sticky */
	assert_int_equal(rpc_rec_commit(&r, 1), -EMSGSIZE);
	assert_int_equal(rpc_rec_space(&r, &p), 0);
	/* one past it over two fragments */
	n = frame(s, 1, two, 2);
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(feed_all(&r, s, n, &g), -EMSGSIZE);
	/* the largest fragment length there is */
	xdr_put_u32(s, RPC_REC_LAST | RPC_REC_FRAG_LEN_MAX);
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(rpc_rec_feed(&r, s, 4), -EMSGSIZE);
	/* through the direct interface too */
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(rpc_rec_space(&r, &p), 4);
	xdr_put_u32(p, RMAX + 1);
	assert_int_equal(rpc_rec_commit(&r, 4), -EMSGSIZE);
}

static void test_rec_frags(void **state)
{
	static uint8_t s[4 * (RPC_REC_FRAGS_MAX + 2)];
	uint8_t buf[RMAX];
	struct rpc_rec r;
	struct got g = { 0 };
	size_t n = 0;
	int i;

	/* RPC_REC_FRAGS_MAX fragments: fine */
	for (i = 0; i < RPC_REC_FRAGS_MAX - 1; i++, n += 4)
		xdr_put_u32(s + n, 0);
	xdr_put_u32(s + n, RPC_REC_LAST);
	n += 4;
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(feed_all(&r, s, n, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len[0], 0);
	/* one more: the stream is refused */
	xdr_put_u32(s + n - 4, 0);
	xdr_put_u32(s + n, RPC_REC_LAST);
	n += 4;
	rpc_rec_init(&r, buf, RMAX);
	assert_int_equal(feed_all(&r, s, n, &g), -EPROTO);
}

/* ---------------------------------------------------------------- classify */

static void test_classify_sys(void **state)
{
	uint8_t body[1024];
	struct callspec c = nfs_call();
	struct rpc_call call;
	struct wb w;
	size_t hdr;

	c.cflavor = RPC_AUTH_SYS;
	c.cbody = body;
	c.clen = sys_body(body, "client.example", 14, 3);
	c.nargs = 10;
	hdr = build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_DISPATCH);
	assert_int_equal(call.xid, 0xcafe0001);
	assert_int_equal(call.prog, NFS_PROG);
	assert_int_equal(call.vers, 4);
	assert_int_equal(call.proc, 1);
	assert_ptr_equal(call.program, &progs[0]);
	assert_int_equal(call.cred_flavor, RPC_AUTH_SYS);
	assert_int_equal(call.sys.stamp, 0x5eed);
	assert_int_equal(call.sys.machinename_len, 14);
	assert_memory_equal(call.sys.machinename, "client.example", 14);
	assert_int_equal(call.sys.uid, 1000);
	assert_int_equal(call.sys.gid, 100);
	assert_int_equal(call.sys.ngids, 3);
	assert_int_equal(call.sys.gids[2], 502);
	assert_int_equal(call.verf_flavor, RPC_AUTH_NONE);
	assert_int_equal(call.verf_len, 0);
	assert_ptr_equal(call.args.base, w.b + hdr);
	assert_int_equal(call.args.len, 10);
	assert_int_equal(call.args.pos, 0);

	/* machinename at its max, and one past it */
	c.clen = sys_body(body, (const char *)memset(body + 300, 'm', 255), 255, 16);
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_DISPATCH);
	assert_int_equal(call.sys.machinename_len, 255);
	assert_int_equal(call.sys.ngids, 16);
	assert_int_equal(c.clen, 5 * 4 + 256 + 16 * 4);
	c.clen = sys_body(body, (const char *)memset(body + 300, 'm', 256), 256, 0);
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	/* 17 gids */
	c.clen = sys_body(body, "h", 1, 17);
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	/* a NUL in the machinename */
	c.clen = sys_body(body, "a\0b", 3, 0);
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	/* bytes left over in the body, and a body too short for its parms */
	c.clen = sys_body(body, "h", 1, 2) + 4;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	c.clen = sys_body(body, "h", 1, 2) - 4;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	/* the biggest body allowed, and one unit over */
	c.cflavor = RPC_AUTH_GSS;
	c.clen = RPC_AUTH_BODY_MAX;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	c.cflavor = RPC_AUTH_SYS;
	c.clen_override = RPC_AUTH_BODY_MAX + 1;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
}

static void test_classify_flavors(void **state)
{
	static const uint8_t four[4] = { 1, 2, 3, 4 };
	static uint8_t big[RPC_AUTH_BODY_MAX + 4];
	uint8_t body[128];
	struct callspec c = nfs_call();
	struct rpc_call call;
	struct wb w;

	build(&w, &c); /* AUTH_NONE */
	assert_int_equal(classify(&w, &call), RPC_V_DISPATCH);
	assert_int_equal(call.cred_flavor, RPC_AUTH_NONE);
	assert_int_equal(call.args.len, 0);

	c.cbody = four;
	c.clen = 4;
	expect_auth_err(&c, RPC_AUTH_BADCRED); /* AUTH_NONE with a body */
	c.cflavor = RPC_AUTH_SHORT;
	expect_auth_err(&c, RPC_AUTH_REJECTEDCRED);
	c.cflavor = RPC_AUTH_DH;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	c.cflavor = RPC_AUTH_GSS;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	c.cflavor = RPC_AUTH_TLS;
	c.clen = 0;
	expect_auth_err(&c, RPC_AUTH_BADCRED);
	c.cflavor = 0xffffffff;
	expect_auth_err(&c, RPC_AUTH_BADCRED);

	/* verifiers */
	c = nfs_call();
	c.vflavor = RPC_AUTH_SYS;
	expect_auth_err(&c, RPC_AUTH_BADVERF);
	c.vflavor = RPC_AUTH_NONE;
	c.vbody = four;
	c.vlen = 4;
	expect_auth_err(&c, RPC_AUTH_BADVERF);
	c.vbody = big;
	c.vlen = RPC_AUTH_BODY_MAX + 4;
	expect_auth_err(&c, RPC_AUTH_BADVERF);

	/* flavor policy: PRIV_PROG takes AUTH_SYS only, except on proc 0 */
	c = nfs_call();
	c.prog = PRIV_PROG;
	c.vers = 1;
	expect_auth_err(&c, RPC_AUTH_TOOWEAK);
	c.proc = 0;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_DISPATCH);
	assert_ptr_equal(call.program, &progs[2]);
	c.proc = 2;
	c.cflavor = RPC_AUTH_SYS;
	c.cbody = body;
	c.clen = sys_body(body, "h", 1, 0);
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_DISPATCH);
}

static void test_classify_programs(void **state)
{
	struct callspec c = nfs_call();
	struct rpc_call call;
	struct wb w;

	c.prog = 100005;
	expect_accept_err(&c, RPC_PROG_UNAVAIL);
	c.prog = NFS_PROG;
	c.vers = 5;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(call.err.stat, RPC_PROG_MISMATCH);
	assert_int_equal(call.err.low, 2); /* over both entries of the program */
	assert_int_equal(call.err.high, 4);
	c.vers = 1;
	expect_accept_err(&c, RPC_PROG_MISMATCH);
	c.vers = 4;
	c.proc = 2;
	expect_accept_err(&c, RPC_PROC_UNAVAIL);
	c.proc = 0xffffffff;
	expect_accept_err(&c, RPC_PROC_UNAVAIL);
	c.vers = 3;
	c.proc = 21;
	expect_auth_err(&c, RPC_AUTH_TOOWEAK); /* v3 entry takes AUTH_SYS only */
	/* no programs at all */
	c.proc = 0;
	build(&w, &c);
	assert_int_equal(rpc_classify(w.b, w.n, NULL, 0, &call), RPC_V_REJECT);
	assert_int_equal(call.err.stat, RPC_PROG_UNAVAIL);
}

static void test_classify_msg(void **state)
{
	struct callspec c = nfs_call();
	struct rpc_call call;
	struct wb w;
	size_t len;

	c.nargs = 3;
	c.mtype = RPC_REPLY;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REPLY);
	assert_int_equal(call.xid, c.xid);
	assert_ptr_equal(call.args.base, w.b + 8);
	assert_int_equal(call.args.len, w.n - 8);
	c.mtype = 2;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_DROP);
	for (len = 0; len < 8; len++)
		assert_int_equal(rpc_classify(w.b, len, progs, NPROGS, &call), RPC_V_DROP);
	assert_int_equal(rpc_classify(NULL, 0, progs, NPROGS, &call), RPC_V_DROP);

	/* rpcvers 3: RPC_MISMATCH whatever follows, even nothing */
	c = nfs_call();
	c.rpcvers = 3;
	build(&w, &c);
	for (len = 8; len <= w.n; len++) {
		enum rpc_verdict v = rpc_classify(w.b, len, progs, NPROGS, &call);

		assert_int_equal(v, RPC_V_REJECT);
		if (len < 12) {
			assert_int_equal(call.err.stat, RPC_GARBAGE_ARGS);
			continue;
		}
		assert_int_equal(call.err.reply_stat, RPC_MSG_DENIED);
		assert_int_equal(call.err.stat, RPC_MISMATCH);
		assert_int_equal(call.err.low, 2);
		assert_int_equal(call.err.high, 2);
	}
}

/* A valid call cut at every byte: drop, then GARBAGE_ARGS, then dispatch. */
static void test_classify_truncated(void **state)
{
	uint8_t body[128];
	struct callspec c = nfs_call();
	struct rpc_call call;
	enum rpc_verdict v;
	struct wb w;
	size_t hdr, len;

	c.cflavor = RPC_AUTH_SYS;
	c.cbody = body;
	c.clen = sys_body(body, "abcde", 5, 2);
	c.nargs = 12;
	hdr = build(&w, &c);
	for (len = 0; len <= w.n; len++) {
		uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */

		memcpy(copy, w.b, len);
		v = rpc_classify(copy, len, progs, NPROGS, &call);
		if (len < 8) {
			assert_int_equal(v, RPC_V_DROP);
		} else if (len < hdr) {
			assert_int_equal(v, RPC_V_REJECT);
			assert_int_equal(call.xid, c.xid);
			assert_int_equal(call.err.reply_stat, RPC_MSG_ACCEPTED);
			assert_int_equal(call.err.stat, RPC_GARBAGE_ARGS);
		} else {
			assert_int_equal(v, RPC_V_DISPATCH);
			assert_int_equal(call.args.len, len - hdr);
			assert_int_equal(call.sys.ngids, 2);
		}
		free(copy);
	}
}

/* ---------------------------------------------------------------- replies */

struct efx {
	struct chunk_pool *pool;
	struct xdr_carver carver;
	struct xdr_out out;
};

static int efx_setup(void **state)
{
	struct efx *f = calloc(1, sizeof(*f));

	if (!f || chunk_pool_create(&f->pool, 4096, 4, 0))
		return -1;
	xdr_carver_init(&f->carver, f->pool, NULL);
	xdr_out_init(&f->out, &f->carver, SIZE_MAX);
	*state = f;
	return 0;
}

static int efx_teardown(void **state)
{
	struct efx *f = *state;

	xdr_out_release(&f->out);
	xdr_carver_fini(&f->carver);
	chunk_pool_destroy(f->pool);
	free(f);
	return 0;
}

static void expect_words(struct xdr_out *out, const uint32_t *words, size_t n)
{
	uint8_t got[64], want[64];
	size_t i;

	assert_int_equal(out->err, 0);
	assert_int_equal(xdr_out_len(out), 4 * n);
	for (i = 0; i < n; i++)
		xdr_put_u32(want + 4 * i, words[i]);
	assert_int_equal(xdr_out_copy(out, 0, got, sizeof(got)), 4 * n);
	assert_memory_equal(got, want, 4 * n);
	xdr_out_release(out);
}

#define WORDS(...) \
	((const uint32_t[]){ __VA_ARGS__ }), sizeof((const uint32_t[]){ __VA_ARGS__ }) / 4

static void test_replies(void **state)
{
	struct efx *f = *state;
	struct xdr_out *out = &f->out;
	uint32_t st;

	for (st = RPC_SUCCESS; st <= RPC_SYSTEM_ERR; st++) {
		if (st == RPC_PROG_MISMATCH)
			continue;
		assert_int_equal(rpc_enc_accepted(out, 77, st), 0);
		expect_words(out, WORDS(77, 1, 0, 0, 0, st));
	}
	assert_int_equal(rpc_enc_prog_mismatch(out, 78, 2, 4), 0);
	expect_words(out, WORDS(78, 1, 0, 0, 0, 2, 2, 4));
	assert_int_equal(rpc_enc_rpc_mismatch(out, 79, 2, 2), 0);
	expect_words(out, WORDS(79, 1, 1, 0, 2, 2));
	assert_int_equal(rpc_enc_auth_error(out, 80, RPC_AUTH_TOOWEAK), 0);
	expect_words(out, WORDS(80, 1, 1, 1, 5));
}

/* Every rejection classify decides encodes to the reply it names. */
static void test_reject_replies(void **state)
{
	struct efx *f = *state;
	struct xdr_out *out = &f->out;
	struct callspec c = nfs_call();
	struct rpc_call call;
	struct wb w;

	c.rpcvers = 1;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(rpc_enc_reject(out, &call), 0);
	expect_words(out, WORDS(0xcafe0001, 1, 1, 0, 2, 2));
	c = nfs_call();
	c.cflavor = RPC_AUTH_SHORT;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(rpc_enc_reject(out, &call), 0);
	expect_words(out, WORDS(0xcafe0001, 1, 1, 1, 2));
	c = nfs_call();
	c.vers = 9;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(rpc_enc_reject(out, &call), 0);
	expect_words(out, WORDS(0xcafe0001, 1, 0, 0, 0, 2, 2, 4));
	c = nfs_call();
	c.prog = 1;
	build(&w, &c);
	assert_int_equal(classify(&w, &call), RPC_V_REJECT);
	assert_int_equal(rpc_enc_reject(out, &call), 0);
	expect_words(out, WORDS(0xcafe0001, 1, 0, 0, 0, 1));
	build(&w, &c);
	assert_int_equal(rpc_classify(w.b, 20, progs, NPROGS, &call), RPC_V_REJECT);
	assert_int_equal(rpc_enc_reject(out, &call), 0);
	expect_words(out, WORDS(0xcafe0001, 1, 0, 0, 0, 4));
}

static void test_record_mark(void **state)
{
	struct efx *f = *state;
	struct xdr_out *out = &f->out;
	struct xdr_mark m;
	uint8_t buf[64];

	assert_int_equal(rpc_rm_begin(out, &m), 0);
	assert_int_equal(rpc_enc_accepted(out, 5, RPC_SUCCESS), 0);
	assert_int_equal(xdr_enc_u32(out, 0), 0); /* results */
	assert_int_equal(rpc_rm_end(out, &m), 0);
	assert_int_equal(xdr_out_copy(out, 0, buf, sizeof(buf)), 32);
	assert_int_equal(xdr_get_u32(buf), RPC_REC_LAST | 28);
	assert_int_equal(xdr_get_u32(buf + 4), 5);
	xdr_out_release(out);
	/* an encoder error comes out of rpc_rm_end */
	out->max = 8;
	assert_int_equal(rpc_rm_begin(out, &m), 0);
	assert_int_equal(rpc_enc_accepted(out, 5, RPC_SUCCESS), -EMSGSIZE);
	assert_int_equal(rpc_rm_end(out, &m), -EMSGSIZE);
	out->max = SIZE_MAX;
}

static void test_enc_call_roundtrip(void **state)
{
	struct efx *f = *state;
	struct xdr_out *out = &f->out;
	struct rpc_auth_sys sys = { .stamp = 9, .uid = 0, .gid = 0, .ngids = 16 };
	char name[RPC_AUTH_MACHINENAME_MAX + 1];
	uint8_t buf[1024];
	struct rpc_call call;
	uint32_t i;
	size_t n;

	memset(name, 'n', sizeof(name));
	sys.machinename = name;
	sys.machinename_len = RPC_AUTH_MACHINENAME_MAX;
	for (i = 0; i < 16; i++)
		sys.gids[i] = i * 3;
	assert_int_equal(rpc_enc_call(out, 42, NFS_PROG, 4, 1, &sys), 0);
	assert_int_equal(xdr_enc_u32(out, 0xabcdef), 0);
	n = xdr_out_copy(out, 0, buf, sizeof(buf));
	assert_int_equal(n, xdr_out_len(out));
	assert_int_equal(rpc_classify(buf, n, progs, NPROGS, &call), RPC_V_DISPATCH);
	assert_int_equal(call.xid, 42);
	assert_int_equal(call.sys.stamp, 9);
	assert_int_equal(call.sys.machinename_len, RPC_AUTH_MACHINENAME_MAX);
	assert_int_equal(call.sys.ngids, 16);
	assert_memory_equal(call.sys.gids, sys.gids, sizeof(sys.gids));
	assert_int_equal(call.args.len, 4);
	assert_int_equal(xdr_get_u32(call.args.base), 0xabcdef);
	xdr_out_release(out);

	assert_int_equal(rpc_enc_call(out, 43, PRIV_PROG, 1, 0, NULL), 0);
	n = xdr_out_copy(out, 0, buf, sizeof(buf));
	assert_int_equal(n, 40);
	assert_int_equal(rpc_classify(buf, n, progs, NPROGS, &call), RPC_V_DISPATCH);
	assert_int_equal(call.cred_flavor, RPC_AUTH_NONE);
	xdr_out_release(out);

	sys.ngids = 17;
	assert_int_equal(rpc_enc_call(out, 1, 1, 1, 1, &sys), -EINVAL);
	sys.ngids = 0;
	sys.machinename_len = 256;
	assert_int_equal(rpc_enc_call(out, 1, 1, 1, 1, &sys), -EINVAL);
	assert_int_equal(xdr_out_len(out), 0);
}

int main(void)
{
#define E(fn) cmocka_unit_test_setup_teardown(fn, efx_setup, efx_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_splits),
		cmocka_unit_test(test_rec_direct),
		cmocka_unit_test(test_rec_max),
		cmocka_unit_test(test_rec_frags),
		cmocka_unit_test(test_classify_sys),
		cmocka_unit_test(test_classify_flavors),
		cmocka_unit_test(test_classify_programs),
		cmocka_unit_test(test_classify_msg),
		cmocka_unit_test(test_classify_truncated),
		E(test_replies),
		E(test_reject_replies),
		E(test_record_mark),
		E(test_enc_call_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
