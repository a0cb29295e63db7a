// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lacunad's NFSv4 state (gateway/state/nfs4_state.c and the
 * state operations): the pure logic (session slot and 4.0 owner seqids,
 * stateid generations and special stateids, share reservations, lock
 * ranges and the POSIX-style lock set: conflicts, upgrade, downgrade,
 * split, merge), then the client and session operations driven directly
 * with XDR arguments on a server with no export: SETCLIENTID and its
 * confirmation, RENEW, EXCHANGE_ID, CREATE_SESSION and its replay,
 * SEQUENCE with its slot rules and reply cache, DESTROY_SESSION,
 * DESTROY_CLIENTID, RECLAIM_COMPLETE, TEST_STATEID and the lease reaper.
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

#include "nfs4_ops.h"
#include "nfs4_state.h"

/* ================================================================ pure logic */

static void test_slot_check(void **state)
{
	(void)state;
	assert_int_equal(nfs4_slot_check(0, false, 1), NFS4_SEQ_NEW);
	assert_int_equal(nfs4_slot_check(5, false, 6), NFS4_SEQ_NEW);
	assert_int_equal(nfs4_slot_check(5, false, 5), NFS4_SEQ_REPLAY);
	assert_int_equal(nfs4_slot_check(5, false, 7), NFS4_SEQ_MISORDERED);
	assert_int_equal(nfs4_slot_check(5, false, 4), NFS4_SEQ_MISORDERED);
	assert_int_equal(nfs4_slot_check(UINT32_MAX, false, 0), NFS4_SEQ_NEW); /* wraps */
	assert_int_equal(nfs4_slot_check(5, true, 5), NFS4_SEQ_DELAY);
	assert_int_equal(nfs4_slot_check(5, true, 6), NFS4_SEQ_MISORDERED);
}

static void test_owner_seqid(void **state)
{
	(void)state;
	assert_int_equal(nfs4_owner_seqid_check(0, true, 12345), NFS4_SEQ_NEW);
	assert_int_equal(nfs4_owner_seqid_check(7, false, 8), NFS4_SEQ_NEW);
	assert_int_equal(nfs4_owner_seqid_check(7, false, 7), NFS4_SEQ_REPLAY);
	assert_int_equal(nfs4_owner_seqid_check(7, false, 9), NFS4_SEQ_MISORDERED);
	assert_int_equal(nfs4_owner_seqid_check(7, false, 6), NFS4_SEQ_MISORDERED);
	assert_int_equal(nfs4_owner_seqid_check(UINT32_MAX, false, 0), NFS4_SEQ_NEW);
	assert_true(nfs4_seqid_mutating(NFS4_OK));
	assert_true(nfs4_seqid_mutating(NFS4ERR_SHARE_DENIED));
	assert_true(nfs4_seqid_mutating(NFS4ERR_DENIED));
	assert_false(nfs4_seqid_mutating(NFS4ERR_BAD_SEQID));
	assert_false(nfs4_seqid_mutating(NFS4ERR_BAD_STATEID));
	assert_false(nfs4_seqid_mutating(NFS4ERR_STALE_STATEID));
	assert_false(nfs4_seqid_mutating(NFS4ERR_STALE_CLIENTID));
	assert_false(nfs4_seqid_mutating(NFS4ERR_NOFILEHANDLE));
}

static void test_sid_gen(void **state)
{
	(void)state;
	assert_int_equal(nfs4_sid_gen_check(3, 3, 0), NFS4_OK);
	assert_int_equal(nfs4_sid_gen_check(3, 2, 0), NFS4ERR_OLD_STATEID);
	assert_int_equal(nfs4_sid_gen_check(3, 4, 0), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_sid_gen_check(3, 0, 0), NFS4ERR_OLD_STATEID);
	assert_int_equal(nfs4_sid_gen_check(3, 0, 1), NFS4_OK); /* 4.1: "the current one" */
	assert_int_equal(nfs4_sid_gen_check(3, 2, 1), NFS4ERR_OLD_STATEID);
	assert_int_equal(nfs4_sid_gen_check(1, UINT32_MAX, 0), NFS4ERR_OLD_STATEID);
}

static void test_special_sids(void **state)
{
	struct nfs4_stateid s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_true(nfs4_sid_is_anon(&s));
	assert_true(nfs4_sid_is_special(&s));
	assert_false(nfs4_sid_is_current(&s));
	s.seqid = 1;
	assert_true(nfs4_sid_is_current(&s));
	assert_false(nfs4_sid_is_anon(&s));
	memset(&s, 0xff, sizeof(s));
	assert_true(nfs4_sid_is_bypass(&s));
	assert_true(nfs4_sid_is_special(&s));
	s.other[5] = 0;
	assert_false(nfs4_sid_is_special(&s));
	assert_false(nfs4_sid_is_bypass(&s));
}

static void test_share(void **state)
{
	(void)state;
	assert_false(nfs4_share_conflict(1, 0, 1, 0));
	assert_false(nfs4_share_conflict(3, 0, 3, 0));
	assert_true(nfs4_share_conflict(1, 0, 1, 1));  /* read against deny read */
	assert_true(nfs4_share_conflict(1, 2, 2, 0));  /* deny write against a writer */
	assert_false(nfs4_share_conflict(1, 2, 1, 2)); /* two readers denying writes */
	assert_true(nfs4_share_conflict(2, 0, 1, 3));
}

static void test_range(void **state)
{
	uint64_t s, e;

	(void)state;
	assert_int_equal(nfs4_range_make(0, 0, &s, &e), -EINVAL);
	assert_int_equal(nfs4_range_make(10, 5, &s, &e), 0);
	assert_true(s == 10 && e == 14);
	assert_int_equal(nfs4_range_make(10, UINT64_MAX, &s, &e), 0);
	assert_true(s == 10 && e == UINT64_MAX);
	assert_int_equal(nfs4_range_make(0, UINT64_MAX, &s, &e), 0);
	assert_true(e == UINT64_MAX);
	/* up to the last byte exactly: fine; one past: INVAL */
	assert_int_equal(nfs4_range_make(UINT64_MAX - 9, 10, &s, &e), 0);
	assert_true(e == UINT64_MAX);
	assert_int_equal(nfs4_range_make(UINT64_MAX - 9, 11, &s, &e), -EINVAL);
	assert_int_equal(nfs4_range_make(1, UINT64_MAX - 1, &s, &e), 0);
	assert_int_equal(nfs4_range_make(2, UINT64_MAX - 1, &s, &e), 0);
	assert_true(e == UINT64_MAX);
	assert_int_equal(nfs4_range_make(3, UINT64_MAX - 1, &s, &e), -EINVAL);
	assert_true(nfs4_range_len(10, 14) == 5);
	assert_true(nfs4_range_len(10, UINT64_MAX) == UINT64_MAX);
}

/* The OFD lock of a range: off_t ends at INT64_MAX */
static void test_range_ofd(void **state)
{
	int64_t off, len;

	(void)state;
	assert_true(nfs4_range_ofd(10, 14, &off, &len));
	assert_true(off == 10 && len == 5);
	assert_true(nfs4_range_ofd(0, 0, &off, &len));
	assert_true(off == 0 && len == 1);
	/* to the end of the file, or reaching the largest off_t or past it: l_len 0 */
	assert_true(nfs4_range_ofd(10, UINT64_MAX, &off, &len));
	assert_true(off == 10 && len == 0);
	assert_true(nfs4_range_ofd(0, (uint64_t)INT64_MAX, &off, &len));
	assert_true(off == 0 && len == 0);
	assert_true(nfs4_range_ofd(0, (uint64_t)INT64_MAX - 1, &off, &len));
	assert_true(off == 0 && len == INT64_MAX);
	assert_true(nfs4_range_ofd((uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 5, &off, &len));
	assert_true(off == INT64_MAX && len == 0);
	/* starting past it: not held in the kernel */
	assert_false(nfs4_range_ofd((uint64_t)INT64_MAX + 1, UINT64_MAX, &off, &len));
	assert_false(nfs4_range_ofd(UINT64_MAX, UINT64_MAX, &off, &len));
}

static int A, B; /* two owners */

/* With room reserved, lock and unlock cannot fail (LOCK and LOCKU change the kernel first) */
static void test_lset_reserve(void **state)
{
	struct nfs4_lset s = { 0 };

	(void)state;
	assert_int_equal(nfs4_lset_reserve(&s, 2), 0);
	assert_true(s.cap >= 2);
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 0, 99), 0);
	assert_int_equal(nfs4_lset_reserve(&s, 1), 0);
	assert_true(s.cap >= s.n + 1);
	assert_int_equal(nfs4_lset_unlock(&s, &A, 40, 59), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(nfs4_lset_reserve(&s, 2), 0);
	assert_true(s.cap >= s.n + 2);
	nfs4_lset_free(&s);
}

/* the ranges of @owner, sorted: "start-end:type start-end:type" compared with @want */
static void expect_ranges(const struct nfs4_lset *s, const void *owner, const char *want)
{
	char buf[512] = "";
	uint64_t last = 0;
	size_t n = 0, i;
	bool first = true;

	for (;;) {
		const struct nfs4_lrange *best = NULL;

		for (i = 0; i < s->n; i++)
			if (s->r[i].owner == owner && (first || s->r[i].start > last) &&
			    (!best || s->r[i].start < best->start))
				best = &s->r[i];
		if (!best)
			break;
		char end[24];

		if (best->end == UINT64_MAX)
			strcpy(end, "max");
		else
			snprintf(end, sizeof(end), "%llu", (unsigned long long)best->end);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%llu-%s:%c", first ? "" : " ",
				      (unsigned long long)best->start, end,
				      best->type == READ_LT ? 'r' : 'w');
		last = best->start;
		first = false;
	}
	assert_string_equal(buf, want);
}

static void test_lset_basic(void **state)
{
	struct nfs4_lset s = { 0 };
	const struct nfs4_lrange *r;

	(void)state;
	assert_int_equal(nfs4_lset_lock(&s, &A, READ_LT, 0, 99), 0);
	/* readers share, a writer conflicts with a reader of another owner */
	assert_null(nfs4_lset_conflict(&s, READ_LT, 50, 150, NULL, &B));
	r = nfs4_lset_conflict(&s, WRITE_LT, 50, 150, NULL, &B);
	assert_non_null(r);
	assert_true(r->owner == &A && r->start == 0 && r->end == 99);
	/* never with oneself */
	assert_null(nfs4_lset_conflict(&s, WRITE_LT, 0, 99, NULL, &A));
	/* not past the range */
	assert_null(nfs4_lset_conflict(&s, WRITE_LT, 100, UINT64_MAX, NULL, &B));
	/* an unknown owner (NULL) conflicts with everything */
	assert_non_null(nfs4_lset_conflict(&s, WRITE_LT, 99, 99, NULL, NULL));

	assert_int_equal(nfs4_lset_lock(&s, &B, WRITE_LT, 200, UINT64_MAX), 0);
	assert_non_null(nfs4_lset_conflict(&s, READ_LT, 1000, 1000, NULL, &A));
	assert_true(nfs4_lset_held(&s, &B));
	assert_int_equal(nfs4_lset_drop(&s, &B), 1);
	assert_false(nfs4_lset_held(&s, &B));
	assert_null(nfs4_lset_conflict(&s, WRITE_LT, 1000, 1000, NULL, &A));
	nfs4_lset_free(&s);
}

static void test_lset_split_merge(void **state)
{
	struct nfs4_lset s = { 0 };

	(void)state;
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 0, 99), 0);
	/* unlock the middle: split */
	assert_int_equal(nfs4_lset_unlock(&s, &A, 40, 59), 0);
	expect_ranges(&s, &A, "0-39:w 60-99:w");
	/* lock the hole again with the same type: one range again */
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 40, 59), 0);
	expect_ranges(&s, &A, "0-99:w");
	/* downgrade the middle to read: three ranges */
	assert_int_equal(nfs4_lset_lock(&s, &A, READ_LT, 20, 29), 0);
	expect_ranges(&s, &A, "0-19:w 20-29:r 30-99:w");
	/* another owner may read-lock what is read-locked only */
	assert_null(nfs4_lset_conflict(&s, READ_LT, 20, 29, NULL, &B));
	assert_non_null(nfs4_lset_conflict(&s, READ_LT, 20, 30, NULL, &B));
	/* upgrade it all back: merged */
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 10, 50), 0);
	expect_ranges(&s, &A, "0-99:w");
	/* adjacent ranges of the same type merge, of another type do not */
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 100, 199), 0);
	expect_ranges(&s, &A, "0-199:w");
	assert_int_equal(nfs4_lset_lock(&s, &A, READ_LT, 200, 299), 0);
	expect_ranges(&s, &A, "0-199:w 200-299:r");
	/* to the end of the file */
	assert_int_equal(nfs4_lset_lock(&s, &A, READ_LT, 300, UINT64_MAX), 0);
	expect_ranges(&s, &A, "0-199:w 200-max:r");
	/* unlock over several ranges, cutting the ends */
	assert_int_equal(nfs4_lset_unlock(&s, &A, 150, 1000), 0);
	expect_ranges(&s, &A, "0-149:w 1001-max:r");
	/* unlocking what is not locked is fine */
	assert_int_equal(nfs4_lset_unlock(&s, &A, 500, 600), 0);
	assert_int_equal(nfs4_lset_unlock(&s, &B, 0, UINT64_MAX), 0);
	expect_ranges(&s, &A, "0-149:w 1001-max:r");
	/* unlock all */
	assert_int_equal(nfs4_lset_unlock(&s, &A, 0, UINT64_MAX), 0);
	assert_int_equal(s.n, 0);
	/* whole-file lock at offset 0 and a lock touching UINT64_MAX */
	assert_int_equal(nfs4_lset_lock(&s, &A, WRITE_LT, 0, UINT64_MAX), 0);
	assert_int_equal(nfs4_lset_unlock(&s, &A, 0, 0), 0);
	expect_ranges(&s, &A, "1-max:w");
	assert_int_equal(nfs4_lset_unlock(&s, &A, UINT64_MAX, UINT64_MAX), 0);
	expect_ranges(&s, &A, "1-18446744073709551614:w");
	nfs4_lset_free(&s);
}

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 16;
}

/* Many small locks and unlocks against a byte map model */
static void test_lset_model(void **state)
{
	enum { N = 64 };
	struct nfs4_lset s = { 0 };
	uint8_t model[2][N]; /* 0 none, 1 read, 2 write per owner */
	const void *own[2] = { &A, &B };
	unsigned int seed = 12345, i, k;

	(void)state;
	memset(model, 0, sizeof(model));
	for (i = 0; i < 5000; i++) {
		unsigned int o = rnd(&seed) % 2, a = rnd(&seed) % N, b = rnd(&seed) % N;
		unsigned int op = rnd(&seed) % 3, lo, hi;
		bool conflict = false;

		lo = a < b ? a : b;
		hi = a < b ? b : a;
		if (op == 2) {
			assert_int_equal(nfs4_lset_unlock(&s, own[o], lo, hi), 0);
			for (k = lo; k <= hi; k++)
				model[o][k] = 0;
		} else {
			uint32_t type = op ? WRITE_LT : READ_LT;

			for (k = lo; k <= hi; k++)
				if (model[!o][k] && (op || model[!o][k] == 2))
					conflict = true;
			assert_int_equal(nfs4_lset_conflict(&s, type, lo, hi, NULL, own[o]) != NULL,
					 conflict);
			if (conflict)
				continue;
			assert_int_equal(nfs4_lset_lock(&s, own[o], type, lo, hi), 0);
			for (k = lo; k <= hi; k++)
				model[o][k] = op ? 2 : 1;
		}
		/* the set matches the model byte for byte, and is canonical */
		for (o = 0; o < 2; o++)
			for (k = 0; k < N; k++) {
				uint8_t got = 0;
				size_t j;

				for (j = 0; j < s.n; j++)
					if (s.r[j].owner == own[o] && s.r[j].start <= k &&
					    s.r[j].end >= k) {
						assert_int_equal(got, 0); /* no overlap */
						got = s.r[j].type == READ_LT ? 1 : 2;
					}
				assert_int_equal(got, model[o][k]);
			}
		for (k = 0; k < s.n; k++) {
			size_t j;

			for (j = 0; j < s.n; j++)
				if (j != k && s.r[j].owner == s.r[k].owner &&
				    s.r[j].type == s.r[k].type)
					assert_false(s.r[j].start == s.r[k].end + 1); /* merged */
		}
	}
	nfs4_lset_free(&s);
}

/* ================================================================ operations */

#define SMALL 4096
#define NCH 64

static struct gw_srv gw = { .snap_lock = PTHREAD_MUTEX_INITIALIZER,
			     .reload_lock = PTHREAD_MUTEX_INITIALIZER }; /* the server tested */

struct fx {
	struct chunk_pool *pool;
	struct chunk_owner owner;
	struct xdr_carver carver;
	struct xdr_out out;
	struct gw_conn_info conn;
	struct nfs4_compound c;
	uint8_t args[4096];
	size_t alen;
	uint8_t res[8192];
	size_t rlen, rpos;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || chunk_pool_create(&f->pool, SMALL, NCH, 0))
		return -1;
	chunk_owner_init(&f->owner, f->pool, 0);
	xdr_carver_init(&f->carver, f->pool, &f->owner);
	if (nfs4_state_init(&gw)) /* no configuration loaded: the defaults */
		return -1;
	f->conn.id = 1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	nfs4_state_fini(&gw);
	xdr_carver_fini(&f->carver);
	chunk_pool_destroy(f->pool);
	free(f);
	return 0;
}

/* A fresh COMPOUND of @nops ops, minor version @minor, caller uid @uid */
static void begin(struct fx *f, uint32_t minor, uint32_t nops, uint32_t uid)
{
	memset(&f->c, 0, sizeof(f->c));
	f->c.srv = &gw;
	f->c.conn = &f->conn;
	f->c.minor = minor;
	f->c.nops = nops;
	f->c.flavor = 1;
	f->c.wire_cred.uid = uid;
	f->c.resp_max = 1 << 20;
	f->c.req_len = 200;
	f->c.out = &f->out;
	nfs4_set_caller(&f->c);
}

static void a_u32(struct fx *f, uint32_t v)
{
	xdr_put_u32(f->args + f->alen, v);
	f->alen += 4;
}

static void a_u64(struct fx *f, uint64_t v)
{
	a_u32(f, (uint32_t)(v >> 32));
	a_u32(f, (uint32_t)v);
}

static void a_fixed(struct fx *f, const void *p, size_t n)
{
	memcpy(f->args + f->alen, p, n);
	f->alen += XDR_ALIGN(n);
}

static void a_opaque(struct fx *f, const void *p, uint32_t n)
{
	a_u32(f, n);
	memset(f->args + f->alen, 0, XDR_ALIGN(n));
	a_fixed(f, p, n);
}

/* Decode the arguments built so far with @dec and run @run; the results land in f->res */
static uint32_t run(struct fx *f, nfs4_dec_fn *dec, nfs4_run_fn *fn, uint32_t opnum)
{
	uint64_t buf[NFS4_ARGS_MAX / 8];
	struct xdr_in x;
	uint32_t st;

	memset(buf, 0, sizeof(buf));
	xdr_in_init(&x, f->args, f->alen);
	assert_int_equal(dec(&x, buf), 0);
	assert_int_equal(xdr_in_left(&x), 0);
	f->alen = 0;
	xdr_out_init(&f->out, &f->carver, SIZE_MAX);
	f->c.opnum = opnum;
	f->c.keep_body = false;
	st = fn(&f->c, buf);
	assert_int_equal(f->out.err, 0);
	f->rlen = xdr_out_copy(&f->out, 0, f->res, sizeof(f->res));
	f->rpos = 0;
	xdr_out_release(&f->out);
	return st;
}

static uint32_t r_u32(struct fx *f)
{
	uint32_t v;

	assert_true(f->rpos + 4 <= f->rlen);
	v = xdr_get_u32(f->res + f->rpos);
	f->rpos += 4;
	return v;
}

static uint64_t r_u64(struct fx *f)
{
	uint64_t hi = r_u32(f);

	return hi << 32 | r_u32(f);
}

static void r_fixed(struct fx *f, void *p, size_t n)
{
	assert_true(f->rpos + n <= f->rlen);
	memcpy(p, f->res + f->rpos, n);
	f->rpos += XDR_ALIGN(n);
}

/* SETCLIENTID + SETCLIENTID_CONFIRM of "@name" with @verf: the clientid */
static uint64_t setclientid(struct fx *f, const char *name, uint8_t verf, uint32_t uid,
			    uint8_t confirm[8])
{
	uint8_t v[8] = { verf };
	uint64_t clid;

	begin(f, 0, 1, uid);
	a_fixed(f, v, 8);
	a_opaque(f, name, (uint32_t)strlen(name));
	a_u32(f, 0x40000000);
	a_opaque(f, "tcp", 3);
	a_opaque(f, "127.0.0.1.3.4", 13);
	a_u32(f, 1);
	assert_int_equal(run(f, nfs4_dec_setclientid, nfs4_run_setclientid, OP_SETCLIENTID),
			 NFS4_OK);
	clid = r_u64(f);
	r_fixed(f, confirm, 8);
	return clid;
}

static uint32_t confirm(struct fx *f, uint64_t clid, const uint8_t conf[8], uint32_t uid)
{
	begin(f, 0, 1, uid);
	a_u64(f, clid);
	a_fixed(f, conf, 8);
	return run(f, nfs4_dec_setclientid_confirm, nfs4_run_setclientid_confirm,
		   OP_SETCLIENTID_CONFIRM);
}

static uint32_t renew(struct fx *f, uint64_t clid)
{
	begin(f, 0, 1, 0);
	a_u64(f, clid);
	return run(f, nfs4_dec_renew, nfs4_run_renew, OP_RENEW);
}

static void test_setclientid(void **state)
{
	struct fx *f = *state;
	uint8_t conf[8], conf2[8], bad[8] = { 1, 2, 3 };
	uint64_t clid, clid2, clid3;

	clid = setclientid(f, "client-a", 1, 0, conf);
	/* unconfirmed: RENEW says stale */
	assert_int_equal(renew(f, clid), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(confirm(f, clid, bad, 0), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(confirm(f, clid, conf, 0), NFS4_OK);
	/* a retransmitted confirm is fine */
	assert_int_equal(confirm(f, clid, conf, 0), NFS4_OK);
	assert_int_equal(renew(f, clid), NFS4_OK);
	/* a clientid of another boot, or unknown */
	assert_int_equal(renew(f, clid ^ (1ULL << 40)), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(renew(f, clid + 1000), NFS4ERR_STALE_CLIENTID);

	/* the same incarnation again (callback update): same clientid */
	clid2 = setclientid(f, "client-a", 1, 0, conf2);
	assert_true(clid2 == clid);
	assert_int_equal(confirm(f, clid, conf2, 0), NFS4_OK);
	assert_int_equal(renew(f, clid), NFS4_OK);

	/* a reboot (new verifier): new clientid; the old one goes at confirm */
	clid3 = setclientid(f, "client-a", 2, 0, conf2);
	assert_true(clid3 != clid);
	assert_int_equal(renew(f, clid), NFS4_OK);
	assert_int_equal(confirm(f, clid3, conf2, 0), NFS4_OK);
	assert_int_equal(renew(f, clid), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(renew(f, clid3), NFS4_OK);

	/* another principal may not confirm it */
	clid = setclientid(f, "client-b", 1, 1000, conf);
	assert_int_equal(confirm(f, clid, conf, 1001), NFS4ERR_CLID_INUSE);
	assert_int_equal(confirm(f, clid, conf, 1000), NFS4_OK);
}

static void test_lease_expiry(void **state)
{
	struct fx *f = *state;
	struct nfs4_state_stats st;
	uint8_t conf[8];
	uint64_t clid;

	clid = setclientid(f, "client-e", 1, 0, conf);
	assert_int_equal(confirm(f, clid, conf, 0), NFS4_OK);
	nfs4_state_get_stats(&gw, &st);
	assert_int_equal(st.clients, 1);
	/* age it past the lease */
	gw.state->lease = 10;
	nfs4_client_by_id(gw.state, clid)->renewed -= 11;
	nfs4_state_reap(&gw);
	assert_int_equal(renew(f, clid), NFS4ERR_EXPIRED);
	nfs4_state_get_stats(&gw, &st);
	assert_int_equal(st.clients, 0);
	/* and later forgotten altogether */
	nfs4_client_by_id(gw.state, clid)->renewed -= 21;
	nfs4_state_reap(&gw);
	assert_int_equal(renew(f, clid), NFS4ERR_STALE_CLIENTID);
}

/* EXCHANGE_ID of @name: the clientid, and *seq the sequenceid to create a session with */
static uint32_t exchange_id(struct fx *f, const char *name, uint8_t verf, uint32_t flags,
			    uint64_t *clid, uint32_t *seq, uint32_t *rflags)
{
	uint8_t v[8] = { verf };
	uint32_t st;

	begin(f, 1, 1, 0);
	a_fixed(f, v, 8);
	a_opaque(f, name, (uint32_t)strlen(name));
	a_u32(f, flags);
	a_u32(f, SP4_NONE);
	a_u32(f, 0); /* no impl id */
	st = run(f, nfs4_dec_exchange_id, nfs4_run_exchange_id, OP_EXCHANGE_ID);
	if (st == NFS4_OK) {
		*clid = r_u64(f);
		*seq = r_u32(f);
		*rflags = r_u32(f);
		assert_int_equal(r_u32(f), SP4_NONE);
	}
	return st;
}

static void a_chan(struct fx *f, uint32_t maxreq, uint32_t maxresp, uint32_t cached, uint32_t ops,
		   uint32_t reqs)
{
	a_u32(f, 0);
	a_u32(f, maxreq);
	a_u32(f, maxresp);
	a_u32(f, cached);
	a_u32(f, ops);
	a_u32(f, reqs);
	a_u32(f, 0);
}

static uint32_t create_session(struct fx *f, uint64_t clid, uint32_t seq, uint8_t sid[16],
			       uint32_t *nslots)
{
	uint32_t st, flags;

	begin(f, 1, 1, 0);
	a_u64(f, clid);
	a_u32(f, seq);
	a_u32(f, CREATE_SESSION4_FLAG_CONN_BACK_CHAN | CREATE_SESSION4_FLAG_PERSIST);
	a_chan(f, 4 << 20, 4 << 20, 1 << 20, 100, 200);
	a_chan(f, 4096, 4096, 0, 2, 1);
	a_u32(f, 0x40000000);
	a_u32(f, 1);
	a_u32(f, 0); /* AUTH_NONE */
	st = run(f, nfs4_dec_create_session, nfs4_run_create_session, OP_CREATE_SESSION);
	if (st == NFS4_OK) {
		r_fixed(f, sid, 16);
		assert_int_equal(r_u32(f), seq);
		flags = r_u32(f);
		assert_int_equal(flags, 0);		    /* no back channel, no persistence */
		assert_int_equal(r_u32(f), 0);		    /* headerpad */
		assert_true(r_u32(f) == GW_RECORD_DEFAULT); /* maxreq */
		assert_true(r_u32(f) == GW_RECORD_DEFAULT); /* maxresp */
		assert_int_equal(r_u32(f), NFS4_REPLY_CACHE_MAX);
		assert_int_equal(r_u32(f), NFS4_SESSION_OPS_MAX);
		*nslots = r_u32(f);
		assert_int_equal(*nslots, NFS4_SLOTS_MAX);
	}
	return st;
}

/* SEQUENCE: starts a COMPOUND of @nops ops */
static uint32_t sequence(struct fx *f, const uint8_t sid[16], uint32_t seqid, uint32_t slot,
			 uint32_t nops)
{
	begin(f, 1, nops, 0);
	a_fixed(f, sid, 16);
	a_u32(f, seqid);
	a_u32(f, slot);
	a_u32(f, slot);
	a_u32(f, 1);
	return run(f, nfs4_dec_sequence, nfs4_run_sequence, OP_SEQUENCE);
}

/* What the engine does at the end of a COMPOUND with a slot: the reply is one word */
static void sequence_done_with(struct fx *f, uint32_t reply)
{
	assert_non_null(f->c.slot);
	xdr_out_init(&f->out, &f->carver, SIZE_MAX);
	xdr_enc_u32(&f->out, reply);
	nfs4_sequence_done(&f->c, 0, NFS4_OK);
	xdr_out_release(&f->out);
	assert_null(f->c.slot);
}

static void sequence_done(struct fx *f)
{
	sequence_done_with(f, 0);
}

static void test_sessions(void **state)
{
	struct fx *f = *state;
	uint8_t sid[16], sid2[16], bad[16] = { 0 };
	uint64_t clid, clid2;
	uint32_t seq, flags, n, seq2;
	struct nfs4_state_stats st;

	assert_int_equal(exchange_id(f, "linux-a", 1, 0, &clid, &seq, &flags), NFS4_OK);
	assert_int_equal(seq, 1);
	assert_int_equal(flags, EXCHGID4_FLAG_USE_NON_PNFS);
	/* a retransmission before CREATE_SESSION makes a new record (nfsd's case 4) */
	assert_int_equal(exchange_id(f, "linux-a", 1, 0, &clid2, &seq2, &flags), NFS4_OK);
	assert_true(clid2 != clid);
	clid = clid2;
	/* an update of a record not confirmed: NOENT */
	assert_int_equal(exchange_id(f, "linux-a", 1, EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &clid2,
				     &seq2, &flags),
			 NFS4ERR_NOENT);
	/* flags a client may not send */
	assert_int_equal(
		exchange_id(f, "linux-a", 1, EXCHGID4_FLAG_CONFIRMED_R, &clid2, &seq2, &flags),
		NFS4ERR_INVAL);

	assert_int_equal(create_session(f, clid, 2, sid, &n), NFS4ERR_SEQ_MISORDERED);
	assert_int_equal(create_session(f, clid + 77, 1, sid, &n), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(create_session(f, clid, 1, sid, &n), NFS4_OK);
	/* its retransmission is answered from the cache: the same session */
	assert_int_equal(create_session(f, clid, 1, sid2, &n), NFS4_OK);
	assert_memory_equal(sid, sid2, 16);
	nfs4_state_get_stats(&gw, &st);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.clients, 1);

	/* now confirmed */
	assert_int_equal(exchange_id(f, "linux-a", 1, 0, &clid2, &seq2, &flags), NFS4_OK);
	assert_true(clid2 == clid);
	assert_int_equal(seq2, 2);
	assert_true(flags & EXCHGID4_FLAG_CONFIRMED_R);
	assert_int_equal(exchange_id(f, "linux-a", 1, EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &clid2,
				     &seq2, &flags),
			 NFS4_OK);
	assert_int_equal(exchange_id(f, "linux-a", 2, EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &clid2,
				     &seq2, &flags),
			 NFS4ERR_NOT_SAME);

	/* SEQUENCE */
	assert_int_equal(sequence(f, bad, 1, 0, 1), NFS4ERR_BADSESSION);
	assert_int_equal(sequence(f, sid, 1, NFS4_SLOTS_MAX, 1), NFS4ERR_BADSLOT);
	assert_int_equal(sequence(f, sid, 2, 0, 1), NFS4ERR_SEQ_MISORDERED);
	assert_int_equal(sequence(f, sid, 1, 0, NFS4_SESSION_OPS_MAX + 1), NFS4ERR_TOO_MANY_OPS);
	assert_int_equal(sequence(f, sid, 1, 0, 2), NFS4_OK);
	assert_memory_equal(f->res, sid, 16);
	assert_true(f->c.who.clp && f->c.who.ses && f->c.slot);
	/* the slot is busy: the same seqid waits, another is misordered */
	{
		struct nfs4_compound keep = f->c;
		struct xdr_out keep_out = f->out;

		assert_int_equal(sequence(f, sid, 1, 0, 1), NFS4ERR_DELAY);
		assert_int_equal(sequence(f, sid, 2, 0, 1), NFS4ERR_SEQ_MISORDERED);
		/* another slot runs meanwhile */
		assert_int_equal(sequence(f, sid, 1, 1, 1), NFS4_OK);
		sequence_done(f);
		/* the session cannot go while in use by another COMPOUND */
		begin(f, 1, 1, 0);
		a_fixed(f, sid, 16);
		assert_int_equal(run(f, nfs4_dec_destroy_session, nfs4_run_destroy_session,
				     OP_DESTROY_SESSION),
				 NFS4ERR_DELAY);
		f->c = keep;
		f->out = keep_out;
	}
	sequence_done_with(f, 0xabcdef01);
	/* a retransmission gets the cached reply bytes */
	assert_int_equal(sequence(f, sid, 1, 0, 2), NFS4_OK);
	assert_non_null(f->c.replay);
	assert_int_equal(f->c.replay_len, 4);
	assert_int_equal(xdr_get_u32(f->c.replay), 0xabcdef01);
	sequence_done(f);
	/* ...and the cache is still there for another retransmission */
	assert_int_equal(sequence(f, sid, 1, 0, 2), NFS4_OK);
	assert_int_equal(xdr_get_u32(f->c.replay), 0xabcdef01);
	sequence_done(f);
	assert_int_equal(sequence(f, sid, 2, 0, 1), NFS4_OK);
	assert_null(f->c.replay);
	sequence_done(f);

	/* RECLAIM_COMPLETE once */
	assert_int_equal(sequence(f, sid, 3, 0, 2), NFS4_OK);
	a_u32(f, 0);
	assert_int_equal(
		run(f, nfs4_dec_reclaim_complete, nfs4_run_reclaim_complete, OP_RECLAIM_COMPLETE),
		NFS4_OK);
	a_u32(f, 0);
	assert_int_equal(
		run(f, nfs4_dec_reclaim_complete, nfs4_run_reclaim_complete, OP_RECLAIM_COMPLETE),
		NFS4ERR_COMPLETE_ALREADY);
	/* TEST_STATEID: nothing of ours is valid */
	{
		uint8_t zero[12] = { 0 }, junk[12] = { 9, 9, 9 };

		a_u32(f, 2);
		a_u32(f, 0);
		a_fixed(f, zero, 12);
		a_u32(f, 1);
		a_fixed(f, junk, 12);
		assert_int_equal(
			run(f, nfs4_dec_test_stateid, nfs4_run_test_stateid, OP_TEST_STATEID),
			NFS4_OK);
		assert_int_equal(r_u32(f), 2);
		assert_int_equal(r_u32(f), NFS4ERR_BAD_STATEID);
		assert_int_equal(r_u32(f), NFS4ERR_BAD_STATEID);
	}
	/* DESTROY_CLIENTID while it has a session: busy */
	{
		struct nfs4_compound keep = f->c;

		begin(f, 1, 1, 0);
		a_u64(f, clid);
		assert_int_equal(run(f, nfs4_dec_destroy_clientid, nfs4_run_destroy_clientid,
				     OP_DESTROY_CLIENTID),
				 NFS4ERR_CLIENTID_BUSY);
		f->c = keep;
	}
	sequence_done(f);

	/* DESTROY_SESSION in its own session: must be last */
	assert_int_equal(sequence(f, sid, 4, 0, 3), NFS4_OK);
	f->c.opidx = 1;
	a_fixed(f, sid, 16);
	assert_int_equal(
		run(f, nfs4_dec_destroy_session, nfs4_run_destroy_session, OP_DESTROY_SESSION),
		NFS4ERR_NOT_ONLY_OP);
	f->c.opidx = 2;
	a_fixed(f, sid, 16);
	assert_int_equal(
		run(f, nfs4_dec_destroy_session, nfs4_run_destroy_session, OP_DESTROY_SESSION),
		NFS4_OK);
	sequence_done(f);
	assert_int_equal(sequence(f, sid, 5, 0, 1), NFS4ERR_BADSESSION);

	begin(f, 1, 1, 0);
	a_u64(f, clid);
	assert_int_equal(
		run(f, nfs4_dec_destroy_clientid, nfs4_run_destroy_clientid, OP_DESTROY_CLIENTID),
		NFS4_OK);
	nfs4_state_get_stats(&gw, &st);
	assert_int_equal(st.clients, 0);
	assert_int_equal(st.sessions, 0);
	begin(f, 1, 1, 0);
	a_u64(f, clid);
	assert_int_equal(
		run(f, nfs4_dec_destroy_clientid, nfs4_run_destroy_clientid, OP_DESTROY_CLIENTID),
		NFS4ERR_STALE_CLIENTID);
}

static void test_exchange_id_reboot(void **state)
{
	struct fx *f = *state;
	uint8_t sid[16], sid2[16];
	uint64_t clid, clid2;
	uint32_t seq, flags, n;

	assert_int_equal(exchange_id(f, "linux-r", 1, 0, &clid, &seq, &flags), NFS4_OK);
	assert_int_equal(create_session(f, clid, seq, sid, &n), NFS4_OK);
	/* the client reboots: a new record, the old one stays until the new one is confirmed */
	assert_int_equal(exchange_id(f, "linux-r", 2, 0, &clid2, &seq, &flags), NFS4_OK);
	assert_true(clid2 != clid);
	assert_false(flags & EXCHGID4_FLAG_CONFIRMED_R);
	assert_int_equal(sequence(f, sid, 1, 0, 1), NFS4_OK);
	sequence_done(f);
	assert_int_equal(create_session(f, clid2, seq, sid2, &n), NFS4_OK);
	assert_int_equal(sequence(f, sid, 2, 0, 1), NFS4ERR_BADSESSION);
	assert_int_equal(sequence(f, sid2, 1, 0, 1), NFS4_OK);
	sequence_done(f);
	/* SP4_MACH_CRED with AUTH_SYS: INVAL, as nfsd */
	{
		uint8_t v[8] = { 2 };

		begin(f, 1, 1, 0);
		a_fixed(f, v, 8);
		a_opaque(f, "linux-r", 7);
		a_u32(f, 0);
		a_u32(f, SP4_MACH_CRED);
		a_u32(f, 0);
		a_u32(f, 0);
		a_u32(f, 0);
		assert_int_equal(run(f, nfs4_dec_exchange_id, nfs4_run_exchange_id, OP_EXCHANGE_ID),
				 NFS4ERR_INVAL);
	}
	/* a 4.1 lease expiry takes the sessions */
	gw.state->lease = 10;
	nfs4_client_by_id(gw.state, clid2)->renewed -= 11;
	nfs4_state_reap(&gw);
	assert_int_equal(sequence(f, sid2, 2, 0, 1), NFS4ERR_BADSESSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_check),
		cmocka_unit_test(test_owner_seqid),
		cmocka_unit_test(test_sid_gen),
		cmocka_unit_test(test_special_sids),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_range_ofd),
		cmocka_unit_test(test_lset_reserve),
		cmocka_unit_test(test_lset_basic),
		cmocka_unit_test(test_lset_split_merge),
		cmocka_unit_test(test_lset_model),
		cmocka_unit_test_setup_teardown(test_setclientid, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_expiry, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sessions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_exchange_id_reboot, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
