/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * XDR (RFC 4506) for lacunad: a bounded decoder over one received
 * record, and an encoder that builds a reply as a list of segments over
 * pooled chunks (chunk.h), referencing bulk data in place.
 *
 * Operation
 * ---------
 * Decoding. struct xdr_in is a cursor {base, len, pos} over bytes that
 * came off the wire. Every xdr_dec_*() call checks that what it reads
 * lies inside [pos, len) before touching it, returns 0 or -EBADMSG, and
 * on failure leaves the cursor where it was. Nothing is ever read past
 * len, whatever the lengths and counts in the input say: a length is
 * compared with the bytes left before it is used, in an order that
 * cannot overflow. Variable-length items take a named maximum from the
 * caller (every protocol length and count has a *_MAX beside its use)
 * and are refused past it. Opaques and strings are returned as pointers
 * into the input (zero-copy): they live as long as the record. Strings
 * are not NUL-terminated, and one holding a NUL byte is refused, so it
 * can be copied into a C string without being silently cut short.
 * Array counts are checked against their maximum and against the bytes
 * left (xdr_dec_count), so a huge count is refused before anything is
 * sized by it. A boolean other than 0 or 1 is malformed; an enum above
 * the caller's maximum is refused.
 *
 * Padding. RFC 4506 says opaque data and strings are followed by zero
 * to three "residual zero bytes". The pad bytes must be present (a
 * record that ends inside them is truncated), but by default their
 * value is not checked: Linux's sunrpc and libtirpc never check it,
 * and refusing a peer for it helps nobody. A cursor with strict_pad set
 * refuses non-zero pad bytes (the fuzz harness uses it to check that
 * decoding then re-encoding gives back the input exactly). The encoder
 * always writes zeros.
 *
 * Encoding. A reply is a struct xdr_out: up to XDR_OUT_SEGS_MAX
 * segments {base, len} (struct iovec, ready for sendmsg or io_uring) and
 * the total length. Encoded items are appended to local space: bytes
 * carved from the current chunk of an xdr_carver, the per-connection
 * source of reply space. A carver takes a whole chunk from the pool and
 * hands successive replies consecutive pieces of it, so the small head
 * and tail of many replies share one chunk, and no reply byte comes
 * from malloc (the lesson of Linux's xdr_buf). Bulk data already sitting
 * in memory (a READ's data in a chunk filled by the sparse read) is
 * appended by reference with xdr_out_ref(): it becomes a segment of its
 * own, not copied, followed by its XDR padding in local space. Small
 * references (under XDR_OUT_REF_COPY_MIN bytes) and references made when
 * the segment array is nearly full are copied instead, so the segment
 * count stays bounded without failing the reply.
 *
 * Lifetime. Every segment lying in a pool chunk holds one reference on
 * that chunk (chunk_hold), taken when the segment is opened, so a chunk
 * lives as long as any reply that points into it, and as long as the
 * carver still carves from it. xdr_out_release() drops them once the
 * reply is sent. A reference to memory outside the pool holds nothing:
 * its owner keeps it alive until the release.
 *
 * Errors are sticky: the first failure (-ENOBUFS or -ENOMEM from the pool,
 * -EMSGSIZE past the reply's maximum length, -ENOSPC out of segments,
 * -EINVAL for a reference straddling two chunks) is kept in out->err,
 * and every later call fails with it, so an encoder may check only at
 * the end. xdr_out_truncate() rolls the reply back to a position taken
 * earlier with xdr_out_getpos() and clears the error: how an encoder
 * drops the entry that did not fit (READDIR) and carries on.
 *
 * Deferred words. xdr_out_reserve() sets aside 4 bytes and returns a
 * mark; xdr_out_fill() writes them later: record marks, op counts,
 * status words, the length of an opaque whose contents are encoded in
 * place (xdr_out_since() gives the bytes encoded after the mark). Marks
 * at or after a truncation point are dead.
 *
 * Threads: an xdr_in or xdr_out is used by one thread at a time; a
 * carver likewise (one per connection). Chunks they share across
 * threads are reference counted by the pool.
 */
#ifndef LACUNA_XDR_H
#define LACUNA_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "chunk.h"

#define XDR_UNIT 4
/* bytes of padding after n bytes of opaque data */
#define XDR_PAD(n) ((XDR_UNIT - ((n) & (XDR_UNIT - 1))) & (XDR_UNIT - 1))
/* n rounded up to a whole number of XDR units */
#define XDR_ALIGN(n) ((n) + XDR_PAD(n))

/* Segments of one reply (well under IOV_MAX) */
#define XDR_OUT_SEGS_MAX 64
/* references shorter than this are copied: cheaper than a segment */
#define XDR_OUT_REF_COPY_MIN 256
/* references are copied once fewer than this many segments are free */
#define XDR_OUT_SEGS_RESERVE 4
/* each reply starts on a fresh cache line of its carver's chunk */
#define XDR_OUT_ALIGN 64
/* DDP-eligible items remembered per reply (RPC-over-RDMA write chunks) */
#define XDR_OUT_DDP_MAX 4

/* ------------------------------------------------------------ decoding */

struct xdr_in {
	const uint8_t *base;
	size_t len;
	size_t pos;	 /* always <= len */
	bool strict_pad; /* refuse non-zero pad bytes */
};

/* @buf may be NULL when @len is 0 */
void xdr_in_init(struct xdr_in *x, const void *buf, size_t len);
size_t xdr_in_left(const struct xdr_in *x);
/* The next byte to be decoded. */
const uint8_t *xdr_in_ptr(const struct xdr_in *x);

int xdr_dec_u32(struct xdr_in *x, uint32_t *v);
int xdr_dec_i32(struct xdr_in *x, int32_t *v);
int xdr_dec_u64(struct xdr_in *x, uint64_t *v);
int xdr_dec_i64(struct xdr_in *x, int64_t *v);
/* 0 or 1; anything else is malformed */
int xdr_dec_bool(struct xdr_in *x, bool *v);
/* an enum (unsigned on the wire as NFS uses them) refused above @max */
int xdr_dec_enum(struct xdr_in *x, uint32_t *v, uint32_t max);

/* opaque[len]: *p points into the input; the pad is skipped */
int xdr_dec_opaque_fixed(struct xdr_in *x, const uint8_t **p, size_t len);
/* opaque[len] copied to @dst (stateids, verifiers) */
int xdr_dec_opaque_fixed_copy(struct xdr_in *x, void *dst, size_t len);
/* opaque<max>: *p points into the input */
int xdr_dec_opaque(struct xdr_in *x, const uint8_t **p, uint32_t *len, uint32_t max);
/* string<max>: not NUL-terminated; refused if it holds a NUL byte */
int xdr_dec_string(struct xdr_in *x, const char **s, uint32_t *len, uint32_t max);
/* string<max> copied NUL-terminated into @dst of @size > max bytes */
int xdr_dec_string_copy(struct xdr_in *x, char *dst, size_t size, uint32_t max);

/*
 * Count of a variable-length array: refused above @max, or when n items
 * of at least @min_item bytes each cannot fit in what is left.
 */
int xdr_dec_count(struct xdr_in *x, uint32_t *n, uint32_t max, size_t min_item);
/* unsigned int<max> into dst[max] */
int xdr_dec_u32_array(struct xdr_in *x, uint32_t *dst, uint32_t *n, uint32_t max);

/* Skip @n bytes and their pad. */
int xdr_dec_skip(struct xdr_in *x, size_t n);
/*
 * A cursor over the next @n bytes (an opaque body decoded on its own);
 * @x moves past them and their pad.
 */
int xdr_dec_sub(struct xdr_in *x, size_t n, struct xdr_in *sub);

/* Encoders writing into plain memory (p has room for the item) */
static inline void xdr_put_u32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline uint32_t xdr_get_u32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ------------------------------------------------------------ encoding */

/* Source of reply space for one connection. Fields are private. */
struct xdr_carver {
	struct chunk_pool *pool;
	struct chunk_owner *owner; /* charged for the chunks it takes (may be NULL) */
	uint8_t *chunk;		   /* current chunk, one reference held, or NULL */
	size_t used;		   /* bytes of it handed out */
};

struct xdr_out {
	struct xdr_carver *src;
	size_t len; /* bytes encoded */
	size_t max; /* bound on len */
	int err;    /* first error, sticky */
	unsigned int nseg;
	uint8_t *tip; /* end of the last segment when local and growable, else NULL */
	struct iovec seg[XDR_OUT_SEGS_MAX];
	void *hold[XDR_OUT_SEGS_MAX]; /* chunk referenced by seg[i], or NULL */
	/* DDP-eligible items, in order: bytes [off, off + len) of the reply (no pad) */
	unsigned int nddp;
	struct xdr_ddp {
		size_t off;
		size_t len;
	} ddp[XDR_OUT_DDP_MAX];
};

/* A deferred 4-byte word. */
struct xdr_mark {
	uint8_t *p;
	size_t off; /* offset of the word in the reply */
};

/* A point to roll back to. */
struct xdr_pos {
	size_t len;
	unsigned int nseg;
	size_t seg_len;
};

void xdr_carver_init(struct xdr_carver *c, struct chunk_pool *pool, struct chunk_owner *owner);
/* Drop the current chunk; replies still holding it keep it alive. */
void xdr_carver_fini(struct xdr_carver *c);

/* An empty reply of at most @max bytes. Takes no space until used. */
void xdr_out_init(struct xdr_out *out, struct xdr_carver *src, size_t max);
/* Drop every chunk reference; @out is empty again (same source and max). */
void xdr_out_release(struct xdr_out *out);

static inline size_t xdr_out_len(const struct xdr_out *out)
{
	return out->len;
}

static inline const struct iovec *xdr_out_iov(const struct xdr_out *out, unsigned int *n)
{
	*n = out->nseg;
	return out->seg;
}

/* Copy @len bytes of the reply from offset @off into @dst; bytes copied. */
size_t xdr_out_copy(const struct xdr_out *out, size_t off, void *dst, size_t len);

/* @n contiguous bytes of local space (n <= chunk size), or NULL (see err). */
uint8_t *xdr_out_space(struct xdr_out *out, size_t n);
/* Copy @len bytes in (may span chunks); no padding. */
int xdr_out_write(struct xdr_out *out, const void *data, size_t len);
/* Append @len bytes at @base by reference, then XDR_PAD(len) zero bytes. */
int xdr_out_ref(struct xdr_out *out, const void *base, size_t len);

int xdr_out_reserve(struct xdr_out *out, struct xdr_mark *m);
void xdr_out_fill(const struct xdr_mark *m, uint32_t v);
/* Bytes encoded after the word at @m. */
size_t xdr_out_since(const struct xdr_out *out, const struct xdr_mark *m);

void xdr_out_getpos(const struct xdr_out *out, struct xdr_pos *pos);
/* Roll back to @pos (taken earlier on this reply); clears out->err. */
void xdr_out_truncate(struct xdr_out *out, const struct xdr_pos *pos);

int xdr_enc_u32(struct xdr_out *out, uint32_t v);
int xdr_enc_i32(struct xdr_out *out, int32_t v);
int xdr_enc_u64(struct xdr_out *out, uint64_t v);
int xdr_enc_i64(struct xdr_out *out, int64_t v);
int xdr_enc_bool(struct xdr_out *out, bool v);
/* opaque[len], copied, then padded */
int xdr_enc_opaque_fixed(struct xdr_out *out, const void *p, size_t len);
/* opaque<max>, copied; -EINVAL when len > max (the peer would refuse it) */
int xdr_enc_opaque(struct xdr_out *out, const void *p, uint32_t len, uint32_t max);
/* opaque<> whose bytes are referenced in place (xdr_out_ref) */
int xdr_enc_opaque_ref(struct xdr_out *out, const void *p, uint32_t len);
/*
 * The same, marking the bytes as a DDP-eligible item (RFC 8166 §3.4.5):
 * a transport that can place it directly (an RPC-over-RDMA write chunk)
 * finds it in out->ddp and sends the reply without those bytes and
 * their pad; a stream transport sends the reply as it is.
 */
int xdr_enc_opaque_ddp(struct xdr_out *out, const void *p, uint32_t len);
int xdr_enc_string(struct xdr_out *out, const char *s, uint32_t len, uint32_t max);
/* unsigned int<max> */
int xdr_enc_u32_array(struct xdr_out *out, const uint32_t *v, uint32_t n, uint32_t max);

#endif
