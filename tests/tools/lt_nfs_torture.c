// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_nfs_torture: atomicity of lacunad's READ_PLUS under concurrent change.
 *
 *   lt_nfs_torture --port P --name PATH [--host A] [--seed N] [--seconds S]
 *                  [--writers W] [--readers R] [--small N] [--big N]
 *                  [--min-replies N] [--stop-after N] [--expect-race] FILE
 *
 * FILE (created or truncated) is a file on the lacunafs mount that a
 * lacunad on A:P (default 127.0.0.1) exports; PATH is the same file as
 * the NFS client names it, relative to the export's root. FILE is cut
 * into regions of varied sizes and alignments (a few bytes to 1 MiB, with
 * never-written gaps between some of them). Writer threads keep changing
 * regions through the mount, each change one system call: a pwrite of the
 * whole region with a pattern unique to that write, a PUNCH_HOLE or a
 * ZERO_RANGE (KEEP_SIZE); the first writer also truncates the file into
 * its last regions and restores the size, at once or by rewriting the
 * regions it cut (writes that extend the file). Reader threads, each over
 * its own TCP connection and NFSv4.2 session (EXCHANGE_ID, CREATE_SESSION,
 * RECLAIM_COMPLETE), send SEQUENCE + PUTFH + READ_PLUS with the anonymous
 * stateid on random ranges (region starts, anywhere, around and past EOF;
 * 1 byte to 1 MiB) and check every reply. The run lasts --seconds or until
 * --stop-after violations were found.
 *
 * Operation
 * ---------
 * A region is at most 1 MiB, lacunafs's max_write, so each pwrite reaches
 * lacunafs as one FUSE write and is atomic under its range lock; one
 * READ_PLUS is one sparse read under that lock (gateway/nfs4_op_sparse.c).
 *
 * Pattern. Byte x of the file written by write number g is 0x80 | 7 bits
 * of a hash of (g, x): never zero, and (but for a chance of 2^-7 per
 * byte) unlike any other write's.
 *
 * History. The writers hold a mutex across each call, so calls happen one
 * at a time and are numbered in order (seq). Before each call they log,
 * per region it changes, (seq, state), a state being "pattern g on the
 * first KEEP bytes, zeros after" (g = 0: all zeros; KEEP < the region's
 * length only after a truncate cut into it), and the file size the same
 * way.
 *
 * Checks. A reply must be well formed (RFC 7862 15.10): segments
 * contiguous and of known kinds, the first holding the offset (a data
 * segment starting there), none empty, data inside [offset, offset +
 * count), no more data than count; with eof the segments end at the file
 * size, which is then known; without, the size is at least their end;
 * a reply at or past EOF has eof and no segment. Then, holes read as
 * zeros, what the reply shows of each region must be a state that region
 * had ("torn" if none), and the reply must be a snapshot: one moment T,
 * after the calls completed before the request was sent and before the
 * calls begun after the reply arrived, at which every region it shows and
 * the size were what it says. Time is counted in half steps: T = 2 * seq
 * is "during call seq" (old or new state), T = 2 * seq + 1 "between call
 * seq and the next". A state logged at s and replaced at s' is visible
 * for T in [2s, 2s']; the reply narrows T to [2 * done_before + 1,
 * 2 * started_after + 1]; intersecting over the regions and the size
 * must leave some T ("snapshot" violation if not, "stale" if one region
 * alone fits no T of the reply's window).
 *
 * Without lacunafs's range lock (LACUNA_TEST_DISABLE_RANGELOCK=1 in the
 * daemon's environment) the SEEK_DATA/SEEK_HOLE walk and the preads
 * interleave with the writes and replies stop being snapshots:
 * --expect-race passes only if at least one such violation is found.
 *
 * Exit status: 0 pass (no violation and at least --min-replies replies
 * checked; with --expect-race: a violation found), 1 fail, 2 bad
 * arguments or a failed call (the message names it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LT_PAGE UINT64_C(4096)
#define LT_KIB UINT64_C(1024)
#define LT_MIB (UINT64_C(1) << 20)
#define LT_REGION_MAX LT_MIB /* lacunafs's max_write: one FUSE write */
#define LT_REGIONS_MAX 4096
#define LT_THREADS_MAX 32
#define LT_TSET_MAX 256
#define LT_REPORT_MAX 8
#define LT_COUNT_MAX LT_MIB		  /* READ_PLUS counts asked */
#define LT_REPLY_MAX (2 * LT_MIB + 65536) /* ca_maxresponsesize asked */
#define LT_SEGS_MAX 8192
#define LT_FH_MAX 128

/* NFSv4 numbers (RFC 8881, RFC 7862) */
enum {
	OP_GETFH = 10,
	OP_LOOKUP = 15,
	OP_PUTFH = 22,
	OP_PUTROOTFH = 24,
	OP_EXCHANGE_ID = 42,
	OP_CREATE_SESSION = 43,
	OP_SEQUENCE = 53,
	OP_RECLAIM_COMPLETE = 58,
	OP_READ_PLUS = 68,
	NFS4ERR_COMPLETE_ALREADY = 10054,
	CONTENT_DATA = 0,
	CONTENT_HOLE = 1,
};

enum lt_viol {
	LT_V_STRUCT,   /* malformed reply */
	LT_V_ERROR,    /* the READ_PLUS failed */
	LT_V_TORN,     /* a region in a state it never had */
	LT_V_STALE,    /* a region in a state outside the reply's time window */
	LT_V_SNAPSHOT, /* no single moment explains the whole reply */
	LT_V_SIZE,     /* a size never held within the time window */
	LT_V_NR,
};

static const char *const lt_viol_names[LT_V_NR] = {
	[LT_V_STRUCT] = "malformed", [LT_V_ERROR] = "error",	   [LT_V_TORN] = "torn",
	[LT_V_STALE] = "stale",	     [LT_V_SNAPSHOT] = "snapshot", [LT_V_SIZE] = "size",
};

struct lt_hent {
	uint32_t seq;
	uint32_t gen; /* 0: all zeros */
	uint64_t keep;
};

struct lt_region {
	uint64_t start, len;
	bool gap; /* never written */
	struct lt_hent *h;
	size_t n, cap;
};

struct lt_sent {
	uint32_t seq;
	uint64_t size;
};

struct lt_ivl {
	uint64_t lo, hi;
};

struct lt_seg {
	uint32_t kind;
	uint64_t off, len;
	const uint8_t *data;
};

struct lt_reader {
	unsigned int id;
	uint64_t rng;
	int sock;
	uint32_t xid, seq;
	uint8_t sessionid[16];
	uint8_t fh[LT_FH_MAX];
	uint32_t fhlen;
	uint8_t *rbuf; /* one reply record */
	size_t rlen;
	uint8_t *view; /* the reply's bytes, holes as zeros */
	struct lt_seg segs[LT_SEGS_MAX];
	unsigned int nsegs;
	bool eof;
	uint32_t status;
	/* the request being checked */
	uint64_t off, count;
	uint32_t s0, s1;
	struct lt_ivl t[LT_TSET_MAX], u[LT_TSET_MAX], tmp[LT_TSET_MAX];
	unsigned int nt, nu;
};

static struct {
	/* options */
	uint64_t seed;
	unsigned int seconds, nwriters, nreaders, nbig, nsmall;
	uint64_t min_replies, stop_after;
	bool expect_race;
	const char *path, *name, *host;
	unsigned int port;

	/* layout */
	struct lt_region *rg;
	unsigned int nrg;
	uint64_t fsize, cut_from, maxlen;
	unsigned int *writable;
	unsigned int nwritable;

	int wfd;
	/*
	 * Lock order: op_lock, then hist_lock. op_lock is held across each
	 * changing call and orders them; hist_lock guards the logs and is
	 * held by a reader while it checks a reply.
	 */
	pthread_mutex_t op_lock;
	pthread_mutex_t hist_lock;
	struct lt_sent *sz;
	size_t nsz, capsz;
	uint64_t cur_size;
	uint32_t started, done, next_gen; /* atomics */
	bool stop;			  /* atomic */

	uint64_t replies, eofs, holes, data_bytes, past_eof; /* atomics */
	uint64_t ops[4];
	uint64_t viol[LT_V_NR];
	uint64_t reported;
	pthread_mutex_t out_lock;
} lt = {
	.seed = 1,
	.seconds = 5,
	.nwriters = 2,
	.nreaders = 2,
	.nbig = 4,
	.nsmall = 120,
	.min_replies = 100,
	.host = "127.0.0.1",
	.op_lock = PTHREAD_MUTEX_INITIALIZER,
	.hist_lock = PTHREAD_MUTEX_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
};

enum lt_op { LT_OP_WRITE, LT_OP_PUNCH, LT_OP_ZERO, LT_OP_TRUNC };
static const char *const lt_op_names[] = { "writes", "punches", "zero-ranges", "truncates" };

#define LT_LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define LT_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define LT_ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lt_nfs_torture: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("realloc: %s", strerror(ENOMEM));
	return p;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_in(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* ---------------------------------------------------------------- pattern */

static inline uint8_t pat_byte(uint32_t gen, uint64_t x)
{
	uint64_t h = (uint64_t)gen * 0x9E3779B97F4A7C15ULL ^ (x + 1) * 0xC2B2AE3D27D4EB4FULL;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	return (uint8_t)(0x80 | (h & 0x7f));
}

static void pat_fill(uint32_t gen, uint64_t x, uint8_t *p, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		p[i] = pat_byte(gen, x + i);
}

/* Do the bytes p of [a, b) of region r show history entry h? */
static bool shows(const struct lt_region *r, const struct lt_hent *h, uint64_t a, uint64_t b,
		  const uint8_t *p)
{
	uint64_t pend = r->start + (h->gen ? h->keep : 0), x;

	for (x = a; x < b; x++)
		if (p[x - a] != (x < pend ? pat_byte(h->gen, x) : 0))
			return false;
	return true;
}

/* ---------------------------------------------------------------- layout */

static void add_region(uint64_t *off, uint64_t len, bool gap)
{
	struct lt_region *r;

	if (lt.nrg == LT_REGIONS_MAX)
		die("layout: more than %d regions", LT_REGIONS_MAX);
	lt.rg = xrealloc(lt.rg, (lt.nrg + 1) * sizeof(*lt.rg));
	r = &lt.rg[lt.nrg++];
	memset(r, 0, sizeof(*r));
	r->start = *off;
	r->len = len;
	r->gap = gap;
	*off += len;
}

/*
 * Big regions (64 KiB + 1 .. 1 MiB, some page aligned) and small ones
 * (1-64 bytes, up to a page, aligned pages, unaligned up to 64 KiB) in a
 * shuffled order, a big one second to last so that truncates cut into
 * it; gaps (never written, so holes or zeros) between some of them.
 */
static void make_layout(void)
{
	unsigned int n = lt.nbig + lt.nsmall, i, k;
	uint64_t s = lt.seed * 0x9E3779B97F4A7C15ULL + 1, off = 0;
	struct item {
		uint64_t len;
		bool aligned;
	} *it = calloc(n, sizeof(*it)), tmp;

	if (!it)
		die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < n; i++) {
		unsigned int c = (unsigned int)rnd_in(&s, 0, 9);

		if (i < lt.nbig) {
			it[i].aligned = c < 4;
			it[i].len = rnd_in(&s, 64 * LT_KIB + 1, LT_REGION_MAX);
		} else if (c < 3) {
			it[i].len = rnd_in(&s, 1, 64);
		} else if (c < 6) {
			it[i].len = rnd_in(&s, 65, LT_PAGE);
		} else if (c < 8) {
			it[i].aligned = true;
			it[i].len = rnd_in(&s, 1, 16) * LT_PAGE;
		} else {
			it[i].len = rnd_in(&s, LT_PAGE + 1, 64 * LT_KIB);
		}
		if (it[i].aligned)
			it[i].len = (it[i].len + LT_PAGE - 1) & ~(LT_PAGE - 1);
		if (it[i].len > LT_REGION_MAX)
			it[i].len = LT_REGION_MAX;
	}
	/* shuffle, then a big one second to last */
	for (i = n - 1; i > 0; i--) {
		k = (unsigned int)rnd_in(&s, 0, i);
		tmp = it[i];
		it[i] = it[k];
		it[k] = tmp;
	}
	for (i = 0; i < n && it[i].len <= 64 * LT_KIB; i++)
		;
	if (i < n && n >= 2) {
		tmp = it[n - 2];
		it[n - 2] = it[i];
		it[i] = tmp;
	}
	for (i = 0; i < n; i++) {
		uint64_t gap = 0;

		if (it[i].aligned && (off & (LT_PAGE - 1)))
			gap = LT_PAGE - (off & (LT_PAGE - 1));
		if (rnd_in(&s, 0, 5) == 0)
			gap += rnd_in(&s, 1, 5) * LT_PAGE +
			       (it[i].aligned ? 0 : rnd_in(&s, 0, 100));
		if (it[i].aligned && ((off + gap) & (LT_PAGE - 1)))
			gap += LT_PAGE - ((off + gap) & (LT_PAGE - 1));
		if (gap)
			add_region(&off, gap, true);
		add_region(&off, it[i].len, false);
	}
	free(it);
	lt.fsize = off;
	lt.cut_from = lt.rg[lt.nrg >= 3 ? lt.nrg - 3 : 0].start;
	lt.writable = calloc(lt.nrg, sizeof(*lt.writable));
	if (!lt.writable)
		die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < lt.nrg; i++) {
		if (lt.rg[i].len > lt.maxlen)
			lt.maxlen = lt.rg[i].len;
		if (!lt.rg[i].gap)
			lt.writable[lt.nwritable++] = i;
	}
}

/* the region holding offset x (x < fsize) */
static unsigned int region_at(uint64_t x)
{
	unsigned int lo = 0, hi = lt.nrg - 1;

	while (lo < hi) {
		unsigned int mid = (lo + hi + 1) / 2;

		if (lt.rg[mid].start <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ---------------------------------------------------------------- history and writers */

static void hist_add(struct lt_region *r, uint32_t seq, uint32_t gen, uint64_t keep)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->h = xrealloc(r->h, r->cap * sizeof(*r->h));
	}
	r->h[r->n++] = (struct lt_hent){ seq, gen, gen ? keep : 0 };
}

static void size_add(uint32_t seq, uint64_t size)
{
	if (lt.nsz == lt.capsz) {
		lt.capsz = lt.capsz ? 2 * lt.capsz : 64;
		lt.sz = xrealloc(lt.sz, lt.capsz * sizeof(*lt.sz));
	}
	lt.sz[lt.nsz++] = (struct lt_sent){ seq, size };
	lt.cur_size = size;
}

/* One change of the file as one call on the mount, numbered and logged. */
static void do_op(enum lt_op op, unsigned int ri, uint64_t cut, const uint8_t *buf, uint32_t gen)
{
	struct lt_region *r = &lt.rg[ri];
	const char *what = NULL;
	unsigned int i;
	uint32_t seq;
	ssize_t n;

	pthread_mutex_lock(&lt.op_lock);
	seq = lt.started + 1;
	pthread_mutex_lock(&lt.hist_lock);
	if (op == LT_OP_TRUNC) {
		for (i = 0; i < lt.nrg; i++) {
			struct lt_region *q = &lt.rg[i];
			const struct lt_hent *h = &q->h[q->n - 1];
			uint64_t keep;

			if (q->start + q->len <= cut)
				continue;
			keep = q->start >= cut ? 0 : cut - q->start;
			hist_add(q, seq, keep ? h->gen : 0, keep < h->keep ? keep : h->keep);
		}
		size_add(seq, cut);
	} else {
		hist_add(r, seq, op == LT_OP_WRITE ? gen : 0, r->len);
		if (op == LT_OP_WRITE && r->start + r->len > lt.cur_size)
			size_add(seq, r->start + r->len);
	}
	pthread_mutex_unlock(&lt.hist_lock);
	LT_STORE(lt.started, seq);

	switch (op) {
	case LT_OP_WRITE:
		n = pwrite(lt.wfd, buf, r->len, (off_t)r->start);
		if (n != (ssize_t)r->len)
			what = n < 0 ? "pwrite" : "pwrite (short)";
		break;
	case LT_OP_PUNCH:
		if (fallocate(lt.wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			what = "fallocate(PUNCH_HOLE)";
		break;
	case LT_OP_ZERO:
		if (fallocate(lt.wfd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			what = "fallocate(ZERO_RANGE)";
		break;
	case LT_OP_TRUNC:
		if (ftruncate(lt.wfd, (off_t)cut) < 0)
			what = "ftruncate";
		break;
	}
	if (what)
		die("%s of %s: %s", what, lt.path, strerror(errno));
	LT_STORE(lt.done, seq);
	pthread_mutex_unlock(&lt.op_lock);
	LT_ADD(lt.ops[op], 1);
}

static uint8_t *alloc_aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, LT_PAGE, len ? len : 1))
		die("posix_memalign: %s", strerror(ENOMEM));
	return p;
}

static void write_region(unsigned int ri, uint8_t *buf)
{
	uint32_t gen = LT_ADD(lt.next_gen, 1);

	pat_fill(gen, lt.rg[ri].start, buf, lt.rg[ri].len);
	do_op(LT_OP_WRITE, ri, 0, buf, gen);
}

static unsigned int pick_region(uint64_t *s)
{
	return lt.writable[rnd_in(s, 0, lt.nwritable - 1)];
}

/* Cut the file into its last regions, then restore its size: at once or by rewriting. */
static void truncate_cycle(uint64_t *s, uint8_t *buf)
{
	uint64_t cut = rnd_in(s, lt.cut_from, lt.fsize - 1);
	unsigned int ri;

	do_op(LT_OP_TRUNC, 0, cut, NULL, 0);
	if (rnd_in(s, 0, 1)) {
		for (ri = lt.nrg >= 3 ? lt.nrg - 3 : 0; ri < lt.nrg; ri++)
			if (!lt.rg[ri].gap && lt.rg[ri].start + lt.rg[ri].len > cut)
				write_region(ri, buf);
	} else {
		usleep((useconds_t)rnd_in(s, 0, 1000));
	}
	do_op(LT_OP_TRUNC, 0, lt.fsize, NULL, 0);
}

static void *writer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t s = (lt.seed + 1000 + id) * 0x9E3779B97F4A7C15ULL | 1;
	uint8_t *buf = alloc_aligned(lt.maxlen);

	while (!LT_LOAD(lt.stop)) {
		unsigned int c = (unsigned int)rnd_in(&s, 0, 7);

		if (id == 0 && c == 0)
			truncate_cycle(&s, buf);
		else if (c < 5)
			write_region(pick_region(&s), buf);
		else
			do_op(c == 5 ? LT_OP_PUNCH : LT_OP_ZERO, pick_region(&s), 0, NULL, 0);
	}
	free(buf);
	return NULL;
}

/* ---------------------------------------------------------------- a small NFSv4.2 client */

struct enc {
	uint8_t b[4096];
	size_t n;
};

static void e32(struct enc *e, uint32_t v)
{
	if (e->n + 4 > sizeof(e->b))
		die("call too large");
	v = htonl(v);
	memcpy(e->b + e->n, &v, 4);
	e->n += 4;
}

static void e64(struct enc *e, uint64_t v)
{
	e32(e, (uint32_t)(v >> 32));
	e32(e, (uint32_t)v);
}

static void ebytes(struct enc *e, const void *p, size_t len)
{
	size_t pad = (4 - len % 4) % 4;

	if (e->n + len + pad > sizeof(e->b))
		die("call too large");
	memcpy(e->b + e->n, p, len);
	memset(e->b + e->n + len, 0, pad);
	e->n += len + pad;
}

static void eopaque(struct enc *e, const void *p, size_t len)
{
	e32(e, (uint32_t)len);
	ebytes(e, p, len);
}

struct dec {
	const uint8_t *p, *end;
	bool bad;
};

static uint32_t d32(struct dec *d)
{
	uint32_t v;

	if (d->bad || d->end - d->p < 4) {
		d->bad = true;
		return 0;
	}
	memcpy(&v, d->p, 4);
	d->p += 4;
	return ntohl(v);
}

static uint64_t d64(struct dec *d)
{
	uint64_t hi = d32(d);

	return hi << 32 | d32(d);
}

/* an opaque<>: its bytes in place, NULL if malformed */
static const uint8_t *dopaque(struct dec *d, uint32_t *len, uint32_t max)
{
	uint32_t n = d32(d);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	const uint8_t *p = d->p;

	if (d->bad || n > max || (size_t)(d->end - d->p) < padded) {
		d->bad = true;
		return NULL;
	}
	d->p += padded;
	*len = n;
	return p;
}

static void dskip(struct dec *d, size_t n)
{
	if (d->bad || (size_t)(d->end - d->p) < n) {
		d->bad = true;
		return;
	}
	d->p += n;
}

/* RPC call header + COMPOUND header (minor 2) of @nops ops */
static void call_begin(struct lt_reader *rd, struct enc *e, uint32_t nops)
{
	static const char machine[] = "lt_nfs_torture";

	e->n = 4; /* record mark, filled by call() */
	e32(e, ++rd->xid);
	e32(e, 0); /* CALL */
	e32(e, 2);
	e32(e, 100003);
	e32(e, 4);
	e32(e, 1); /* COMPOUND */
	e32(e, 1); /* AUTH_SYS */
	e32(e, 4 + 4 + 16 + 4 + 4 + 4);
	e32(e, 0); /* stamp */
	eopaque(e, machine, sizeof(machine) - 1);
	e32(e, 0); /* uid */
	e32(e, 0); /* gid */
	e32(e, 0); /* no groups */
	e32(e, 0); /* verifier AUTH_NONE */
	e32(e, 0);
	e32(e, 0); /* tag */
	e32(e, 2); /* minor version */
	e32(e, nops);
}

static void op_sequence(struct lt_reader *rd, struct enc *e)
{
	e32(e, OP_SEQUENCE);
	ebytes(e, rd->sessionid, 16);
	e32(e, ++rd->seq);
	e32(e, 0); /* slot */
	e32(e, 0); /* highest slot */
	e32(e, 0); /* do not cache */
}

static void recv_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = recv(fd, p, n, 0);

		if (k <= 0)
			die("recv from lacunad: %s", k ? strerror(errno) : "connection closed");
		p += k;
		n -= (size_t)k;
	}
}

/*
 * Send the call, read the reply record into rd->rbuf and decode it up to
 * the COMPOUND status and op count; returns the COMPOUND status.
 */
static uint32_t call(struct lt_reader *rd, struct enc *e, struct dec *d)
{
	uint32_t mark = htonl(0x80000000u | (uint32_t)(e->n - 4)), xid, n, st;
	size_t got = 0;
	uint8_t *p = e->b;

	memcpy(e->b, &mark, 4);
	while (got < e->n) {
		ssize_t k = send(rd->sock, p + got, e->n - got, MSG_NOSIGNAL);

		if (k < 0)
			die("send to lacunad: %s", strerror(errno));
		got += (size_t)k;
	}
	rd->rlen = 0;
	for (;;) {
		recv_all(rd->sock, (uint8_t *)&mark, 4);
		mark = ntohl(mark);
		n = mark & 0x7fffffff;
		if (rd->rlen + n > LT_REPLY_MAX + 4096)
			die("a reply record of more than %" PRIu64 " bytes", LT_REPLY_MAX + 4096);
		recv_all(rd->sock, rd->rbuf + rd->rlen, n);
		rd->rlen += n;
		if (mark & 0x80000000u)
			break;
	}
	d->p = rd->rbuf;
	d->end = rd->rbuf + rd->rlen;
	d->bad = false;
	xid = d32(d);
	if (xid != rd->xid)
		die("reply xid %#x to call %#x", xid, rd->xid);
	if (d32(d) != 1 || d32(d) != 0)
		die("reply %#x is not MSG_ACCEPTED", xid);
	d32(d);
	dskip(d, (d32(d) + 3) & ~3u); /* verifier */
	if (d32(d) != 0)
		die("reply %#x: accept_stat not SUCCESS", xid);
	st = d32(d);
	dskip(d, (d32(d) + 3) & ~3u); /* tag */
	d32(d);			      /* number of results */
	if (d->bad)
		die("reply %#x truncated", xid);
	return st;
}

/* the next result must be @op; returns its status */
static uint32_t res_op(struct dec *d, uint32_t op, const char *name)
{
	uint32_t got = d32(d), st = d32(d);

	if (d->bad)
		die("reply truncated before %s", name);
	if (got != op)
		die("result of op %u where %s was expected (status %u)", got, name, st);
	return st;
}

static void res_sequence(struct dec *d)
{
	uint32_t st = res_op(d, OP_SEQUENCE, "SEQUENCE");

	if (st)
		die("SEQUENCE failed: status %u", st);
	dskip(d, 16 + 5 * 4);
}

static void nfs_setup(struct lt_reader *rd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)lt.port) };
	char owner[64];
	struct enc e;
	struct dec d;
	uint64_t clientid;
	uint32_t csseq, st, len;
	const uint8_t *p;
	const char *c, *s;
	int one = 1, i;

	if (inet_pton(AF_INET, lt.host, &sa.sin_addr) != 1)
		die("bad --host %s", lt.host);
	rd->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rd->sock < 0)
		die("socket: %s", strerror(errno));
	if (connect(rd->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect to %s:%u: %s", lt.host, lt.port, strerror(errno));
	setsockopt(rd->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	/* EXCHANGE_ID */
	snprintf(owner, sizeof(owner), "lt_nfs_torture-%d-%u-%" PRIu64, (int)getpid(), rd->id,
		 lt.seed);
	call_begin(rd, &e, 1);
	e32(&e, OP_EXCHANGE_ID);
	e64(&e, (uint64_t)time(NULL) << 8 | rd->id);
	eopaque(&e, owner, strlen(owner));
	e32(&e, 0); /* flags */
	e32(&e, 0); /* SP4_NONE */
	e32(&e, 0); /* no implementation id */
	call(rd, &e, &d);
	st = res_op(&d, OP_EXCHANGE_ID, "EXCHANGE_ID");
	if (st)
		die("EXCHANGE_ID failed: status %u", st);
	clientid = d64(&d);
	csseq = d32(&d);

	/* CREATE_SESSION: one slot, replies up to LT_REPLY_MAX */
	call_begin(rd, &e, 1);
	e32(&e, OP_CREATE_SESSION);
	e64(&e, clientid);
	e32(&e, csseq);
	e32(&e, 0); /* flags */
	for (i = 0; i < 2; i++) {
		e32(&e, 0);
		e32(&e, i ? 4096 : 65536);
		e32(&e, i ? 4096 : (uint32_t)LT_REPLY_MAX);
		e32(&e, i ? 0 : 4096);
		e32(&e, i ? 2 : 8);
		e32(&e, 1);
		e32(&e, 0);
	}
	e32(&e, 0x40000000); /* callback program */
	e32(&e, 1);
	e32(&e, 0); /* AUTH_NONE */
	call(rd, &e, &d);
	st = res_op(&d, OP_CREATE_SESSION, "CREATE_SESSION");
	if (st)
		die("CREATE_SESSION failed: status %u", st);
	if ((size_t)(d.end - d.p) < 16)
		die("CREATE_SESSION reply truncated");
	memcpy(rd->sessionid, d.p, 16);
	d.p += 16;
	d32(&d);
	d32(&d);
	d32(&d); /* headerpad */
	d32(&d); /* maxreq */
	len = d32(&d);
	if (d.bad || len < LT_COUNT_MAX + 1024)
		die("CREATE_SESSION granted replies of %u bytes only", len);
	rd->seq = 0;

	/* RECLAIM_COMPLETE */
	call_begin(rd, &e, 2);
	op_sequence(rd, &e);
	e32(&e, OP_RECLAIM_COMPLETE);
	e32(&e, 0);
	call(rd, &e, &d);
	res_sequence(&d);
	st = res_op(&d, OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE");
	if (st && st != NFS4ERR_COMPLETE_ALREADY)
		die("RECLAIM_COMPLETE failed: status %u", st);

	/* the file handle: PUTROOTFH, LOOKUP each component, GETFH */
	{
		unsigned int ncomp = 0;

		for (c = lt.name; *c; c = *s ? s + 1 : s) {
			s = strchrnul(c, '/');
			if (s > c)
				ncomp++;
		}
		call_begin(rd, &e, 3 + ncomp);
		op_sequence(rd, &e);
		e32(&e, OP_PUTROOTFH);
		for (c = lt.name; *c; c = *s ? s + 1 : s) {
			s = strchrnul(c, '/');
			if (s > c) {
				e32(&e, OP_LOOKUP);
				eopaque(&e, c, (size_t)(s - c));
			}
		}
		e32(&e, OP_GETFH);
		st = call(rd, &e, &d);
		if (st)
			die("LOOKUP of %s failed: status %u", lt.name, st);
		res_sequence(&d);
		res_op(&d, OP_PUTROOTFH, "PUTROOTFH");
		while (ncomp--)
			res_op(&d, OP_LOOKUP, "LOOKUP");
		res_op(&d, OP_GETFH, "GETFH");
		p = dopaque(&d, &len, LT_FH_MAX);
		if (!p)
			die("GETFH reply malformed");
		memcpy(rd->fh, p, len);
		rd->fhlen = len;
	}
}

/* SEQUENCE + PUTFH + READ_PLUS(anonymous stateid, off, count), decoded into rd */
static void read_plus(struct lt_reader *rd)
{
	struct enc e;
	struct dec d;
	uint32_t st, n, i, len = 0;
	static const uint8_t anon[16];

	call_begin(rd, &e, 3);
	op_sequence(rd, &e);
	e32(&e, OP_PUTFH);
	eopaque(&e, rd->fh, rd->fhlen);
	e32(&e, OP_READ_PLUS);
	ebytes(&e, anon, 16);
	e64(&e, rd->off);
	e32(&e, (uint32_t)rd->count);
	call(rd, &e, &d);
	res_sequence(&d);
	st = res_op(&d, OP_PUTFH, "PUTFH");
	if (st)
		die("PUTFH failed: status %u", st);
	rd->nsegs = 0;
	rd->status = res_op(&d, OP_READ_PLUS, "READ_PLUS");
	if (rd->status)
		return;
	rd->eof = d32(&d) != 0;
	n = d32(&d);
	if (d.bad || n > LT_SEGS_MAX)
		die("READ_PLUS reply malformed (%u segments)", n);
	for (i = 0; i < n; i++) {
		struct lt_seg *g = &rd->segs[i];

		g->kind = d32(&d);
		g->off = d64(&d);
		if (g->kind == CONTENT_DATA) {
			g->data = dopaque(&d, &len, LT_REPLY_MAX);
			g->len = len;
		} else {
			g->data = NULL;
			g->len = d64(&d);
		}
		if (d.bad)
			die("READ_PLUS reply truncated in segment %u of %u", i, n);
	}
	rd->nsegs = n;
}

/* ---------------------------------------------------------------- checking */

static bool lt_is_race(int v)
{
	return v != LT_V_ERROR;
}

static void print_reply(struct lt_reader *rd)
{
	unsigned int i;

	printf("#   READ_PLUS(%" PRIu64 ", %" PRIu64 ") status %u eof %d, %u segments; calls done "
	       "before %u, begun after %u\n",
	       rd->off, rd->count, rd->status, rd->eof, rd->nsegs, rd->s0, rd->s1);
	for (i = 0; i < rd->nsegs && i < 24; i++)
		printf("#     %s %" PRIu64 "+%" PRIu64 "\n",
		       rd->segs[i].kind == CONTENT_DATA	  ? "data"
		       : rd->segs[i].kind == CONTENT_HOLE ? "hole"
							  : "kind?",
		       rd->segs[i].off, rd->segs[i].len);
	if (rd->nsegs > 24)
		printf("#     ... %u more\n", rd->nsegs - 24);
}

static bool violation(struct lt_reader *rd, enum lt_viol v, const char *fmt, ...)
{
	va_list ap;

	LT_ADD(lt.viol[v], 1);
	if (LT_ADD(lt.reported, 1) > LT_REPORT_MAX)
		return false;
	pthread_mutex_lock(&lt.out_lock);
	printf("# VIOLATION (%s), reader %u: ", lt_viol_names[v], rd->id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	print_reply(rd);
	fflush(stdout);
	pthread_mutex_unlock(&lt.out_lock);
	return false;
}

/* RFC 7862 15.10: the shape of the reply; sets *end to where the segments end */
static bool check_struct(struct lt_reader *rd, uint64_t *end)
{
	uint64_t pos = 0, data = 0, rend = rd->off + rd->count;
	unsigned int i;

	if (!rd->nsegs) {
		if (!rd->eof)
			return violation(rd, LT_V_STRUCT, "no segment and no eof (no progress)");
		*end = rd->off;
		return true;
	}
	for (i = 0; i < rd->nsegs; i++) {
		const struct lt_seg *g = &rd->segs[i];

		if (g->kind != CONTENT_DATA && g->kind != CONTENT_HOLE)
			return violation(rd, LT_V_STRUCT, "segment %u of kind %u", i, g->kind);
		if (!g->len)
			return violation(rd, LT_V_STRUCT, "segment %u is empty", i);
		if (i == 0 && (g->off > rd->off || g->off + g->len <= rd->off ||
			       (g->kind == CONTENT_DATA && g->off != rd->off)))
			return violation(rd, LT_V_STRUCT,
					 "the first segment does not hold the offset");
		if (i && g->off != pos)
			return violation(rd, LT_V_STRUCT, "segment %u not contiguous", i);
		if (g->off + g->len > lt.fsize)
			return violation(rd, LT_V_STRUCT, "segment %u past the largest size", i);
		if (g->kind == CONTENT_DATA) {
			if (g->off + g->len > rend)
				return violation(rd, LT_V_STRUCT, "data segment %u past the range",
						 i);
			data += g->len;
		}
		pos = g->off + g->len;
	}
	if (data > rd->count)
		return violation(rd, LT_V_STRUCT, "%" PRIu64 " data bytes for a count of %" PRIu64,
				 data, rd->count);
	*end = pos;
	return true;
}

/* u = the times in [lo, hi] at which region r showed bytes p of [a, b) */
static void region_times(struct lt_reader *rd, const struct lt_region *r, uint64_t a, uint64_t b,
			 const uint8_t *p, uint64_t lo, uint64_t hi)
{
	size_t i, x = 0, y = r->n;

	/* the last entry logged at or before lo / 2 */
	while (y - x > 1) {
		size_t m = (x + y) / 2;

		if (2ULL * r->h[m].seq <= lo)
			x = m;
		else
			y = m;
	}
	rd->nu = 0;
	for (i = x; i < r->n && 2ULL * r->h[i].seq <= hi; i++) {
		uint64_t l = 2ULL * r->h[i].seq,
			 h = i + 1 < r->n ? 2ULL * r->h[i + 1].seq : UINT64_MAX;

		if (!shows(r, &r->h[i], a, b, p))
			continue;
		l = l < lo ? lo : l;
		h = h > hi ? hi : h;
		if (l > h)
			continue;
		if (rd->nu && rd->u[rd->nu - 1].hi >= l)
			rd->u[rd->nu - 1].hi = h;
		else if (rd->nu < LT_TSET_MAX)
			rd->u[rd->nu++] = (struct lt_ivl){ l, h };
		else
			rd->u[rd->nu - 1].hi = h; /* keep a superset */
	}
}

/* u = the times in [lo, hi] at which the size was in [smin, smax] */
static void size_times(struct lt_reader *rd, uint64_t smin, uint64_t smax, uint64_t lo, uint64_t hi)
{
	size_t i, x = 0, y = lt.nsz;

	while (y - x > 1) {
		size_t m = (x + y) / 2;

		if (2ULL * lt.sz[m].seq <= lo)
			x = m;
		else
			y = m;
	}
	rd->nu = 0;
	for (i = x; i < lt.nsz && 2ULL * lt.sz[i].seq <= hi; i++) {
		uint64_t l = 2ULL * lt.sz[i].seq,
			 h = i + 1 < lt.nsz ? 2ULL * lt.sz[i + 1].seq : UINT64_MAX;

		if (lt.sz[i].size < smin || lt.sz[i].size > smax)
			continue;
		l = l < lo ? lo : l;
		h = h > hi ? hi : h;
		if (l > h)
			continue;
		if (rd->nu && rd->u[rd->nu - 1].hi >= l)
			rd->u[rd->nu - 1].hi = h > rd->u[rd->nu - 1].hi ? h : rd->u[rd->nu - 1].hi;
		else if (rd->nu < LT_TSET_MAX)
			rd->u[rd->nu++] = (struct lt_ivl){ l, h };
		else
			rd->u[rd->nu - 1].hi = h;
	}
}

/*
 * t = t and u. The intersection of two sets of disjoint intervals can
 * have nearly as many intervals as both together (nt + nu - 1): past
 * LT_TSET_MAX the last one is stretched, which keeps a superset as the
 * sets' builders do (a check can then only miss a violation, never
 * invent one).
 */
static void intersect(struct lt_reader *rd)
{
	unsigned int i = 0, j = 0, n = 0;

	while (i < rd->nt && j < rd->nu) {
		uint64_t l = rd->t[i].lo > rd->u[j].lo ? rd->t[i].lo : rd->u[j].lo;
		uint64_t h = rd->t[i].hi < rd->u[j].hi ? rd->t[i].hi : rd->u[j].hi;

		if (l <= h) {
			if (n < LT_TSET_MAX)
				rd->tmp[n++] = (struct lt_ivl){ l, h };
			else
				rd->tmp[n - 1].hi = h;
		}
		if (rd->t[i].hi < rd->u[j].hi)
			i++;
		else
			j++;
	}
	memcpy(rd->t, rd->tmp, n * sizeof(*rd->t));
	rd->nt = n;
}

static void print_history(const struct lt_region *r, uint32_t s0, uint32_t s1)
{
	size_t i;

	if (LT_LOAD(lt.reported) > LT_REPORT_MAX)
		return;
	pthread_mutex_lock(&lt.out_lock);
	for (i = 0; i < r->n; i++) {
		const struct lt_hent *h = &r->h[i];

		if (i + 3 < r->n && r->h[i + 3].seq <= s0)
			continue;
		if (h->seq > s1)
			break;
		printf("#     region history: call %u -> %s%u keep %" PRIu64 "\n", h->seq,
		       h->gen ? "write " : "zeros ", h->gen, h->keep);
	}
	pthread_mutex_unlock(&lt.out_lock);
}

static void check_reply(struct lt_reader *rd)
{
	uint64_t lo = 2ULL * rd->s0 + 1, hi = 2ULL * rd->s1 + 1, end = 0, v0, smin, smax, x;
	unsigned int i, ri;

	if (rd->status) {
		violation(rd, LT_V_ERROR, "READ_PLUS failed with status %u", rd->status);
		return;
	}
	LT_ADD(lt.replies, 1);
	if (rd->eof)
		LT_ADD(lt.eofs, 1);
	if (!check_struct(rd, &end))
		return;
	/* the size: with eof where the segments end (at most the offset without any) */
	if (!rd->nsegs) {
		LT_ADD(lt.past_eof, 1);
		smin = 0;
		smax = rd->off;
	} else if (rd->eof) {
		smin = smax = end;
	} else {
		smin = end;
		smax = UINT64_MAX;
	}
	/* the reply's bytes, holes as zeros */
	v0 = rd->nsegs ? rd->segs[0].off : rd->off;
	for (i = 0; i < rd->nsegs; i++) {
		const struct lt_seg *g = &rd->segs[i];

		if (g->kind == CONTENT_DATA) {
			memcpy(rd->view + (g->off - v0), g->data, g->len);
			LT_ADD(lt.data_bytes, g->len);
		} else {
			memset(rd->view + (g->off - v0), 0, g->len);
			LT_ADD(lt.holes, 1);
		}
	}

	pthread_mutex_lock(&lt.hist_lock);
	rd->nt = 1;
	rd->t[0] = (struct lt_ivl){ lo, hi };
	size_times(rd, smin, smax, lo, hi);
	if (!rd->nu) {
		violation(rd, LT_V_SIZE,
			  "a size in [%" PRIu64 ", %" PRIu64 "] never held while the request ran",
			  smin, smax);
		goto out;
	}
	intersect(rd);
	for (x = v0; x < end; x = lt.rg[ri].start + lt.rg[ri].len) {
		const struct lt_region *r;
		uint64_t a, b;

		ri = region_at(x);
		r = &lt.rg[ri];
		a = x;
		b = r->start + r->len < end ? r->start + r->len : end;
		region_times(rd, r, a, b, rd->view + (a - v0), lo, hi);
		if (!rd->nu) {
			bool ever = false;
			size_t k;

			for (k = 0; k < r->n && r->h[k].seq <= rd->s1 && !ever; k++)
				ever = shows(r, &r->h[k], a, b, rd->view + (a - v0));
			violation(rd, ever ? LT_V_STALE : LT_V_TORN,
				  "region %u [%" PRIu64 ", +%" PRIu64 ")%s shows [%" PRIu64
				  ", %" PRIu64 ") in %s",
				  ri, r->start, r->len, r->gap ? " (gap)" : "", a, b,
				  ever ? "a state not current while the request ran"
				       : "a state it never had");
			print_history(r, rd->s0, rd->s1);
			goto out;
		}
		intersect(rd);
		if (!rd->nt) {
			violation(rd, LT_V_SNAPSHOT,
				  "region %u [%" PRIu64 ", +%" PRIu64 ") shows [%" PRIu64
				  ", %" PRIu64
				  "): no moment agrees with it, the regions before it and the size",
				  ri, r->start, r->len, a, b);
			print_history(r, rd->s0, rd->s1);
			goto out;
		}
	}
out:
	pthread_mutex_unlock(&lt.hist_lock);
}

static void pick_range(struct lt_reader *rd)
{
	uint64_t *s = &rd->rng;
	unsigned int c = (unsigned int)rnd_in(s, 0, 19);

	if (c < 2) {
		rd->off = 0;
		rd->count = LT_COUNT_MAX;
	} else if (c < 7) {
		/* around the end of the file, often past it while it is cut */
		rd->off = rnd_in(s, lt.cut_from, lt.fsize + LT_PAGE);
		rd->count = rnd_in(s, 1, LT_COUNT_MAX);
	} else {
		rd->off = rnd_in(s, 0, lt.fsize - 1);
		if (c < 11)
			rd->off = lt.rg[rnd_in(s, 0, lt.nrg - 1)].start;
		rd->count = UINT64_C(1) << rnd_in(s, 0, 19);
		rd->count += rnd_in(s, 0, rd->count);
	}
	if (rd->count > LT_COUNT_MAX)
		rd->count = LT_COUNT_MAX;
}

static void *reader(void *arg)
{
	struct lt_reader *rd = arg;

	while (!LT_LOAD(lt.stop)) {
		pick_range(rd);
		rd->s0 = LT_LOAD(lt.done);
		read_plus(rd);
		rd->s1 = LT_LOAD(lt.started);
		check_reply(rd);
		if (lt.stop_after) {
			uint64_t v = 0;
			int k;

			for (k = 0; k < LT_V_NR; k++)
				v += lt_is_race(k) ? LT_LOAD(lt.viol[k]) : 0;
			if (v >= lt.stop_after)
				LT_STORE(lt.stop, true);
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: lt_nfs_torture --port P --name PATH [--host A] [--seed N] [--seconds S]\n"
		"                      [--writers W] [--readers R] [--small N] [--big N]\n"
		"                      [--min-replies N] [--stop-after N] [--expect-race] FILE\n"
		"FILE is on the lacunafs mount lacunad exports; PATH names it relative to the\n"
		"export's root. FILE is overwritten.\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'P' },
		{ "name", required_argument, NULL, 'N' },
		{ "host", required_argument, NULL, 'H' },
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "writers", required_argument, NULL, 'w' },
		{ "readers", required_argument, NULL, 'r' },
		{ "small", required_argument, NULL, 'm' },
		{ "big", required_argument, NULL, 'b' },
		{ "min-replies", required_argument, NULL, 'n' },
		{ "stop-after", required_argument, NULL, 'a' },
		{ "expect-race", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			lt.port = (unsigned int)num(optarg);
			break;
		case 'N':
			lt.name = optarg;
			break;
		case 'H':
			lt.host = optarg;
			break;
		case 's':
			lt.seed = num(optarg);
			break;
		case 't':
			lt.seconds = (unsigned int)num(optarg);
			break;
		case 'w':
			lt.nwriters = (unsigned int)num(optarg);
			break;
		case 'r':
			lt.nreaders = (unsigned int)num(optarg);
			break;
		case 'm':
			lt.nsmall = (unsigned int)num(optarg);
			break;
		case 'b':
			lt.nbig = (unsigned int)num(optarg);
			break;
		case 'n':
			lt.min_replies = num(optarg);
			break;
		case 'a':
			lt.stop_after = num(optarg);
			break;
		case 'x':
			lt.expect_race = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || !lt.port || lt.port > 65535 || !lt.name || !lt.nwriters ||
	    !lt.nreaders || lt.nwriters > LT_THREADS_MAX || lt.nreaders > LT_THREADS_MAX ||
	    lt.nbig + lt.nsmall < 3 || lt.nbig + lt.nsmall > LT_REGIONS_MAX / 2)
		usage();
	lt.path = argv[optind];
}

/* Fresh file of full size, then a first state for some regions. */
static void setup_file(void)
{
	uint64_t s = lt.seed * 31 + 7;
	uint8_t *buf = alloc_aligned(lt.maxlen);
	unsigned int i;

	lt.wfd = open(lt.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lt.wfd < 0)
		die("open %s: %s", lt.path, strerror(errno));
	if (ftruncate(lt.wfd, (off_t)lt.fsize) < 0)
		die("ftruncate %s: %s", lt.path, strerror(errno));
	for (i = 0; i < lt.nrg; i++)
		hist_add(&lt.rg[i], 0, 0, 0);
	size_add(0, lt.fsize);
	for (i = 0; i < lt.nrg; i++)
		if (!lt.rg[i].gap && rnd_in(&s, 0, 2))
			write_region(i, buf);
	free(buf);
}

int main(int argc, char **argv)
{
	pthread_t wt[LT_THREADS_MAX], rt[LT_THREADS_MAX];
	struct lt_reader *rds;
	struct timespec t0, t1;
	uint64_t races = 0, total = 0;
	unsigned int i;
	double secs;
	bool pass;
	int rc, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	make_layout();
	setup_file();

	rds = calloc(lt.nreaders, sizeof(*rds));
	if (!rds)
		die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < lt.nreaders; i++) {
		rds[i].id = i;
		rds[i].rng = (lt.seed + 2000 + i) * 0x9E3779B97F4A7C15ULL | 1;
		rds[i].xid = (uint32_t)(i + 1) << 24;
		rds[i].rbuf = malloc(LT_REPLY_MAX + 4096);
		rds[i].view = malloc(lt.fsize + LT_PAGE);
		if (!rds[i].rbuf || !rds[i].view)
			die("malloc: %s", strerror(ENOMEM));
		nfs_setup(&rds[i]);
	}
	printf("# lt_nfs_torture: seed %" PRIu64 ", file %" PRIu64 " bytes, %u regions, "
	       "%u writers, %u readers over %s:%u, %u s%s\n",
	       lt.seed, lt.fsize, lt.nrg, lt.nwriters, lt.nreaders, lt.host, lt.port, lt.seconds,
	       lt.expect_race ? ", expecting a race" : "");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < lt.nreaders; i++) {
		rc = pthread_create(&rt[i], NULL, reader, &rds[i]);
		if (rc)
			die("pthread_create: %s", strerror(rc));
	}
	for (i = 0; i < lt.nwriters; i++) {
		rc = pthread_create(&wt[i], NULL, writer, (void *)(uintptr_t)i);
		if (rc)
			die("pthread_create: %s", strerror(rc));
	}
	for (;;) {
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (LT_LOAD(lt.stop) || secs >= lt.seconds)
			break;
	}
	LT_STORE(lt.stop, true);
	for (i = 0; i < lt.nwriters; i++)
		pthread_join(wt[i], NULL);
	for (i = 0; i < lt.nreaders; i++)
		pthread_join(rt[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	for (k = 0; k < LT_V_NR; k++) {
		total += lt.viol[k];
		races += lt_is_race(k) ? lt.viol[k] : 0;
	}
	printf("# lt_nfs_torture: %.1f s, changes:", secs);
	for (k = 0; k < 4; k++)
		printf(" %" PRIu64 " %s", lt.ops[k], lt_op_names[k]);
	printf("\n# lt_nfs_torture: %" PRIu64 " READ_PLUS replies checked (%" PRIu64
	       " with eof, %" PRIu64 " at or past EOF), %" PRIu64 " holes, %" PRIu64
	       " MiB of data\n",
	       lt.replies, lt.eofs, lt.past_eof, lt.holes, lt.data_bytes / LT_MIB);
	printf("# lt_nfs_torture: %" PRIu64 " violations:", total);
	for (k = 0; k < LT_V_NR; k++)
		printf(" %" PRIu64 " %s", lt.viol[k], lt_viol_names[k]);
	printf("\n");
	if (lt.expect_race) {
		pass = races > 0;
		printf("%s: %s\n", pass ? "PASS" : "FAIL",
		       pass ? "the race was caught" : "no race caught although one was expected");
	} else {
		pass = total == 0 && lt.replies >= lt.min_replies;
		printf("%s: %s\n", pass ? "PASS" : "FAIL",
		       total			     ? "violations found"
		       : lt.replies < lt.min_replies ? "too few replies checked"
						     : "every reply was a consistent snapshot");
	}
	for (i = 0; i < lt.nreaders; i++) {
		close(rds[i].sock);
		free(rds[i].rbuf);
		free(rds[i].view);
	}
	free(rds);
	close(lt.wfd);
	return pass ? 0 : 1;
}
