// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of the fattr4 decoders of lacunad (gateway/nfs4/nfs4_attr.c):
 * the input is a fattr4 as SETATTR, CREATE and OPEN carry it, decoded by
 * nfs4_dec_sattr(), then as VERIFY's and GETATTR's bitmap4 by
 * nfs4_dec_attrmask().
 *
 * Checked: every status is one the header promises; unless BADXDR, the
 * cursor ends exactly past bitmap and opaque (the bytes a walk of the
 * outer structure finds); a decoded set holds writable attributes only,
 * mode within 07777, ids at most GW_ID_MAX, client times with
 * nanoseconds below 10^9; re-encoded (owners as decimal strings) it
 * decodes to the same set; nothing is read out of bounds.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz_sattr: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                 \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* Where a fattr4 at @x ends, walking bitmap and opaque only; false if it does not. */
static bool outer_end(const uint8_t *data, size_t size, size_t *end)
{
	struct xdr_in x;
	uint32_t n, i, w, len;

	xdr_in_init(&x, data, size);
	if (xdr_dec_u32(&x, &n) || n > NFS4_BITMAP_WIRE_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (xdr_dec_u32(&x, &w))
			return false;
	if (xdr_dec_u32(&x, &len) || len > NFS4_ATTRLIST_MAX || xdr_dec_skip(&x, len))
		return false;
	*end = x.pos;
	return true;
}

struct buf {
	uint8_t b[NFS4_ATTRLIST_MAX + 64];
	size_t n;
};

static void put32(struct buf *b, uint32_t v)
{
	xdr_put_u32(b->b + b->n, v);
	b->n += 4;
}

static void put_owner(struct buf *b, uint32_t id)
{
	char s[16];
	int n = snprintf(s, sizeof(s), "%u", id);

	put32(b, (uint32_t)n);
	memset(b->b + b->n, 0, XDR_ALIGN((size_t)n));
	memcpy(b->b + b->n, s, (size_t)n);
	b->n += XDR_ALIGN((size_t)n);
}

static void put_time(struct buf *b, uint32_t how, const struct timespec *ts)
{
	put32(b, how);
	if (how == SET_TO_CLIENT_TIME4) {
		put32(b, (uint32_t)((uint64_t)ts->tv_sec >> 32));
		put32(b, (uint32_t)ts->tv_sec);
		put32(b, (uint32_t)ts->tv_nsec);
	}
}

/* @sa encoded as a fattr4 again */
static void reencode(const struct nfs4_sattr *sa, struct buf *out)
{
	struct buf v = { .n = 0 };
	unsigned int i;

	if (nfs4_bm_isset(&sa->mask, FATTR4_SIZE)) {
		put32(&v, (uint32_t)(sa->size >> 32));
		put32(&v, (uint32_t)sa->size);
	}
	if (nfs4_bm_isset(&sa->mask, FATTR4_MODE))
		put32(&v, sa->mode);
	if (nfs4_bm_isset(&sa->mask, FATTR4_OWNER))
		put_owner(&v, sa->uid);
	if (nfs4_bm_isset(&sa->mask, FATTR4_OWNER_GROUP))
		put_owner(&v, sa->gid);
	if (nfs4_bm_isset(&sa->mask, FATTR4_TIME_ACCESS_SET))
		put_time(&v, sa->atime_how, &sa->atime);
	if (nfs4_bm_isset(&sa->mask, FATTR4_TIME_MODIFY_SET))
		put_time(&v, sa->mtime_how, &sa->mtime);
	out->n = 0;
	put32(out, NFS4_BITMAP_MAX);
	for (i = 0; i < NFS4_BITMAP_MAX; i++)
		put32(out, sa->mask.w[i]);
	put32(out, (uint32_t)v.n);
	memcpy(out->b + out->n, v.b, v.n);
	out->n += v.n;
}

static void check_time(uint32_t how, const struct timespec *ts)
{
	CHECK(how == SET_TO_SERVER_TIME4 || how == SET_TO_CLIENT_TIME4);
	if (how == SET_TO_SERVER_TIME4)
		CHECK(ts->tv_nsec == UTIME_NOW);
	else
		CHECK(ts->tv_nsec >= 0 && ts->tv_nsec <= 999999999);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfs4_sattr sa, again;
	struct nfs4_bitmap wr, bm;
	struct xdr_in x;
	struct buf *re;
	size_t end = 0;
	bool beyond, whole = outer_end(data, size, &end);
	uint32_t st;
	unsigned int i;

	xdr_in_init(&x, data, size);
	st = nfs4_dec_sattr(&x, &sa);
	CHECK(st == NFS4_OK || st == NFS4ERR_BADXDR || st == NFS4ERR_ATTRNOTSUPP ||
	      st == NFS4ERR_INVAL || st == NFS4ERR_BADOWNER);
	CHECK(x.pos <= size);
	if (st != NFS4ERR_BADXDR) {
		CHECK(whole);
		CHECK(x.pos == end);
	}
	if (!whole)
		CHECK(st == NFS4ERR_BADXDR);

	/* the bitmap alone, as GETATTR and VERIFY decode it */
	xdr_in_init(&x, data, size);
	if (nfs4_dec_attrmask(&x, &bm, &beyond) == 0)
		CHECK(x.pos <= size && (x.pos - 4) % 4 == 0);
	else
		CHECK(x.pos == 0);

	if (st != NFS4_OK)
		return 0;
	nfs4_attr_writable(&wr);
	for (i = 0; i < NFS4_BITMAP_MAX; i++)
		CHECK(!(sa.mask.w[i] & ~wr.w[i]));
	CHECK(sa.mode <= 07777);
	CHECK(sa.uid <= GW_ID_MAX && sa.gid <= GW_ID_MAX);
	if (nfs4_bm_isset(&sa.mask, FATTR4_TIME_ACCESS_SET))
		check_time(sa.atime_how, &sa.atime);
	if (nfs4_bm_isset(&sa.mask, FATTR4_TIME_MODIFY_SET))
		check_time(sa.mtime_how, &sa.mtime);

	re = malloc(sizeof(*re));
	CHECK(re);
	reencode(&sa, re);
	xdr_in_init(&x, re->b, re->n);
	CHECK(nfs4_dec_sattr(&x, &again) == NFS4_OK);
	CHECK(x.pos == re->n);
	CHECK(!memcmp(&sa.mask, &again.mask, sizeof(sa.mask)));
	CHECK(sa.size == again.size && sa.mode == again.mode && sa.uid == again.uid &&
	      sa.gid == again.gid);
	CHECK(sa.atime_how == again.atime_how && sa.mtime_how == again.mtime_how);
	CHECK(sa.atime.tv_sec == again.atime.tv_sec && sa.atime.tv_nsec == again.atime.tv_nsec);
	CHECK(sa.mtime.tv_sec == again.mtime.tv_sec && sa.mtime.tv_nsec == again.mtime.tv_nsec);
	free(re);
	return 0;
}
