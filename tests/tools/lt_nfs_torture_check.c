// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_nfs_torture's checks: the pattern a write leaves, the pieces the
 * kernel cuts a write through the mount into, and the judgement of each
 * READ_PLUS reply against the history the writers log
 * (lt_nfs_torture_write.c).
 *
 * Operation
 * ---------
 * What is atomic. A READ_PLUS is one sparse read under lacunafs's range
 * lock (gateway/nfs4/ops/nfs4_op_sparse.c). Every FUSE write, fallocate and
 * truncate is applied under that lock too, so each is seen whole or not
 * at all. A write(2) through the mount (direct_io) reaches lacunafs as
 * one FUSE write only up to the mount's write unit (LACUNA_IOC_INFO:
 * write_unit from a buffer at any address, write_unit_aligned from a
 * page-aligned one); the kernel cuts a larger one into pieces of at most
 * write_unit_aligned bytes, each pinning at most write_unit + 4095 bytes
 * of pages: from a buffer at byte o of its page the first piece is
 * min(write_unit_aligned, write_unit + 4095 - o) bytes, the next starts
 * where it ended, and so on. So a write of at most write_unit bytes must
 * be seen whole or not at all, and a larger one may be seen in part only
 * at those piece boundaries, each piece old or new. An NFS WRITE (up to
 * maxwrite) and a DEALLOCATE must be seen whole or not at all whatever
 * their size: lacunad applies each under one hold of the range lock.
 *
 * Pattern. Byte x of the file written by write number g is 0x80 | 7 bits
 * of a hash of (g, x / 8) (7 bits of it per byte of that 8-byte word):
 * never zero, and (but for a chance of 2^-7 per byte) unlike any other
 * write's.
 *
 * Checks. A reply must be well formed (RFC 7862 15.10): segments
 * contiguous and of known kinds, the first holding the offset (a data
 * segment starting there), none empty, data inside [offset, offset +
 * count), no more data than count; with eof the segments end at the file
 * size, which is then known; without, the size is at least their end;
 * a reply at or past EOF has eof and no segment. Then, holes read as
 * zeros, what the reply shows of each region must be a state that region
 * had, or, during a write in pieces, each piece in its state before or
 * after that write ("torn" if neither), and the reply must be a snapshot:
 * one moment T, after the calls completed before the request was sent and
 * before the calls begun after the reply arrived, at which every region
 * it shows and the size were what it says. Time is counted in half
 * steps: T = 2 * seq is "during call seq" (old or new state, or a mix of
 * pieces), T = 2 * seq + 1 "between call seq and the next". A state
 * logged at s and replaced at s' is visible for T in [2s, 2s']; the reply
 * narrows T to [2 * done_before + 1, 2 * started_after + 1]; intersecting
 * over the regions and the size must leave some T ("snapshot" violation
 * if not, "stale" if one region alone fits no T of the reply's window).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lt_nfs_torture.h"

#define LT_REPORT_MAX 8 /* violations told in full */

const char *const lt_viol_names[LT_V_NR] = {
	[LT_V_STRUCT] = "malformed", [LT_V_ERROR] = "error",	   [LT_V_TORN] = "torn",
	[LT_V_STALE] = "stale",	     [LT_V_SNAPSHOT] = "snapshot", [LT_V_SIZE] = "size",
};

/* ---------------------------------------------------------------- pattern */

/* the 8 pattern bytes of word w (bytes 8w .. 8w + 7), byte i in bits 8i .. 8i + 7 */
static inline uint64_t pat_word(uint32_t gen, uint64_t w)
{
	uint64_t h = (uint64_t)gen * 0x9E3779B97F4A7C15ULL ^ (w + 1) * 0xC2B2AE3D27D4EB4FULL;

	h ^= h >> 30;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBULL;
	h ^= h >> 31;
	return (h & 0x7f7f7f7f7f7f7f7fULL) | 0x8080808080808080ULL;
}

void lt_pat_fill(uint32_t gen, uint64_t x, uint8_t *p, uint64_t n)
{
	uint64_t end = x + n, v = 0;

	for (; x < end; x++, p++) {
		if (x == end - n || !(x & 7))
			v = pat_word(gen, x >> 3);
		*p = (uint8_t)(v >> (8 * (x & 7)));
	}
}

/* Where the bytes p of [a, b) of region r stop showing history entry h (b: they show it) */
static uint64_t match_end(const struct lt_region *r, const struct lt_hent *h, uint64_t a,
			  uint64_t b, const uint8_t *p)
{
	uint64_t pend = r->start + (h->gen ? h->keep : 0), x = a, v = 0;

	for (; x < b && x < pend; x++) {
		if (x == a || !(x & 7))
			v = pat_word(h->gen, x >> 3);
		if (p[x - a] != (uint8_t)(v >> (8 * (x & 7))))
			return x;
	}
	for (; x < b; x++)
		if (p[x - a])
			return x;
	return b;
}

/* Do the bytes p of [a, b) of region r show history entry h? */
static bool shows(const struct lt_region *r, const struct lt_hent *h, uint64_t a, uint64_t b,
		  const uint8_t *p)
{
	return match_end(r, h, a, b, p) == b;
}

/*
 * The first FUSE write the kernel makes of a direct-io write(2) of @left
 * bytes from a buffer at byte @o of its page: at most write_unit_aligned
 * bytes, and no more pages than write_unit + 4095 bytes span.
 */
uint64_t lt_piece_len(uint64_t left, uint64_t o)
{
	uint64_t n = lt.unit + (LT_PAGE - 1) - o;

	if (n > lt.unit_al)
		n = lt.unit_al;
	return n < left ? n : left;
}

/* Does a write through the mount of @len bytes from page offset @o arrive in pieces? */
bool lt_in_pieces(uint64_t len, uint32_t o)
{
	return o != LT_WHOLE && lt_piece_len(len, o) < len;
}

/*
 * Do the bytes p of [a, b) of region r show entry i's write under way,
 * each of its pieces either as before it (entry i - 1) or as after it?
 */
static bool shows_pieces(const struct lt_region *r, size_t i, uint64_t a, uint64_t b,
			 const uint8_t *p)
{
	const struct lt_hent *h = &r->h[i];
	uint64_t pos, o = h->bufoff, n;

	if (!i || !lt_in_pieces(r->len, h->bufoff))
		return false;
	for (pos = 0; pos < r->len; pos += n, o = (o + n) % LT_PAGE) {
		uint64_t x, y;

		n = lt_piece_len(r->len - pos, o);
		x = r->start + pos > a ? r->start + pos : a;
		y = r->start + pos + n < b ? r->start + pos + n : b;
		if (x >= y)
			continue;
		if (!shows(r, h, x, y, p + (x - a)) && !shows(r, h - 1, x, y, p + (x - a)))
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------- checking */

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
	printf("# VIOLATION (%s), reader %u: ", lt_viol_names[v], rd->c.id);
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
		if (g->off > lt.fsize || g->len > lt.fsize - g->off)
			return violation(rd, LT_V_STRUCT, "segment %u past the largest size", i);
		if (i == 0 && (g->off > rd->off || g->off + g->len <= rd->off ||
			       (g->kind == CONTENT_DATA && g->off != rd->off)))
			return violation(rd, LT_V_STRUCT,
					 "the first segment does not hold the offset");
		if (i && g->off != pos)
			return violation(rd, LT_V_STRUCT, "segment %u not contiguous", i);
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

/*
 * u = the times in [lo, hi] at which region r showed bytes p of [a, b):
 * a state it had, or during a write in pieces (T = 2 * its seq alone)
 * each piece before or after it.
 */
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

		if (!shows(r, &r->h[i], a, b, p)) {
			if (l < lo || !shows_pieces(r, i, a, b, p))
				continue;
			h = l;
			LT_ADD(lt.split_views, 1);
		}
		lt_tset_add(rd->u, &rd->nu, l, h, lo, hi);
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
		lt_tset_add(rd->u, &rd->nu, l, h, lo, hi);
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
		printf("#     region history: call %u -> %s%u keep %" PRIu64, h->seq,
		       h->gen ? "write " : "zeros ", h->gen, h->keep);
		if (h->gen && h->bufoff != LT_WHOLE)
			printf(" (through the mount from page offset %u%s)", h->bufoff,
			       lt_in_pieces(r->len, h->bufoff) ? ", in pieces" : "");
		printf("\n");
	}
	pthread_mutex_unlock(&lt.out_lock);
}

/*
 * A torn view of region r, told as the longest run from its start that
 * one state of the window shows, and the state that shows the rest.
 */
static void print_tear(const struct lt_region *r, uint64_t a, uint64_t b, const uint8_t *p,
		       uint32_t s0, uint32_t s1)
{
	size_t i, k1 = SIZE_MAX, k2 = SIZE_MAX;
	uint64_t m = a, e;

	if (LT_LOAD(lt.reported) > LT_REPORT_MAX)
		return;
	for (i = 0; i < r->n && r->h[i].seq <= s1; i++) {
		if (i + 3 < r->n && r->h[i + 3].seq <= s0)
			continue;
		e = match_end(r, &r->h[i], a, b, p);
		if (e > m) {
			m = e;
			k1 = i;
		}
	}
	for (i = 0; k1 != SIZE_MAX && i < r->n && r->h[i].seq <= s1; i++) {
		if (i + 3 < r->n && r->h[i + 3].seq <= s0)
			continue;
		if (shows(r, &r->h[i], m, b, p + (m - a))) {
			k2 = i;
			break;
		}
	}
	pthread_mutex_lock(&lt.out_lock);
	if (k1 == SIZE_MAX)
		printf("#     its first byte is in no state of the window\n");
	else
		printf("#     [%" PRIu64 ", %" PRIu64 ") as after call %u, then (%" PRIu64
		       " bytes into the region) [%" PRIu64 ", %" PRIu64 ") %s%u\n",
		       a, m, r->h[k1].seq, m - r->start, m, b,
		       k2 == SIZE_MAX ? "in no state of the window, from call " : "as after call ",
		       k2 == SIZE_MAX ? r->h[k1].seq : r->h[k2].seq);
	pthread_mutex_unlock(&lt.out_lock);
}

void lt_check_reply(struct lt_reader *rd)
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

	pthread_rwlock_rdlock(&lt.hist_lock);
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

		ri = lt_region_at(x);
		r = &lt.rg[ri];
		a = x;
		b = r->start + r->len < end ? r->start + r->len : end;
		region_times(rd, r, a, b, rd->view + (a - v0), lo, hi);
		if (!rd->nu) {
			bool ever = false;
			size_t k;

			for (k = 0; k < r->n && r->h[k].seq <= rd->s1 && !ever; k++)
				ever = shows(r, &r->h[k], a, b, rd->view + (a - v0)) ||
				       shows_pieces(r, k, a, b, rd->view + (a - v0));
			violation(rd, ever ? LT_V_STALE : LT_V_TORN,
				  "region %u [%" PRIu64 ", +%" PRIu64 ")%s shows [%" PRIu64
				  ", %" PRIu64 ") in %s",
				  ri, r->start, r->len, r->gap ? " (gap)" : "", a, b,
				  ever ? "a state not current while the request ran"
				       : "a state it never had");
			if (!ever)
				print_tear(r, a, b, rd->view + (a - v0), rd->s0, rd->s1);
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
	pthread_rwlock_unlock(&lt.hist_lock);
}
