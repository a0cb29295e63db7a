// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * XDR: the bounded decoder over a received record and the segmented
 * reply encoder over pooled chunks. How both operate, the padding policy
 * and the lifetime rules are described in xdr.h.
 */
#include <errno.h>
#include <string.h>

#include "xdr.h"

/* ------------------------------------------------------------ decoding */

/* stands in for a NULL buffer, so that base + pos is always defined */
static const uint8_t xdr_no_bytes[1];

void xdr_in_init(struct xdr_in *x, const void *buf, size_t len)
{
	x->base = buf ? buf : xdr_no_bytes;
	x->len = len;
	x->pos = 0;
	x->strict_pad = false;
}

size_t xdr_in_left(const struct xdr_in *x)
{
	return x->len - x->pos;
}

const uint8_t *xdr_in_ptr(const struct xdr_in *x)
{
	return x->base + x->pos;
}

/* @n bytes and their pad, or NULL with the cursor unchanged. */
static const uint8_t *xdr_take(struct xdr_in *x, size_t n)
{
	size_t left = x->len - x->pos, pad = XDR_PAD(n);
	const uint8_t *p;
	size_t i;

	if (n > left || pad > left - n)
		return NULL;
	p = x->base + x->pos;
	if (x->strict_pad)
		for (i = 0; i < pad; i++)
			if (p[n + i])
				return NULL;
	x->pos += n + pad;
	return p;
}

int xdr_dec_u32(struct xdr_in *x, uint32_t *v)
{
	const uint8_t *p = xdr_take(x, 4);

	if (!p)
		return -EBADMSG;
	*v = xdr_get_u32(p);
	return 0;
}

int xdr_dec_i32(struct xdr_in *x, int32_t *v)
{
	uint32_t u;

	if (xdr_dec_u32(x, &u))
		return -EBADMSG;
	*v = (int32_t)u;
	return 0;
}

int xdr_dec_u64(struct xdr_in *x, uint64_t *v)
{
	const uint8_t *p = xdr_take(x, 8);

	if (!p)
		return -EBADMSG;
	*v = (uint64_t)xdr_get_u32(p) << 32 | xdr_get_u32(p + 4);
	return 0;
}

int xdr_dec_i64(struct xdr_in *x, int64_t *v)
{
	uint64_t u;

	if (xdr_dec_u64(x, &u))
		return -EBADMSG;
	*v = (int64_t)u;
	return 0;
}

int xdr_dec_bool(struct xdr_in *x, bool *v)
{
	uint32_t u;

	if (xdr_dec_enum(x, &u, 1))
		return -EBADMSG;
	*v = u != 0;
	return 0;
}

int xdr_dec_enum(struct xdr_in *x, uint32_t *v, uint32_t max)
{
	size_t pos = x->pos;
	uint32_t u;

	if (xdr_dec_u32(x, &u))
		return -EBADMSG;
	if (u > max) {
		x->pos = pos;
		return -EBADMSG;
	}
	*v = u;
	return 0;
}

int xdr_dec_opaque_fixed(struct xdr_in *x, const uint8_t **p, size_t len)
{
	const uint8_t *q = xdr_take(x, len);

	if (!q)
		return -EBADMSG;
	*p = q;
	return 0;
}

int xdr_dec_opaque_fixed_copy(struct xdr_in *x, void *dst, size_t len)
{
	const uint8_t *q = xdr_take(x, len);

	if (!q)
		return -EBADMSG;
	memcpy(dst, q, len);
	return 0;
}

int xdr_dec_opaque(struct xdr_in *x, const uint8_t **p, uint32_t *len, uint32_t max)
{
	size_t pos = x->pos;
	const uint8_t *q;
	uint32_t n;

	if (xdr_dec_u32(x, &n))
		return -EBADMSG;
	if (n > max || !(q = xdr_take(x, n))) {
		x->pos = pos;
		return -EBADMSG;
	}
	*p = q;
	*len = n;
	return 0;
}

int xdr_dec_string(struct xdr_in *x, const char **s, uint32_t *len, uint32_t max)
{
	size_t pos = x->pos;
	const uint8_t *q;
	uint32_t n;

	if (xdr_dec_opaque(x, &q, &n, max))
		return -EBADMSG;
	if (memchr(q, 0, n)) {
		x->pos = pos;
		return -EBADMSG;
	}
	*s = (const char *)q;
	*len = n;
	return 0;
}

int xdr_dec_string_copy(struct xdr_in *x, char *dst, size_t size, uint32_t max)
{
	const char *s;
	uint32_t n;

	if (size <= max)
		return -EINVAL;
	if (xdr_dec_string(x, &s, &n, max))
		return -EBADMSG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

int xdr_dec_count(struct xdr_in *x, uint32_t *n, uint32_t max, size_t min_item)
{
	size_t pos = x->pos;
	uint32_t c;

	if (xdr_dec_u32(x, &c))
		return -EBADMSG;
	if (c > max || (min_item && c > xdr_in_left(x) / min_item)) {
		x->pos = pos;
		return -EBADMSG;
	}
	*n = c;
	return 0;
}

int xdr_dec_u32_array(struct xdr_in *x, uint32_t *dst, uint32_t *n, uint32_t max)
{
	uint32_t c, i;

	if (xdr_dec_count(x, &c, max, 4))
		return -EBADMSG;
	/* the count was checked against the bytes left: these cannot fail */
	for (i = 0; i < c; i++)
		(void)xdr_dec_u32(x, &dst[i]);
	*n = c;
	return 0;
}

int xdr_dec_skip(struct xdr_in *x, size_t n)
{
	return xdr_take(x, n) ? 0 : -EBADMSG;
}

int xdr_dec_sub(struct xdr_in *x, size_t n, struct xdr_in *sub)
{
	const uint8_t *p = xdr_take(x, n);

	if (!p)
		return -EBADMSG;
	xdr_in_init(sub, p, n);
	sub->strict_pad = x->strict_pad;
	return 0;
}

/* ------------------------------------------------------------ local space */

void xdr_carver_init(struct xdr_carver *c, struct chunk_pool *pool, struct chunk_owner *owner)
{
	c->pool = pool;
	c->owner = owner;
	c->chunk = NULL;
	c->used = 0;
}

void xdr_carver_fini(struct xdr_carver *c)
{
	if (c->chunk)
		chunk_put(c->pool, c->chunk);
	c->chunk = NULL;
	c->used = 0;
}

void xdr_out_init(struct xdr_out *out, struct xdr_carver *src, size_t max)
{
	out->src = src;
	out->len = 0;
	out->max = max;
	out->err = 0;
	out->nseg = 0;
	out->tip = NULL;
	out->nddp = 0;
}

void xdr_out_release(struct xdr_out *out)
{
	unsigned int i;

	for (i = 0; i < out->nseg; i++)
		if (out->hold[i])
			chunk_put(out->src->pool, out->hold[i]);
	xdr_out_init(out, out->src, out->max);
}

static int xdr_out_fail(struct xdr_out *out, int err)
{
	if (!out->err)
		out->err = err;
	return out->err;
}

/*
 * Carve between @min and *@want bytes of contiguous local space (the
 * caller checked out->max): grow the last segment in place when it ends
 * where the carver does, else open a segment in the carver's chunk, or
 * in a new chunk when that one has less than @min left.
 */
static uint8_t *xdr_out_carve(struct xdr_out *out, size_t min, size_t *want)
{
	struct xdr_carver *c = out->src;
	size_t csz = chunk_pool_chunk_size(c->pool), start, take;
	void *fresh;
	int rc;

	if (min > csz) {
		xdr_out_fail(out, -EINVAL);
		return NULL;
	}
	if (out->tip && c->chunk && out->tip == c->chunk + c->used && csz - c->used >= min) {
		take = csz - c->used < *want ? csz - c->used : *want;
		out->seg[out->nseg - 1].iov_len += take;
		goto out_take;
	}
	if (out->nseg == XDR_OUT_SEGS_MAX) {
		xdr_out_fail(out, -ENOSPC);
		return NULL;
	}
	/* a reply starts on a cache line; later segments on an XDR unit */
	start = out->nseg ? XDR_ALIGN(c->used)
			  : (c->used + XDR_OUT_ALIGN - 1) & ~(size_t)(XDR_OUT_ALIGN - 1);
	if (!c->chunk || start > csz || csz - start < min) {
		rc = chunk_get(c->pool, c->owner, &fresh);
		if (rc) {
			xdr_out_fail(out, rc);
			return NULL;
		}
		if (c->chunk)
			chunk_put(c->pool, c->chunk);
		c->chunk = fresh;
		start = 0;
	}
	chunk_hold(c->pool, c->chunk);
	take = csz - start < *want ? csz - start : *want;
	out->hold[out->nseg] = c->chunk;
	out->seg[out->nseg].iov_base = c->chunk + start;
	out->seg[out->nseg].iov_len = take;
	out->nseg++;
	c->used = start;
out_take:
	c->used += take;
	out->tip = c->chunk + c->used;
	out->len += take;
	*want = take;
	return out->tip - take;
}

uint8_t *xdr_out_space(struct xdr_out *out, size_t n)
{
	size_t want = n;

	if (out->err)
		return NULL;
	if (n == 0 || n > out->max - out->len) {
		xdr_out_fail(out, n ? -EMSGSIZE : -EINVAL);
		return NULL;
	}
	return xdr_out_carve(out, n, &want);
}

int xdr_out_write(struct xdr_out *out, const void *data, size_t len)
{
	const uint8_t *src = data;
	size_t want;
	uint8_t *p;

	if (out->err)
		return out->err;
	if (len > out->max - out->len)
		return xdr_out_fail(out, -EMSGSIZE);
	while (len) {
		want = len;
		p = xdr_out_carve(out, 1, &want);
		if (!p)
			return out->err;
		memcpy(p, src, want);
		src += want;
		len -= want;
	}
	return 0;
}

static int xdr_out_pad(struct xdr_out *out, size_t len)
{
	size_t pad = XDR_PAD(len);
	uint8_t *p;

	if (!pad)
		return out->err;
	p = xdr_out_space(out, pad);
	if (!p)
		return out->err;
	memset(p, 0, pad);
	return 0;
}

int xdr_out_ref(struct xdr_out *out, const void *base, size_t len)
{
	struct chunk_pool *pool = out->src->pool;
	size_t csz = chunk_pool_chunk_size(pool);
	void *hold = NULL;

	if (out->err)
		return out->err;
	if (len > out->max - out->len || XDR_PAD(len) > out->max - out->len - len)
		return xdr_out_fail(out, -EMSGSIZE);
	if (len == 0)
		return 0;
	if (len < XDR_OUT_REF_COPY_MIN || out->nseg + XDR_OUT_SEGS_RESERVE > XDR_OUT_SEGS_MAX)
		return xdr_out_write(out, base, len) ?: xdr_out_pad(out, len);
	if (chunk_pool_contains(pool, base)) {
		hold = chunk_of(pool, base);
		if ((size_t)((const uint8_t *)base - (uint8_t *)hold) + len > csz)
			return xdr_out_fail(out, -EINVAL);
		chunk_hold(pool, hold);
	}
	out->hold[out->nseg] = hold;
	out->seg[out->nseg].iov_base = (void *)base;
	out->seg[out->nseg].iov_len = len;
	out->nseg++;
	out->tip = NULL;
	out->len += len;
	return xdr_out_pad(out, len);
}

size_t xdr_out_copy(const struct xdr_out *out, size_t off, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t done = 0, n;
	unsigned int i;

	for (i = 0; i < out->nseg && done < len; i++) {
		if (off >= out->seg[i].iov_len) {
			off -= out->seg[i].iov_len;
			continue;
		}
		n = out->seg[i].iov_len - off;
		if (n > len - done)
			n = len - done;
		memcpy(d + done, (uint8_t *)out->seg[i].iov_base + off, n);
		done += n;
		off = 0;
	}
	return done;
}

int xdr_out_reserve(struct xdr_out *out, struct xdr_mark *m)
{
	uint8_t *p = xdr_out_space(out, 4);

	if (!p)
		return out->err;
	memset(p, 0, 4);
	m->p = p;
	m->off = out->len - 4;
	return 0;
}

void xdr_out_fill(const struct xdr_mark *m, uint32_t v)
{
	xdr_put_u32(m->p, v);
}

size_t xdr_out_since(const struct xdr_out *out, const struct xdr_mark *m)
{
	return out->len - m->off - 4;
}

void xdr_out_getpos(const struct xdr_out *out, struct xdr_pos *pos)
{
	pos->len = out->len;
	pos->nseg = out->nseg;
	pos->seg_len = out->nseg ? out->seg[out->nseg - 1].iov_len : 0;
}

void xdr_out_truncate(struct xdr_out *out, const struct xdr_pos *pos)
{
	struct xdr_carver *c = out->src;
	struct iovec *last;
	size_t cut;

	while (out->nddp && out->ddp[out->nddp - 1].off + out->ddp[out->nddp - 1].len > pos->len)
		out->nddp--;
	if (pos->nseg == out->nseg && out->nseg && out->tip && out->tip == c->chunk + c->used) {
		/* only the tail of the last, local segment goes: give it back to the carver */
		last = &out->seg[out->nseg - 1];
		cut = last->iov_len - pos->seg_len;
		last->iov_len = pos->seg_len;
		c->used -= cut;
		out->tip -= cut;
		out->len = pos->len;
		out->err = 0;
		return;
	}
	while (out->nseg > pos->nseg) {
		out->nseg--;
		if (out->hold[out->nseg])
			chunk_put(c->pool, out->hold[out->nseg]);
	}
	if (out->nseg)
		out->seg[out->nseg - 1].iov_len = pos->seg_len;
	out->len = pos->len;
	out->tip = NULL;
	out->err = 0;
}

/* ------------------------------------------------------------ encoders */

int xdr_enc_u32(struct xdr_out *out, uint32_t v)
{
	uint8_t *p = xdr_out_space(out, 4);

	if (!p)
		return out->err;
	xdr_put_u32(p, v);
	return 0;
}

int xdr_enc_i32(struct xdr_out *out, int32_t v)
{
	return xdr_enc_u32(out, (uint32_t)v);
}

int xdr_enc_u64(struct xdr_out *out, uint64_t v)
{
	uint8_t *p = xdr_out_space(out, 8);

	if (!p)
		return out->err;
	xdr_put_u32(p, (uint32_t)(v >> 32));
	xdr_put_u32(p + 4, (uint32_t)v);
	return 0;
}

int xdr_enc_i64(struct xdr_out *out, int64_t v)
{
	return xdr_enc_u64(out, (uint64_t)v);
}

int xdr_enc_bool(struct xdr_out *out, bool v)
{
	return xdr_enc_u32(out, v ? 1 : 0);
}

int xdr_enc_opaque_fixed(struct xdr_out *out, const void *p, size_t len)
{
	if (out->err)
		return out->err;
	if (len > out->max - out->len || XDR_PAD(len) > out->max - out->len - len)
		return xdr_out_fail(out, -EMSGSIZE);
	return xdr_out_write(out, p, len) ?: xdr_out_pad(out, len);
}

int xdr_enc_opaque(struct xdr_out *out, const void *p, uint32_t len, uint32_t max)
{
	if (len > max)
		return xdr_out_fail(out, -EINVAL);
	return xdr_enc_u32(out, len) ?: xdr_enc_opaque_fixed(out, p, len);
}

int xdr_enc_opaque_ref(struct xdr_out *out, const void *p, uint32_t len)
{
	return xdr_enc_u32(out, len) ?: xdr_out_ref(out, p, len);
}

int xdr_enc_opaque_ddp(struct xdr_out *out, const void *p, uint32_t len)
{
	size_t off = out->len + XDR_UNIT; /* past the length word */
	int err = xdr_enc_opaque_ref(out, p, len);

	if (!err && out->nddp < XDR_OUT_DDP_MAX) {
		out->ddp[out->nddp].off = off;
		out->ddp[out->nddp].len = len;
		out->nddp++;
	}
	return err;
}

int xdr_enc_string(struct xdr_out *out, const char *s, uint32_t len, uint32_t max)
{
	return xdr_enc_opaque(out, s, len, max);
}

int xdr_enc_u32_array(struct xdr_out *out, const uint32_t *v, uint32_t n, uint32_t max)
{
	uint32_t i;

	if (n > max)
		return xdr_out_fail(out, -EINVAL);
	if (xdr_enc_u32(out, n))
		return out->err;
	for (i = 0; i < n; i++)
		if (xdr_enc_u32(out, v[i]))
			return out->err;
	return 0;
}
