// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_torture: atomicity torture test of the lacunafs sparse-read ioctl.
 *
 *   lt_torture [--seed N] [--seconds S] [--writers W] [--readers R]
 *              [--big N] [--small N] [--min-replies N] [--stop-after N]
 *              [--expect-race] [--assume-unit BYTES] [--buffer-offset N]
 *              [--layout] FILE
 *
 * FILE (created or truncated; it must be on a lacunafs mount) is cut into
 * regions, with never-written gaps between some of them: one region for
 * each write size of 1 byte, 4 KiB, 64 KiB, 1 MiB - 4 KiB, 1 MiB and
 * 2.5 MiB and each buffer offset (below), --big more of 1 MiB - 8 KiB to
 * 3 MiB and --small more of a few bytes to 64 KiB, each starting on a page
 * of the file or not. A region is always written whole, from one place in
 * a writer's page-aligned buffer: at offset 0, 1, 212, 511, 2048 or 4095
 * of a page, its buffer offset (--buffer-offset N puts every region at N).
 * Writer threads keep flipping regions, each change one system call on
 * the mount: a pwrite of the whole region with a pattern unique to that
 * write, a PUNCH_HOLE or a ZERO_RANGE (both KEEP_SIZE). The first writer
 * also truncates the file now and then into its last regions and restores
 * the full size, either at once or by rewriting the regions it cut (writes
 * that extend the file). Reader threads ask lacuna_sparse_read() for data
 * on random ranges (up to the whole file, and past its end), each into its
 * own slice of one registered arena, and check every reply. The run lasts
 * --seconds, or until --stop-after violations showing a race were found;
 * --layout prints the regions a seed makes.
 *
 * Operation
 * ---------
 * Atomic pieces. Writable opens of lacunafs are direct_io: the kernel pins
 * the caller's buffer and sends a write(2) to the daemon as FUSE writes of
 * at most max_write bytes and at most max_pages pages of that buffer each,
 * one after the other. A buffer that starts inside a page spends a page on
 * its first few bytes, so where a write is cut depends on the buffer's
 * address, not on the file offset: a 1 MiB write from buffer offset 212
 * arrives as 1 MiB - 212 bytes, then 212. Each FUSE write takes the range
 * lock on its own, so a reader may legally see the first piece new and the
 * rest old. The mount tells its unit (LACUNA_IOC_INFO): write_unit, the
 * largest write that arrives whole from a buffer at any address, and
 * write_unit_aligned, from a page-aligned one. A FUSE write from buffer
 * offset a then carries min(rest, write_unit_aligned, write_unit + PAGE -
 * 1 - a) bytes, write_unit + PAGE - 1 being max_pages pages when they bind,
 * and the next one starts where it ended (on a page, after a split by
 * max_pages). All writes of a region use the same buffer offset, so its
 * pieces are fixed, and a region is checked piece by piece: one of at most
 * write_unit bytes is always one piece. --assume-unit BYTES checks as if
 * both units were BYTES (every write cut each BYTES bytes from its start,
 * whatever its buffer): above write_unit that is wrong for unaligned
 * buffers, and the run must catch the kernel splitting writes it takes as
 * whole (a negative control). With --buffer-offset 0 and BYTES =
 * write_unit_aligned it is right again: page-aligned buffers alone never
 * show that split.
 *
 * Pattern. Byte j of the 8-byte aligned word w of the file, written by
 * write number g to region r, is 0x80 | 7 bits of the 56-bit payload
 * (g | r << 32 | (w mod 4096) << 44). Pattern bytes are never zero, and
 * any aligned word of it says which write and region it came from.
 *
 * History. The writers hold a mutex across each call, so the calls
 * happen one at a time (the kernel serializes them per inode anyway) and
 * are numbered in the order they happen (seq). For each piece the writers
 * log (seq, state) before the call, where a state is "pattern g on the
 * first KEEP bytes, zeros after" (g = 0: all zeros; KEEP < piece length
 * only after a truncate cut into it); the file size is logged the same way
 * (a write of several pieces that extends the file passes through the
 * ends of its pieces).
 *
 * Checks. A reply must be well formed: segments contiguous and covering
 * [offset, next_offset), none past file_size, data within the request and
 * back to back in the buffer, byte counts and the EOF/SHORT/DENSE flags as
 * include/lacuna/ioctl.h says. Then, with holes read as zeros, the bytes of
 * every piece the reply covers must be some state that piece has had
 * ("torn" if none: bytes of two writes, or pattern after zeros), and the
 * reply must be a snapshot: there must be one moment T, after the calls
 * completed before the request and before the calls begun after the
 * reply, at which every covered piece and the file size were what the
 * reply says. The size counts even in a reply past EOF: a write below the
 * offset that extends the file must not show half done there either.
 *
 * Time is counted in half steps: T = 2 * seq is "during call seq" (when a
 * piece may be either its old or its new state), T = 2 * seq + 1 "between
 * call seq and the next". A piece state logged at seq s and replaced at
 * s' is visible for T in [2s, 2s']; the reply narrows T to
 * [2 * done_before + 1, 2 * started_after + 1]; intersecting over the
 * pieces must leave some T ("snapshot" violation if not, "stale" if one
 * piece alone fits no T of the reply's window).
 *
 * Without the range lock the daemon's SEEK_DATA/SEEK_HOLE walk and its
 * preads interleave with the writes, and on ext4 a pread even overlaps a
 * pwrite of the backing file, so replies stop being snapshots:
 * --expect-race passes only if at least one violation is found (a reply
 * flagged LACUNA_SR_UNSTABLE is counted but not checked and does not
 * count as a race found).
 *
 * Exit status: 0 pass (no violation and at least --min-replies replies
 * checked; with --expect-race: a violation found), 1 fail, 2 bad
 * arguments, a failed call or a mount that gives no write unit (the
 * message names it).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "lt_tset.h"

#define LT_PAGE UINT64_C(4096)
#define LT_MIB (UINT64_C(1) << 20)
#define LT_REGIONS_MAX 4096 /* region ids are 12 bits of the pattern */
#define LT_THREADS_MAX 64
#define LT_REPORT_MAX 8	   /* violations printed in full */
#define LT_BIG (64 * 1024) /* regions longer than this get a third of the changes */

/* where in a page the writes of a region start in the writer's buffer */
static const uint64_t lt_boffs[] = { 0, 1, 212, 511, 2048, 4095 };
/* the write sizes every buffer offset has a region of */
static const uint64_t lt_sizes[] = {
	1, LT_PAGE, 64 * 1024, LT_MIB - LT_PAGE, LT_MIB, 5 * LT_MIB / 2
};
#define LT_NBOFFS (sizeof(lt_boffs) / sizeof(lt_boffs[0]))
#define LT_NSIZES (sizeof(lt_sizes) / sizeof(lt_sizes[0]))

enum lt_viol {
	LT_V_STRUCT,   /* malformed reply */
	LT_V_ERROR,    /* the call failed */
	LT_V_TORN,     /* a piece in a state it never had */
	LT_V_STALE,    /* a piece in a state outside the reply's time window */
	LT_V_SNAPSHOT, /* no single moment explains the whole reply */
	LT_V_SIZE,     /* file_size never held within the time window */
	LT_V_UNSTABLE, /* LACUNA_SR_UNSTABLE although nobody bypasses the mount */
	LT_V_NR,
};

static const char *const lt_viol_names[LT_V_NR] = {
	[LT_V_STRUCT] = "malformed",  [LT_V_ERROR] = "error",	    [LT_V_TORN] = "torn",
	[LT_V_STALE] = "stale",	      [LT_V_SNAPSHOT] = "snapshot", [LT_V_SIZE] = "size",
	[LT_V_UNSTABLE] = "unstable",
};

struct lt_region {
	uint64_t start, len;
	uint64_t boff; /* written from this offset in a page of the buffer */
	bool gap;      /* never written: always zeros */
	unsigned int piece0, npieces;
	uint64_t writes; /* atomic */
};

/* state of a piece from call seq on: pattern gen on the first keep bytes, then zeros */
struct lt_hent {
	uint32_t seq;
	uint32_t gen; /* 0: all zeros */
	uint64_t keep;
};

struct lt_piece {
	uint64_t start, end;
	unsigned int region;
	struct lt_hent *h;
	size_t n, cap;
};

/* file size from call seq on; a write of several pieces passes through steps */
struct lt_sent {
	uint32_t seq;
	bool steps;	     /* during seq, the ends of region's pieces between old and size show */
	unsigned int region; /* the write's, with steps */
	uint64_t size, old;
};

static struct {
	/* options */
	uint64_t seed;
	unsigned int seconds, nwriters, nreaders, nbig, nsmall;
	uint64_t min_replies, stop_after;
	uint64_t assume_unit; /* 0: the mount's */
	int buffer_offset;    /* -1: every one of lt_boffs */
	bool expect_race;
	bool print_layout;
	const char *path;

	/* the write unit the pieces follow (struct lacuna_info) */
	uint64_t unit, unit_aligned;

	/* layout */
	struct lt_region *rg;
	unsigned int nrg;
	struct lt_piece *pc;
	unsigned int npc;
	uint64_t fsize;		     /* full size */
	uint64_t cut_from;	     /* truncates cut at or after this */
	uint64_t maxlen;	     /* longest region */
	unsigned int *bigs, *smalls; /* writable regions, longer than LT_BIG or not */
	unsigned int nbigs, nsmalls;

	int wfd, rfd;
	struct lacuna_client *client;
	uint8_t *arena;
	size_t slice;

	/*
	 * Lock order: op_lock, then hist_lock. op_lock is held across each
	 * changing call and orders them; hist_lock guards the logs below and
	 * is held only briefly.
	 */
	pthread_mutex_t op_lock;
	pthread_mutex_t hist_lock;
	struct lt_sent *sz;
	size_t nsz, capsz;
	uint64_t cur_size;	/* under op_lock */
	uint32_t started, done; /* atomics: calls begun / completed */
	uint32_t next_gen;	/* atomic */
	bool stop;		/* atomic */

	/* counters (atomics) */
	uint64_t replies, whole, shorts, eofs, data_bytes;
	uint64_t ops[4];
	uint64_t viol[LT_V_NR];
	uint64_t races; /* violations that show a reply not taken atomically */
	uint64_t reported;
	pthread_mutex_t out_lock;

	struct timespec t0;	     /* readers and writers started */
	double first_race;	     /* seconds after t0, set by whoever counts race 1 */
	uint64_t first_race_replies; /* replies checked by then */
} lt = {
	.seed = 1,
	.seconds = 5,
	.nwriters = 2,
	.nreaders = 4,
	.nbig = 2,
	.nsmall = 200,
	.buffer_offset = -1,
	.min_replies = 100,
	.op_lock = PTHREAD_MUTEX_INITIALIZER,
	.hist_lock = PTHREAD_MUTEX_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
};

enum lt_op { LT_OP_WRITE, LT_OP_PUNCH, LT_OP_ZERO, LT_OP_TRUNC };
static const char *const lt_op_names[] = { "writes", "punches", "zero-ranges", "truncates" };

#define LT_LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define LT_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define LT_ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

static void die(const char *what, int err)
{
	fprintf(stderr, "lt_torture: %s: %s\n", what, strerror(err));
	exit(2);
}

/* seconds since lt.t0 */
static double elapsed(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - lt.t0.tv_sec) + (double)(t.tv_nsec - lt.t0.tv_nsec) / 1e9;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("realloc", ENOMEM);
	return p;
}

/* xorshift64*, one state per thread */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* uniform in [lo, hi] */
static uint64_t rnd_in(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* ---------------------------------------------------------------- pattern */

struct lt_pat {
	uint64_t base; /* bytes 0-5: gen and low region bits */
	uint64_t rhi;  /* region bits 10-11, in byte 6 */
	uint32_t gen;
	unsigned int region;
};

static void pat_init(struct lt_pat *pt, uint32_t gen, unsigned int region)
{
	uint64_t p = gen | (uint64_t)(region & 0xfff) << 32;
	int j;

	pt->base = 0;
	for (j = 0; j < 6; j++)
		pt->base |= (uint64_t)(0x80 | ((p >> (7 * j)) & 0x7f)) << (8 * j);
	pt->rhi = (region >> 10) & 3;
	pt->gen = gen;
	pt->region = region;
}

/* the pattern word at file offset 8 * w, as a number (byte j = bits 8j..8j+7) */
static uint64_t pat_word(const struct lt_pat *pt, uint64_t w)
{
	uint64_t b6 = 0x80 | pt->rhi | (w & 0x1f) << 2;
	uint64_t b7 = 0x80 | ((w >> 5) & 0x7f);

	return pt->base | b6 << 48 | b7 << 56;
}

static uint8_t pat_byte(const struct lt_pat *pt, uint64_t x)
{
	return (uint8_t)(pat_word(pt, x >> 3) >> (8 * (x & 7)));
}

/* decode the word of file offset 8 * w; false if it is no pattern of region */
static bool pat_decode(const uint8_t b[8], uint64_t w, unsigned int region, uint32_t *gen)
{
	uint64_t p = 0;
	int j;

	for (j = 0; j < 8; j++) {
		if (!(b[j] & 0x80))
			return false;
		p |= (uint64_t)(b[j] & 0x7f) << (7 * j);
	}
	if (((p >> 32) & 0xfff) != (region & 0xfff) || ((p >> 44) & 0xfff) != (w & 0xfff))
		return false;
	*gen = (uint32_t)p;
	return *gen != 0;
}

static void pat_fill(const struct lt_pat *pt, uint64_t x, uint8_t *p, uint64_t n)
{
	uint64_t i = 0;

	for (; i < n && ((x + i) & 7); i++)
		p[i] = pat_byte(pt, x + i);
	for (; i + 8 <= n; i += 8) {
		uint64_t v = htole64(pat_word(pt, (x + i) >> 3));

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = pat_byte(pt, x + i);
}

/* how many leading bytes of p (at file offset x) are the pattern */
static uint64_t pat_match(const struct lt_pat *pt, uint64_t x, const uint8_t *p, uint64_t n)
{
	uint64_t i = 0;

	for (; i < n && ((x + i) & 7); i++)
		if (p[i] != pat_byte(pt, x + i))
			return i;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (le64toh(v) != pat_word(pt, (x + i) >> 3))
			break;
	}
	for (; i < n; i++)
		if (p[i] != pat_byte(pt, x + i))
			return i;
	return i;
}

static uint64_t zero_len(const uint8_t *p, uint64_t n)
{
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v)
			break;
	}
	for (; i < n; i++)
		if (p[i])
			return i;
	return i;
}

/* ---------------------------------------------------------------- layout */

struct lt_item {
	uint64_t len, boff;
	bool aligned; /* starts on a page of the file */
};

static void add_region(uint64_t *off, const struct lt_item *it, bool gap)
{
	struct lt_region *r;

	if (lt.nrg == LT_REGIONS_MAX)
		die("layout", E2BIG);
	lt.rg = xrealloc(lt.rg, (lt.nrg + 1) * sizeof(*lt.rg));
	r = &lt.rg[lt.nrg++];
	memset(r, 0, sizeof(*r));
	r->start = *off;
	r->len = it->len;
	r->boff = it->boff;
	r->gap = gap;
	*off += it->len;
	if (r->len > lt.maxlen)
		lt.maxlen = r->len;
	if (gap)
		return;
	if (r->len > LT_BIG) {
		lt.bigs = xrealloc(lt.bigs, (lt.nbigs + 1) * sizeof(*lt.bigs));
		lt.bigs[lt.nbigs++] = lt.nrg - 1;
	} else {
		lt.smalls = xrealloc(lt.smalls, (lt.nsmalls + 1) * sizeof(*lt.smalls));
		lt.smalls[lt.nsmalls++] = lt.nrg - 1;
	}
}

/*
 * A random region: big (1 MiB - 8 KiB .. 3 MiB, some page aligned, the
 * shortest of them one piece from any buffer) or small (1-64 bytes, up to
 * a page, aligned pages up to 64 KiB, unaligned up to 64 KiB).
 */
static void random_item(uint64_t *s, struct lt_item *it, bool big)
{
	unsigned int c = (unsigned int)rnd_in(s, 0, 9);

	it->boff = lt_boffs[rnd_in(s, 0, LT_NBOFFS - 1)];
	if (big) {
		it->aligned = c < 4;
		it->len = rnd_in(s, LT_MIB - 2 * LT_PAGE, 3 * LT_MIB);
	} else if (c < 3) {
		it->len = rnd_in(s, 1, 64);
	} else if (c < 6) {
		it->len = rnd_in(s, 65, LT_PAGE);
	} else if (c < 8) {
		it->aligned = true;
		it->len = rnd_in(s, 1, 16) * LT_PAGE;
	} else {
		it->len = rnd_in(s, LT_PAGE + 1, 64 * 1024);
	}
	if (it->aligned)
		it->len = (it->len + LT_PAGE - 1) & ~(LT_PAGE - 1);
}

/*
 * The regions of every size of lt_sizes from every buffer offset, then
 * --big and --small random ones, in a shuffled order, one longer than
 * 1 MiB second to last so that the truncates cut into it; gaps make
 * aligned regions start on a page.
 */
static void make_layout(void)
{
	unsigned int nfix = LT_NBOFFS * LT_NSIZES, n = nfix + lt.nbig + lt.nsmall, i, k;
	uint64_t s = lt.seed * 0x9E3779B97F4A7C15ULL + 1, off = 0;
	struct lt_item *it = calloc(n, sizeof(*it));

	if (!it)
		die("calloc", ENOMEM);
	for (i = 0; i < n; i++) {
		if (i < nfix) {
			it[i].len = lt_sizes[i / LT_NBOFFS];
			it[i].boff = lt_boffs[i % LT_NBOFFS];
			it[i].aligned = rnd_in(&s, 0, 1);
		} else {
			random_item(&s, &it[i], i < nfix + lt.nbig);
		}
		if (lt.buffer_offset >= 0)
			it[i].boff = (uint64_t)lt.buffer_offset;
	}
	for (i = n - 1; i > 0; i--) {
		struct lt_item t = it[i];

		k = (unsigned int)rnd_in(&s, 0, i);
		it[i] = it[k];
		it[k] = t;
	}
	for (k = 0; k < n && it[k].len <= LT_MIB; k++)
		;
	if (k < n) {
		struct lt_item t = it[n - 2];

		it[n - 2] = it[k];
		it[k] = t;
	}
	for (i = 0; i < n; i++) {
		struct lt_item gap = { 0 };

		if (it[i].aligned && (off & (LT_PAGE - 1)))
			gap.len = ((off + LT_PAGE - 1) & ~(LT_PAGE - 1)) - off;
		else if (rnd_in(&s, 0, 9) == 0)
			gap.len = rnd_in(&s, 1, 3 * LT_PAGE);
		if (gap.len)
			add_region(&off, &gap, true);
		add_region(&off, &it[i], false);
	}
	free(it);
	lt.fsize = off;
	lt.cut_from = lt.rg[lt.nrg - 3].start;
}

/* The bytes of the FUSE write that carries the next rest bytes of a write from buffer offset a. */
static uint64_t piece_len(uint64_t a, uint64_t rest)
{
	uint64_t n = lt.unit + LT_PAGE - 1 - a;

	if (n > lt.unit_aligned)
		n = lt.unit_aligned;
	return n < rest ? n : rest;
}

/* Cut every region into the pieces its writes arrive in. */
static void make_pieces(void)
{
	unsigned int i;

	for (i = 0; i < lt.nrg; i++) {
		struct lt_region *r = &lt.rg[i];
		uint64_t x, n, a = r->boff, end = r->start + r->len;

		r->piece0 = lt.npc;
		for (x = r->start; x < end; x += n, a = (a + n) % LT_PAGE) {
			struct lt_piece *pc;

			n = piece_len(a, end - x);
			lt.pc = xrealloc(lt.pc, (lt.npc + 1) * sizeof(*lt.pc));
			pc = &lt.pc[lt.npc++];
			memset(pc, 0, sizeof(*pc));
			pc->start = x;
			pc->end = x + n;
			pc->region = i;
			r->npieces++;
		}
	}
}

/* the piece holding offset x (x < fsize) */
static unsigned int piece_at(uint64_t x)
{
	unsigned int lo = 0, hi = lt.npc - 1;

	while (lo < hi) {
		unsigned int mid = (lo + hi + 1) / 2;

		if (lt.pc[mid].start <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Does a piece of region ri end at x (0 < x <= fsize)? */
static bool piece_ends_at(unsigned int ri, uint64_t x)
{
	const struct lt_piece *pc = &lt.pc[piece_at(x - 1)];

	return pc->region == ri && pc->end == x;
}

/* ---------------------------------------------------------------- history */

static void hist_add(struct lt_piece *pc, uint32_t seq, uint32_t gen, uint64_t keep)
{
	if (pc->n == pc->cap) {
		pc->cap = pc->cap ? 2 * pc->cap : 16;
		pc->h = xrealloc(pc->h, pc->cap * sizeof(*pc->h));
	}
	pc->h[pc->n++] = (struct lt_hent){ seq, gen, gen ? keep : 0 };
}

static void size_add(uint32_t seq, uint64_t size, bool steps, unsigned int region)
{
	if (lt.nsz == lt.capsz) {
		lt.capsz = lt.capsz ? 2 * lt.capsz : 64;
		lt.sz = xrealloc(lt.sz, lt.capsz * sizeof(*lt.sz));
	}
	lt.sz[lt.nsz++] = (struct lt_sent){ seq, steps, region, size, lt.cur_size };
	lt.cur_size = size;
}

/*
 * One change of the file, numbered and logged, as a single call on the
 * mount. For LT_OP_WRITE buf holds the region's pattern of gen.
 */
static void do_op(enum lt_op op, unsigned int ri, uint64_t cut, const uint8_t *buf, uint32_t gen)
{
	struct lt_region *r = &lt.rg[ri];
	unsigned int i;
	uint32_t seq;
	ssize_t n;
	int rc = 0;

	pthread_mutex_lock(&lt.op_lock);
	seq = lt.started + 1;
	pthread_mutex_lock(&lt.hist_lock);
	if (op == LT_OP_TRUNC) {
		for (i = 0; i < lt.npc; i++) {
			struct lt_piece *pc = &lt.pc[i];
			const struct lt_hent *h = &pc->h[pc->n - 1];
			uint64_t keep;

			if (pc->end <= cut)
				continue;
			keep = pc->start >= cut ? 0 : cut - pc->start;
			hist_add(pc, seq, keep ? h->gen : 0, keep < h->keep ? keep : h->keep);
		}
		size_add(seq, cut, false, 0);
	} else {
		for (i = 0; i < r->npieces; i++) {
			struct lt_piece *pc = &lt.pc[r->piece0 + i];

			hist_add(pc, seq, op == LT_OP_WRITE ? gen : 0, pc->end - pc->start);
		}
		if (op == LT_OP_WRITE && r->start + r->len > lt.cur_size)
			size_add(seq, r->start + r->len, r->npieces > 1, ri);
	}
	pthread_mutex_unlock(&lt.hist_lock);
	LT_STORE(lt.started, seq);

	switch (op) {
	case LT_OP_WRITE:
		/* one call: a short write would be a bug, not something to retry */
		n = pwrite(lt.wfd, buf, r->len, (off_t)r->start);
		if (n != (ssize_t)r->len)
			rc = n < 0 ? errno : EIO;
		break;
	case LT_OP_PUNCH:
		if (fallocate(lt.wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			rc = errno;
		break;
	case LT_OP_ZERO:
		if (fallocate(lt.wfd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)r->start,
			      (off_t)r->len) < 0)
			rc = errno;
		break;
	case LT_OP_TRUNC:
		if (ftruncate(lt.wfd, (off_t)cut) < 0)
			rc = errno;
		break;
	}
	if (rc)
		die(op == LT_OP_WRITE	? "pwrite"
		    : op == LT_OP_TRUNC ? "ftruncate"
					: "fallocate",
		    rc);
	LT_STORE(lt.done, seq);
	pthread_mutex_unlock(&lt.op_lock);
	LT_ADD(lt.ops[op], 1);
	if (op == LT_OP_WRITE)
		LT_ADD(r->writes, 1);
}

/* ---------------------------------------------------------------- writers */

/* a writer's buffer: page aligned, room for any region at any buffer offset */
static uint8_t *alloc_buffer(void)
{
	void *p;

	if (posix_memalign(&p, LT_PAGE, lt.maxlen + LT_PAGE))
		die("posix_memalign", ENOMEM);
	return p;
}

static unsigned int pick_region(uint64_t *s)
{
	/* the big regions take longest to copy: a third of the changes go to them */
	if (lt.nbigs && (!lt.nsmalls || rnd_in(s, 0, 2) == 0))
		return lt.bigs[rnd_in(s, 0, lt.nbigs - 1)];
	return lt.smalls[rnd_in(s, 0, lt.nsmalls - 1)];
}

/* a new pattern over region ri, written from its buffer offset in buf */
static void write_region(unsigned int ri, uint8_t *buf)
{
	const struct lt_region *r = &lt.rg[ri];
	uint32_t gen = LT_ADD(lt.next_gen, 1);
	struct lt_pat pt;

	pat_init(&pt, gen, ri);
	pat_fill(&pt, r->start, buf + r->boff, r->len);
	do_op(LT_OP_WRITE, ri, 0, buf + r->boff, gen);
}

static void random_change(uint64_t *s, uint8_t *buf)
{
	unsigned int ri = pick_region(s), c = (unsigned int)rnd_in(s, 0, 3);

	if (c >= 2)
		write_region(ri, buf);
	else
		do_op(c ? LT_OP_ZERO : LT_OP_PUNCH, ri, 0, NULL, 0);
}

/*
 * Cut the file into its last regions, then restore the full size: half the
 * time at once, half the time by rewriting the regions the cut reached, so
 * that writes extend the file (the big one second to last in several FUSE
 * writes) while readers look past its end.
 */
static void truncate_cycle(uint64_t *s, uint8_t *buf)
{
	uint64_t cut = rnd_in(s, lt.cut_from, lt.fsize - 1);
	unsigned int ri;

	do_op(LT_OP_TRUNC, 0, cut, NULL, 0);
	if (rnd_in(s, 0, 1)) {
		for (ri = lt.nrg - 3; ri < lt.nrg; ri++)
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
	uint8_t *buf = alloc_buffer();

	while (!LT_LOAD(lt.stop)) {
		if (id == 0 && rnd_in(&s, 0, 3) == 0)
			truncate_cycle(&s, buf);
		else
			random_change(&s, buf);
	}
	free(buf);
	return NULL;
}

/* ---------------------------------------------------------------- checking */

/* what one reply showed of one piece: bytes [a, b), holes as zeros */
struct lt_obs {
	unsigned int piece;
	uint64_t a, b;
	uint64_t z; /* first zero byte, b if none */
	bool in_zero;
	bool bad;
	char why[128];
	struct lt_pat pt; /* pt.gen != 0 once decoded */
	uint8_t sb[16];	  /* leading pattern bytes not decoded yet */
	unsigned int sblen;
};

struct lt_reader {
	unsigned int id;
	uint64_t rng;
	uint8_t *buf;
	struct lacuna_result *res;
	struct lt_obs *obs;
	unsigned int nobs;
	struct lt_ivl t[LT_TSET_MAX], u[LT_TSET_MAX], tmp[LT_TSET_MAX];
	unsigned int nt, nu;
	/* the request being checked */
	uint64_t off, len, buflen;
	uint32_t s0, s1;
	int rc;
};

/* a sign that the reply was not taken atomically (not a failed call, not a flagged one) */
static bool lt_is_race(int v)
{
	return v != LT_V_UNSTABLE && v != LT_V_ERROR;
}

static void print_reply(struct lt_reader *rd)
{
	const struct lacuna_result *res = rd->res;
	unsigned int i;

	printf("#   request off %" PRIu64 " len %" PRIu64 " room %" PRIu64
	       ", calls done before %u, begun after %u\n",
	       rd->off, rd->len, rd->buflen, rd->s0, rd->s1);
	printf("#   reply rc %d size %" PRIu64 " next %" PRIu64 " flags %#x nsegs %u\n", rd->rc,
	       res->file_size, res->next_offset, res->flags, res->nsegs);
	for (i = 0; i < res->nsegs && i < 24; i++)
		printf("#     %s %" PRIu64 "+%" PRIu64 "\n",
		       res->segs[i].kind == LACUNA_SEG_DATA ? "data" : "hole", res->segs[i].offset,
		       res->segs[i].length);
	if (res->nsegs > 24)
		printf("#     ... %u more\n", res->nsegs - 24);
}

static void violation(struct lt_reader *rd, enum lt_viol v, const char *fmt, ...)
{
	va_list ap;

	LT_ADD(lt.viol[v], 1);
	if (lt_is_race(v) && LT_ADD(lt.races, 1) == 1) {
		lt.first_race = elapsed();
		lt.first_race_replies = LT_LOAD(lt.replies);
	}
	if (LT_ADD(lt.reported, 1) > LT_REPORT_MAX)
		return;
	pthread_mutex_lock(&lt.out_lock);
	printf("# VIOLATION (%s), reader %u: ", lt_viol_names[v], rd->id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	print_reply(rd);
	fflush(stdout);
	pthread_mutex_unlock(&lt.out_lock);
}

static bool check_struct(struct lt_reader *rd)
{
	const struct lacuna_result *res = rd->res;
	uint64_t size = res->file_size, next = res->next_offset, off = rd->off;
	uint64_t rend = rd->len > UINT64_MAX - off ? UINT64_MAX : off + rd->len;
	uint64_t pos, dsum = 0, hsum = 0, used = 0;
	bool eof = next >= size, dense = res->flags & LACUNA_SR_DENSE;
	unsigned int i;

	if (!res->atomic)
		return violation(rd, LT_V_STRUCT, "not atomic: not answered by lacunafs"), false;
	if (res->nsegs > LACUNA_SR_MAX_SEGS)
		return violation(rd, LT_V_STRUCT, "nsegs %u", res->nsegs), false;
	if (!!(res->flags & LACUNA_SR_EOF) != eof)
		return violation(rd, LT_V_STRUCT, "EOF flag wrong"), false;
	if (!!(res->flags & LACUNA_SR_SHORT) != (!eof && next < rend))
		return violation(rd, LT_V_STRUCT, "SHORT flag wrong"), false;
	if (off >= size) {
		if (res->nsegs || next != off)
			return violation(rd, LT_V_STRUCT, "segments at or past EOF"), false;
		return true;
	}
	if (!res->nsegs || next <= off)
		return violation(rd, LT_V_STRUCT, "no progress before EOF"), false;
	pos = res->segs[0].offset;
	if (pos > off || (res->segs[0].kind == LACUNA_SEG_DATA && pos != off))
		return violation(rd, LT_V_STRUCT, "first segment does not start at the offset"),
		       false;
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		if (e->offset != pos || !e->length || e->offset + e->length > size)
			return violation(rd, LT_V_STRUCT,
					 "segment %u not contiguous, empty or past "
					 "file_size",
					 i),
			       false;
		if (e->kind == LACUNA_SEG_DATA) {
			if (e->offset + e->length > rend || e->data != rd->buf + used)
				return violation(rd, LT_V_STRUCT,
						 "data segment %u outside the "
						 "request or not back to back",
						 i),
				       false;
			used += e->length;
			dsum += e->length;
		} else if (e->kind == LACUNA_SEG_HOLE) {
			if (dense)
				return violation(rd, LT_V_STRUCT, "hole in a DENSE reply"), false;
			hsum += e->length;
		} else {
			return violation(rd, LT_V_STRUCT, "segment %u of kind %u", i, e->kind),
			       false;
		}
		pos += e->length;
	}
	if (pos < next || (res->segs[res->nsegs - 1].kind == LACUNA_SEG_DATA && pos != next))
		return violation(rd, LT_V_STRUCT, "segments end at %" PRIu64 ", not next_offset",
				 pos),
		       false;
	if (dsum != res->data_bytes || hsum != res->hole_bytes || dsum > rd->buflen)
		return violation(rd, LT_V_STRUCT, "data_bytes/hole_bytes do not add up"), false;
	if ((res->flags & LACUNA_SR_SHORT) && res->nsegs < LACUNA_SR_MAX_SEGS && dsum < rd->buflen)
		return violation(rd, LT_V_STRUCT, "SHORT with room left"), false;
	return true;
}

static void obs_bad(struct lt_obs *o, const char *fmt, ...)
{
	va_list ap;

	o->bad = true;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
}

/* feed [x, x + n) of the piece: data p, or a hole when p is NULL */
static void obs_feed(struct lt_obs *o, uint64_t x, const uint8_t *p, uint64_t n)
{
	unsigned int region = lt.pc[o->piece].region;
	uint64_t k;

	o->b = x + n;
	if (o->bad)
		return;
	if (!p) {
		if (!o->in_zero) {
			o->in_zero = true;
			o->z = x;
		}
		return;
	}
	while (n) {
		if (o->in_zero) {
			k = zero_len(p, n);
			if (k < n)
				obs_bad(o, "byte %" PRIu64 " is %#x after zeros from %" PRIu64,
					x + k, p[k], o->z);
			return;
		}
		if (!*p) {
			o->in_zero = true;
			o->z = x;
			continue;
		}
		if (!o->pt.gen) {
			uint64_t w8 = (o->a + 7) & ~7ULL;
			uint32_t gen;

			o->sb[o->sblen++] = *p++;
			x++;
			n--;
			if (o->a + o->sblen < w8 + 8)
				continue;
			if (!pat_decode(o->sb + (w8 - o->a), w8 >> 3, region, &gen)) {
				obs_bad(o, "word at %" PRIu64 " is no pattern of region %u", w8,
					region);
				return;
			}
			pat_init(&o->pt, gen, region);
			k = pat_match(&o->pt, o->a, o->sb, o->sblen);
			if (k < o->sblen) {
				obs_bad(o, "byte %" PRIu64 " not of write %u", o->a + k, gen);
				return;
			}
			continue;
		}
		k = pat_match(&o->pt, x, p, n);
		x += k;
		p += k;
		n -= k;
		if (n && *p) {
			obs_bad(o, "byte %" PRIu64 " is %#x, not of write %u (%#x)", x, *p,
				o->pt.gen, pat_byte(&o->pt, x));
			return;
		}
	}
}

/* Collect what the reply shows of every piece it covers (clipped to file_size). */
static void observe(struct lt_reader *rd)
{
	const struct lacuna_result *res = rd->res;
	uint64_t size = res->file_size < lt.fsize ? res->file_size : lt.fsize;
	unsigned int i;

	rd->nobs = 0;
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];
		uint64_t x = e->offset, end = e->offset + e->length;

		if (end > size)
			end = size;
		while (x < end) {
			unsigned int pi = piece_at(x);
			const struct lt_piece *pc = &lt.pc[pi];
			uint64_t n = (pc->end < end ? pc->end : end) - x;
			struct lt_obs *o;

			if (!rd->nobs || rd->obs[rd->nobs - 1].piece != pi) {
				o = &rd->obs[rd->nobs++];
				memset(o, 0, sizeof(*o));
				o->piece = pi;
				o->a = x;
			}
			o = &rd->obs[rd->nobs - 1];
			obs_feed(o, x,
				 e->kind == LACUNA_SEG_DATA ? e->data + (x - e->offset) : NULL, n);
			x += n;
		}
	}
	for (i = 0; i < rd->nobs; i++)
		if (!rd->obs[i].in_zero)
			rd->obs[i].z = rd->obs[i].b;
}

/* Does history entry h of piece pc show as observation o? */
static bool obs_matches(const struct lt_obs *o, const struct lt_piece *pc, const struct lt_hent *h)
{
	uint64_t pend = h->gen ? pc->start + h->keep : pc->start; /* end of the pattern */
	uint64_t z = pend < o->a ? o->a : (pend > o->b ? o->b : pend);
	struct lt_pat pt;

	if (z != o->z)
		return false;
	if (z == o->a)
		return true; /* zeros where zeros are due */
	if (o->pt.gen)
		return h->gen == o->pt.gen;
	pat_init(&pt, h->gen, pc->region);
	return pat_match(&pt, o->a, o->sb, o->sblen) == o->sblen;
}

/* u = the times in [lo, hi] at which piece pc looked like o */
static void piece_times(struct lt_reader *rd, const struct lt_obs *o, uint64_t lo, uint64_t hi)
{
	const struct lt_piece *pc = &lt.pc[o->piece];
	size_t i, a = 0, b = pc->n;

	/* the last entry logged at or before lo / 2 */
	while (b - a > 1) {
		size_t m = (a + b) / 2;

		if (2ULL * pc->h[m].seq <= lo)
			a = m;
		else
			b = m;
	}
	rd->nu = 0;
	for (i = a; i < pc->n && 2ULL * pc->h[i].seq <= hi; i++) {
		uint64_t l = 2ULL * pc->h[i].seq,
			 h = i + 1 < pc->n ? 2ULL * pc->h[i + 1].seq : UINT64_MAX;

		if (!obs_matches(o, pc, &pc->h[i]))
			continue;
		lt_tset_add(rd->u, &rd->nu, l, h, lo, hi);
	}
}

/* u = the times in [lo, hi] at which the file had the reply's size */
static void size_times(struct lt_reader *rd, uint64_t size, uint64_t lo, uint64_t hi)
{
	size_t i, a = 0, b = lt.nsz;

	while (b - a > 1) {
		size_t m = (a + b) / 2;

		if (2ULL * lt.sz[m].seq <= lo)
			a = m;
		else
			b = m;
	}
	rd->nu = 0;
	for (i = a; i < lt.nsz && 2ULL * lt.sz[i].seq <= hi; i++) {
		const struct lt_sent *e = &lt.sz[i];
		uint64_t l = 2ULL * e->seq,
			 h = i + 1 < lt.nsz ? 2ULL * lt.sz[i + 1].seq : UINT64_MAX;

		if (e->size != size) {
			/* during a write of several pieces past EOF, each piece's end shows */
			if (!e->steps || size <= e->old || size >= e->size ||
			    !piece_ends_at(e->region, size))
				continue;
			h = l;
		}
		lt_tset_add(rd->u, &rd->nu, l, h, lo, hi);
	}
}

/* t = t intersected with u */
static void intersect(struct lt_reader *rd)
{
	unsigned int i = 0, j = 0, n = 0;

	while (i < rd->nt && j < rd->nu) {
		uint64_t l = rd->t[i].lo > rd->u[j].lo ? rd->t[i].lo : rd->u[j].lo;
		uint64_t h = rd->t[i].hi < rd->u[j].hi ? rd->t[i].hi : rd->u[j].hi;

		if (l <= h)
			rd->tmp[n++] = (struct lt_ivl){ l, h };
		if (rd->t[i].hi < rd->u[j].hi)
			i++;
		else
			j++;
	}
	memcpy(rd->t, rd->tmp, n * sizeof(*rd->t));
	rd->nt = n;
}

/* "region R [start, +len) from buffer offset B" (or "(gap)") into s, its length */
static int describe_region(unsigned int ri, char *s, size_t len)
{
	const struct lt_region *r = &lt.rg[ri];

	if (r->gap)
		return snprintf(s, len, "region %u [%" PRIu64 ", +%" PRIu64 ") (gap)", ri, r->start,
				r->len);
	return snprintf(s, len, "region %u [%" PRIu64 ", +%" PRIu64 ") from buffer offset %" PRIu64,
			ri, r->start, r->len, r->boff);
}

static void describe_piece(const struct lt_obs *o, char *s, size_t len)
{
	const struct lt_piece *pc = &lt.pc[o->piece];
	int n, m;

	n = describe_region(pc->region, s, len);
	if (n < 0 || (size_t)n >= len)
		return;
	m = snprintf(s + n, len - (size_t)n,
		     ", piece [%" PRIu64 ", %" PRIu64 ") shows [%" PRIu64 ", %" PRIu64 ") as ",
		     pc->start, pc->end, o->a, o->b);
	if (m < 0 || (size_t)(n += m) >= len)
		return;
	if (o->z == o->a && !o->bad)
		snprintf(s + n, len - (size_t)n, "zeros");
	else if (o->pt.gen)
		snprintf(s + n, len - (size_t)n, "write %u up to %" PRIu64 ", then zeros",
			 o->pt.gen, o->z);
	else
		snprintf(s + n, len - (size_t)n, "pattern bytes up to %" PRIu64 ", then zeros",
			 o->z);
}

static void print_history(const struct lt_obs *o, uint32_t s0, uint32_t s1)
{
	const struct lt_piece *pc = &lt.pc[o->piece];
	size_t i;

	if (LT_LOAD(lt.reported) > LT_REPORT_MAX)
		return;
	pthread_mutex_lock(&lt.out_lock);
	for (i = 0; i < pc->n; i++) {
		const struct lt_hent *h = &pc->h[i];

		if (h->seq + 3 < s0 && i + 3 < pc->n && pc->h[i + 3].seq <= s0)
			continue;
		if (h->seq > s1)
			break;
		printf("#     piece history: call %u -> %s%u keep %" PRIu64 "\n", h->seq,
		       h->gen ? "write " : "zeros ", h->gen, h->keep);
	}
	pthread_mutex_unlock(&lt.out_lock);
}

/* Is the reply one snapshot of the logged states? Under hist_lock. */
static void check_snapshot(struct lt_reader *rd)
{
	uint64_t lo = 2ULL * rd->s0 + 1, hi = 2ULL * rd->s1 + 1;
	char desc[256];
	unsigned int i;

	rd->nt = 1;
	rd->t[0] = (struct lt_ivl){ lo, hi };
	size_times(rd, rd->res->file_size, lo, hi);
	if (!rd->nu) {
		desc[0] = '\0';
		if (rd->res->file_size && rd->res->file_size <= lt.fsize)
			describe_region(lt.pc[piece_at(rd->res->file_size - 1)].region, desc,
					sizeof(desc));
		violation(rd, LT_V_SIZE,
			  "file_size %" PRIu64 " never held while the request ran (it ends in %s)",
			  rd->res->file_size, desc);
		return;
	}
	intersect(rd);
	for (i = 0; i < rd->nobs; i++) {
		const struct lt_obs *o = &rd->obs[i];

		if (o->bad) {
			describe_piece(o, desc, sizeof(desc));
			violation(rd, LT_V_TORN, "%s: %s", desc, o->why);
			print_history(o, rd->s0, rd->s1);
			return;
		}
		piece_times(rd, o, lo, hi);
		if (!rd->nu) {
			const struct lt_piece *pc = &lt.pc[o->piece];
			bool ever = false;
			size_t k;

			for (k = 0; k < pc->n && pc->h[k].seq <= rd->s1 && !ever; k++)
				ever = obs_matches(o, pc, &pc->h[k]);
			describe_piece(o, desc, sizeof(desc));
			violation(rd, ever ? LT_V_STALE : LT_V_TORN, "%s: %s", desc,
				  ever ? "a state not current while the request ran"
				       : "a state the piece never had");
			print_history(o, rd->s0, rd->s1);
			return;
		}
		intersect(rd);
		if (!rd->nt) {
			describe_piece(o, desc, sizeof(desc));
			violation(rd, LT_V_SNAPSHOT,
				  "%s: no moment agrees with the pieces and size before it", desc);
			print_history(o, rd->s0, rd->s1);
			return;
		}
	}
}

static void check_reply(struct lt_reader *rd)
{
	const struct lacuna_result *res = rd->res;

	if (rd->rc) {
		violation(rd, LT_V_ERROR, "lacuna_sparse_read: %s", strerror(-rd->rc));
		return;
	}
	LT_ADD(lt.replies, 1);
	if (res->flags & LACUNA_SR_EOF)
		LT_ADD(lt.eofs, 1);
	if (res->flags & LACUNA_SR_SHORT)
		LT_ADD(lt.shorts, 1);
	LT_ADD(lt.data_bytes, res->data_bytes);
	if (!check_struct(rd))
		return;
	if (res->flags & LACUNA_SR_UNSTABLE) {
		violation(rd, LT_V_UNSTABLE, "flagged UNSTABLE");
		return;
	}
	observe(rd);
	pthread_mutex_lock(&lt.hist_lock);
	check_snapshot(rd);
	pthread_mutex_unlock(&lt.hist_lock);
}

static void pick_range(struct lt_reader *rd)
{
	uint64_t *s = &rd->rng;
	unsigned int c = (unsigned int)rnd_in(s, 0, 19);

	rd->buflen = lt.slice;
	if (c < 2) {
		/* the whole file */
		rd->off = 0;
		rd->len = c ? UINT64_MAX : lt.fsize;
		LT_ADD(lt.whole, 1);
	} else if (c < 7) {
		/* around the end of the file, often past it while it is cut */
		rd->off = rnd_in(s, lt.cut_from, lt.fsize + LT_PAGE);
		rd->len = rnd_in(s, 1, 4 * LT_MIB);
	} else {
		rd->off = rnd_in(s, 0, lt.fsize - 1);
		if (c < 10)
			rd->off = lt.rg[rnd_in(s, 0, lt.nrg - 1)].start; /* a region start */
		rd->len = 1ULL << rnd_in(s, 0, 23);
		rd->len += rnd_in(s, 0, rd->len);
	}
	if (rnd_in(s, 0, 7) == 0)
		rd->buflen = rnd_in(s, 1, 256 * 1024); /* short of room */
}

static void *reader(void *arg)
{
	struct lt_reader *rd = arg;

	while (!LT_LOAD(lt.stop)) {
		pick_range(rd);
		rd->s0 = LT_LOAD(lt.done);
		rd->rc = lacuna_sparse_read(lt.client, lt.rfd, rd->off, rd->len, LACUNA_READ_DATA,
					    rd->buf, rd->buflen, rd->res);
		rd->s1 = LT_LOAD(lt.started);
		check_reply(rd);
		if (lt.stop_after && LT_LOAD(lt.races) >= lt.stop_after)
			LT_STORE(lt.stop, true);
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: lt_torture [--seed N] [--seconds S] [--writers W] [--readers R]\n"
		"                  [--big N] [--small N] [--min-replies N] [--stop-after N]\n"
		"                  [--expect-race] [--assume-unit BYTES] [--buffer-offset N]\n"
		"                  [--layout] FILE\n"
		"FILE must be on a lacunafs mount; it is overwritten.\n"
		"--assume-unit checks against BYTES instead of the mount's write unit.\n"
		"--buffer-offset writes every region from offset N (0-4095) of a page.\n"
		"--layout prints the regions the seed makes, and exits.\n");
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
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "writers", required_argument, NULL, 'w' },
		{ "readers", required_argument, NULL, 'r' },
		{ "big", required_argument, NULL, 'b' },
		{ "small", required_argument, NULL, 'm' },
		{ "min-replies", required_argument, NULL, 'n' },
		{ "stop-after", required_argument, NULL, 'a' },
		{ "expect-race", no_argument, NULL, 'x' },
		{ "assume-unit", required_argument, NULL, 'u' },
		{ "buffer-offset", required_argument, NULL, 'o' },
		{ "layout", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
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
		case 'b':
			lt.nbig = (unsigned int)num(optarg);
			break;
		case 'm':
			lt.nsmall = (unsigned int)num(optarg);
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
		case 'u':
			lt.assume_unit = num(optarg);
			if (!lt.assume_unit || lt.assume_unit > UINT32_MAX)
				usage();
			break;
		case 'o':
			v = num(optarg);
			if (v >= LT_PAGE)
				usage();
			lt.buffer_offset = (int)v;
			break;
		case 'l':
			lt.print_layout = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || !lt.nwriters || !lt.nreaders || lt.nwriters > LT_THREADS_MAX ||
	    lt.nreaders > LT_THREADS_MAX ||
	    LT_NBOFFS * LT_NSIZES + lt.nbig + lt.nsmall > LT_REGIONS_MAX / 2)
		usage();
	lt.path = argv[optind];
}

/* How many writes came from each buffer offset, and how many of them in several pieces. */
static void print_coverage(void)
{
	unsigned int c, i, nc = lt.buffer_offset >= 0 ? 1 : LT_NBOFFS;

	printf("# lt_torture: writes by buffer offset (of them in several pieces):");
	for (c = 0; c < nc; c++) {
		uint64_t boff = lt.buffer_offset >= 0 ? (uint64_t)lt.buffer_offset : lt_boffs[c];
		uint64_t all = 0, split = 0;

		for (i = 0; i < lt.nrg; i++) {
			if (lt.rg[i].boff != boff)
				continue;
			all += lt.rg[i].writes;
			split += lt.rg[i].npieces > 1 ? lt.rg[i].writes : 0;
		}
		printf(" %" PRIu64 ": %" PRIu64 " (%" PRIu64 ")", boff, all, split);
	}
	printf("\n");
}

/* The write unit the pieces follow: the mount's, or the one assumed. */
static void read_unit(void)
{
	struct lacuna_info info;

	if (!lacuna_is_lacunafs(lt.wfd, &info)) {
		fprintf(stderr, "lt_torture: %s is not on lacunafs (LACUNA_IOC_INFO failed)\n",
			lt.path);
		exit(2);
	}
	if (!info.write_unit || info.write_unit > info.write_unit_aligned ||
	    info.write_unit_aligned > info.write_unit + LT_PAGE - 1) {
		fprintf(stderr,
			"lt_torture: %s: the mount gives no usable write unit (LACUNA_IOC_INFO: "
			"write_unit %u, write_unit_aligned %u)\n",
			lt.path, info.write_unit, info.write_unit_aligned);
		exit(2);
	}
	if (sysconf(_SC_PAGESIZE) != (long)LT_PAGE) {
		fprintf(stderr,
			"lt_torture: pages of %ld bytes: the piece model knows %" PRIu64 " only\n",
			sysconf(_SC_PAGESIZE), LT_PAGE);
		exit(2);
	}
	lt.unit = lt.assume_unit ? lt.assume_unit : info.write_unit;
	lt.unit_aligned = lt.assume_unit ? lt.assume_unit : info.write_unit_aligned;
	printf("# lt_torture: the mount's write unit is %u bytes from any buffer, %u from a "
	       "page-aligned one%s\n",
	       info.write_unit, info.write_unit_aligned,
	       lt.assume_unit ? "; checking as if both were --assume-unit" : "");
}

/* Fresh file of full size, its pieces, then a first state for every region. */
static void setup_file(void)
{
	uint64_t s = lt.seed * 31 + 7;
	unsigned int i;
	uint8_t *buf;

	lt.wfd = open(lt.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lt.wfd < 0)
		die(lt.path, errno);
	read_unit();
	make_pieces();
	if (ftruncate(lt.wfd, (off_t)lt.fsize) < 0)
		die("ftruncate", errno);
	for (i = 0; i < lt.npc; i++)
		hist_add(&lt.pc[i], 0, 0, 0);
	size_add(0, lt.fsize, false, 0);
	buf = alloc_buffer();
	for (i = 0; i < lt.nrg; i++)
		if (!lt.rg[i].gap && rnd_in(&s, 0, 2) != 0)
			write_region(i, buf);
	free(buf);
	lt.rfd = open(lt.path, O_RDONLY | O_CLOEXEC);
	if (lt.rfd < 0)
		die(lt.path, errno);
}

int main(int argc, char **argv)
{
	pthread_t wt[LT_THREADS_MAX], rt[LT_THREADS_MAX];
	struct lt_reader *rds;
	uint64_t total = 0;
	unsigned int i, split = 0;
	double secs;
	size_t alen;
	int rc, k;
	bool pass;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	make_layout();
	if (lt.print_layout) {
		for (i = 0; i < lt.nrg; i++)
			printf("region %u [%" PRIu64 ", %" PRIu64 ") %" PRIu64 " bytes%s%" PRIu64
			       "\n",
			       i, lt.rg[i].start, lt.rg[i].start + lt.rg[i].len, lt.rg[i].len,
			       lt.rg[i].gap ? " gap, buffer offset " : ", buffer offset ",
			       lt.rg[i].boff);
		printf("size %" PRIu64 ", truncates cut at or after %" PRIu64 "\n", lt.fsize,
		       lt.cut_from);
		return 0;
	}
	setup_file();
	for (i = 0; i < lt.nrg; i++)
		split += lt.rg[i].npieces > 1;

	lt.slice = (lt.fsize + LT_PAGE - 1) & ~(LT_PAGE - 1);
	rc = lacuna_client_open(lt.rfd, lt.slice * lt.nreaders, &lt.client);
	if (rc)
		die("lacuna_client_open", -rc);
	lt.arena = lacuna_client_arena(lt.client, &alen);

	printf("# lt_torture: seed %" PRIu64 ", file %" PRIu64 " bytes, %u regions (%u written "
	       "in several pieces), %u pieces, %u writers, %u readers, %u s%s\n",
	       lt.seed, lt.fsize, lt.nrg, split, lt.npc, lt.nwriters, lt.nreaders, lt.seconds,
	       lt.expect_race ? ", expecting a race" : "");

	rds = calloc(lt.nreaders, sizeof(*rds));
	if (!rds)
		die("calloc", ENOMEM);
	clock_gettime(CLOCK_MONOTONIC, &lt.t0);
	for (i = 0; i < lt.nreaders; i++) {
		rds[i].id = i;
		rds[i].rng = (lt.seed + 2000 + i) * 0x9E3779B97F4A7C15ULL | 1;
		rds[i].buf = lt.arena + i * lt.slice;
		rds[i].res = malloc(sizeof(*rds[i].res));
		rds[i].obs = malloc((lt.npc + 1) * sizeof(*rds[i].obs));
		if (!rds[i].res || !rds[i].obs)
			die("malloc", ENOMEM);
		rc = pthread_create(&rt[i], NULL, reader, &rds[i]);
		if (rc)
			die("pthread_create", rc);
	}
	for (i = 0; i < lt.nwriters; i++) {
		rc = pthread_create(&wt[i], NULL, writer, (void *)(uintptr_t)i);
		if (rc)
			die("pthread_create", rc);
	}
	while (!LT_LOAD(lt.stop) && elapsed() < lt.seconds)
		usleep(20000);
	LT_STORE(lt.stop, true);
	for (i = 0; i < lt.nwriters; i++)
		pthread_join(wt[i], NULL);
	for (i = 0; i < lt.nreaders; i++)
		pthread_join(rt[i], NULL);
	secs = elapsed();

	for (k = 0; k < LT_V_NR; k++)
		total += lt.viol[k];
	printf("# lt_torture: %.1f s, changes:", secs);
	for (k = 0; k < 4; k++)
		printf(" %" PRIu64 " %s", lt.ops[k], lt_op_names[k]);
	printf("\n");
	print_coverage();
	printf("# lt_torture: %" PRIu64 " replies checked (%" PRIu64 " whole-file, %" PRIu64
	       " EOF, %" PRIu64 " short), %" PRIu64 " MiB of data\n",
	       lt.replies, lt.whole, lt.eofs, lt.shorts, lt.data_bytes / LT_MIB);
	printf("# lt_torture: %" PRIu64 " violations:", total);
	for (k = 0; k < LT_V_NR; k++)
		printf(" %" PRIu64 " %s", lt.viol[k], lt_viol_names[k]);
	printf("\n");

	if (lt.races)
		printf("# lt_torture: first race caught after %.3f s, %" PRIu64
		       " replies checked\n",
		       lt.first_race, lt.first_race_replies);

	if (lt.expect_race) {
		pass = lt.races > 0;
		if (pass)
			printf("PASS: the race was caught\n");
		else
			printf("FAIL: timed out after %.1f s: no race caught although one was "
			       "expected\n",
			       secs);
	} else {
		pass = total == 0 && lt.replies >= lt.min_replies;
		printf("%s: %s\n", pass ? "PASS" : "FAIL",
		       total			     ? "violations found"
		       : lt.replies < lt.min_replies ? "too few replies checked"
						     : "every reply was a consistent snapshot");
	}
	for (i = 0; i < lt.nreaders; i++) {
		free(rds[i].res);
		free(rds[i].obs);
	}
	free(rds);
	lacuna_client_close(lt.client);
	close(lt.rfd);
	close(lt.wfd);
	return pass ? 0 : 1;
}
