// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz harness of the RPC-over-RDMA version 1 codec (rpcrdma.h). The
 * whole input is a received transport header (and whatever follows it),
 * and also a connection's private data.
 *
 * Checked: the decoder returns one of its documented errors; the fixed
 * part is filled whenever it was there; a decoded header keeps every
 * bound and invariant the struct promises (counts within their
 * maximums, read chunks grouping consecutive segments at one
 * non-decreasing, aligned position, no zero-length read segment, chunk
 * lengths the sums of their segments and within UINT32_MAX, hdr_len
 * inside the input). A decoded RDMA_MSG/RDMA_NOMSG header re-encoded
 * as a call header gives back the input's header bytes exactly, fails
 * with one byte less room, and decodes to the same struct; without a
 * read list it re-encodes as a reply header too, fully and then partly
 * written (lengths filled in order). A decoded RDMA_ERROR re-encodes
 * exactly when it is one we would send. Private data that decodes
 * re-encodes to the same bytes (undefined flags aside), and sizes stay
 * within 1..256 KiB. Nothing is read past the input.
 *
 * Built with -fsanitize=fuzzer it is a libFuzzer target; linked with
 * replay.c it replays a corpus.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma.h"
#include "xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz_rpcrdma: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                   \
			abort();                                                             \
		}                                                                            \
	} while (0)

static void check_chunk(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c,
			unsigned int *next)
{
	uint64_t sum = 0;
	unsigned int i;

	CHECK(c->first == *next);
	CHECK(c->nsegs <= RPCRDMA_CHUNK_SEGS_MAX);
	CHECK(c->first + c->nsegs <= h->nsegs);
	for (i = 0; i < c->nsegs; i++)
		sum += h->segs[c->first + i].length;
	CHECK(sum == c->length && sum <= UINT32_MAX);
	*next += c->nsegs;
}

static void check_invariants(const struct rpcrdma_hdr *h, size_t size)
{
	unsigned int i, j, next = 0;
	uint64_t sum;

	CHECK(h->vers == RPCRDMA_VERSION);
	CHECK(h->hdr_len >= RPCRDMA_HDR_FIXED && h->hdr_len <= size && h->hdr_len % 4 == 0);
	if (h->proc == RDMA_ERROR) {
		CHECK(h->err == ERR_VERS || h->err == ERR_CHUNK);
		CHECK(h->hdr_len == (h->err == ERR_VERS ? 28u : 20u));
		CHECK(!h->nread_segs && !h->nwrite && !h->has_reply && !h->nsegs);
		return;
	}
	CHECK(h->proc == RDMA_MSG || h->proc == RDMA_NOMSG);
	CHECK(!h->err && !h->vers_low && !h->vers_high);
	CHECK(h->nread_segs <= RPCRDMA_READ_SEGS_MAX);
	CHECK(h->nread_chunks <= RPCRDMA_READ_CHUNKS_MAX);
	CHECK(!h->nread_segs == !h->nread_chunks);
	for (i = 0; i < h->nread_chunks; i++) {
		const struct rpcrdma_read_chunk *rc = &h->read[i];

		CHECK(rc->first == next && rc->nsegs > 0);
		CHECK(rc->position % 4 == 0);
		CHECK(i == 0 || rc->position > h->read[i - 1].position);
		for (sum = 0, j = 0; j < rc->nsegs; j++) {
			CHECK(h->read_segs[rc->first + j].length > 0);
			sum += h->read_segs[rc->first + j].length;
		}
		CHECK(sum == rc->length && sum <= UINT32_MAX);
		next += rc->nsegs;
	}
	CHECK(next == h->nread_segs);
	next = 0;
	CHECK(h->nwrite <= RPCRDMA_WRITE_CHUNKS_MAX);
	CHECK(h->nsegs <= RPCRDMA_SEGS_MAX);
	for (i = 0; i < h->nwrite; i++)
		check_chunk(h, &h->write[i], &next);
	if (h->has_reply)
		check_chunk(h, &h->reply, &next);
	CHECK(next == h->nsegs);
}

static bool chunk_equal(const struct rpcrdma_chunk *a, const struct rpcrdma_chunk *b)
{
	return a->first == b->first && a->nsegs == b->nsegs && a->length == b->length;
}

static void check_same(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	unsigned int i;

	CHECK(a->xid == b->xid && a->vers == b->vers && a->credits == b->credits &&
	      a->proc == b->proc && a->hdr_len == b->hdr_len);
	CHECK(a->nread_segs == b->nread_segs && a->nread_chunks == b->nread_chunks);
	CHECK(!memcmp(a->read_segs, b->read_segs, a->nread_segs * sizeof(a->read_segs[0])));
	for (i = 0; i < a->nread_chunks; i++)
		CHECK(a->read[i].position == b->read[i].position &&
		      a->read[i].first == b->read[i].first &&
		      a->read[i].nsegs == b->read[i].nsegs &&
		      a->read[i].length == b->read[i].length);
	CHECK(a->nwrite == b->nwrite && a->nsegs == b->nsegs && a->has_reply == b->has_reply);
	for (i = 0; i < a->nwrite; i++)
		CHECK(chunk_equal(&a->write[i], &b->write[i]));
	CHECK(!a->has_reply || chunk_equal(&a->reply, &b->reply));
	CHECK(!memcmp(a->segs, b->segs, a->nsegs * sizeof(a->segs[0])));
}

/* Re-encode as a reply header with @written bytes per chunk; check the filled lengths. */
static void check_reply(const struct rpcrdma_hdr *h, const uint8_t *data, uint32_t seed, bool full)
{
	uint64_t written[RPCRDMA_WRITE_CHUNKS_MAX], reply_written, left;
	struct rpcrdma_hdr again;
	unsigned int i, j;
	uint8_t *buf;
	int n;

	for (i = 0; i < h->nwrite; i++)
		written[i] =
			full ? h->write[i].length : (seed * (i + 1)) % (h->write[i].length + 2);
	reply_written = full ? h->reply.length : seed % (h->reply.length + 2);
	buf = malloc(h->hdr_len);
	CHECK(buf);
	n = rpcrdma_enc_reply_hdr(buf, h->hdr_len, h->xid, h->credits, h->proc, h->segs, h->write,
				  h->nwrite, written, h->has_reply ? &h->reply : NULL,
				  reply_written);
	CHECK(n == (int)h->hdr_len);
	if (full)
		CHECK(!memcmp(buf, data, h->hdr_len));
	CHECK(rpcrdma_dec_hdr(buf, h->hdr_len, &again) == 0);
	CHECK(again.nwrite == h->nwrite && again.nsegs == h->nsegs &&
	      again.has_reply == h->has_reply);
	for (i = 0; i <= h->nwrite; i++) {
		const struct rpcrdma_chunk *c = i < h->nwrite ? &h->write[i] : &h->reply;

		if (i == h->nwrite && !h->has_reply)
			break;
		left = i < h->nwrite ? written[i] : reply_written;
		for (j = 0; j < c->nsegs; j++) {
			uint32_t want = h->segs[c->first + j].length;

			if (want > left)
				want = (uint32_t)left;
			left -= want;
			CHECK(again.segs[c->first + j].length == want);
			CHECK(again.segs[c->first + j].handle == h->segs[c->first + j].handle);
			CHECK(again.segs[c->first + j].offset == h->segs[c->first + j].offset);
		}
	}
	free(buf);
}

static void check_reencode(const struct rpcrdma_hdr *h, const uint8_t *data, size_t size)
{
	uint32_t pos[RPCRDMA_READ_SEGS_MAX];
	struct rpcrdma_hdr again;
	unsigned int i, j;
	uint8_t *buf;
	int n;

	if (h->proc == RDMA_ERROR) {
		if (h->err == ERR_VERS && (h->vers_low != 1 || h->vers_high != 1))
			return;
		buf = malloc(h->hdr_len);
		CHECK(buf);
		n = rpcrdma_enc_error(buf, h->hdr_len, h->xid, h->credits, h->err);
		CHECK(n == (int)h->hdr_len && !memcmp(buf, data, h->hdr_len));
		CHECK(rpcrdma_enc_error(buf, h->hdr_len - 1, h->xid, h->credits, h->err) ==
		      -EMSGSIZE);
		free(buf);
		return;
	}
	for (i = 0; i < h->nread_chunks; i++)
		for (j = 0; j < h->read[i].nsegs; j++)
			pos[h->read[i].first + j] = h->read[i].position;
	/* exactly the header's size, so that ASan sees any write past it */
	buf = malloc(h->hdr_len);
	CHECK(buf);
	n = rpcrdma_enc_call_hdr(buf, h->hdr_len, h->xid, h->credits, h->proc, h->read_segs, pos,
				 h->nread_segs, h->segs, h->write, h->nwrite,
				 h->has_reply ? &h->reply : NULL);
	CHECK(n == (int)h->hdr_len);
	CHECK(!memcmp(buf, data, h->hdr_len));
	CHECK(rpcrdma_dec_hdr(buf, h->hdr_len, &again) == 0);
	check_same(h, &again);
	CHECK(rpcrdma_enc_call_hdr(buf, h->hdr_len - 1, h->xid, h->credits, h->proc, h->read_segs,
				   pos, h->nread_segs, h->segs, h->write, h->nwrite,
				   h->has_reply ? &h->reply : NULL) == -EMSGSIZE);
	free(buf);
	if (!h->nread_segs) {
		check_reply(h, data, 0, true);
		check_reply(h, data, size ? data[size - 1] * 2654435761u : 1, false);
	}
}

static void check_priv(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_priv p;
	uint8_t buf[RPCRDMA_CM_PRIV_LEN];
	bool ok;

	ok = rpcrdma_cm_priv_dec(data, size, &p);
	CHECK(ok == (size >= RPCRDMA_CM_PRIV_LEN && xdr_get_u32(data) == RPCRDMA_CM_MAGIC &&
		     data[4] == RPCRDMA_CM_VERSION));
	CHECK(p.send_max >= RPCRDMA_INLINE_MIN && p.send_max <= RPCRDMA_INLINE_MAX);
	CHECK(p.recv_max >= RPCRDMA_INLINE_MIN && p.recv_max <= RPCRDMA_INLINE_MAX);
	CHECK(p.send_max % 1024 == 0 && p.recv_max % 1024 == 0);
	CHECK(!(p.flags & ~RPCRDMA_CM_FLAG_REMOTE_INV));
	if (!ok) {
		CHECK(p.flags == 0 && p.send_max == RPCRDMA_INLINE_DEFAULT &&
		      p.recv_max == RPCRDMA_INLINE_DEFAULT);
		return;
	}
	rpcrdma_cm_priv_enc(buf, &p);
	CHECK(!memcmp(buf, data, 5) && buf[6] == data[6] && buf[7] == data[7]);
	CHECK(buf[5] == (data[5] & RPCRDMA_CM_FLAG_REMOTE_INV));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_hdr h;
	int rc;

	rc = rpcrdma_dec_hdr(data, size, &h);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -E2BIG || rc == -EINVAL);
	if (size >= RPCRDMA_HDR_FIXED) {
		CHECK(h.xid == xdr_get_u32(data) && h.vers == xdr_get_u32(data + 4) &&
		      h.credits == xdr_get_u32(data + 8) && h.proc == xdr_get_u32(data + 12));
		CHECK((rc == -EPROTONOSUPPORT) == (h.vers != RPCRDMA_VERSION));
	} else {
		CHECK(rc == -EBADMSG && !h.xid && !h.vers && !h.proc);
	}
	if (rc) {
		CHECK(h.hdr_len == 0);
	} else {
		check_invariants(&h, size);
		check_reencode(&h, data, size);
	}
	check_priv(data, size);
	return 0;
}
