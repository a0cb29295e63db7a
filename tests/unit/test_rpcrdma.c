// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the RPC-over-RDMA version 1 codec: the exact bytes of
 * every encoder and their round trip through rpcrdma_dec_hdr(); the
 * decoder on headers truncated at every length, with a bad version, an
 * obsolete or unknown procedure, bad booleans, positions that go
 * backwards or are not XDR-aligned, zero-length read segments, chunk
 * totals at and past UINT32_MAX, and every list limit one below, at
 * and one above its maximum; the reply encoder filling segment lengths
 * from the bytes written; RFC 8797 private data (defaults when absent,
 * short, of another magic or version; size rounding and clamping).
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

#include "lt_wire.h"
#include "rpcrdma.h"
#include "xdr.h"

/* ---------------------------------------------------------------- wire builder */

static void wfixed(struct lt_wire *w, uint32_t xid, uint32_t vers, uint32_t credits, uint32_t proc)
{
	w->n = 0;
	lt_put32(w, xid);
	lt_put32(w, vers);
	lt_put32(w, credits);
	lt_put32(w, proc);
}

static void wseg(struct lt_wire *w, uint32_t handle, uint32_t length, uint64_t offset)
{
	lt_put32(w, handle);
	lt_put32(w, length);
	lt_put64(w, offset);
}

/* one entry of the read list */
static void wread(struct lt_wire *w, uint32_t position, uint32_t length)
{
	lt_put32(w, 1);
	lt_put32(w, position);
	wseg(w, 0x1000 + position, length, 0x7f0000000000ull + position);
}

/* a counted array of @n segments of @length bytes each (after the list's 1 or the reply's bool) */
static void wchunk(struct lt_wire *w, uint32_t n, uint32_t length)
{
	uint32_t i;

	lt_put32(w, n);
	for (i = 0; i < n; i++)
		wseg(w, 0x2000 + i, length, 0x10000ull * i);
}

/* the read list ends; no write list, no reply chunk */
static void wend(struct lt_wire *w)
{
	lt_put32(w, 0);
	lt_put32(w, 0);
	lt_put32(w, 0);
}

static int dec(const struct lt_wire *w, struct rpcrdma_hdr *h)
{
	return rpcrdma_dec_hdr(w->b, w->n, h);
}

/* a header with every list used: 3 read chunks, 2 write chunks, a reply chunk */
static void wfull(struct lt_wire *w)
{
	wfixed(w, 0xabcd0001, 1, 32, RDMA_MSG);
	wread(w, 0, 100);
	wread(w, 0, 200);
	wread(w, 8, 4096);
	wread(w, 16, 1);
	lt_put32(w, 0);
	lt_put32(w, 1);
	wchunk(w, 2, 512);
	lt_put32(w, 1);
	wchunk(w, 1, 8192);
	lt_put32(w, 0);
	lt_put32(w, 1);
	wchunk(w, 3, 1024);
}

/* ---------------------------------------------------------------- decoder */

static void test_dec_plain(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	wfixed(&w, 7, 1, 128, RDMA_NOMSG);
	wend(&w);
	lt_put32(&w, 0xdeadbeef); /* RPC message: not part of the header */
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.xid, 7);
	assert_int_equal(h.vers, 1);
	assert_int_equal(h.credits, 128);
	assert_int_equal(h.proc, RDMA_NOMSG);
	assert_int_equal(h.nread_segs, 0);
	assert_int_equal(h.nread_chunks, 0);
	assert_int_equal(h.nwrite, 0);
	assert_false(h.has_reply);
	assert_int_equal(h.nsegs, 0);
	assert_int_equal(h.hdr_len, RPCRDMA_HDR_MIN);
}

static void test_dec_full(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	wfull(&w);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.hdr_len, w.n);
	assert_int_equal(h.xid, 0xabcd0001);
	assert_int_equal(h.credits, 32);
	assert_int_equal(h.nread_segs, 4);
	assert_int_equal(h.nread_chunks, 3);
	assert_int_equal(h.read[0].position, 0);
	assert_int_equal(h.read[0].first, 0);
	assert_int_equal(h.read[0].nsegs, 2);
	assert_int_equal(h.read[0].length, 300);
	assert_int_equal(h.read[1].position, 8);
	assert_int_equal(h.read[1].first, 2);
	assert_int_equal(h.read[1].nsegs, 1);
	assert_int_equal(h.read[1].length, 4096);
	assert_int_equal(h.read[2].position, 16);
	assert_int_equal(h.read[2].first, 3);
	assert_int_equal(h.read[2].length, 1);
	assert_int_equal(h.read_segs[2].handle, 0x1008);
	assert_int_equal(h.read_segs[2].length, 4096);
	assert_true(h.read_segs[2].offset == 0x7f0000000008ull);
	assert_int_equal(h.nwrite, 2);
	assert_int_equal(h.write[0].first, 0);
	assert_int_equal(h.write[0].nsegs, 2);
	assert_int_equal(h.write[0].length, 1024);
	assert_int_equal(h.write[1].first, 2);
	assert_int_equal(h.write[1].nsegs, 1);
	assert_int_equal(h.write[1].length, 8192);
	assert_true(h.has_reply);
	assert_int_equal(h.reply.first, 3);
	assert_int_equal(h.reply.nsegs, 3);
	assert_int_equal(h.reply.length, 3072);
	assert_int_equal(h.nsegs, 6);
	assert_int_equal(h.segs[1].handle, 0x2001);
	assert_true(h.segs[1].offset == 0x10000ull);
	assert_int_equal(h.segs[5].handle, 0x2002);
}

static void test_dec_truncated(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;
	size_t full, len;

	(void)state;
	wfull(&w);
	full = w.n;
	for (len = 0; len < full; len++) {
		w.n = len;
		assert_int_equal(dec(&w, &h), -EBADMSG);
		assert_int_equal(h.hdr_len, 0);
		if (len < RPCRDMA_HDR_FIXED) {
			assert_int_equal(h.xid, 0);
			assert_int_equal(h.vers, 0);
			assert_int_equal(h.proc, 0);
		} else {
			assert_int_equal(h.xid, 0xabcd0001);
			assert_int_equal(h.vers, 1);
			assert_int_equal(h.credits, 32);
			assert_int_equal(h.proc, RDMA_MSG);
		}
	}
	/* NULL with no bytes */
	assert_int_equal(rpcrdma_dec_hdr(NULL, 0, &h), -EBADMSG);
}

static void test_dec_version(void **state)
{
	static const uint32_t bad[] = { 0, 2, 0x01000000, 0xffffffff };
	struct rpcrdma_hdr h;
	struct lt_wire w;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wfixed(&w, 0x55, bad[i], 3, RDMA_MSG);
		lt_put32(&w, 9); /* garbage where the lists would be: not looked at */
		assert_int_equal(dec(&w, &h), -EPROTONOSUPPORT);
		assert_int_equal(h.xid, 0x55);
		assert_int_equal(h.vers, bad[i]);
		assert_int_equal(h.proc, RDMA_MSG);
		/* the fixed part alone is enough to tell */
		w.n = RPCRDMA_HDR_FIXED;
		assert_int_equal(dec(&w, &h), -EPROTONOSUPPORT);
	}
}

static void test_dec_proc(void **state)
{
	static const uint32_t bad[] = { RDMA_MSGP, RDMA_DONE, 5, 0xffffffff };
	struct rpcrdma_hdr h;
	struct lt_wire w;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wfixed(&w, 0x66, 1, 3, bad[i]);
		lt_put32(&w, 0);
		lt_put32(&w, 0);
		lt_put32(&w, 0);
		lt_put32(&w, 0);
		lt_put32(&w, 0);
		assert_int_equal(dec(&w, &h), -EBADMSG);
		assert_int_equal(h.xid, 0x66);
		assert_int_equal(h.proc, bad[i]);
	}
}

static void test_dec_bad_bool(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	/* read list */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 2);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
	/* read list, after an entry */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 0, 10);
	lt_put32(&w, 0x80000000);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
	/* write list */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 3);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
	/* write list, after a chunk */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	wchunk(&w, 1, 10);
	lt_put32(&w, 0xffffffff);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
	/* reply chunk */
	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 2);
	wchunk(&w, 0, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
}

static void test_dec_positions(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;
	uint32_t p;

	(void)state;
	/* backwards */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 8, 10);
	wread(&w, 4, 10);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EINVAL);
	/* back to an earlier position after another one */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 0, 10);
	wread(&w, 8, 10);
	wread(&w, 0, 10);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EINVAL);
	/* not multiples of 4 */
	for (p = 1; p < 4; p++) {
		wfixed(&w, 1, 1, 1, RDMA_MSG);
		wread(&w, p, 10);
		wend(&w);
		assert_int_equal(dec(&w, &h), -EINVAL);
		wfixed(&w, 1, 1, 1, RDMA_MSG);
		wread(&w, 0, 10);
		wread(&w, 12 + p, 10);
		wend(&w);
		assert_int_equal(dec(&w, &h), -EINVAL);
	}
	/* non-decreasing, a gap in the positions, a large aligned one */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 4, 10);
	wread(&w, 4, 10);
	wread(&w, 4, 10);
	wread(&w, 1000, 10);
	wread(&w, 0xfffffffc, 10);
	wend(&w);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nread_chunks, 3);
	assert_int_equal(h.read[0].nsegs, 3);
	assert_int_equal(h.read[0].length, 30);
	assert_int_equal(h.read[1].position, 1000);
	assert_int_equal(h.read[2].position, 0xfffffffc);
	assert_int_equal(h.read[2].first, 4);
}

static void test_dec_zero_length(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	wread(&w, 0, 0);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EINVAL);
	wfixed(&w, 1, 1, 1, RDMA_NOMSG);
	wread(&w, 0, 10);
	wread(&w, 0, 0);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EINVAL);
	/*
	 * Write and reply segments may be zero-length: a reply echoes them
	 * with the bytes written, 0 for one not reached.
	 */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	wchunk(&w, 2, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	wchunk(&w, 1, 0);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.write[0].length, 0);
	assert_int_equal(h.reply.length, 0);
	/* and a chunk may have no segments */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	wchunk(&w, 0, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	wchunk(&w, 0, 0);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nwrite, 1);
	assert_int_equal(h.write[0].nsegs, 0);
	assert_true(h.has_reply);
	assert_int_equal(h.reply.nsegs, 0);
	assert_int_equal(h.hdr_len, 16 + 4 + 8 + 4 + 8);
}

static void test_dec_totals(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	/* read chunk: at UINT32_MAX, then one past */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 0, 0xfffffffe);
	wread(&w, 0, 1);
	wread(&w, 4, 0xffffffff);
	wend(&w);
	assert_int_equal(dec(&w, &h), 0);
	assert_true(h.read[0].length == 0xffffffffull);
	assert_true(h.read[1].length == 0xffffffffull);
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	wread(&w, 0, 0xffffffff);
	wread(&w, 0, 1);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EINVAL);
	/* write chunk */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	lt_put32(&w, 2);
	wseg(&w, 1, 0xfffffff0, 0);
	wseg(&w, 2, 0x0f, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), 0);
	assert_true(h.write[0].length == 0xffffffffull);
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	lt_put32(&w, 2);
	wseg(&w, 1, 0xfffffff0, 0);
	wseg(&w, 2, 0x10, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EINVAL);
	/* reply chunk */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	lt_put32(&w, 3);
	wseg(&w, 1, 0x80000000, 0);
	wseg(&w, 2, 0x7fffffff, 0);
	wseg(&w, 3, 1, 0);
	assert_int_equal(dec(&w, &h), -EINVAL);
	w.n -= 16;
	xdr_put_u32(w.b + w.n - 32 - 4, 2);
	assert_int_equal(dec(&w, &h), 0);
	assert_true(h.reply.length == 0xffffffffull);
}

/* a read list of @nseg segments over @npos positions (8, 16, ...) */
static void wreads(struct lt_wire *w, unsigned int nseg, unsigned int npos)
{
	unsigned int i;

	wfixed(w, 1, 1, 1, RDMA_MSG);
	for (i = 0; i < nseg; i++)
		wread(w, 8 * (1 + i * npos / nseg), 10);
	lt_put32(w, 0);
	lt_put32(w, 0);
	lt_put32(w, 0);
}

static void test_limit_read(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	wreads(&w, RPCRDMA_READ_SEGS_MAX - 1, 4);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nread_segs, RPCRDMA_READ_SEGS_MAX - 1);
	wreads(&w, RPCRDMA_READ_SEGS_MAX, RPCRDMA_READ_CHUNKS_MAX);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nread_segs, RPCRDMA_READ_SEGS_MAX);
	assert_int_equal(h.nread_chunks, RPCRDMA_READ_CHUNKS_MAX);
	wreads(&w, RPCRDMA_READ_SEGS_MAX + 1, 2);
	assert_int_equal(dec(&w, &h), -E2BIG);
	/* past the maximum is refused even when the entry is cut short */
	wreads(&w, RPCRDMA_READ_SEGS_MAX, 2);
	w.n -= 12;
	lt_put32(&w, 1);
	assert_int_equal(dec(&w, &h), -E2BIG);

	wreads(&w, RPCRDMA_READ_CHUNKS_MAX - 1, RPCRDMA_READ_CHUNKS_MAX - 1);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nread_chunks, RPCRDMA_READ_CHUNKS_MAX - 1);
	wreads(&w, RPCRDMA_READ_CHUNKS_MAX, RPCRDMA_READ_CHUNKS_MAX);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nread_chunks, RPCRDMA_READ_CHUNKS_MAX);
	wreads(&w, RPCRDMA_READ_CHUNKS_MAX + 1, RPCRDMA_READ_CHUNKS_MAX + 1);
	assert_int_equal(dec(&w, &h), -E2BIG);
	wreads(&w, 3 * (RPCRDMA_READ_CHUNKS_MAX + 1), RPCRDMA_READ_CHUNKS_MAX + 1);
	assert_int_equal(dec(&w, &h), -E2BIG);
}

/* a write list of @nchunks chunks of @nseg segments, and a reply chunk of @nreply (-1: none) */
static void wwrites(struct lt_wire *w, unsigned int nchunks, uint32_t nseg, int nreply)
{
	unsigned int i;

	wfixed(w, 1, 1, 1, RDMA_MSG);
	lt_put32(w, 0);
	for (i = 0; i < nchunks; i++) {
		lt_put32(w, 1);
		wchunk(w, nseg, 4096);
	}
	lt_put32(w, 0);
	if (nreply < 0) {
		lt_put32(w, 0);
	} else {
		lt_put32(w, 1);
		wchunk(w, (uint32_t)nreply, 4096);
	}
}

static void test_limit_write(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;

	(void)state;
	wwrites(&w, RPCRDMA_WRITE_CHUNKS_MAX - 1, 1, -1);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nwrite, RPCRDMA_WRITE_CHUNKS_MAX - 1);
	wwrites(&w, RPCRDMA_WRITE_CHUNKS_MAX, 1, 1);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nwrite, RPCRDMA_WRITE_CHUNKS_MAX);
	assert_int_equal(h.reply.first, RPCRDMA_WRITE_CHUNKS_MAX);
	wwrites(&w, RPCRDMA_WRITE_CHUNKS_MAX + 1, 1, -1);
	assert_int_equal(dec(&w, &h), -E2BIG);

	/* segments in one chunk */
	wwrites(&w, 1, RPCRDMA_CHUNK_SEGS_MAX - 1, -1);
	assert_int_equal(dec(&w, &h), 0);
	wwrites(&w, 1, RPCRDMA_CHUNK_SEGS_MAX, -1);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.write[0].nsegs, RPCRDMA_CHUNK_SEGS_MAX);
	assert_int_equal(h.write[0].length, RPCRDMA_CHUNK_SEGS_MAX * 4096);
	wwrites(&w, 1, RPCRDMA_CHUNK_SEGS_MAX + 1, -1);
	assert_int_equal(dec(&w, &h), -E2BIG);
	wwrites(&w, 0, 0, RPCRDMA_CHUNK_SEGS_MAX - 1);
	assert_int_equal(dec(&w, &h), 0);
	wwrites(&w, 0, 0, RPCRDMA_CHUNK_SEGS_MAX);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.reply.nsegs, RPCRDMA_CHUNK_SEGS_MAX);
	wwrites(&w, 0, 0, RPCRDMA_CHUNK_SEGS_MAX + 1);
	assert_int_equal(dec(&w, &h), -E2BIG);

	/* segments in all chunks together: 2 x 64 = 128 */
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX, -1);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nsegs, RPCRDMA_SEGS_MAX);
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX, 0);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nsegs, RPCRDMA_SEGS_MAX);
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX, 1);
	assert_int_equal(dec(&w, &h), -E2BIG);
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX - 1, 2);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.nsegs, RPCRDMA_SEGS_MAX);
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX - 1, 3);
	assert_int_equal(dec(&w, &h), -E2BIG);
	wwrites(&w, 3, 43, -1); /* 129 */
	assert_int_equal(dec(&w, &h), -E2BIG);
	wwrites(&w, 3, 42, 2); /* 128 */
	assert_int_equal(dec(&w, &h), 0);

	/* a huge count is refused before anything is read */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	lt_put32(&w, 0xffffffff);
	assert_int_equal(dec(&w, &h), -E2BIG);
	/* a count within the limits that the bytes left cannot hold */
	wfixed(&w, 1, 1, 1, RDMA_MSG);
	lt_put32(&w, 0);
	lt_put32(&w, 1);
	lt_put32(&w, 2);
	wseg(&w, 1, 1, 1);
	wend(&w);
	assert_int_equal(dec(&w, &h), -EBADMSG);
}

static void test_dec_error(void **state)
{
	struct rpcrdma_hdr h;
	struct lt_wire w;
	size_t len;

	(void)state;
	wfixed(&w, 9, 1, 0, RDMA_ERROR);
	lt_put32(&w, ERR_VERS);
	lt_put32(&w, 1);
	lt_put32(&w, 3);
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.proc, RDMA_ERROR);
	assert_int_equal(h.err, ERR_VERS);
	assert_int_equal(h.vers_low, 1);
	assert_int_equal(h.vers_high, 3);
	assert_int_equal(h.hdr_len, 28);
	for (len = 16; len < 28; len++) {
		w.n = len;
		assert_int_equal(dec(&w, &h), -EBADMSG);
		assert_int_equal(h.proc, RDMA_ERROR);
	}
	wfixed(&w, 9, 1, 0, RDMA_ERROR);
	lt_put32(&w, ERR_CHUNK);
	lt_put32(&w, 0x77); /* not part of the header */
	assert_int_equal(dec(&w, &h), 0);
	assert_int_equal(h.err, ERR_CHUNK);
	assert_int_equal(h.vers_low, 0);
	assert_int_equal(h.hdr_len, 20);
	wfixed(&w, 9, 1, 0, RDMA_ERROR);
	lt_put32(&w, 3);
	assert_int_equal(dec(&w, &h), -EBADMSG);
	assert_int_equal(h.err, 3);
	wfixed(&w, 9, 1, 0, RDMA_ERROR);
	lt_put32(&w, 0);
	assert_int_equal(dec(&w, &h), -EBADMSG);
}

/* ---------------------------------------------------------------- encoders */

static void test_enc_plain(void **state)
{
	static const uint8_t want[] = { 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 64, 0, 0,
					0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 0 };
	struct rpcrdma_hdr h;
	uint8_t buf[64];
	size_t room;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(rpcrdma_enc_hdr_plain(buf, sizeof(buf), 5, 64, RDMA_NOMSG),
			 RPCRDMA_HDR_MIN);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[RPCRDMA_HDR_MIN], 0xee);
	assert_int_equal(rpcrdma_dec_hdr(buf, RPCRDMA_HDR_MIN, &h), 0);
	assert_int_equal(h.xid, 5);
	assert_int_equal(h.credits, 64);
	assert_int_equal(h.proc, RDMA_NOMSG);
	assert_int_equal(h.hdr_len, RPCRDMA_HDR_MIN);
	assert_int_equal(rpcrdma_enc_hdr_plain(buf, sizeof(buf), 5, 64, RDMA_MSG), 28);
	assert_int_equal(rpcrdma_dec_hdr(buf, 28, &h), 0);
	assert_int_equal(h.proc, RDMA_MSG);
	/* room one below, at, above */
	for (room = 0; room < RPCRDMA_HDR_MIN; room++) {
		memset(buf, 0xee, sizeof(buf));
		assert_int_equal(rpcrdma_enc_hdr_plain(buf, room, 5, 64, RDMA_MSG), -EMSGSIZE);
		assert_int_equal(buf[room], 0xee);
	}
	assert_int_equal(rpcrdma_enc_hdr_plain(NULL, 0, 5, 64, RDMA_MSG), -EMSGSIZE);
	assert_int_equal(rpcrdma_enc_hdr_plain(buf, 29, 5, 64, RDMA_MSG), 28);
	assert_int_equal(rpcrdma_enc_hdr_plain(buf, sizeof(buf), 5, 64, RDMA_ERROR), -EINVAL);
	assert_int_equal(rpcrdma_enc_hdr_plain(buf, sizeof(buf), 5, 64, RDMA_MSGP), -EINVAL);
}

static void test_enc_call(void **state)
{
	const struct rpcrdma_seg rsegs[4] = { { 0x11, 100, 0x1000 },
					      { 0x12, 200, 0x2000 },
					      { 0x13, 300, 0x3000 },
					      { 0x14, 400, 0x4000 } };
	const uint32_t rpos[4] = { 0, 0, 12, 40 };
	const struct rpcrdma_seg segs[5] = { { 0x21, 10, 1 },
					     { 0x22, 20, 2 },
					     { 0x23, 30, 3 },
					     { 0x24, 40, 4 },
					     { 0x25, 50, 0xffffffff00000005ull } };
	const struct rpcrdma_chunk wch[2] = { { 0, 2, 30 }, { 2, 1, 30 } };
	const struct rpcrdma_chunk reply = { 3, 2, 90 };
	struct rpcrdma_hdr h;
	uint8_t buf[1024];
	int n, want = 16 + 4 * 24 + 4 + (8 + 32) + (8 + 16) + 4 + 8 + 32;
	unsigned int i;

	(void)state;
	n = rpcrdma_enc_call_hdr(buf, sizeof(buf), 0x42, 16, RDMA_MSG, rsegs, rpos, 4, segs, wch, 2,
				 &reply);
	assert_int_equal(n, want);
	assert_int_equal(rpcrdma_dec_hdr(buf, (size_t)n, &h), 0);
	assert_int_equal(h.hdr_len, (size_t)n);
	assert_int_equal(h.xid, 0x42);
	assert_int_equal(h.credits, 16);
	assert_int_equal(h.nread_segs, 4);
	assert_memory_equal(h.read_segs, rsegs, sizeof(rsegs));
	assert_int_equal(h.nread_chunks, 3);
	assert_int_equal(h.read[0].length, 300);
	assert_int_equal(h.read[1].position, 12);
	assert_int_equal(h.read[2].position, 40);
	assert_int_equal(h.nwrite, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(h.write[i].first, wch[i].first);
		assert_int_equal(h.write[i].nsegs, wch[i].nsegs);
		assert_int_equal(h.write[i].length, wch[i].length);
	}
	assert_true(h.has_reply);
	assert_int_equal(h.reply.first, 3);
	assert_int_equal(h.reply.nsegs, 2);
	assert_int_equal(h.reply.length, 90);
	assert_int_equal(h.nsegs, 5);
	assert_memory_equal(h.segs, segs, sizeof(segs));
	/* room one below the size */
	assert_int_equal(rpcrdma_enc_call_hdr(buf, (size_t)want - 1, 0x42, 16, RDMA_MSG, rsegs,
					      rpos, 4, segs, wch, 2, &reply),
			 -EMSGSIZE);
	/* no lists at all: same bytes as the plain header */
	n = rpcrdma_enc_call_hdr(buf, sizeof(buf), 0x43, 1, RDMA_NOMSG, NULL, NULL, 0, NULL, NULL,
				 0, NULL);
	assert_int_equal(n, 28);
	{
		uint8_t plain[28];

		assert_int_equal(rpcrdma_enc_hdr_plain(plain, sizeof(plain), 0x43, 1, RDMA_NOMSG),
				 28);
		assert_memory_equal(buf, plain, 28);
	}
	assert_int_equal(rpcrdma_enc_call_hdr(buf, sizeof(buf), 0x43, 1, RDMA_ERROR, NULL, NULL, 0,
					      NULL, NULL, 0, NULL),
			 -EINVAL);
}

static void test_enc_call_roundtrip_full(void **state)
{
	struct rpcrdma_seg rsegs[RPCRDMA_READ_SEGS_MAX];
	uint32_t rpos[RPCRDMA_READ_SEGS_MAX];
	struct rpcrdma_hdr h, h2;
	uint8_t buf[8192];
	struct lt_wire w;
	unsigned int i, j;
	int n;

	(void)state;
	wfull(&w);
	assert_int_equal(dec(&w, &h), 0);
	for (i = 0; i < h.nread_chunks; i++)
		for (j = 0; j < h.read[i].nsegs; j++) {
			rsegs[h.read[i].first + j] = h.read_segs[h.read[i].first + j];
			rpos[h.read[i].first + j] = h.read[i].position;
		}
	n = rpcrdma_enc_call_hdr(buf, sizeof(buf), h.xid, h.credits, h.proc, rsegs, rpos,
				 h.nread_segs, h.segs, h.write, h.nwrite,
				 h.has_reply ? &h.reply : NULL);
	assert_int_equal(n, w.n);
	assert_memory_equal(buf, w.b, w.n);
	assert_int_equal(rpcrdma_dec_hdr(buf, (size_t)n, &h2), 0);
	assert_int_equal(h2.nsegs, h.nsegs);
	assert_memory_equal(h2.segs, h.segs, sizeof(h.segs));
	assert_memory_equal(h2.read_segs, h.read_segs, sizeof(h.read_segs));

	/* every limit at its maximum at once */
	wwrites(&w, 2, RPCRDMA_CHUNK_SEGS_MAX, 0);
	assert_int_equal(dec(&w, &h), 0);
	n = rpcrdma_enc_call_hdr(buf, sizeof(buf), h.xid, h.credits, h.proc, NULL, NULL, 0, h.segs,
				 h.write, h.nwrite, &h.reply);
	assert_int_equal(n, w.n);
	assert_memory_equal(buf, w.b, w.n);
}

static void test_enc_reply(void **state)
{
	const struct rpcrdma_seg segs[6] = {
		{ 0x21, 100, 1 },  { 0x22, 200, 2 },  { 0x23, 300, 3 },
		{ 0x24, 4096, 4 }, { 0x31, 1000, 5 }, { 0x32, 1000, 6 }
	};
	const struct rpcrdma_chunk wch[2] = { { 0, 3, 600 }, { 3, 1, 4096 } };
	const struct rpcrdma_chunk reply = { 4, 2, 2000 };
	static const uint64_t cases[][3] = {
		/* written[0], written[1], reply_written */
		{ 0, 0, 0 },	   { 1, 4096, 1 },     { 99, 4095, 999 },   { 100, 1, 1000 },
		{ 101, 0, 1001 },  { 250, 10, 1500 },  { 300, 20, 1999 },   { 599, 30, 2000 },
		{ 600, 40, 2001 }, { 601, 50, 99999 }, { 100000, 4097, 0 },
	};
	struct rpcrdma_hdr h;
	uint8_t buf[1024];
	size_t c;
	unsigned int i;
	int n;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const uint64_t written[2] = { cases[c][0], cases[c][1] };

		n = rpcrdma_enc_reply_hdr(buf, sizeof(buf), 0x99, 8, RDMA_NOMSG, segs, wch, 2,
					  written, &reply, cases[c][2]);
		assert_int_equal(n, 16 + 4 + (8 + 48) + (8 + 16) + 4 + 8 + 32);
		assert_int_equal(rpcrdma_dec_hdr(buf, (size_t)n, &h), 0);
		assert_int_equal(h.hdr_len, (size_t)n);
		assert_int_equal(h.proc, RDMA_NOMSG);
		assert_int_equal(h.nread_segs, 0);
		assert_int_equal(h.nwrite, 2);
		for (i = 0; i < 2; i++) {
			uint64_t want = written[i] < wch[i].length ? written[i] : wch[i].length;

			assert_int_equal(h.write[i].nsegs, wch[i].nsegs);
			assert_true(h.write[i].length == want);
		}
		assert_true(h.reply.length ==
			    (cases[c][2] < reply.length ? cases[c][2] : reply.length));
		/* filled in order: a segment is full until the bytes run out */
		{
			uint64_t left = written[0] < 600 ? written[0] : 600;

			for (i = 0; i < 3; i++) {
				uint64_t want = left < segs[i].length ? left : segs[i].length;

				assert_int_equal(h.segs[i].length, want);
				assert_int_equal(h.segs[i].handle, segs[i].handle);
				assert_true(h.segs[i].offset == segs[i].offset);
				left -= want;
			}
		}
	}
	/* exact lengths of a partly used first chunk */
	{
		const uint64_t written[2] = { 250, 0 };

		n = rpcrdma_enc_reply_hdr(buf, sizeof(buf), 0x99, 8, RDMA_MSG, segs, wch, 2,
					  written, NULL, 0);
		assert_int_equal(n, 16 + 4 + (8 + 48) + (8 + 16) + 4 + 4);
		assert_int_equal(rpcrdma_dec_hdr(buf, (size_t)n, &h), 0);
		assert_int_equal(h.segs[0].length, 100);
		assert_int_equal(h.segs[1].length, 150);
		assert_int_equal(h.segs[2].length, 0);
		assert_int_equal(h.segs[3].length, 0);
		assert_false(h.has_reply);
		/* NULL written: nothing written into any chunk */
		n = rpcrdma_enc_reply_hdr(buf, sizeof(buf), 0x99, 8, RDMA_MSG, segs, wch, 2, NULL,
					  NULL, 0);
		assert_int_equal(rpcrdma_dec_hdr(buf, (size_t)n, &h), 0);
		assert_int_equal(h.write[0].length, 0);
		assert_int_equal(h.write[1].length, 0);
		/* room one below */
		assert_int_equal(rpcrdma_enc_reply_hdr(buf, (size_t)n - 1, 0x99, 8, RDMA_MSG, segs,
						       wch, 2, written, NULL, 0),
				 -EMSGSIZE);
		assert_int_equal(rpcrdma_enc_reply_hdr(buf, (size_t)n, 0x99, 8, RDMA_MSG, segs, wch,
						       2, written, NULL, 0),
				 n);
		assert_int_equal(rpcrdma_enc_reply_hdr(buf, sizeof(buf), 0x99, 8, RDMA_DONE, segs,
						       wch, 2, written, NULL, 0),
				 -EINVAL);
	}
	/* no chunks: the plain header */
	{
		uint8_t plain[28];

		n = rpcrdma_enc_reply_hdr(buf, sizeof(buf), 3, 4, RDMA_MSG, NULL, NULL, 0, NULL,
					  NULL, 0);
		assert_int_equal(n, 28);
		assert_int_equal(rpcrdma_enc_hdr_plain(plain, sizeof(plain), 3, 4, RDMA_MSG), 28);
		assert_memory_equal(buf, plain, 28);
	}
}

static void test_enc_error(void **state)
{
	static const uint8_t vers[] = { 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0,
					0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 };
	static const uint8_t chunk[] = {
		0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 2
	};
	struct rpcrdma_hdr h;
	uint8_t buf[64];

	(void)state;
	assert_int_equal(rpcrdma_enc_error(buf, sizeof(buf), 7, 2, ERR_VERS), 28);
	assert_memory_equal(buf, vers, sizeof(vers));
	assert_int_equal(rpcrdma_dec_hdr(buf, 28, &h), 0);
	assert_int_equal(h.proc, RDMA_ERROR);
	assert_int_equal(h.err, ERR_VERS);
	assert_int_equal(h.vers_low, 1);
	assert_int_equal(h.vers_high, 1);
	assert_int_equal(rpcrdma_enc_error(buf, 27, 7, 2, ERR_VERS), -EMSGSIZE);
	assert_int_equal(rpcrdma_enc_error(buf, 28, 7, 2, ERR_VERS), 28);

	assert_int_equal(rpcrdma_enc_error(buf, sizeof(buf), 7, 2, ERR_CHUNK), 20);
	assert_memory_equal(buf, chunk, sizeof(chunk));
	assert_int_equal(rpcrdma_dec_hdr(buf, 20, &h), 0);
	assert_int_equal(h.err, ERR_CHUNK);
	assert_int_equal(h.hdr_len, 20);
	assert_int_equal(rpcrdma_enc_error(buf, 19, 7, 2, ERR_CHUNK), -EMSGSIZE);
	assert_int_equal(rpcrdma_enc_error(buf, 20, 7, 2, ERR_CHUNK), 20);

	assert_int_equal(rpcrdma_enc_error(buf, sizeof(buf), 7, 2, 0), -EINVAL);
	assert_int_equal(rpcrdma_enc_error(buf, sizeof(buf), 7, 2, 3), -EINVAL);
}

/* ---------------------------------------------------------------- private data */

static void assert_defaults(const struct rpcrdma_cm_priv *p)
{
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->send_max, RPCRDMA_INLINE_DEFAULT);
	assert_int_equal(p->recv_max, RPCRDMA_INLINE_DEFAULT);
}

static void test_cm_priv(void **state)
{
	static const uint8_t want[] = { 0xf6, 0xab, 0x0e, 0x18, 1, 1, 31, 3 };
	struct rpcrdma_cm_priv p = { .flags = RPCRDMA_CM_FLAG_REMOTE_INV,
				     .send_max = 32 * 1024,
				     .recv_max = 4096 };
	uint8_t buf[16];
	size_t len;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	rpcrdma_cm_priv_enc(buf, &p);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[RPCRDMA_CM_PRIV_LEN], 0xee);
	memset(&p, 0x5a, sizeof(p));
	assert_true(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
	assert_int_equal(p.flags, RPCRDMA_CM_FLAG_REMOTE_INV);
	assert_int_equal(p.send_max, 32 * 1024);
	assert_int_equal(p.recv_max, 4096);
	/* longer private data is fine (the CM pads it) */
	assert_true(rpcrdma_cm_priv_dec(buf, sizeof(buf), &p));
	assert_int_equal(p.send_max, 32 * 1024);

	/* absent or short */
	memset(&p, 0x5a, sizeof(p));
	assert_false(rpcrdma_cm_priv_dec(NULL, 0, &p));
	assert_defaults(&p);
	for (len = 0; len < RPCRDMA_CM_PRIV_LEN; len++) {
		memset(&p, 0x5a, sizeof(p));
		assert_false(rpcrdma_cm_priv_dec(buf, len, &p));
		assert_defaults(&p);
	}
	/* another magic, each byte */
	for (len = 0; len < 4; len++) {
		buf[len] ^= 0x01;
		memset(&p, 0x5a, sizeof(p));
		assert_false(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
		assert_defaults(&p);
		buf[len] ^= 0x01;
	}
	/* another version */
	buf[4] = 2;
	assert_false(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
	assert_defaults(&p);
	buf[4] = 0;
	assert_false(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
	assert_defaults(&p);
	buf[4] = 1;
	/* undefined flags are ignored; the size bytes cover 1..256 KiB */
	buf[5] = 0xfe;
	buf[6] = 0;
	buf[7] = 255;
	assert_true(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
	assert_int_equal(p.flags, 0);
	assert_int_equal(p.send_max, 1024);
	assert_int_equal(p.recv_max, 256 * 1024);
	buf[5] = 0xff;
	assert_true(rpcrdma_cm_priv_dec(buf, RPCRDMA_CM_PRIV_LEN, &p));
	assert_int_equal(p.flags, RPCRDMA_CM_FLAG_REMOTE_INV);
}

static void test_cm_priv_sizes(void **state)
{
	static const uint32_t cases[][2] = {
		/* bytes, byte on the wire */
		{ 0, 0 },
		{ 1, 0 },
		{ 1023, 0 },
		{ 1024, 0 },
		{ 1025, 0 },
		{ 2047, 0 },
		{ 2048, 1 },
		{ 4096, 3 },
		{ 4097, 3 },
		{ 255 * 1024, 254 },
		{ 256 * 1024 - 1, 254 },
		{ 256 * 1024, 255 },
		{ 256 * 1024 + 1, 255 },
		{ 257 * 1024, 255 },
		{ UINT32_MAX, 255 },
	};
	struct rpcrdma_cm_priv p = { 0 }, q;
	uint8_t buf[RPCRDMA_CM_PRIV_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p.flags = 0xff;
		p.send_max = cases[i][0];
		p.recv_max = cases[i][0];
		rpcrdma_cm_priv_enc(buf, &p);
		assert_int_equal(buf[5], RPCRDMA_CM_FLAG_REMOTE_INV);
		assert_int_equal(buf[6], cases[i][1]);
		assert_int_equal(buf[7], cases[i][1]);
		assert_true(rpcrdma_cm_priv_dec(buf, sizeof(buf), &q));
		assert_int_equal(q.send_max, (cases[i][1] + 1) * 1024);
		assert_int_equal(q.recv_max, (cases[i][1] + 1) * 1024);
		assert_true(q.send_max >= RPCRDMA_INLINE_MIN && q.send_max <= RPCRDMA_INLINE_MAX);
	}
	/* every byte value decodes, then encodes back to itself */
	for (i = 0; i < 256; i++) {
		buf[6] = (uint8_t)i;
		buf[7] = (uint8_t)(255 - i);
		assert_true(rpcrdma_cm_priv_dec(buf, sizeof(buf), &q));
		assert_int_equal(q.send_max, (i + 1) * 1024);
		rpcrdma_cm_priv_enc(buf, &q);
		assert_int_equal(buf[6], i);
		assert_int_equal(buf[7], 255 - i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dec_plain),
		cmocka_unit_test(test_dec_full),
		cmocka_unit_test(test_dec_truncated),
		cmocka_unit_test(test_dec_version),
		cmocka_unit_test(test_dec_proc),
		cmocka_unit_test(test_dec_bad_bool),
		cmocka_unit_test(test_dec_positions),
		cmocka_unit_test(test_dec_zero_length),
		cmocka_unit_test(test_dec_totals),
		cmocka_unit_test(test_limit_read),
		cmocka_unit_test(test_limit_write),
		cmocka_unit_test(test_dec_error),
		cmocka_unit_test(test_enc_plain),
		cmocka_unit_test(test_enc_call),
		cmocka_unit_test(test_enc_call_roundtrip_full),
		cmocka_unit_test(test_enc_reply),
		cmocka_unit_test(test_enc_error),
		cmocka_unit_test(test_cm_priv),
		cmocka_unit_test(test_cm_priv_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
