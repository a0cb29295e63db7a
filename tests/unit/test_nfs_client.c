// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the lacuna tool's NFS client decoders (tools/nfs_client_dec.c):
 * well-formed READ_PLUS replies (holes starting before the offset asked
 * and running past the range, data with and without padding, eof at
 * end of file), replies truncated at every byte, segment counts at the
 * limit and past it, and each rule a segment can break (overlap, gap,
 * data before the offset or past the range, empty or unknown segments,
 * offsets past 2^64); READ and SEEK results; RPC reply headers; the
 * nfs:// URL parser; RPC-over-RDMA replies put back together (inline,
 * through the reply chunk, READ data from the write chunk, and each way
 * a server's reply can disagree with what the call offered); and random
 * bytes, which must never crash a decoder.
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

#include "../../tools/nfs_client.h"
#include "lt_wire.h"
#include "rpcrdma.h"

#define CAP 8

static void hole(struct lt_wire *b, uint64_t off, uint64_t len)
{
	lt_put32(b, NFSC_CONTENT_HOLE);
	lt_put64(b, off);
	lt_put64(b, len);
}

/* a data segment of @len bytes, each (offset + i) & 0xff, then its pad */
static void data(struct lt_wire *b, uint64_t off, uint32_t len)
{
	uint32_t i;

	lt_put32(b, NFSC_CONTENT_DATA);
	lt_put64(b, off);
	lt_put32(b, len);
	assert_true(b->n + XDR_ALIGN(len) <= LT_WIRE_MAX);
	for (i = 0; i < len; i++)
		b->b[b->n++] = (uint8_t)(off + i);
	for (i = 0; i < XDR_PAD(len); i++)
		b->b[b->n++] = 0;
}

struct res {
	struct nfsc_seg seg[CAP];
	uint32_t n;
	bool eof;
	char err[NFSC_ERR_MAX];
};

static int decode(const struct lt_wire *b, size_t len, uint64_t off, uint32_t count, struct res *r)
{
	struct xdr_in x;

	xdr_in_init(&x, b->b, len);
	memset(r, 0, sizeof(*r));
	return nfsc_dec_read_plus(&x, off, count, r->seg, CAP, &r->n, &r->eof, r->err,
				  sizeof(r->err));
}

/* a READ_PLUS result from its start: eof, then @nsegs segments to follow */
static void rp_start(struct lt_wire *b, bool eof, uint32_t nsegs)
{
	b->n = 0;
	lt_put32(b, eof);
	lt_put32(b, nsegs);
}

/* The reply decodes to an error @rc whose message holds @what. */
static void refused(const struct lt_wire *b, uint64_t off, uint32_t count, int rc, const char *what)
{
	struct res r;

	assert_int_equal(decode(b, b->n, off, count, &r), rc);
	assert_non_null(strstr(r.err, what));
	assert_int_equal(r.n, 0);
}

static void test_rp_well_formed(void **state)
{
	struct lt_wire b = { 0 };
	struct res r;
	uint32_t i;

	(void)state;
	/* asked [8192, 8192 + 65536): a hole from 0, 5 bytes of data, a hole past the range */
	rp_start(&b, false, 3);
	hole(&b, 0, 10000);
	data(&b, 10000, 5);
	hole(&b, 10005, 1 << 20);
	assert_int_equal(decode(&b, b.n, 8192, 65536, &r), 0);
	assert_false(r.eof);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.seg[0].kind, NFSC_CONTENT_HOLE);
	assert_int_equal(r.seg[0].offset, 0);
	assert_int_equal(r.seg[0].length, 10000);
	assert_null(r.seg[0].data);
	assert_int_equal(r.seg[1].kind, NFSC_CONTENT_DATA);
	assert_int_equal(r.seg[1].offset, 10000);
	assert_int_equal(r.seg[1].length, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(r.seg[1].data[i], (uint8_t)(10000 + i));
	assert_int_equal(r.seg[2].offset, 10005);
	assert_int_equal(r.seg[2].length, 1 << 20);

	/* data filling the request exactly, at end of file */
	rp_start(&b, true, 2);
	data(&b, 4096, 100);
	data(&b, 4196, 28);
	assert_int_equal(decode(&b, b.n, 4096, 128, &r), 0);
	assert_true(r.eof);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.seg[1].data[0], (uint8_t)4196);

	/* at or past end of file: eof, no segments */
	rp_start(&b, true, 0);
	assert_int_equal(decode(&b, b.n, 1 << 30, 4096, &r), 0);
	assert_true(r.eof);
	assert_int_equal(r.n, 0);

	/* a short reply: less than asked, eof false, is fine */
	rp_start(&b, false, 1);
	data(&b, 0, 7);
	assert_int_equal(decode(&b, b.n, 0, 1 << 20, &r), 0);
	assert_int_equal(r.n, 1);
}

/* Every prefix of a well-formed reply is truncated: -EBADMSG, never a crash. */
static void test_rp_truncated(void **state)
{
	struct lt_wire b = { 0 };
	struct res r;
	size_t len;

	(void)state;
	rp_start(&b, true, 4);
	hole(&b, 0, 4096);
	data(&b, 4096, 3); /* odd: a pad follows */
	hole(&b, 4099, 1000);
	data(&b, 5099, 6);
	assert_int_equal(decode(&b, b.n, 0, 8192, &r), 0);
	for (len = 0; len < b.n; len++) {
		/* a copy of exactly len bytes, so ASan sees a read past it */
		uint8_t *p = malloc(len ? len : 1);
		struct xdr_in x;

		assert_non_null(p);
		memcpy(p, b.b, len);
		xdr_in_init(&x, p, len);
		assert_int_equal(nfsc_dec_read_plus(&x, 0, 8192, r.seg, CAP, &r.n, &r.eof, r.err,
						    sizeof(r.err)),
				 -EBADMSG);
		assert_int_equal(r.n, 0);
		free(p);
	}
	/* a boolean that is neither 0 nor 1 */
	xdr_put_u32(b.b, 2);
	refused(&b, 0, 8192, -EBADMSG, "malformed");
}

static void test_rp_counts(void **state)
{
	struct lt_wire b = { 0 };
	struct res r;
	uint32_t i;

	(void)state;
	/* CAP segments: the limit itself is fine */
	rp_start(&b, false, CAP);
	for (i = 0; i < CAP; i++)
		hole(&b, (uint64_t)i * 10, 10);
	assert_int_equal(decode(&b, b.n, 0, CAP * 10, &r), 0);
	assert_int_equal(r.n, CAP);

	/* one past it */
	rp_start(&b, false, CAP + 1);
	for (i = 0; i < CAP + 1; i++)
		hole(&b, (uint64_t)i * 10, 10);
	refused(&b, 0, 1000, -E2BIG, "more than the 8");

	/* a huge count with nothing behind it */
	rp_start(&b, false, 0xffffffffU);
	refused(&b, 0, 1000, -E2BIG, "4294967295 segments");

	/* within the limit, but more than the bytes left can hold */
	rp_start(&b, false, 3);
	hole(&b, 0, 10);
	refused(&b, 0, 1000, -EBADMSG, "cannot fit");
}

static void test_rp_overlap_gap(void **state)
{
	struct lt_wire b = { 0 };

	(void)state;
	rp_start(&b, false, 2);
	data(&b, 0, 8);
	hole(&b, 4, 100); /* starts inside the data */
	refused(&b, 0, 4096, -EPROTO, "overlaps the previous one, which ends at 8");

	rp_start(&b, false, 3);
	hole(&b, 0, 4096);
	data(&b, 4096, 4);
	data(&b, 4104, 4); /* 4 bytes missing */
	refused(&b, 0, 8192, -EPROTO, "gap after the previous one, which ends at 4100");

	/* the same hole twice */
	rp_start(&b, false, 2);
	hole(&b, 0, 4096);
	hole(&b, 0, 4096);
	refused(&b, 0, 8192, -EPROTO, "overlaps");

	/* going backwards */
	rp_start(&b, false, 2);
	data(&b, 4096, 4);
	data(&b, 0, 4);
	refused(&b, 4096, 8192, -EPROTO, "overlaps");
}

static void test_rp_range(void **state)
{
	struct lt_wire b = { 0 };

	(void)state;
	/* the first segment starts after the offset asked */
	rp_start(&b, false, 1);
	data(&b, 4100, 4);
	refused(&b, 4096, 4096, -EPROTO, "starts after the offset asked");

	/* data may not start before the offset asked (a hole may) */
	rp_start(&b, false, 1);
	data(&b, 4092, 8);
	refused(&b, 4096, 4096, -EPROTO, "before the offset asked");

	/* a hole that ends before the offset asked */
	rp_start(&b, false, 2);
	hole(&b, 0, 4096);
	data(&b, 4096, 4);
	refused(&b, 8192, 4096, -EPROTO, "ends before the offset asked");

	/* more data than asked, in one segment and over two */
	rp_start(&b, false, 1);
	data(&b, 0, 12);
	refused(&b, 0, 8, -EPROTO, "more than the 8 asked");
	rp_start(&b, false, 2);
	data(&b, 0, 8);
	data(&b, 8, 8);
	refused(&b, 0, 12, -EPROTO, "runs past the range asked, which ends at 12");

	/* a segment starting at the end of the range */
	rp_start(&b, false, 2);
	data(&b, 0, 8);
	hole(&b, 8, 100);
	refused(&b, 0, 8, -EPROTO, "starts past the range asked");
}

static void test_rp_bad_segments(void **state)
{
	struct lt_wire b = { 0 };

	(void)state;
	rp_start(&b, false, 1);
	lt_put32(&b, 7); /* content type 7 */
	lt_put64(&b, 0);
	lt_put64(&b, 0);
	refused(&b, 0, 4096, -EPROTO, "content type 7");

	rp_start(&b, false, 2);
	hole(&b, 0, 0);
	data(&b, 0, 4);
	refused(&b, 0, 4096, -EPROTO, "is empty");

	rp_start(&b, false, 1);
	data(&b, 0, 0);
	refused(&b, 0, 4096, -EPROTO, "is empty");

	rp_start(&b, false, 1);
	hole(&b, 4096, UINT64_MAX - 100);
	refused(&b, 4096, 4096, -EPROTO, "past 2^64");

	/* an opaque length past the end of the reply */
	rp_start(&b, false, 1);
	lt_put32(&b, NFSC_CONTENT_DATA);
	lt_put64(&b, 0);
	lt_put32(&b, 4000);
	lt_put32(&b, 0);
	refused(&b, 0, 4096, -EBADMSG, "truncated in the 4000 bytes");
}

static void test_read_seek(void **state)
{
	struct lt_wire b = { 0 };
	struct nfsc_seg s;
	struct xdr_in x;
	uint64_t off;
	uint32_t n;
	bool eof;
	char err[NFSC_ERR_MAX];

	(void)state;
	lt_put32(&b, 1);
	lt_put32(&b, 5);
	memcpy(b.b + b.n, "hello\0\0\0", 8);
	b.n += 8;
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_read(&x, 100, 4096, &s, &n, &eof, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_true(eof);
	assert_int_equal(s.offset, 100);
	assert_int_equal(s.length, 5);
	assert_memory_equal(s.data, "hello", 5);
	/* more than asked */
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_read(&x, 100, 4, &s, &n, &eof, err, sizeof(err)), -EPROTO);
	/* truncated in the data or its pad */
	xdr_in_init(&x, b.b, b.n - 1);
	assert_int_equal(nfsc_dec_read(&x, 100, 4096, &s, &n, &eof, err, sizeof(err)), -EBADMSG);
	/* empty, at eof */
	memset(&b, 0, sizeof(b));
	lt_put32(&b, 1);
	lt_put32(&b, 0);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_read(&x, 100, 4096, &s, &n, &eof, err, sizeof(err)), 0);
	assert_int_equal(n, 0);

	memset(&b, 0, sizeof(b));
	lt_put32(&b, 0);
	lt_put64(&b, 123456789);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_seek(&x, &eof, &off, err, sizeof(err)), 0);
	assert_false(eof);
	assert_int_equal(off, 123456789);
	xdr_in_init(&x, b.b, b.n - 1);
	assert_int_equal(nfsc_dec_seek(&x, &eof, &off, err, sizeof(err)), -EBADMSG);
}

static void test_rpc_reply(void **state)
{
	struct lt_wire b = { 0 };
	struct xdr_in x;
	uint32_t xid;
	char err[NFSC_ERR_MAX];

	(void)state;
	lt_put32(&b, 0x1234);
	lt_put32(&b, 1); /* REPLY */
	lt_put32(&b, 0); /* accepted */
	lt_put32(&b, 0); /* verifier AUTH_NONE, empty */
	lt_put32(&b, 0);
	lt_put32(&b, 0); /* SUCCESS */
	lt_put32(&b, 77);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), 0);
	assert_int_equal(xid, 0x1234);
	assert_int_equal(xdr_in_left(&x), 4);
	xdr_in_init(&x, b.b, 20);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), -EBADMSG);

	/* PROG_MISMATCH 2..3 */
	b.n = 20;
	lt_put32(&b, 2);
	lt_put32(&b, 2);
	lt_put32(&b, 3);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "versions 2 to 3"));

	/* denied: AUTH_ERROR AUTH_TOOWEAK */
	b.n = 8;
	lt_put32(&b, 1);
	lt_put32(&b, 1);
	lt_put32(&b, 5);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "AUTH_TOOWEAK"));

	/* a CALL, not a reply */
	xdr_put_u32(b.b + 4, 0);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), -EPROTO);

	/* a verifier body longer than the record */
	xdr_put_u32(b.b + 4, 1);
	b.n = 8;
	lt_put32(&b, 0);
	lt_put32(&b, 1);
	lt_put32(&b, 300);
	xdr_in_init(&x, b.b, b.n);
	assert_int_equal(nfsc_dec_rpc_reply(&x, &xid, err, sizeof(err)), -EBADMSG);
}

static void test_url(void **state)
{
	static const struct {
		const char *url, *host, *port, *path;
	} good[] = {
		{ "nfs://127.0.0.1/a", "127.0.0.1", "2049", "/a" },
		{ "nfs://127.0.0.1:27049/dir/file", "127.0.0.1", "27049", "/dir/file" },
		{ "NFS://server.example-1/x", "server.example-1", "2049", "/x" },
		{ "nfs://[::1]:2050/f", "::1", "2050", "/f" },
		{ "nfs://[fe80::1:2]/f", "fe80::1:2", "2049", "/f" },
		{ "nfs://h//a//b/", "h", "2049", "//a//b/" },
		{ "nfs://h/a%20b%2fc", "h", "2049", "/a b/c" },
		{ "nfs://h:65535/f", "h", "65535", "/f" },
	};
	static const char *const bad[] = {
		"",
		"http://h/f",
		"nfs:/h/f",
		"nfs:///f",
		"nfs://h",
		"nfs://h/",
		"nfs://h//",
		"nfs://h:/f",
		"nfs://h:0/f",
		"nfs://h:65536/f",
		"nfs://h:99999999999999999999/f",
		"nfs://h:2x/f",
		"nfs://[::1/f",
		"nfs://[]/f",
		"nfs://[1.2.3.4]/f",
		"nfs://[::1]x/f",
		"nfs://u@h/f",
		"nfs://h/f?version=4",
		"nfs://h/f#x",
		"nfs://h/a/../b",
		"nfs://h/./b",
		"nfs://h/a%00",
		"nfs://h/a%2",
		"nfs://h/a%zz",
		"nfs://h h/f",
	};
	struct nfsc_url u;
	char err[NFSC_ERR_MAX], url[600];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(nfsc_url_parse(good[i].url, &u, err, sizeof(err)), 0);
		assert_string_equal(u.host, good[i].host);
		assert_string_equal(u.port, good[i].port);
		assert_string_equal(u.path, good[i].path);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (nfsc_url_parse(bad[i], &u, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was taken", bad[i]);
		assert_true(err[0] != '\0');
	}
	/* a name of 255 bytes is fine, 256 is not */
	strcpy(url, "nfs://h/");
	memset(url + 8, 'n', 255);
	url[8 + 255] = '\0';
	assert_int_equal(nfsc_url_parse(url, &u, err, sizeof(err)), 0);
	strcat(url, "n");
	assert_int_equal(nfsc_url_parse(url, &u, err, sizeof(err)), -EINVAL);
	/* 64 names are fine, 65 are not */
	strcpy(url, "nfs://h");
	for (i = 0; i < NFSC_COMPONENTS_MAX; i++)
		strcat(url, "/d");
	assert_int_equal(nfsc_url_parse(url, &u, err, sizeof(err)), 0);
	strcat(url, "/d");
	assert_int_equal(nfsc_url_parse(url, &u, err, sizeof(err)), -EINVAL);
}

/* Random bytes, and random changes to a good reply: any answer but a crash. */
static void test_random(void **state)
{
	struct lt_wire good = { 0 };
	unsigned int seed = 12345, i, j;
	struct res r;

	(void)state;
	lt_put32(&good, 0);
	lt_put32(&good, 3);
	hole(&good, 0, 4096);
	data(&good, 4096, 13);
	hole(&good, 4109, 99999);
	for (i = 0; i < 20000; i++) {
		struct lt_wire b;
		size_t len;
		uint8_t *p;
		struct xdr_in x;
		int rc;

		if (i % 2) {
			b.n = (size_t)rand_r(&seed) % 200;
			for (j = 0; j < b.n; j++)
				b.b[j] = (uint8_t)rand_r(&seed);
			if (b.n >= 8 && (i % 4) == 1)
				xdr_put_u32(b.b + 4, (uint32_t)rand_r(&seed) % 12);
		} else {
			b.n = good.n;
			memcpy(b.b, good.b, good.n);
			for (j = 0; j < 1 + (unsigned int)rand_r(&seed) % 4; j++)
				b.b[(size_t)rand_r(&seed) % b.n] ^=
					(uint8_t)(1 + rand_r(&seed) % 255);
		}
		len = b.n;
		p = malloc(len ? len : 1);
		assert_non_null(p);
		memcpy(p, b.b, len);
		xdr_in_init(&x, p, len);
		memset(&r, 0, sizeof(r));
		rc = nfsc_dec_read_plus(&x, (uint64_t)(rand_r(&seed) % 8192), 8192, r.seg, CAP,
					&r.n, &r.eof, r.err, sizeof(r.err));
		assert_true(rc == 0 || rc == -EBADMSG || rc == -EPROTO || rc == -E2BIG);
		if (rc == 0) {
			/* what was accepted obeys the rules */
			for (j = 0; j < r.n; j++) {
				assert_true(r.seg[j].length > 0);
				if (j)
					assert_true(r.seg[j].offset ==
						    r.seg[j - 1].offset + r.seg[j - 1].length);
				if (r.seg[j].data)
					assert_true(r.seg[j].data >= p &&
						    r.seg[j].data + r.seg[j].length <= p + len);
			}
		} else {
			assert_true(r.err[0] != '\0');
		}
		free(p);
	}
}

static void test_stat_names(void **state)
{
	(void)state;
	assert_string_equal(nfsc_stat_name(2), "NFS4ERR_NOENT");
	assert_string_equal(nfsc_stat_name(10044), "NFS4ERR_OP_ILLEGAL");
	assert_string_equal(nfsc_stat_name(10094), "NFS4ERR_OFFLOAD_NO_REQS");
	assert_string_equal(nfsc_stat_name(4242), "nfsstat4 4242");
	assert_int_equal(nfsc_stat_errno(2), ENOENT);
	assert_int_equal(nfsc_stat_errno(10008), 0);
}

static void test_rdma_reply(void **state)
{
	static uint8_t msg[4096], rbuf[8192], warea[1024 + 4096 + 8];
	uint8_t *wbuf = warea + 1024;
	struct rpcrdma_seg segs[2] = { { 1, 4096, 0x1000 }, { 2, 8192, 0x2000 } };
	struct rpcrdma_chunk wc = { 0, 1, 4096 }, rc = { 1, 1, 8192 };
	struct rpcrdma_hdr *h = malloc(sizeof(*h));
	uint64_t written = 5;
	const uint8_t *out;
	char err[256];
	size_t olen;
	int n, i;

	(void)state;
	assert_non_null(h);
	/* RDMA_MSG with 5 bytes of READ data reduced out: rebuilt around the data */
	n = rpcrdma_enc_reply_hdr(msg, sizeof(msg), 7, 8, RDMA_MSG, segs, &wc, 1, &written, &rc, 0);
	assert_true(n > 0);
	for (i = 0; i < 12; i++)
		msg[n + i] = (uint8_t)(0xa0 + i);
	xdr_put_u32(msg + n + 12, 5); /* the opaque's length word stays inline */
	memcpy(wbuf, "hello", 5);
	memset(wbuf + 5, 0xee, 3);
	assert_int_equal(rpcrdma_dec_hdr(msg, (size_t)n + 16, h), 0);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 16, rbuf, sizeof(rbuf), wbuf, 4096,
					 1024, &out, &olen, err, sizeof(err)),
			 0);
	assert_int_equal(olen, 16 + 8);
	assert_ptr_equal(out, wbuf - 16);
	assert_int_equal(out[0], 0xa0);
	assert_int_equal(xdr_get_u32(out + 12), 5);
	assert_memory_equal(out + 16, "hello\0\0\0", 8);
	/* a length word that is not the data's length */
	xdr_put_u32(msg + n + 12, 6);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 16, rbuf, sizeof(rbuf), wbuf, 4096,
					 1024, &out, &olen, err, sizeof(err)),
			 -EPROTO);
	xdr_put_u32(msg + n + 12, 5);
	/* no room before the data for what came inline */
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 16, rbuf, sizeof(rbuf), wbuf, 4096, 8,
					 &out, &olen, err, sizeof(err)),
			 -EPROTO);
	/* a write chunk the call did not offer, or longer than offered */
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 16, rbuf, sizeof(rbuf), NULL, 0, 0,
					 &out, &olen, err, sizeof(err)),
			 -EPROTO);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 16, rbuf, sizeof(rbuf), wbuf, 4, 1024,
					 &out, &olen, err, sizeof(err)),
			 -EPROTO);
	/* RDMA_NOMSG: 100 bytes in the reply chunk */
	written = 0;
	n = rpcrdma_enc_reply_hdr(msg, sizeof(msg), 9, 8, RDMA_NOMSG, segs, &wc, 1, &written, &rc,
				  100);
	assert_int_equal(rpcrdma_dec_hdr(msg, (size_t)n, h), 0);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n, rbuf, sizeof(rbuf), wbuf, 4096, 1024,
					 &out, &olen, err, sizeof(err)),
			 0);
	assert_ptr_equal(out, rbuf);
	assert_int_equal(olen, 100);
	/* longer than the reply chunk offered, or none offered */
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n, rbuf, 64, wbuf, 4096, 1024, &out, &olen,
					 err, sizeof(err)),
			 -EPROTO);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n, NULL, 0, NULL, 0, 0, &out, &olen, err,
					 sizeof(err)),
			 -EPROTO);
	/* RDMA_MSG, no chunks: the reply is what follows the header */
	n = rpcrdma_enc_hdr_plain(msg, sizeof(msg), 3, 8, RDMA_MSG);
	memset(msg + n, 0x55, 40);
	assert_int_equal(rpcrdma_dec_hdr(msg, (size_t)n + 40, h), 0);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n + 40, rbuf, sizeof(rbuf), NULL, 0, 0,
					 &out, &olen, err, sizeof(err)),
			 0);
	assert_ptr_equal(out, msg + n);
	assert_int_equal(olen, 40);
	/* RDMA_ERROR, both kinds: an error with a message */
	n = rpcrdma_enc_error(msg, sizeof(msg), 3, 8, ERR_CHUNK);
	assert_int_equal(rpcrdma_dec_hdr(msg, (size_t)n, h), 0);
	err[0] = 0;
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n, NULL, 0, NULL, 0, 0, &out, &olen, err,
					 sizeof(err)),
			 -EPROTO);
	assert_true(err[0] != 0);
	n = rpcrdma_enc_error(msg, sizeof(msg), 3, 8, ERR_VERS);
	assert_int_equal(rpcrdma_dec_hdr(msg, (size_t)n, h), 0);
	assert_int_equal(nfsc_rdma_reply(h, msg, (size_t)n, NULL, 0, NULL, 0, 0, &out, &olen, err,
					 sizeof(err)),
			 -EPROTO);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rp_well_formed),
		cmocka_unit_test(test_rp_truncated),
		cmocka_unit_test(test_rp_counts),
		cmocka_unit_test(test_rp_overlap_gap),
		cmocka_unit_test(test_rp_range),
		cmocka_unit_test(test_rp_bad_segments),
		cmocka_unit_test(test_read_seek),
		cmocka_unit_test(test_rpc_reply),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_stat_names),
		cmocka_unit_test(test_rdma_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
