// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of the XDR decoder and the segmented encoder. The input
 * is a small program and the data it decodes:
 *
 *   byte 0   flags: bit 0 strict_pad; bits 1-2 chunk size (64, 256,
 *            4096, 4096); bit 3 bound the reply to 4 * byte 1 bytes;
 *            bit 4 cap the reply's owner at two chunks; bit 5 put the
 *            data in a pool chunk, so references to it hold the chunk
 *   byte 1   the bound for bit 3
 *   byte 2   L, the program's length; then L op bytes; the rest is data
 *
 * Each op byte decodes one item (low nibble: which, high nibble: its
 * length or maximum, whose low bits also pick a variant) and encodes what it decoded into a reply
 * over pooled chunks, by copy or by reference; other ops take and roll back to positions on both
 * sides and defer words. Checked: a failed decode leaves the cursor where it was; decoded values
 * keep their bounds; the reply's segments add up to its length; under strict_pad the reply is byte
 * for byte the input it came from; nothing is read past the input and every chunk reference is
 * released (the pool is empty after each input).
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz_xdr: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                               \
			abort();                                                         \
		}                                                                        \
	} while (0)

#define NCHUNKS 64
static const size_t chunk_sizes[4] = { 64, 256, 4096, 4096 };
static struct chunk_pool *pools[4];

/* op lengths: 0..11 as is, then 100..400 to pass XDR_OUT_REF_COPY_MIN */
static uint32_t op_len(unsigned int param)
{
	return param < 12 ? param : (param - 11) * 100;
}

struct run {
	struct xdr_in x;
	struct xdr_out out;
	bool have_pos, have_mark;
	struct xdr_pos opos;
	size_t ipos;
	struct xdr_mark mark;
	uint32_t mark_val;
};

/* One op: 0 to go on, -1 when the encoder failed (stop encoding). */
static int run_op(struct run *r, unsigned int op, unsigned int param)
{
	struct xdr_in *x = &r->x, sub;
	struct xdr_out *out = &r->out;
	size_t before = x->pos;
	uint32_t u, n, arr[16], len = op_len(param);
	uint8_t buf[400];
	char str[401];
	int32_t i32;
	int64_t i64;
	const uint8_t *p;
	const char *s;
	uint64_t v;
	bool b;
	int rc = 0, enc = 0;

	switch (op) {
	case 0:
		rc = xdr_dec_u32(x, &u);
		if (!rc)
			enc = xdr_enc_u32(out, u);
		break;
	case 1:
		rc = xdr_dec_i32(x, &i32);
		if (!rc)
			enc = xdr_enc_i32(out, i32);
		break;
	case 2:
		rc = xdr_dec_u64(x, &v);
		if (!rc)
			enc = xdr_enc_u64(out, v);
		break;
	case 3:
		rc = xdr_dec_i64(x, &i64);
		if (!rc)
			enc = xdr_enc_i64(out, i64);
		break;
	case 4:
		rc = xdr_dec_bool(x, &b);
		if (!rc)
			enc = xdr_enc_bool(out, b);
		break;
	case 5:
		rc = xdr_dec_enum(x, &u, param);
		if (!rc) {
			CHECK(u <= param);
			enc = xdr_enc_u32(out, u);
		}
		break;
	case 6:
		if (param & 2) {
			rc = xdr_dec_opaque_fixed_copy(x, buf, len);
			if (!rc)
				enc = xdr_enc_opaque_fixed(out, buf, len);
			break;
		}
		rc = xdr_dec_opaque_fixed(x, &p, len);
		if (!rc)
			enc = param & 1 ? xdr_out_ref(out, p, len)
					: xdr_enc_opaque_fixed(out, p, len);
		break;
	case 7:
		rc = xdr_dec_opaque(x, &p, &n, len);
		if (!rc) {
			CHECK(n <= len);
			enc = param & 1 ? xdr_enc_opaque_ref(out, p, n)
					: xdr_enc_opaque(out, p, n, len);
		}
		break;
	case 8:
		rc = xdr_dec_string(x, &s, &n, len);
		if (!rc) {
			CHECK(n <= len && !memchr(s, 0, n));
			enc = xdr_enc_string(out, s, n, len);
		}
		break;
	case 9:
		rc = xdr_dec_u32_array(x, arr, &n, param);
		if (!rc) {
			CHECK(n <= param);
			enc = xdr_enc_u32_array(out, arr, n, param);
		}
		break;
	case 10:
		rc = xdr_dec_count(x, &n, len, param & 3 ? 4 : 0);
		if (!rc) {
			CHECK(n <= len && (!(param & 3) || n <= xdr_in_left(x) / 4));
			enc = xdr_enc_u32(out, n);
		}
		break;
	case 11:
		if (param & 1) {
			rc = xdr_dec_skip(x, len);
			if (!rc)
				enc = xdr_enc_opaque_fixed(out, x->base + before, len);
			break;
		}
		rc = xdr_dec_sub(x, len, &sub);
		if (!rc) {
			CHECK(sub.len == len && sub.pos == 0);
			while (!xdr_dec_u32(&sub, &u))
				;
			CHECK(xdr_in_left(&sub) < 4);
			enc = xdr_enc_opaque_fixed(out, sub.base, len);
		}
		break;
	case 12:
		xdr_out_getpos(out, &r->opos);
		r->ipos = x->pos;
		r->have_pos = true;
		return 0;
	case 13:
		if (!r->have_pos)
			return 0;
		xdr_out_truncate(out, &r->opos);
		x->pos = r->ipos;
		if (r->have_mark && r->mark.off >= r->opos.len)
			r->have_mark = false; /* the mark is dead */
		CHECK(xdr_out_len(out) == r->opos.len);
		return 0;
	case 14:
		rc = xdr_dec_u32(x, &u);
		if (!rc) {
			if (r->have_mark)
				xdr_out_fill(&r->mark, r->mark_val);
			r->have_mark = false;
			enc = xdr_out_reserve(out, &r->mark);
			if (!enc) {
				r->have_mark = true;
				r->mark_val = u;
			}
		}
		break;
	case 15:
		rc = xdr_dec_string_copy(x, str, sizeof(str), len);
		if (!rc) {
			n = (uint32_t)strlen(str);
			CHECK(n <= len);
			enc = xdr_enc_string(out, str, n, len);
		}
		break;
	}
	if (rc)
		CHECK(x->pos == before); /* a failure moves nothing */
	else
		CHECK(x->pos > before || ((op == 6 || op == 11) && len == 0));
	CHECK(x->pos <= x->len);
	return enc ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chunk_pool_stats st;
	struct chunk_owner owner;
	struct xdr_carver carver;
	struct chunk_pool *pool;
	const uint8_t *prog, *in;
	uint8_t *dchunk = NULL, *flat;
	unsigned int flags, plen, i, nseg;
	const struct iovec *iov;
	size_t inlen, max = SIZE_MAX, sum = 0;
	struct run r;
	bool encoding = true;

	if (size < 3)
		return 0;
	flags = data[0];
	plen = data[2];
	if (size < 3 + (size_t)plen)
		return 0;
	prog = data + 3;
	in = prog + plen;
	inlen = size - 3 - plen;
	i = (flags >> 1) & 3;
	if (!pools[i] && chunk_pool_create(&pools[i], chunk_sizes[i], NCHUNKS, 0))
		abort();
	pool = pools[i];
	if (flags & 8)
		max = 4 * (size_t)data[1];
	chunk_owner_init(&owner, pool, flags & 16 ? 2 * chunk_sizes[i] : 0);
	xdr_carver_init(&carver, pool, &owner);
	memset(&r, 0, sizeof(r));
	xdr_out_init(&r.out, &carver, max);
	if ((flags & 32) && inlen && inlen <= chunk_sizes[i] &&
	    chunk_get(pool, NULL, (void **)&dchunk) == 0) {
		memcpy(dchunk, in, inlen);
		in = dchunk;
	}
	xdr_in_init(&r.x, in, inlen);
	r.x.strict_pad = flags & 1;

	for (i = 0; i < plen; i++) {
		if (!encoding)
			break;
		if (run_op(&r, prog[i] & 15, prog[i] >> 4))
			encoding = false;
	}
	if (r.have_mark)
		xdr_out_fill(&r.mark, r.mark_val);
	/* the segments add up; the reply is the input when pads were checked */
	iov = xdr_out_iov(&r.out, &nseg);
	CHECK(nseg <= XDR_OUT_SEGS_MAX);
	for (i = 0; i < nseg; i++) {
		CHECK(iov[i].iov_len > 0);
		sum += iov[i].iov_len;
	}
	CHECK(sum == xdr_out_len(&r.out));
	CHECK(xdr_out_len(&r.out) <= max);
	if (encoding) {
		CHECK(r.out.err == 0);
		if (r.x.strict_pad) {
			CHECK(xdr_out_len(&r.out) == r.x.pos);
			flat = malloc(r.x.pos + 1);
			CHECK(xdr_out_copy(&r.out, 0, flat, r.x.pos + 1) == r.x.pos);
			CHECK(r.x.pos == 0 || memcmp(flat, in, r.x.pos) == 0);
			free(flat);
		}
	} else {
		CHECK(r.out.err != 0);
	}
	xdr_out_release(&r.out);
	if (dchunk)
		chunk_put(pool, dchunk);
	xdr_carver_fini(&carver);
	chunk_pool_get_stats(pool, &st);
	CHECK(st.in_use == 0);
	CHECK(!chunk_owner_busy(&owner));
	return 0;
}
