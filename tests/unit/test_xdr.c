// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of XDR: every decoder at its boundaries (lengths and counts
 * at their maximum and one past it, inputs truncated at every byte,
 * padding present or missing, zero or not under strict_pad, huge lengths
 * that must not overflow), the cursor left unchanged by every failure;
 * the encoders' exact bytes; the segmented reply over small chunks
 * (items crossing chunk ends, references to external data and to pool
 * chunks kept alive by the reply, small references copied, the segment
 * array running out, the maximum length, deferred words, rolling back)
 * and the carver sharing one chunk between replies under an owner cap.
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

#include "xdr.h"

#define SMALL 256 /* chunk size that items and references cross */
#define NCH 64

struct fx {
	struct chunk_pool *pool;
	struct chunk_owner owner;
	struct xdr_carver carver;
	struct xdr_out out;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || chunk_pool_create(&f->pool, SMALL, NCH, 0))
		return -1;
	chunk_owner_init(&f->owner, f->pool, 0);
	xdr_carver_init(&f->carver, f->pool, &f->owner);
	xdr_out_init(&f->out, &f->carver, SIZE_MAX);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct chunk_pool_stats st;

	xdr_out_release(&f->out);
	xdr_carver_fini(&f->carver);
	chunk_pool_get_stats(f->pool, &st);
	assert_int_equal(st.in_use, 0); /* no reference leaked */
	chunk_pool_destroy(f->pool);
	free(f);
	return 0;
}

/* The reply flattened: its length must be @len and its bytes @want. */
static void expect_bytes(const struct xdr_out *out, const void *want, size_t len)
{
	uint8_t *buf = malloc(len + 1);
	unsigned int i, n;
	size_t sum = 0;
	const struct iovec *iov = xdr_out_iov(out, &n);

	assert_int_equal(out->err, 0);
	assert_int_equal(xdr_out_len(out), len);
	for (i = 0; i < n; i++)
		sum += iov[i].iov_len;
	assert_int_equal(sum, len);
	assert_int_equal(xdr_out_copy(out, 0, buf, len + 1), len);
	assert_memory_equal(buf, want, len);
	free(buf);
}

/* ---------------------------------------------------------------- decoding */

static void test_dec_ints(void **state)
{
	static const uint8_t in[] = { 0x12, 0x34, 0x56, 0x78, 0xff, 0xff, 0xff, 0xfe,
				      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd };
	struct xdr_in x;
	uint32_t u;
	int32_t i;
	uint64_t v;
	int64_t s;
	size_t len;

	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_u32(&x, &u), 0);
	assert_int_equal(u, 0x12345678);
	assert_int_equal(xdr_dec_i32(&x, &i), 0);
	assert_int_equal(i, -2);
	assert_int_equal(xdr_dec_u64(&x, &v), 0);
	assert_true(v == 0x0102030405060708ULL);
	assert_int_equal(xdr_dec_i64(&x, &s), 0);
	assert_true(s == -3);
	assert_int_equal(xdr_in_left(&x), 0);
	assert_int_equal(xdr_dec_u32(&x, &u), -EBADMSG);

	/* truncated at every length: fails, cursor unchanged */
	for (len = 0; len < 8; len++) {
		xdr_in_init(&x, in, len);
		assert_int_equal(xdr_dec_u64(&x, &v), -EBADMSG);
		assert_int_equal(x.pos, 0);
		if (len < 4) {
			assert_int_equal(xdr_dec_u32(&x, &u), -EBADMSG);
			assert_int_equal(xdr_dec_i32(&x, &i), -EBADMSG);
			assert_int_equal(x.pos, 0);
		}
		assert_int_equal(xdr_dec_i64(&x, &s), -EBADMSG);
		assert_int_equal(x.pos, 0);
	}
}

static void test_dec_bool_enum(void **state)
{
	static const uint8_t in[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff };
	struct xdr_in x;
	uint32_t e;
	bool b;

	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_bool(&x, &b), 0);
	assert_false(b);
	assert_int_equal(xdr_dec_bool(&x, &b), 0);
	assert_true(b);
	assert_int_equal(xdr_dec_bool(&x, &b), -EBADMSG); /* 2 */
	assert_int_equal(x.pos, 8);
	x.pos = 12;
	assert_int_equal(xdr_dec_bool(&x, &b), -EBADMSG); /* 0xffffffff */
	assert_int_equal(x.pos, 12);

	x.pos = 8;
	assert_int_equal(xdr_dec_enum(&x, &e, 1), -EBADMSG); /* 2 > max 1 */
	assert_int_equal(x.pos, 8);
	assert_int_equal(xdr_dec_enum(&x, &e, 2), 0); /* at max */
	assert_int_equal(e, 2);
	assert_int_equal(xdr_dec_enum(&x, &e, UINT32_MAX - 1), -EBADMSG);
	assert_int_equal(xdr_dec_enum(&x, &e, UINT32_MAX), 0);
}

static void test_dec_opaque_fixed(void **state)
{
	uint8_t in[16], copy[9];
	const uint8_t *p;
	struct xdr_in x;
	size_t n, len;

	for (n = 0; n < sizeof(in); n++)
		in[n] = (uint8_t)(n + 1);
	for (n = 0; n <= 9; n++) {
		size_t need = XDR_ALIGN(n);

		/* with its pad: ok; one byte short (pad included): fails */
		for (len = 0; len <= need; len++) {
			xdr_in_init(&x, in, len);
			if (len < need) {
				assert_int_equal(xdr_dec_opaque_fixed(&x, &p, n), -EBADMSG);
				assert_int_equal(xdr_dec_opaque_fixed_copy(&x, copy, n), -EBADMSG);
				assert_int_equal(x.pos, 0);
				continue;
			}
			assert_int_equal(xdr_dec_opaque_fixed(&x, &p, n), 0);
			assert_ptr_equal(p, in);
			assert_int_equal(x.pos, need);
			x.pos = 0;
			assert_int_equal(xdr_dec_opaque_fixed_copy(&x, copy, n), 0);
			assert_memory_equal(copy, in, n);
		}
	}
	/* a length near SIZE_MAX does not wrap */
	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_opaque_fixed(&x, &p, SIZE_MAX), -EBADMSG);
	assert_int_equal(xdr_dec_opaque_fixed(&x, &p, SIZE_MAX - 2), -EBADMSG);
	assert_int_equal(xdr_dec_skip(&x, SIZE_MAX - 3), -EBADMSG);
	assert_int_equal(x.pos, 0);
}

static void test_dec_padding(void **state)
{
	/* opaque<> of 5 bytes with non-zero pad bytes */
	static const uint8_t in[] = { 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 7, 0, 0, 0, 0, 9 };
	const uint8_t *p;
	struct xdr_in x;
	uint32_t n, v;

	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_opaque(&x, &p, &n, 8), 0); /* tolerated by default */
	assert_int_equal(n, 5);
	assert_int_equal(xdr_dec_u32(&x, &v), 0);
	assert_int_equal(v, 9);

	xdr_in_init(&x, in, sizeof(in));
	x.strict_pad = true;
	assert_int_equal(xdr_dec_opaque(&x, &p, &n, 8), -EBADMSG);
	assert_int_equal(x.pos, 0);
	assert_int_equal(xdr_dec_skip(&x, 4), 0);
	assert_int_equal(xdr_dec_skip(&x, 5), -EBADMSG);
	assert_int_equal(xdr_dec_skip(&x, 6), -EBADMSG);
	assert_int_equal(xdr_dec_skip(&x, 7), 0); /* the only pad byte is 0 */
	assert_int_equal(x.pos, 12);
}

static void test_dec_opaque(void **state)
{
	uint8_t in[4 + 12];
	const uint8_t *p;
	struct xdr_in x;
	uint32_t n, max, len;

	memset(in, 'x', sizeof(in));
	/* at the max: ok; max + 1: refused even though the bytes are there */
	for (max = 0; max <= 12; max++) {
		xdr_put_u32(in, max);
		xdr_in_init(&x, in, 4 + XDR_ALIGN(max));
		assert_int_equal(xdr_dec_opaque(&x, &p, &n, max), 0);
		assert_int_equal(n, max);
		assert_ptr_equal(p, in + 4);
		assert_int_equal(xdr_in_left(&x), 0);
		if (max == 0)
			continue;
		xdr_in_init(&x, in, 4 + XDR_ALIGN(max));
		assert_int_equal(xdr_dec_opaque(&x, &p, &n, max - 1), -EBADMSG);
		assert_int_equal(x.pos, 0);
	}
	/* truncated at every byte */
	xdr_put_u32(in, 9);
	for (len = 0; len < 16; len++) {
		xdr_in_init(&x, in, len);
		assert_int_equal(xdr_dec_opaque(&x, &p, &n, 100), -EBADMSG);
		assert_int_equal(x.pos, 0);
	}
	xdr_in_init(&x, in, 16);
	assert_int_equal(xdr_dec_opaque(&x, &p, &n, 100), 0);
	/* lengths that would overflow a 32-bit sum */
	xdr_put_u32(in, UINT32_MAX);
	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_opaque(&x, &p, &n, UINT32_MAX), -EBADMSG);
	xdr_put_u32(in, UINT32_MAX - 1);
	assert_int_equal(xdr_dec_opaque(&x, &p, &n, UINT32_MAX), -EBADMSG);
	assert_int_equal(x.pos, 0);
}

static void test_dec_string(void **state)
{
	static const uint8_t ok[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0 };
	static const uint8_t nul[] = { 0, 0, 0, 3, 'a', 0, 'c', 0 };
	char buf[4];
	const char *s;
	struct xdr_in x;
	uint32_t n;

	xdr_in_init(&x, ok, sizeof(ok));
	assert_int_equal(xdr_dec_string(&x, &s, &n, 3), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(s, "abc", 3);
	xdr_in_init(&x, ok, sizeof(ok));
	assert_int_equal(xdr_dec_string(&x, &s, &n, 2), -EBADMSG);
	xdr_in_init(&x, nul, sizeof(nul));
	assert_int_equal(xdr_dec_string(&x, &s, &n, 3), -EBADMSG);
	assert_int_equal(x.pos, 0);

	xdr_in_init(&x, ok, sizeof(ok));
	assert_int_equal(xdr_dec_string_copy(&x, buf, 3, 3), -EINVAL); /* no room for NUL */
	assert_int_equal(xdr_dec_string_copy(&x, buf, sizeof(buf), 3), 0);
	assert_string_equal(buf, "abc");
	xdr_in_init(&x, nul, sizeof(nul));
	assert_int_equal(xdr_dec_string_copy(&x, buf, sizeof(buf), 3), -EBADMSG);
}

static void test_dec_arrays(void **state)
{
	uint8_t in[4 + 4 * 17];
	uint32_t out[17], n, i;
	struct xdr_in x;

	for (i = 0; i < 17; i++)
		xdr_put_u32(in + 4 + 4 * i, 100 + i);
	/* count at the max, and max + 1 */
	xdr_put_u32(in, 16);
	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_u32_array(&x, out, &n, 16), 0);
	assert_int_equal(n, 16);
	assert_int_equal(out[15], 115);
	xdr_put_u32(in, 17);
	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_u32_array(&x, out, &n, 16), -EBADMSG);
	assert_int_equal(x.pos, 0);
	/* count fitting the max but not the bytes left */
	xdr_put_u32(in, 16);
	xdr_in_init(&x, in, 4 + 4 * 15);
	assert_int_equal(xdr_dec_u32_array(&x, out, &n, 16), -EBADMSG);
	assert_int_equal(x.pos, 0);

	/* xdr_dec_count: min_item sizes against what is left */
	xdr_put_u32(in, 4);
	xdr_in_init(&x, in, 4 + 32);
	assert_int_equal(xdr_dec_count(&x, &n, 1000, 8), 0); /* 4 * 8 == 32 left */
	x.pos = 0;
	assert_int_equal(xdr_dec_count(&x, &n, 1000, 9), -EBADMSG);
	x.pos = 0;
	assert_int_equal(xdr_dec_count(&x, &n, 3, 0), -EBADMSG);
	xdr_put_u32(in, UINT32_MAX);
	x.pos = 0;
	assert_int_equal(xdr_dec_count(&x, &n, UINT32_MAX, 0), 0); /* no item size: max only */
	x.pos = 0;
	assert_int_equal(xdr_dec_count(&x, &n, UINT32_MAX, 1), -EBADMSG);
}

static void test_dec_sub(void **state)
{
	static const uint8_t in[] = { 0, 0, 0, 1, 0, 0, 0, 2, 0xaa, 0, 0, 1, 0, 0, 0, 3 };
	struct xdr_in x, sub;
	uint32_t v;

	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_sub(&x, 9, &sub), 0);
	assert_int_equal(x.pos, 12); /* past the pad */
	assert_int_equal(sub.len, 9);
	assert_int_equal(xdr_dec_u32(&sub, &v), 0);
	assert_int_equal(xdr_dec_u32(&sub, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(xdr_dec_u32(&sub, &v), -EBADMSG); /* only 1 byte left in sub */
	assert_int_equal(xdr_dec_u32(&x, &v), 0);
	assert_int_equal(v, 3);
	xdr_in_init(&x, in, sizeof(in));
	assert_int_equal(xdr_dec_sub(&x, 17, &sub), -EBADMSG);
	x.strict_pad = true;
	assert_int_equal(xdr_dec_sub(&x, 9, &sub), -EBADMSG); /* pad byte 0x01 */
	assert_int_equal(xdr_dec_sub(&x, 8, &sub), 0);
	assert_true(sub.strict_pad);
}

/* ---------------------------------------------------------------- encoding */

static void test_enc_items(void **state)
{
	static const uint8_t want[] = {
		0x12, 0x34, 0x56, 0x78, 0xff, 0xff, 0xff, 0xff,		    /* u32, i32 -1 */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,		    /* u64 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,		    /* i64 -2 */
		0,    0,    0,	  1,	0,    0,    0,	  0,		    /* bool true, false */
		'a',  'b',  'c',  'd',	'e',  0,    0,	  0,		    /* opaque[5] */
		0,    0,    0,	  2,	'x',  'y',  0,	  0,		    /* opaque<> */
		0,    0,    0,	  3,	'f',  's',  '!',  0,		    /* string */
		0,    0,    0,	  2,	0,    0,    0,	  7,	0, 0, 0, 9, /* u32<> */
		0,    0,    0,	  0,					    /* empty opaque<> */
	};
	static const uint32_t arr[] = { 7, 9 };
	struct fx *f = *state;
	struct xdr_out *out = &f->out;

	assert_int_equal(xdr_enc_u32(out, 0x12345678), 0);
	assert_int_equal(xdr_enc_i32(out, -1), 0);
	assert_int_equal(xdr_enc_u64(out, 0x0102030405060708ULL), 0);
	assert_int_equal(xdr_enc_i64(out, -2), 0);
	assert_int_equal(xdr_enc_bool(out, true), 0);
	assert_int_equal(xdr_enc_bool(out, false), 0);
	assert_int_equal(xdr_enc_opaque_fixed(out, "abcde", 5), 0);
	assert_int_equal(xdr_enc_opaque(out, "xy", 2, 2), 0);
	assert_int_equal(xdr_enc_string(out, "fs!", 3, 10), 0);
	assert_int_equal(xdr_enc_u32_array(out, arr, 2, 2), 0);
	assert_int_equal(xdr_enc_opaque(out, NULL, 0, 0), 0);
	expect_bytes(out, want, sizeof(want));
	assert_int_equal(out->nseg, 1); /* all in one chunk */
	assert_int_equal((uintptr_t)out->seg[0].iov_base % XDR_OUT_ALIGN, 0);

	/* over a declared max: refused, sticky */
	assert_int_equal(xdr_enc_opaque(out, "xyz", 3, 2), -EINVAL);
	assert_int_equal(xdr_enc_u32(out, 1), -EINVAL);
	assert_int_equal(xdr_out_len(out), sizeof(want));
	xdr_out_release(out);
	assert_int_equal(xdr_enc_u32_array(out, arr, 2, 1), -EINVAL);
}

/* Items and copies crossing chunk ends land in new segments, bytes intact. */
static void test_enc_cross_chunks(void **state)
{
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	uint8_t data[1000], *want;
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	want = malloc(4 * 63 + 8 + sizeof(data));
	for (i = 0; i < 63; i++) {
		xdr_put_u32(want + 4 * i, i);
		assert_int_equal(xdr_enc_u32(out, i), 0);
	}
	/* 252 bytes used of 256: a u64 does not fit, goes to a new chunk */
	assert_int_equal(out->nseg, 1);
	assert_int_equal(xdr_enc_u64(out, 0x1122334455667788ULL), 0);
	xdr_put_u32(want + 252, 0x11223344);
	xdr_put_u32(want + 256, 0x55667788);
	assert_int_equal(out->nseg, 2);
	assert_int_equal(xdr_out_write(out, data, sizeof(data)), 0);
	memcpy(want + 260, data, sizeof(data));
	expect_bytes(out, want, 260 + sizeof(data));
	assert_true(out->nseg >= 5);
	for (i = 0; i < out->nseg; i++)
		assert_true(out->seg[i].iov_len <= SMALL);
	free(want);
}

static void test_enc_ref_external(void **state)
{
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	uint8_t data[1001], *want;
	size_t n;

	memset(data, 0xd7, sizeof(data));
	want = calloc(1, 4 + 1004 + 4);
	xdr_put_u32(want, 1001);
	memcpy(want + 4, data, 1001);
	xdr_put_u32(want + 1008, 0xeeeeeeee);
	assert_int_equal(xdr_enc_opaque_ref(out, data, sizeof(data)), 0);
	assert_int_equal(xdr_enc_u32(out, 0xeeeeeeee), 0);
	expect_bytes(out, want, 1012);
	/* length word | the data itself, in place | pad and tail */
	assert_int_equal(out->nseg, 3);
	assert_ptr_equal(out->seg[1].iov_base, data);
	assert_int_equal(out->seg[1].iov_len, 1001);
	assert_null(out->hold[1]);
	assert_int_equal(out->seg[2].iov_len, 3 + 4);
	/* head and tail share the chunk */
	assert_ptr_equal(out->hold[0], out->hold[2]);
	/* partial copies at odd offsets */
	for (n = 0; n < 1012; n += 37) {
		uint8_t buf[50];
		size_t got = xdr_out_copy(out, n, buf, sizeof(buf));

		assert_int_equal(got, n + 50 <= 1012 ? 50 : 1012 - n);
		assert_memory_equal(buf, want + n, got);
	}
	free(want);
}

static void test_enc_ref_pool(void **state)
{
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	uint8_t want[4 + 200 + 4];
	uint8_t *data, *again;

	/* READ data filled by someone else in a chunk of the same pool */
	assert_int_equal(chunk_get(f->pool, NULL, (void **)&data), 0);
	memset(data + 56, 0x5a, 200);
	xdr_put_u32(want, 200);
	memset(want + 4, 0x5a, 200);
	xdr_put_u32(want + 204, 1);
	/* 200 bytes < XDR_OUT_REF_COPY_MIN would be copied: use xdr_out_ref above it */
	assert_true(200 < XDR_OUT_REF_COPY_MIN);
	assert_int_equal(xdr_enc_opaque_ref(out, data + 56, 200), 0);
	assert_int_equal(out->nseg, 1); /* copied */
	assert_int_equal(xdr_enc_u32(out, 1), 0);
	expect_bytes(out, want, sizeof(want));
	xdr_out_release(out);

	memset(data, 0x33, SMALL);
	assert_int_equal(xdr_out_ref(out, data, SMALL), 0);
	assert_int_equal(out->nseg, 1);
	assert_ptr_equal(out->seg[0].iov_base, data);
	assert_ptr_equal(out->hold[0], data);
	assert_int_equal(chunk_refs(f->pool, data), 2);
	/* the filler lets go: the reply keeps the data alive */
	chunk_put(f->pool, data);
	assert_int_equal(chunk_refs(f->pool, data), 1);
	xdr_out_release(out);
	/* now free: it is the next chunk out (LIFO) */
	assert_int_equal(chunk_get(f->pool, NULL, (void **)&again), 0);
	assert_ptr_equal(again, data);

	/* a reference straddling two chunks is refused */
	assert_int_equal(xdr_out_ref(out, data + SMALL - 300 + 100, 300), -EINVAL);
	assert_int_equal(xdr_enc_u32(out, 1), -EINVAL);
	chunk_put(f->pool, data);
}

/* Segments run out: later references are copied, the reply stays whole. */
static void test_enc_segs_full(void **state)
{
	static uint8_t ext[XDR_OUT_SEGS_MAX][XDR_OUT_REF_COPY_MIN];
	unsigned int i, refs = 0;
	struct chunk_pool *pool;
	struct xdr_carver c;
	struct xdr_out out;
	uint8_t *want, *w;
	size_t len = 0;

	assert_int_equal(chunk_pool_create(&pool, 65536, 2, 0), 0);
	xdr_carver_init(&c, pool, NULL);
	xdr_out_init(&out, &c, SIZE_MAX);
	want = malloc(XDR_OUT_SEGS_MAX * (4 + XDR_OUT_REF_COPY_MIN));
	w = want;
	for (i = 0; i < XDR_OUT_SEGS_MAX; i++) {
		memset(ext[i], (int)i, sizeof(ext[i]));
		assert_int_equal(xdr_enc_opaque_ref(&out, ext[i], sizeof(ext[i])), 0);
		assert_true(out.nseg <= XDR_OUT_SEGS_MAX);
		xdr_put_u32(w, sizeof(ext[i]));
		memcpy(w + 4, ext[i], sizeof(ext[i]));
		w += 4 + sizeof(ext[i]);
		len += 4 + sizeof(ext[i]);
	}
	for (i = 0; i < out.nseg; i++)
		refs += !out.hold[i];
	/* about half the segment array went to references, then copies */
	assert_true(refs > 0 && refs < XDR_OUT_SEGS_MAX / 2 + 1);
	assert_true(out.nseg <= XDR_OUT_SEGS_MAX - XDR_OUT_SEGS_RESERVE + 2);
	expect_bytes(&out, want, len);
	free(want);
	xdr_out_release(&out);
	xdr_carver_fini(&c);
	chunk_pool_destroy(pool);
}

static void test_enc_max(void **state)
{
	struct fx *f = *state;
	struct xdr_out out;
	uint8_t data[300] = { 0 };

	xdr_out_init(&out, &f->carver, 12);
	assert_int_equal(xdr_enc_u32(&out, 1), 0);
	assert_int_equal(xdr_enc_u32(&out, 2), 0);
	assert_int_equal(xdr_enc_u32(&out, 3), 0); /* exactly at max */
	assert_int_equal(xdr_enc_u32(&out, 4), -EMSGSIZE);
	assert_int_equal(xdr_enc_u32(&out, 5), -EMSGSIZE); /* sticky */
	assert_int_equal(xdr_out_len(&out), 12);
	xdr_out_release(&out);

	/* a pad that would cross the max is refused up front */
	xdr_out_init(&out, &f->carver, 4 + 299);
	assert_int_equal(xdr_enc_u32(&out, 0), 0);
	assert_int_equal(xdr_out_ref(&out, data, 299), -EMSGSIZE);
	assert_int_equal(xdr_out_len(&out), 4);
	xdr_out_release(&out);
	xdr_out_init(&out, &f->carver, 4 + 300);
	assert_int_equal(xdr_enc_u32(&out, 0), 0);
	assert_int_equal(xdr_enc_opaque_fixed(&out, data, 299), 0);
	assert_int_equal(xdr_out_len(&out), 304);
	xdr_out_release(&out);
}

static void test_enc_marks(void **state)
{
	static const uint8_t want[] = { 0,   0,	  0,   16,  0, 0, 0, 2, 0, 0, 0, 4,
					'a', 'b', 'c', 'd', 0, 0, 0, 9, 0, 0, 0, 1 };
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	struct xdr_mark total, count, len;

	assert_int_equal(xdr_out_reserve(out, &total), 0);
	assert_int_equal(xdr_out_reserve(out, &count), 0);
	assert_int_equal(xdr_out_reserve(out, &len), 0);
	assert_int_equal(xdr_out_write(out, "abcd", 4), 0);
	xdr_out_fill(&len, (uint32_t)xdr_out_since(out, &len));
	assert_int_equal(xdr_enc_u32(out, 9), 0);
	xdr_out_fill(&count, 2);
	assert_int_equal(total.off, 0);
	assert_int_equal(len.off, 8);
	xdr_out_fill(&total, (uint32_t)xdr_out_since(out, &total));
	assert_int_equal(xdr_enc_u32(out, 1), 0);
	expect_bytes(out, want, sizeof(want));
}

static void test_enc_truncate(void **state)
{
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	struct chunk_pool_stats st;
	static uint8_t ext[400];
	uint8_t want[12];
	struct xdr_pos pos;
	uint8_t *first;
	size_t used;

	assert_int_equal(xdr_enc_u32(out, 1), 0);
	assert_int_equal(xdr_enc_u32(out, 2), 0);
	xdr_out_getpos(out, &pos);
	first = out->seg[0].iov_base;
	used = f->carver.used;
	/* roll back a local tail: the carver takes the bytes back */
	assert_int_equal(xdr_enc_u64(out, 77), 0);
	xdr_out_truncate(out, &pos);
	assert_int_equal(f->carver.used, used);
	assert_int_equal(xdr_enc_u32(out, 3), 0);
	assert_ptr_equal(out->seg[0].iov_base, first);
	assert_int_equal(out->nseg, 1);

	/* roll back across a reference and several chunks */
	xdr_out_getpos(out, &pos);
	assert_int_equal(xdr_enc_opaque_ref(out, ext, sizeof(ext)), 0);
	assert_int_equal(xdr_out_write(out, ext, sizeof(ext)), 0);
	chunk_pool_get_stats(f->pool, &st);
	assert_true(st.in_use >= 2);
	xdr_out_truncate(out, &pos);
	chunk_pool_get_stats(f->pool, &st);
	assert_int_equal(st.in_use, 2); /* the reply's first chunk and the carver's */
	assert_int_equal(out->nseg, 1);
	xdr_put_u32(want, 1);
	xdr_put_u32(want + 4, 2);
	xdr_put_u32(want + 8, 3);
	expect_bytes(out, want, 12);

	/* truncation clears a -EMSGSIZE so the encoder can carry on */
	out->max = 16;
	xdr_out_getpos(out, &pos);
	assert_int_equal(xdr_enc_u64(out, 5), -EMSGSIZE);
	xdr_out_truncate(out, &pos);
	assert_int_equal(out->err, 0);
	assert_int_equal(xdr_enc_u32(out, 4), 0);
	assert_int_equal(xdr_out_len(out), 16);
	out->max = SIZE_MAX;

	/* back to empty */
	pos = (struct xdr_pos){ 0 };
	xdr_out_truncate(out, &pos);
	assert_int_equal(xdr_out_len(out), 0);
	assert_int_equal(out->nseg, 0);
}

/* DDP-eligible opaques: the same bytes as by reference, their places marked. */
static void test_enc_ddp(void **state)
{
	struct fx *f = *state;
	struct xdr_out *out = &f->out;
	static uint8_t ext[301];
	struct xdr_pos pos;
	unsigned int i;

	memset(ext, 0x5a, sizeof(ext));
	assert_int_equal(xdr_enc_u32(out, 7), 0);
	assert_int_equal(xdr_enc_opaque_ddp(out, ext, sizeof(ext)), 0);
	/* 4 (the u32) + 4 (the length word): the item starts at 8, without its pad */
	assert_int_equal(out->nddp, 1);
	assert_int_equal(out->ddp[0].off, 8);
	assert_int_equal(out->ddp[0].len, 301);
	assert_int_equal(xdr_out_len(out), 8 + 304);
	assert_ptr_equal(out->seg[1].iov_base, ext);
	/* a truncation before an item drops its mark; after it keeps it */
	xdr_out_getpos(out, &pos);
	assert_int_equal(xdr_enc_opaque_ddp(out, ext, 10), 0);
	assert_int_equal(out->nddp, 2);
	assert_int_equal(out->ddp[1].off, 8 + 304 + 4);
	xdr_out_truncate(out, &pos);
	assert_int_equal(out->nddp, 1);
	/* an item that does not fit: an error, and no mark for it */
	out->max = xdr_out_len(out) + 8;
	assert_int_equal(xdr_enc_opaque_ddp(out, ext, 100), -EMSGSIZE);
	assert_int_equal(out->nddp, 1);
	xdr_out_truncate(out, &pos);
	out->max = SIZE_MAX;
	/* past XDR_OUT_DDP_MAX items, the rest is encoded but not marked */
	for (i = 0; i < XDR_OUT_DDP_MAX + 2; i++)
		assert_int_equal(xdr_enc_opaque_ddp(out, ext, 4), 0);
	assert_int_equal(out->nddp, XDR_OUT_DDP_MAX);
	assert_int_equal(xdr_out_len(out), 8 + 304 + (XDR_OUT_DDP_MAX + 2) * 8);
}

/* Replies share the carver's chunk, which lives until the last is released. */
static void test_carver_sharing(void **state)
{
	struct fx *f = *state;
	struct xdr_out a, b;
	struct chunk_pool_stats st;
	uint8_t *chunk;

	xdr_out_init(&a, &f->carver, SIZE_MAX);
	xdr_out_init(&b, &f->carver, SIZE_MAX);
	assert_int_equal(xdr_enc_u32(&a, 1), 0);
	assert_int_equal(xdr_enc_u32(&b, 2), 0);
	chunk = a.hold[0];
	assert_ptr_equal(b.hold[0], chunk);
	/* each reply starts on its own cache line */
	assert_int_equal((uint8_t *)b.seg[0].iov_base - chunk, XDR_OUT_ALIGN);
	assert_int_equal(chunk_refs(f->pool, chunk), 3);
	/* interleaved: a cannot grow in place any more, opens a segment */
	assert_int_equal(xdr_enc_u32(&a, 3), 0);
	assert_int_equal(a.nseg, 2);
	xdr_carver_fini(&f->carver);
	xdr_out_release(&a);
	chunk_pool_get_stats(f->pool, &st);
	assert_int_equal(st.in_use, 1);
	xdr_out_release(&b);
	chunk_pool_get_stats(f->pool, &st);
	assert_int_equal(st.in_use, 0);
	xdr_carver_init(&f->carver, f->pool, &f->owner);
}

/* Two replies interleaved on one carver: every append opens a segment until none is left. */
static void test_enc_segs_local(void **state)
{
	struct fx *f = *state;
	struct xdr_out a, b;
	uint8_t want[4 * XDR_OUT_SEGS_MAX];
	unsigned int i;

	xdr_out_init(&a, &f->carver, SIZE_MAX);
	xdr_out_init(&b, &f->carver, SIZE_MAX);
	for (i = 0; i < XDR_OUT_SEGS_MAX; i++) {
		assert_int_equal(xdr_enc_u32(&a, i), 0);
		assert_int_equal(xdr_enc_u32(&b, i), 0);
		xdr_put_u32(want + 4 * i, i);
	}
	assert_int_equal(a.nseg, XDR_OUT_SEGS_MAX);
	assert_int_equal(xdr_enc_u32(&b, 0), 0); /* b's last segment can still grow */
	assert_int_equal(xdr_enc_u32(&a, 0), -ENOSPC);
	assert_int_equal(xdr_enc_u32(&a, 0), -ENOSPC);
	a.err = 0;
	expect_bytes(&a, want, sizeof(want));
	xdr_out_release(&a);
	xdr_out_release(&b);
}

static void test_carver_owner_cap(void **state)
{
	struct fx *f = *state;
	struct xdr_carver c;
	struct chunk_owner o;
	struct xdr_out out;
	uint8_t data[SMALL + 8] = { 0 };

	chunk_owner_init(&o, f->pool, SMALL);
	xdr_carver_init(&c, f->pool, &o);
	xdr_out_init(&out, &c, SIZE_MAX);
	assert_int_equal(xdr_out_write(&out, data, SMALL), 0);
	assert_int_equal(chunk_owner_bytes(&o), SMALL);
	/* a second chunk would go over the owner's cap */
	assert_int_equal(xdr_out_write(&out, data, 8), -ENOBUFS);
	assert_int_equal(xdr_enc_u32(&out, 0), -ENOBUFS);
	assert_int_equal(xdr_out_len(&out), SMALL);
	assert_null(xdr_out_space(&out, 4));
	xdr_out_release(&out);
	xdr_carver_fini(&c);
	assert_false(chunk_owner_busy(&o));

	/* contiguous space larger than a chunk is a caller bug */
	xdr_carver_init(&c, f->pool, NULL);
	xdr_out_init(&out, &c, SIZE_MAX);
	assert_null(xdr_out_space(&out, SMALL + 1));
	assert_int_equal(out.err, -EINVAL);
	xdr_out_release(&out);
	assert_null(xdr_out_space(&out, 0));
	xdr_out_release(&out);
	xdr_carver_fini(&c);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dec_ints),
		cmocka_unit_test(test_dec_bool_enum),
		cmocka_unit_test(test_dec_opaque_fixed),
		cmocka_unit_test(test_dec_padding),
		cmocka_unit_test(test_dec_opaque),
		cmocka_unit_test(test_dec_string),
		cmocka_unit_test(test_dec_arrays),
		cmocka_unit_test(test_dec_sub),
		T(test_enc_items),
		T(test_enc_cross_chunks),
		T(test_enc_ref_external),
		T(test_enc_ref_pool),
		T(test_enc_segs_full),
		T(test_enc_max),
		T(test_enc_marks),
		T(test_enc_truncate),
		T(test_enc_ddp),
		T(test_carver_sharing),
		T(test_enc_segs_local),
		T(test_carver_owner_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
