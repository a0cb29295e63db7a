// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_sparsecheck: correctness and bad-input checks of the lacunafs
 * sparse-read ioctl (include/lacuna/ioctl.h) and of liblacuna.
 *
 *   verify FILE BACKING [options]
 *       Walk FILE (on lacunafs) with lacuna_sparse_read and check every
 *       reply against BACKING, the same file seen directly on the backing
 *       filesystem: the segments are contiguous and start at the request,
 *       data is clipped to the request and to the buffer and lies in it
 *       back to back, data bytes equal pread(BACKING), holes read as zeros
 *       in BACKING, the flags (EOF, SHORT, DENSE) and next_offset agree
 *       with the table, the totals with the segments, nothing was written
 *       past the data in the buffer, and the table equals BACKING's own
 *       SEEK_DATA/SEEK_HOLE map of [request, next_offset) taken right
 *       after it (see "Maps" below). At the end the replies must cover the
 *       range exactly once.
 *         --mode arena|staged|inline|map
 *                      arena: data into a registered arena (default);
 *                      staged: arena registered, data into other memory;
 *                      inline: no arena, the inline ioctl; map: no data
 *         --arena N    arena size (default 1M)
 *         --arena-off N  the data buffer starts N bytes into the arena
 *         --buf N      buffer size for staged/inline (default 1M / 14k)
 *         --chunk N    bytes asked per call, 0 = up to the end (default 0)
 *         --offset N, --length N   the range walked (default: all)
 *         --expect-short           fail unless some reply was SHORT
 *
 *   mapdiff FILE BACKING
 *       Compare the whole map through the mount (lacuna_sparse_read, MAP)
 *       with BACKING's SEEK_DATA/SEEK_HOLE map; print each difference and
 *       whether it is allowed (see "Maps").
 *
 *   bad FILE DIR [--plain PATH]
 *       The bad-input battery: ioctls made directly with the structs of
 *       include/lacuna/ioctl.h, the control-socket protocol spoken by hand,
 *       and liblacuna's entry points, each with the exact errno expected,
 *       and after every bad call a good call that must still work. FILE
 *       is a regular file on the mount with at least one hole followed by
 *       data; DIR a directory on the mount where scratch files (".sc-*")
 *       are made and removed. PATH is a regular file on another
 *       filesystem (default /proc/self/exe) for the ENOTTY checks.
 *
 * Maps: the daemon and BACKING's lseek look at the same inode, so the two
 * maps agree, with one allowed exception: a reply flagged DENSE skips the
 * hole search, so it may call data a range that BACKING reports as a hole
 * only when that range is allocated but unwritten, or delayed-allocated
 * (FIEMAP says so; reading it gives zeros, and ext4/XFS themselves report
 * it as data once its pages are cached).
 * A hole with no extent reported as data, or data reported as a hole, is
 * a failure.
 *
 * Numbers take k/M/G/T suffixes. Exit: 0 all checks passed, 1 a check
 * failed, 2 usage or setup error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

#define SC_IO_CHUNK (1u << 20)
#define SC_ZERO_FULL (16ull << 20)	/* holes longer than this are sampled */
#define SC_FAIL_MAX 40			/* stop a walk after this many failures */
#define SC_POISON 0xA5
/* the limit of fusefs/lfs_ctl.h that INFO does not report in time to size an array */
#define SC_CTL_CONNS_MAX 64

static unsigned int nchecks, nfails;

static void vreport(bool good, const char *fmt, va_list ap)
{
	nchecks++;
	if (!good)
		nfails++;
	printf("#   %s ", good ? "ok  " : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

/* Record a check; print it (always for the battery, failures only for walks). */
static bool quiet_ok;

static bool check(bool good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool check(bool good, const char *fmt, ...)
{
	va_list ap;

	if (good && quiet_ok) {
		nchecks++;
		return true;
	}
	va_start(ap, fmt);
	vreport(good, fmt, ap);
	va_end(ap);
	return good;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	printf("#   note ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "E?";
}

/* got: 0 or a positive errno */
static bool check_errno(int got, int want, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool check_errno(int got, int want, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (got == want)
		return check(true, "%s: %s", what, ename(got));
	return check(false, "%s: got %s, want %s", what, ename(got), ename(want));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lt_sparsecheck verify FILE BACKING [--mode arena|staged|inline|map]\n"
		"           [--arena N] [--arena-off N] [--buf N] [--chunk N]\n"
		"           [--offset N] [--length N] [--expect-short]\n"
		"       lt_sparsecheck mapdiff FILE BACKING\n"
		"       lt_sparsecheck bad FILE DIR [--plain PATH]\n");
}

static bool parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------- reference file */

static uint8_t *scratch;	/* SC_IO_CHUNK bytes */

static int pread_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Do [off, off+len) of ref hold exactly data? Returns 0, or -1 after reporting. */
static int ref_equal(const char *what, int ref, uint64_t off, uint64_t len, const uint8_t *data)
{
	uint64_t done = 0;

	while (done < len) {
		size_t n = (size_t)min_u64(len - done, SC_IO_CHUNK), i;
		int rc = pread_full(ref, scratch, n, off + done);

		if (rc) {
			check(false, "%s: pread of the reference at %" PRIu64 ": %s", what,
			      off + done, strerror(-rc));
			return -1;
		}
		if (memcmp(scratch, data + done, n)) {
			for (i = 0; scratch[i] == data[done + i]; i++)
				;
			check(false, "%s: data at %" PRIu64 " is 0x%02x, the file has 0x%02x", what,
			      off + done + i, data[done + i], scratch[i]);
			return -1;
		}
		done += n;
	}
	return 0;
}

static int ref_zero_window(const char *what, int ref, uint64_t off, uint64_t len)
{
	while (len) {
		size_t n = (size_t)min_u64(len, SC_IO_CHUNK), i;
		int rc = pread_full(ref, scratch, n, off);

		if (rc) {
			check(false, "%s: pread of the reference at %" PRIu64 ": %s", what, off,
			      strerror(-rc));
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (scratch[i]) {
				check(false, "%s: byte %" PRIu64 " inside a reported hole is 0x%02x",
				      what, off + i, scratch[i]);
				return -1;
			}
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* Does [off, off+len) of ref (clipped to size) read as zeros? Long holes are sampled. */
static int ref_zero(const char *what, int ref, uint64_t off, uint64_t len, uint64_t size)
{
	uint64_t end = min_u64(off + len, size), w = SC_IO_CHUNK / 16;
	int i;

	if (off >= end)
		return 0;
	len = end - off;
	if (len <= SC_ZERO_FULL)
		return ref_zero_window(what, ref, off, len);
	if (ref_zero_window(what, ref, off, SC_IO_CHUNK) ||
	    ref_zero_window(what, ref, end - SC_IO_CHUNK, SC_IO_CHUNK))
		return -1;
	for (i = 1; i < 8; i++)
		if (ref_zero_window(what, ref, (off + len / 8 * (uint64_t)i) & ~(w - 1), w))
			return -1;
	return 0;
}

/*
 * Is [off, off+len) of fd wholly covered by extents that hold no written
 * data: unwritten (allocated, never written) or delayed-allocation ones
 * with no dirty page there (XFS keeps speculative preallocation inside
 * EOF that way)? FIEMAP, without a sync: it only reads the extent tree.
 */
static bool unwritten_covers(int fd, uint64_t off, uint64_t len)
{
	enum { N = 64 };
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[N];
	} q;
	uint64_t cur = off, end = off + len;

	while (cur < end) {
		unsigned int i;

		memset(&q, 0, sizeof(q));
		q.fm.fm_start = cur;
		q.fm.fm_length = end - cur;
		q.fm.fm_extent_count = N;
		if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) < 0 || q.fm.fm_mapped_extents == 0)
			return false;
		for (i = 0; i < q.fm.fm_mapped_extents && cur < end; i++) {
			const struct fiemap_extent *e = &q.ext[i];

			if (e->fe_logical + e->fe_length <= cur)
				continue;
			if (e->fe_logical > cur ||
			    !(e->fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC)))
				return false;
			cur = e->fe_logical + e->fe_length;
		}
		if (cur < end && (q.ext[q.fm.fm_mapped_extents - 1].fe_flags & FIEMAP_EXTENT_LAST))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------- maps */

struct seg {
	uint64_t off, len;
	uint32_t kind;
};

struct segv {
	struct seg *v;
	size_t n, cap;
};

static void segv_add(struct segv *s, uint32_t kind, uint64_t off, uint64_t len)
{
	struct seg *last = s->n ? &s->v[s->n - 1] : NULL;

	if (!len)
		return;
	if (last && last->kind == kind && last->off + last->len == off) {
		last->len += len;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			fprintf(stderr, "lt_sparsecheck: realloc: out of memory\n");
			exit(2);
		}
	}
	s->v[s->n++] = (struct seg){ off, len, kind };
}

static const char *kname(uint32_t kind)
{
	return kind == LACUNA_SEG_DATA ? "data" : kind == LACUNA_SEG_HOLE ? "hole" : "bad-kind";
}

/*
 * Compare map a (through the mount) with map b (the backing file) over
 * the range both cover. A stretch that a calls data and b a hole is
 * allowed when allow_unwritten and ref's extents there are unwritten.
 * Returns the number of disallowed differences (each reported).
 */
static unsigned int diff_maps(const char *what, const struct segv *a, const struct segv *b,
			      int ref, bool allow_unwritten, bool verbose)
{
	size_t i = 0, j = 0;
	unsigned int bad = 0;
	uint64_t pos;

	if (!a->n || !b->n)
		return a->n != b->n ? (check(false, "%s: one map is empty", what), 1u) : 0u;
	pos = a->v[0].off > b->v[0].off ? a->v[0].off : b->v[0].off;
	while (i < a->n && j < b->n) {
		uint64_t aend = a->v[i].off + a->v[i].len, bend = b->v[j].off + b->v[j].len;
		uint64_t end = min_u64(aend, bend);

		if (pos < end && a->v[i].kind != b->v[j].kind) {
			bool allowed = allow_unwritten && a->v[i].kind == LACUNA_SEG_DATA &&
				       unwritten_covers(ref, pos, end - pos);

			if (allowed) {
				if (verbose)
					note("%s: [%" PRIu64 ", %" PRIu64 ") is data through the "
					     "mount (DENSE reply) and a hole in the backing file: "
					     "unwritten or delalloc extents, allowed", what, pos, end);
			} else {
				bad++;
				check(false, "%s: [%" PRIu64 ", %" PRIu64 ") is %s through the mount "
				      "but %s in the backing file%s", what, pos, end,
				      kname(a->v[i].kind), kname(b->v[j].kind),
				      a->v[i].kind == LACUNA_SEG_DATA
					      ? " (no unwritten extent there: a real hole reported as data)"
					      : " (data reported as a hole)");
			}
		}
		pos = end;
		if (aend == end)
			i++;
		if (bend == end)
			j++;
	}
	return bad;
}

/* ----------------------------------------------------- reply checking */

struct want {
	const char *what;
	uint64_t off, len;	/* the request */
	const uint8_t *buf;	/* where the data must be, NULL for a map */
	size_t buflen;
	int ref;		/* fd with the expected bytes and map */
	uint64_t size;		/* expected file size */
	bool cmp_map;		/* compare with ref's own map */
};

/* Compare the table of r with ref's lseek map of [w->off, r->next_offset). */
static unsigned int check_against_ref_map(const struct want *w, const struct lacuna_result *r,
					  struct lacuna_result *tmp)
{
	struct segv a = { 0 }, b = { 0 };
	uint64_t pos = w->off, end = r->next_offset;
	unsigned int bad = 0, i;
	bool dense = r->flags & LACUNA_SR_DENSE;

	for (i = 0; i < r->nsegs; i++)
		segv_add(&a, r->segs[i].kind, r->segs[i].offset, r->segs[i].length);
	while (pos < end) {
		int rc = lacuna_sparse_read(NULL, w->ref, pos, end - pos, LACUNA_READ_MAP, NULL, 0,
					    tmp);

		if (rc) {
			check(false, "%s: map of the reference: %s", w->what, strerror(-rc));
			bad++;
			goto out;
		}
		for (i = 0; i < tmp->nsegs; i++)
			segv_add(&b, tmp->segs[i].kind, tmp->segs[i].offset, tmp->segs[i].length);
		if (tmp->next_offset <= pos || (tmp->flags & LACUNA_SR_EOF))
			break;
		pos = tmp->next_offset;
	}
	if (!dense) {
		/* exact: same segments */
		bool same = a.n == b.n;

		for (i = 0; same && i < a.n; i++)
			same = a.v[i].off == b.v[i].off && a.v[i].len == b.v[i].len &&
			       a.v[i].kind == b.v[i].kind;
		if (!same) {
			bad += diff_maps(w->what, &a, &b, w->ref, false, true);
			if (!bad) {
				bad++;
				check(false, "%s: the table (%zu segments) splits differently from "
				      "the backing map (%zu)", w->what, a.n, b.n);
			}
		}
	} else {
		bad += diff_maps(w->what, &a, &b, w->ref, true, false);
	}
out:
	free(a.v);
	free(b.v);
	return bad;
}

/*
 * Check one reply r to the request w (see verify in the header).
 * Returns the number of failures, each reported.
 */
static unsigned int check_reply(const struct want *w, const struct lacuna_result *r,
				struct lacuna_result *tmp)
{
	const uint32_t known = LACUNA_SR_EOF | LACUNA_SR_UNSTABLE | LACUNA_SR_SHORT | LACUNA_SR_DENSE;
	uint64_t rend = w->len > UINT64_MAX - w->off ? UINT64_MAX : w->off + w->len;
	uint64_t dsum = 0, hsum = 0, used = 0, pos = w->off, last_end = w->off;
	unsigned int f0 = nfails, i;
	bool eof = r->flags & LACUNA_SR_EOF;

#define BAD(...) check(false, __VA_ARGS__)
	if (r->file_size != w->size)
		BAD("%s: file_size %" PRIu64 ", the file has %" PRIu64, w->what, r->file_size,
		    w->size);
	if (!r->atomic)
		BAD("%s: reply not atomic (not taken through lacunafs)", w->what);
	if (r->flags & ~known)
		BAD("%s: unknown flags 0x%x", w->what, r->flags & ~known);
	if (r->flags & LACUNA_SR_UNSTABLE)
		BAD("%s: UNSTABLE though nobody changed the file", w->what);
	if (w->off >= w->size || w->len == 0) {
		if (r->nsegs || r->data_bytes || r->hole_bytes)
			BAD("%s: %u segments, %" PRIu64 "+%" PRIu64 " bytes for an empty range",
			    w->what, r->nsegs, r->data_bytes, r->hole_bytes);
		if (r->next_offset != w->off)
			BAD("%s: next_offset %" PRIu64 " for an empty range at %" PRIu64, w->what,
			    r->next_offset, w->off);
		if (eof != (w->off >= w->size))
			BAD("%s: EOF %s at %" PRIu64 " of %" PRIu64, w->what,
			    eof ? "set" : "clear", w->off, w->size);
		if (r->flags & LACUNA_SR_SHORT)
			BAD("%s: SHORT for an empty range", w->what);
		return nfails - f0;
	}
	if (r->nsegs == 0 || r->nsegs > LACUNA_SR_MAX_SEGS) {
		BAD("%s: %u segments for [%" PRIu64 ", +%" PRIu64 ")", w->what, r->nsegs, w->off,
		    w->len);
		return nfails - f0;
	}
	if (w->cmp_map && check_against_ref_map(w, r, tmp))
		return nfails - f0;	/* the byte checks would only repeat it */
	for (i = 0; i < r->nsegs && nfails - f0 < SC_FAIL_MAX; i++) {
		const struct lacuna_extent *e = &r->segs[i];
		uint64_t end = e->offset + e->length;

		if (e->kind != LACUNA_SEG_DATA && e->kind != LACUNA_SEG_HOLE) {
			BAD("%s: segment %u has kind %u", w->what, i, e->kind);
			continue;
		}
		if (e->length == 0 || end < e->offset)
			BAD("%s: segment %u [%" PRIu64 ", +%" PRIu64 ") is empty or wraps", w->what,
			    i, e->offset, e->length);
		if (i == 0 ? (e->offset > w->off || (e->kind == LACUNA_SEG_DATA && e->offset != w->off))
			   : e->offset != pos)
			BAD("%s: segment %u (%s) starts at %" PRIu64 ", expected %" PRIu64, w->what,
			    i, kname(e->kind), e->offset, pos);
		if (i && e->kind == r->segs[i - 1].kind)
			BAD("%s: segments %u and %u are both %s", w->what, i - 1, i,
			    kname(e->kind));
		if (end > w->size)
			BAD("%s: segment %u ends at %" PRIu64 ", past EOF %" PRIu64, w->what, i, end,
			    w->size);
		if (e->kind == LACUNA_SEG_DATA) {
			dsum += e->length;
			if (end > rend)
				BAD("%s: data segment %u ends at %" PRIu64 ", past the request end "
				    "%" PRIu64, w->what, i, end, rend);
			if (!w->buf) {
				if (e->data)
					BAD("%s: map reply with a data pointer", w->what);
			} else if (e->data != w->buf + used) {
				BAD("%s: data segment %u at buffer offset %td, expected %" PRIu64,
				    w->what, i, e->data ? e->data - w->buf : -1, used);
			} else if (used + e->length > w->buflen) {
				BAD("%s: data overflows the %zu-byte buffer", w->what, w->buflen);
			} else if (end <= w->size) {
				ref_equal(w->what, w->ref, e->offset, e->length, e->data);
			}
			used += e->length;
		} else {
			hsum += e->length;
			if (end <= w->size && e->length)
				ref_zero(w->what, w->ref, e->offset, e->length, w->size);
		}
		pos = end;
		last_end = end;
	}
	if (dsum != r->data_bytes || hsum != r->hole_bytes)
		BAD("%s: totals data %" PRIu64 " hole %" PRIu64 ", the segments add up to %" PRIu64
		    " and %" PRIu64, w->what, r->data_bytes, r->hole_bytes, dsum, hsum);
	if (r->segs[r->nsegs - 1].kind == LACUNA_SEG_DATA ? r->next_offset != last_end
							 : r->next_offset > last_end)
		BAD("%s: next_offset %" PRIu64 " but the table ends at %" PRIu64, w->what,
		    r->next_offset, last_end);
	if (r->next_offset <= w->off)
		BAD("%s: next_offset %" PRIu64 " makes no progress from %" PRIu64, w->what,
		    r->next_offset, w->off);
	if (eof != (r->next_offset >= w->size))
		BAD("%s: EOF %s with next_offset %" PRIu64 " and size %" PRIu64, w->what,
		    eof ? "set" : "clear", r->next_offset, w->size);
	if (!!(r->flags & LACUNA_SR_SHORT) != (!eof && r->next_offset < rend))
		BAD("%s: SHORT %s with next_offset %" PRIu64 ", request end %" PRIu64 ", size %"
		    PRIu64, w->what, r->flags & LACUNA_SR_SHORT ? "set" : "clear", r->next_offset,
		    rend, w->size);
	if ((r->flags & LACUNA_SR_DENSE) && hsum)
		BAD("%s: DENSE reply with %" PRIu64 " bytes of holes", w->what, hsum);
	/* nothing written past the data (the buffer was poisoned) */
	if (w->buf && used < w->buflen) {
		size_t k, n = (size_t)min_u64(w->buflen - used, 4096);

		for (k = 0; k < n && w->buf[used + k] == SC_POISON; k++)
			;
		if (k < n)
			BAD("%s: buffer byte %" PRIu64 " (past the %" PRIu64 " data bytes) was "
			    "written", w->what, used + k, used);
	}
#undef BAD
	return nfails - f0;
}

/* ------------------------------------------------------------- verify */

enum vmode { VM_ARENA, VM_STAGED, VM_INLINE, VM_MAP };

static int cmd_verify(int argc, char **argv)
{
	static const char *const modes[] = { "arena", "staged", "inline", "map" };
	uint64_t arena = 1 << 20, arena_off = 0, bufsz = 0, chunk = 0, off = 0, len = UINT64_MAX;
	uint64_t pos, end, dtot = 0, htot = 0, calls = 0, shorts = 0, dense = 0;
	enum vmode mode = VM_ARENA;
	bool expect_short = false;
	struct lacuna_client *c = NULL;
	struct lacuna_result *res, *tmp;
	struct stat st, bst;
	uint8_t *buf = NULL, *own = NULL;
	size_t buflen = 0;
	const char *file, *backing;
	int fd, ref, i, rc;
	char what[512];

	if (argc < 3) {
		usage();
		return 2;
	}
	file = argv[1];
	backing = argv[2];
	for (i = 3; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t *dst = NULL;
		unsigned int m;

		if (!strcmp(o, "--expect-short")) {
			expect_short = true;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(o, "--mode")) {
			for (m = 0; m < 4 && strcmp(v, modes[m]); m++)
				;
			if (m == 4) {
				usage();
				return 2;
			}
			mode = (enum vmode)m;
			continue;
		}
		dst = !strcmp(o, "--arena")	? &arena
		      : !strcmp(o, "--arena-off") ? &arena_off
		      : !strcmp(o, "--buf")	? &bufsz
		      : !strcmp(o, "--chunk")	? &chunk
		      : !strcmp(o, "--offset")	? &off
		      : !strcmp(o, "--length")	? &len
						: NULL;
		if (!dst || !parse_u64(v, dst)) {
			fprintf(stderr, "lt_sparsecheck: bad option %s %s\n", o, v);
			usage();
			return 2;
		}
	}
	if ((mode == VM_ARENA || mode == VM_STAGED) && (!arena || arena_off >= arena)) {
		fprintf(stderr, "lt_sparsecheck: --arena-off must be inside a non-empty arena\n");
		return 2;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	ref = open(backing, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ref < 0 || fstat(fd, &st) < 0 || fstat(ref, &bst) < 0) {
		fprintf(stderr, "lt_sparsecheck: open/fstat %s, %s: %s\n", file, backing,
			strerror(errno));
		return 2;
	}
	res = malloc(sizeof(*res));
	tmp = malloc(sizeof(*tmp));
	scratch = malloc(SC_IO_CHUNK);
	if (!res || !tmp || !scratch)
		return 2;
	quiet_ok = true;
	check(st.st_size == bst.st_size, "%s: size %jd through the mount, %jd in the backing file",
	      file, (intmax_t)st.st_size, (intmax_t)bst.st_size);
	rc = lacuna_client_open(fd, mode == VM_ARENA || mode == VM_STAGED ? arena : 0, &c);
	if (rc) {
		check(false, "%s: lacuna_client_open (arena %" PRIu64 "): %s", file,
		      mode == VM_ARENA || mode == VM_STAGED ? arena : 0, strerror(-rc));
		return 1;
	}
	switch (mode) {
	case VM_ARENA:
		buf = (uint8_t *)lacuna_client_arena(c, NULL) + arena_off;
		buflen = arena - arena_off;
		break;
	case VM_STAGED:
	case VM_INLINE:
		buflen = bufsz ? bufsz : mode == VM_STAGED ? 1 << 20 : LACUNA_INLINE_MAX;
		buf = own = malloc(buflen);
		if (!buf)
			return 2;
		break;
	case VM_MAP:
		break;
	}
	end = (uint64_t)bst.st_size;
	if (len < end - min_u64(off, end))
		end = off + len;
	pos = off;
	do {
		uint64_t req = off >= end ? (len == UINT64_MAX ? 4096 : len)
			       : chunk ? min_u64(chunk, end - pos) : end - pos;
		struct want w = { what, pos, req, buf, buflen, ref, (uint64_t)bst.st_size, true };
		unsigned int j;

		snprintf(what, sizeof(what), "%s %s [%" PRIu64 ", +%" PRIu64 ")", file, modes[mode],
			 pos, req);
		if (buf)
			memset(buf, SC_POISON, buflen);
		rc = lacuna_sparse_read(c, fd, pos, req, mode == VM_MAP ? LACUNA_READ_MAP
									: LACUNA_READ_DATA,
					buf, buflen, res);
		calls++;
		if (rc) {
			check(false, "%s: lacuna_sparse_read: %s", what, strerror(-rc));
			break;
		}
		shorts += !!(res->flags & LACUNA_SR_SHORT);
		dense += !!(res->flags & LACUNA_SR_DENSE);
		if (check_reply(&w, res, tmp) || nfails >= SC_FAIL_MAX)
			break;
		dtot += res->data_bytes;
		for (j = 0; j < res->nsegs; j++) {
			const struct lacuna_extent *e = &res->segs[j];
			uint64_t a = e->offset > pos ? e->offset : pos;
			uint64_t b = min_u64(e->offset + e->length, end);

			if (e->kind == LACUNA_SEG_HOLE && b > a)
				htot += b - a;
		}
		if (off >= end || (res->flags & LACUNA_SR_EOF) || res->next_offset >= end)
			break;
		pos = res->next_offset;
	} while (1);
	if (!nfails && off < end) {
		check(dtot + htot == end - off,
		      "%s %s: replies cover %" PRIu64 " data + %" PRIu64 " hole bytes of the %" PRIu64
		      " in [%" PRIu64 ", %" PRIu64 ")", file, modes[mode], dtot, htot, end - off,
		      off, end);
		if (expect_short)
			check(shorts > 0, "%s %s: some reply was SHORT", file, modes[mode]);
	}
	printf("# verify %s %s: %" PRIu64 " calls (%" PRIu64 " short, %" PRIu64 " dense), %" PRIu64
	       " data + %" PRIu64 " hole bytes; %u checks, %u failed\n",
	       file, modes[mode], calls, shorts, dense, dtot, htot, nchecks, nfails);
	lacuna_client_close(c);
	free(own);
	free(res);
	free(tmp);
	free(scratch);
	close(fd);
	close(ref);
	return nfails ? 1 : 0;
}

/* ------------------------------------------------------------ mapdiff */

/* The whole map of fd: through lacunafs with c, by lseek without. */
static int whole_map(struct lacuna_client *c, int fd, struct segv *m, uint32_t *flags_or)
{
	struct lacuna_result *r = malloc(sizeof(*r));
	uint64_t pos = 0;
	unsigned int i;
	int rc = 0;

	if (!r)
		return -ENOMEM;
	for (;;) {
		rc = lacuna_sparse_read(c, fd, pos, UINT64_MAX - pos, LACUNA_READ_MAP, NULL, 0, r);
		if (rc)
			break;
		*flags_or |= r->flags;
		for (i = 0; i < r->nsegs; i++)
			segv_add(m, r->segs[i].kind, r->segs[i].offset, r->segs[i].length);
		if ((r->flags & LACUNA_SR_EOF) || r->next_offset <= pos)
			break;
		pos = r->next_offset;
	}
	free(r);
	return rc;
}

static int cmd_mapdiff(int argc, char **argv)
{
	struct segv a = { 0 }, b = { 0 };
	struct lacuna_client *c = NULL;
	uint32_t fa = 0, fb = 0;
	int fd, ref, rc;
	unsigned int bad;

	if (argc != 3) {
		usage();
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	ref = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ref < 0) {
		fprintf(stderr, "lt_sparsecheck: open %s, %s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 2;
	}
	rc = lacuna_client_open(fd, 0, &c);
	if (!rc)
		rc = whole_map(c, fd, &a, &fa);
	if (!rc)
		rc = whole_map(NULL, ref, &b, &fb);
	if (rc) {
		fprintf(stderr, "lt_sparsecheck: map of %s / %s: %s\n", argv[1], argv[2],
			strerror(-rc));
		return 2;
	}
	bad = diff_maps(argv[1], &a, &b, ref, fa & LACUNA_SR_DENSE, true);
	printf("# mapdiff %s: %zu segments through the mount%s, %zu in the backing file, %u "
	       "disallowed differences\n",
	       argv[1], a.n, fa & LACUNA_SR_DENSE ? " (DENSE)" : "", b.n, bad);
	lacuna_client_close(c);
	free(a.v);
	free(b.v);
	return bad ? 1 : 0;
}

/* ---------------------------------------------- raw ioctls and the socket */

static struct lacuna_sparse_read *sr;		/* MAP/ARENA requests */
static struct lacuna_sparse_read_inline *sri;	/* INLINE requests */

static void hdr_init(struct lacuna_sr_hdr *h, uint32_t size, uint32_t mode, uint64_t off,
		     uint64_t len)
{
	memset(h, 0, sizeof(*h));
	h->size = size;
	h->version = LACUNA_ABI_VERSION;
	h->mode = mode;
	h->offset = off;
	h->length = len;
}

static void sr_init(uint32_t mode, uint64_t off, uint64_t len)
{
	memset(sr, 0, sizeof(*sr));
	hdr_init(&sr->h, sizeof(*sr), mode, off, len);
}

static void sri_init(uint32_t mode, uint64_t off, uint64_t len)
{
	memset(sri, 0, sizeof(*sri));
	hdr_init(&sri->h, sizeof(*sri), mode, off, len);
}

/* ioctl returning 0 or the errno */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* A lacuna_result from a raw reply (data at data + seg.data_off). */
static void to_result(struct lacuna_result *r, const struct lacuna_sr_hdr *h,
		      const struct lacuna_seg *segs, unsigned int maxsegs, const uint8_t *data)
{
	unsigned int i;

	memset(r, 0, offsetof(struct lacuna_result, segs));
	r->file_size = h->file_size;
	r->next_offset = h->next_offset;
	r->data_bytes = h->data_bytes;
	r->hole_bytes = h->hole_bytes;
	r->flags = h->flags;
	r->atomic = true;
	r->nsegs = h->nsegs;
	for (i = 0; i < h->nsegs && i < maxsegs; i++) {
		r->segs[i].offset = segs[i].offset;
		r->segs[i].length = segs[i].length;
		r->segs[i].kind = segs[i].kind;
		r->segs[i].data = data && segs[i].kind == LACUNA_SEG_DATA ? data + segs[i].data_off
									 : NULL;
	}
	if (h->nsegs > maxsegs)
		r->nsegs = LACUNA_SR_MAX_SEGS + 1;	/* check_reply reports it */
}

static int ctl_connect(const char *path, int timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	size_t n = strlen(path);
	socklen_t len;
	int fd;

	if (n == 0 || n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, len) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/*
 * Send len bytes of msg with nfds descriptors attached and receive the
 * answer. Returns 0 (answer in *ans), -ECONNRESET when the daemon closed
 * the connection, -EAGAIN on a timeout, another -errno otherwise.
 */
static int ctl_xfer(int sock, const void *msg, size_t len, const int *fds, unsigned int nfds,
		    struct lacuna_ctl_msg *ans)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cbuf;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	memset(&cbuf, 0, sizeof(cbuf));
	if (nfds) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	if ((size_t)n != len)
		return -EIO;
	memset(ans, 0, sizeof(*ans));
	n = recv(sock, ans, sizeof(*ans), 0);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	return n == sizeof(*ans) ? 0 : -EPROTO;
}

static struct lacuna_ctl_msg ctl_msg(uint32_t op, uint64_t arena_len, const uint64_t *tok)
{
	struct lacuna_ctl_msg m = { .size = sizeof(m), .version = LACUNA_ABI_VERSION, .op = op,
				    .arena_len = arena_len };

	if (tok) {
		m.token[0] = tok[0];
		m.token[1] = tok[1];
	}
	return m;
}

/*
 * One request; returns the daemon's status as a positive errno (0 = OK),
 * or -errno when no answer came. The token answered is put in tok_out.
 */
static int ctl_req(int sock, uint32_t op, uint64_t arena_len, const uint64_t *tok, int memfd,
		   uint64_t *tok_out)
{
	struct lacuna_ctl_msg m = ctl_msg(op, arena_len, tok), ans;
	int rc = ctl_xfer(sock, &m, sizeof(m), &memfd, memfd >= 0 ? 1 : 0, &ans);

	if (rc)
		return rc;
	if (tok_out) {
		tok_out[0] = ans.token[0];
		tok_out[1] = ans.token[1];
	}
	return -ans.status;
}

/* Check a control answer: transport must work, status must be want. */
static bool check_ctl(int got, int want, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool check_ctl(int got, int want, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (got < 0)
		return check(false, "%s: no answer from the control socket (%s)", what,
			     strerror(-got));
	return check_errno(got, want, "%s", what);
}

static int make_memfd(uint64_t size, bool sealing, unsigned int seals)
{
	int fd = memfd_create("lt-arena", MFD_CLOEXEC | (sealing ? MFD_ALLOW_SEALING : 0));

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 || (seals && fcntl(fd, F_ADD_SEALS, seals) < 0)) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/* A registration made by hand: its connection, arena and token. */
struct reg {
	int sock;
	uint8_t *base;
	uint64_t len;
	uint64_t tok[2];
};

static int reg_open(const char *ctl, uint64_t len, struct reg *r)
{
	int memfd, rc;

	memset(r, 0, sizeof(*r));
	r->sock = ctl_connect(ctl, 5);
	if (r->sock < 0)
		return r->sock;
	memfd = make_memfd(len, true, F_SEAL_SHRINK | F_SEAL_SEAL);
	if (memfd < 0) {
		close(r->sock);
		return memfd;
	}
	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (r->base == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	r->len = len;
	rc = ctl_req(r->sock, LACUNA_CTL_REGISTER, len, NULL, memfd, r->tok);
	if (rc > 0)
		rc = -rc;
out:
	close(memfd);
	if (rc) {
		if (r->base && r->base != MAP_FAILED)
			munmap(r->base, len);
		close(r->sock);
		r->sock = -1;
	}
	return rc;
}

static void reg_close(struct reg *r)
{
	if (r->sock >= 0)
		close(r->sock);
	if (r->base)
		munmap(r->base, r->len);
	r->sock = -1;
	r->base = NULL;
}

/* An ARENA request into r's arena. */
static int arena_read(int fd, const uint64_t *tok, uint64_t aoff, uint64_t alen, uint64_t off,
		      uint64_t len)
{
	sr_init(LACUNA_SR_ARENA, off, len);
	sr->h.token[0] = tok[0];
	sr->h.token[1] = tok[1];
	sr->h.arena_off = aoff;
	sr->h.arena_len = alen;
	return xioctl(fd, LACUNA_IOC_SPARSE_READ, sr);
}

/* ------------------------------------------------------------ battery */

struct bat {
	const char *file, *dir, *plain;
	int fd;			/* FILE, read-only */
	int ref;		/* FILE again, for expected bytes and maps */
	uint64_t size;
	uint64_t hole_off;	/* a hole followed by data */
	uint64_t data_off, data_len;	/* the first data segment */
	struct lacuna_info info;
	struct lacuna_result *res, *tmp;
	char path[4096];
};

/* The daemon still answers a good request: a whole-file MAP read. */
static void still_good(struct bat *b, const char *after)
{
	struct want w = { "good call", 0, UINT64_MAX, NULL, 0, b->ref, b->size, true };
	bool q = quiet_ok;
	int rc;

	sr_init(LACUNA_SR_MAP, 0, UINT64_MAX);
	rc = xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr);
	if (rc) {
		check(false, "a good MAP call after %s: %s", after, ename(rc));
		return;
	}
	to_result(b->res, &sr->h, sr->segs, LACUNA_SR_MAX_SEGS, NULL);
	quiet_ok = true;
	if (check_reply(&w, b->res, b->tmp))
		check(false, "the good MAP call after %s is wrong", after);
	quiet_ok = q;
}

#define BAD_CALL(b, got, want, ...)                          \
	do {                                                 \
		check_errno((got), (want), __VA_ARGS__);     \
		still_good((b), "that");                     \
	} while (0)

static const char *scpath(struct bat *b, const char *name)
{
	snprintf(b->path, sizeof(b->path), "%s/.sc-%s", b->dir, name);
	return b->path;
}

static void bat_info(struct bat *b)
{
	struct lacuna_info i = { .size = sizeof(i) };
	struct lacuna_client *c = NULL;
	int fd, rc;

	printf("# INFO\n");
	rc = xioctl(b->fd, LACUNA_IOC_INFO, &i);
	check_errno(rc, 0, "INFO on a file");
	check(i.version == LACUNA_ABI_VERSION && i.size == sizeof(i),
	      "INFO on a file: version %u (want %d), size %u", i.version, LACUNA_ABI_VERSION,
	      i.size);
	check(i.ctl_path[0] == '@' && strnlen(i.ctl_path, sizeof(i.ctl_path)) > 1 &&
		      strnlen(i.ctl_path, sizeof(i.ctl_path)) < sizeof(i.ctl_path),
	      "INFO: ctl_path '%.*s'", (int)sizeof(i.ctl_path), i.ctl_path);
	check(i.max_segs == LACUNA_SR_MAX_SEGS && i.inline_max == LACUNA_INLINE_MAX,
	      "INFO: max_segs %" PRIu64 ", inline_max %" PRIu64, i.max_segs, i.inline_max);
	check(i.regs_max > 0 && i.regs_max < 4096 && i.arena_max >= 4096,
	      "INFO: regs_max %" PRIu64 ", arena_max %" PRIu64, i.regs_max, i.arena_max);
	check(i.daemon_pid > 1 && kill((pid_t)i.daemon_pid, 0) == 0,
	      "INFO: daemon_pid %" PRIu64 " is alive", i.daemon_pid);
	b->info = i;

	fd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memset(&i, 0, sizeof(i));
	i.size = sizeof(i);
	rc = fd < 0 ? errno : xioctl(fd, LACUNA_IOC_INFO, &i);
	check_errno(rc, 0, "INFO on a directory");
	check(i.version == LACUNA_ABI_VERSION && !strcmp(i.ctl_path, b->info.ctl_path),
	      "INFO on a directory: version %u, same ctl_path", i.version);
	if (fd >= 0)
		close(fd);

	memset(&i, 0, sizeof(i));
	i.size = sizeof(i) - 8;
	BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_INFO, &i), EINVAL, "INFO with size field %u",
		 i.size);
	BAD_CALL(b, xioctl(b->fd, _IOWR(LACUNA_IOC_MAGIC, 9, struct lacuna_info), &i), ENOTTY,
		 "unknown command number 9");
	BAD_CALL(b, xioctl(b->fd, _IO(LACUNA_IOC_MAGIC, 2), NULL), ENOTTY,
		 "command 2 without its struct (_IO)");
	BAD_CALL(b, xioctl(b->fd, _IOWR(LACUNA_IOC_MAGIC, 2, struct lacuna_sr_hdr), sr), ENOTTY,
		 "command 2 with a header-sized struct");

	fd = open(b->plain, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		check(false, "open %s: %s", b->plain, strerror(errno));
		return;
	}
	memset(&i, 0, sizeof(i));
	i.size = sizeof(i);
	check_errno(xioctl(fd, LACUNA_IOC_INFO, &i), ENOTTY, "INFO on %s (not lacunafs)",
		    b->plain);
	sr_init(LACUNA_SR_MAP, 0, 4096);
	check_errno(xioctl(fd, LACUNA_IOC_SPARSE_READ, sr), ENOTTY,
		    "SPARSE_READ on %s (not lacunafs)", b->plain);
	check(!lacuna_is_lacunafs(fd, NULL), "lacuna_is_lacunafs(%s) is false", b->plain);
	rc = lacuna_client_open(fd, 4096, &c);
	check_errno(-rc, ENOTTY, "lacuna_client_open on %s", b->plain);
	rc = lacuna_sparse_read(NULL, fd, 0, 4096, LACUNA_READ_MAP, NULL, 0, b->res);
	check(rc == 0 && !b->res->atomic, "lacuna_sparse_read fallback on %s: %s, not atomic",
	      b->plain, strerror(-rc));
	close(fd);
}

/* A raw request whose reply must pass check_reply (ref: the file itself). */
static void good_raw(struct bat *b, unsigned long cmd, uint32_t mode, uint64_t off,
		     uint64_t len, const char *what)
{
	struct want w = { what, off, len, NULL, 0, b->ref, b->size, true };
	int rc;

	if (cmd == LACUNA_IOC_SPARSE_READ) {
		sr_init(mode, off, len);
		rc = xioctl(b->fd, cmd, sr);
		if (!rc)
			to_result(b->res, &sr->h, sr->segs, LACUNA_SR_MAX_SEGS, NULL);
	} else {
		sri_init(mode, off, len);
		memset(sri->data, SC_POISON, sizeof(sri->data));
		rc = xioctl(b->fd, cmd, sri);
		if (!rc)
			to_result(b->res, &sri->h, sri->segs, LACUNA_INLINE_SEGS,
				  mode == LACUNA_SR_INLINE ? sri->data : NULL);
		if (mode == LACUNA_SR_INLINE) {
			w.buf = sri->data;
			w.buflen = sizeof(sri->data);
		}
	}
	if (!check_errno(rc, 0, "%s", what))
		return;
	/* the inline reply's data tail is daemon memory: checked separately */
	if (w.buf)
		w.buflen = b->res->data_bytes;
	if (!check_reply(&w, b->res, b->tmp))
		check(true, "%s: reply checked (%u segs, flags 0x%x, next %" PRIu64 ")", what,
		      b->res->nsegs, b->res->flags, b->res->next_offset);
}

static void bat_ranges(struct bat *b)
{
	static const uint64_t odd_off[] = { 1, 4095, 4097, 65535 };
	static const uint64_t odd_len[] = { 1, 7, 4097, 100000 };
	const unsigned long cmds[] = { LACUNA_IOC_SPARSE_READ, LACUNA_IOC_SPARSE_READ_INLINE };
	const uint32_t modes[] = { LACUNA_SR_MAP, LACUNA_SR_INLINE };
	uint64_t offs[8];
	char what[256];
	unsigned int k, i, j;

	printf("# ranges\n");
	for (k = 0; k < 2; k++) {
		const char *cn = k ? "INLINE" : "SPARSE_READ";

		snprintf(what, sizeof(what), "%s past EOF (size+100)", cn);
		good_raw(b, cmds[k], modes[k], b->size + 100, 4096, what);
		snprintf(what, sizeof(what), "%s at EOF", cn);
		good_raw(b, cmds[k], modes[k], b->size, 4096, what);
		snprintf(what, sizeof(what), "%s at INT64_MAX, length 1", cn);
		good_raw(b, cmds[k], modes[k], INT64_MAX, 1, what);
		snprintf(what, sizeof(what), "%s at INT64_MAX, length UINT64_MAX", cn);
		good_raw(b, cmds[k], modes[k], INT64_MAX, UINT64_MAX, what);
		snprintf(what, sizeof(what), "%s zero length at 0", cn);
		good_raw(b, cmds[k], modes[k], 0, 0, what);
		snprintf(what, sizeof(what), "%s zero length in data", cn);
		good_raw(b, cmds[k], modes[k], b->data_off, 0, what);
		snprintf(what, sizeof(what), "%s length UINT64_MAX at 0", cn);
		good_raw(b, cmds[k], modes[k], 0, UINT64_MAX, what);
		snprintf(what, sizeof(what), "%s length UINT64_MAX at 1", cn);
		good_raw(b, cmds[k], modes[k], 1, UINT64_MAX, what);
		snprintf(what, sizeof(what), "%s length UINT64_MAX in data", cn);
		good_raw(b, cmds[k], modes[k], b->data_off + 1, UINT64_MAX, what);
		if (k == 0)
			sr_init(LACUNA_SR_MAP, 1ull << 63, 1);
		else
			sri_init(LACUNA_SR_INLINE, 1ull << 63, 1);
		BAD_CALL(b, xioctl(b->fd, cmds[k], k ? (void *)sri : (void *)sr), EINVAL,
			 "%s at offset 2^63", cn);
		if (k == 0)
			sr_init(LACUNA_SR_MAP, UINT64_MAX, UINT64_MAX);
		else
			sri_init(LACUNA_SR_INLINE, UINT64_MAX, UINT64_MAX);
		BAD_CALL(b, xioctl(b->fd, cmds[k], k ? (void *)sri : (void *)sr), EINVAL,
			 "%s at offset UINT64_MAX", cn);
	}
	/* unaligned offsets and lengths, exact bytes (inline) */
	for (i = 0; i < 4; i++)
		offs[i] = odd_off[i];
	offs[4] = b->data_off + 1;
	offs[5] = b->data_off + b->data_len - 1;
	offs[6] = b->data_off ? b->data_off - 1 : b->hole_off + 2;
	offs[7] = b->size - 1;
	for (i = 0; i < 8; i++) {
		for (j = 0; j < 4; j++) {
			snprintf(what, sizeof(what), "INLINE unaligned [%" PRIu64 ", +%" PRIu64 ")",
				 offs[i], odd_len[j]);
			good_raw(b, LACUNA_IOC_SPARSE_READ_INLINE, LACUNA_SR_INLINE, offs[i],
				 odd_len[j], what);
		}
	}
}

/* Header fields the daemon must refuse. */
static void bat_header(struct bat *b)
{
	static const uint32_t bad_versions[] = { 0, 2, 0xffffffffu };
	static const uint32_t bad_flags[] = { 1, 0x80000000u };
	static const uint32_t bad_modes[] = { 3, 0xffffffffu };
	const uint32_t sizes[] = { 0, sizeof(*sr) - 1, sizeof(*sr) + 1, sizeof(*sri),
				   sizeof(struct lacuna_sr_hdr) };
	const uint32_t isizes[] = { 0, sizeof(*sri) - 1, sizeof(*sr) };
	unsigned int i;

	printf("# header fields\n");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		sr_init(LACUNA_SR_MAP, 0, 4096);
		sr->h.size = sizes[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), EINVAL,
			 "SPARSE_READ with h.size %u", sizes[i]);
	}
	for (i = 0; i < sizeof(isizes) / sizeof(isizes[0]); i++) {
		sri_init(LACUNA_SR_INLINE, 0, 4096);
		sri->h.size = isizes[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EINVAL,
			 "INLINE with h.size %u", isizes[i]);
	}
	for (i = 0; i < 3; i++) {
		sr_init(LACUNA_SR_MAP, 0, 4096);
		sr->h.version = bad_versions[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), EPROTO,
			 "SPARSE_READ with version %u", bad_versions[i]);
		sri_init(LACUNA_SR_INLINE, 0, 4096);
		sri->h.version = bad_versions[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EPROTO,
			 "INLINE with version %u", bad_versions[i]);
	}
	for (i = 0; i < 2; i++) {
		sr_init(LACUNA_SR_MAP, 0, 4096);
		sr->h.in_flags = bad_flags[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), EINVAL,
			 "SPARSE_READ with in_flags 0x%x", bad_flags[i]);
		sri_init(LACUNA_SR_INLINE, 0, 4096);
		sri->h.in_flags = bad_flags[i];
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EINVAL,
			 "INLINE with in_flags 0x%x", bad_flags[i]);
		sr_init(bad_modes[i], 0, 4096);
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), EINVAL,
			 "SPARSE_READ with mode %u", bad_modes[i]);
		sri_init(bad_modes[i], 0, 4096);
		BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EINVAL,
			 "INLINE with mode %u", bad_modes[i]);
	}
	sr_init(LACUNA_SR_INLINE, 0, 4096);
	BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), EINVAL,
		 "SPARSE_READ with mode INLINE");
	sri_init(LACUNA_SR_ARENA, 0, 4096);
	BAD_CALL(b, xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EINVAL,
		 "INLINE command with mode ARENA");
	good_raw(b, LACUNA_IOC_SPARSE_READ_INLINE, LACUNA_SR_MAP, 0, UINT64_MAX,
		 "INLINE command with mode MAP");
	/* the token is not looked at without an arena */
	sr_init(LACUNA_SR_MAP, 0, 4096);
	sr->h.token[0] = 0x1234;
	check_errno(xioctl(b->fd, LACUNA_IOC_SPARSE_READ, sr), 0, "MAP with a bogus token");
}

/* ioctl on what is not a regular lacunafs file: clean errors, no hang. */
static void bat_special(struct bat *b)
{
	struct lacuna_client *c = NULL;
	struct lacuna_info i;
	int fd, rc;

	printf("# directories and special files\n");
	fd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		check(false, "open %s: %s", b->dir, strerror(errno));
		return;
	}
	sr_init(LACUNA_SR_MAP, 0, 4096);
	BAD_CALL(b, xioctl(fd, LACUNA_IOC_SPARSE_READ, sr), EISDIR, "SPARSE_READ on a directory");
	sri_init(LACUNA_SR_INLINE, 0, 4096);
	BAD_CALL(b, xioctl(fd, LACUNA_IOC_SPARSE_READ_INLINE, sri), EISDIR,
		 "INLINE on a directory");
	rc = lacuna_sparse_read(NULL, fd, 0, 4096, LACUNA_READ_MAP, NULL, 0, b->res);
	check_errno(-rc, EISDIR, "lacuna_sparse_read fallback on a directory");
	rc = lacuna_client_open(fd, 0, &c);
	check_errno(-rc, 0, "lacuna_client_open on a directory");
	if (!rc) {
		rc = lacuna_sparse_read(c, fd, 0, 4096, LACUNA_READ_MAP, NULL, 0, b->res);
		check_errno(-rc, EISDIR, "lacuna_sparse_read on a directory");
		lacuna_client_close(c);
	}
	close(fd);

	/* a FIFO made through the mount: the pipe code answers, not FUSE */
	unlink(scpath(b, "fifo"));
	if (mkfifo(scpath(b, "fifo"), 0600) < 0) {
		check(false, "mkfifo %s: %s", b->path, strerror(errno));
	} else {
		fd = open(b->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			check(false, "open FIFO %s: %s", b->path, strerror(errno));
		} else {
			sr_init(LACUNA_SR_MAP, 0, 4096);
			rc = xioctl(fd, LACUNA_IOC_SPARSE_READ, sr);
			check(rc == ENOTTY || rc == EINVAL, "SPARSE_READ on a FIFO: %s", ename(rc));
			memset(&i, 0, sizeof(i));
			i.size = sizeof(i);
			rc = xioctl(fd, LACUNA_IOC_INFO, &i);
			check(rc == ENOTTY || rc == EINVAL, "INFO on a FIFO: %s", ename(rc));
			close(fd);
		}
		unlink(b->path);
		still_good(b, "the FIFO");
	}

	/* a character device (like /dev/null) made through the mount */
	unlink(scpath(b, "null"));
	if (mknod(scpath(b, "null"), S_IFCHR | 0600, makedev(1, 3)) < 0) {
		note("mknod %s: %s: character device not checked", b->path, strerror(errno));
	} else {
		fd = open(b->path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			/* a FUSE mount is nodev unless told otherwise */
			check(errno == EACCES || errno == EPERM || errno == ENXIO,
			      "open of a device node through the mount: %s", ename(errno));
		} else {
			sr_init(LACUNA_SR_MAP, 0, 4096);
			rc = xioctl(fd, LACUNA_IOC_SPARSE_READ, sr);
			check(rc == ENOTTY || rc == EINVAL, "SPARSE_READ on a device node: %s",
			      ename(rc));
			close(fd);
		}
		unlink(b->path);
		still_good(b, "the device node");
	}

	fd = open(b->file, O_PATH | O_CLOEXEC);
	sr_init(LACUNA_SR_MAP, 0, 4096);
	check_errno(fd < 0 ? errno : xioctl(fd, LACUNA_IOC_SPARSE_READ, sr), EBADF,
		    "SPARSE_READ on an O_PATH descriptor");
	if (fd >= 0)
		close(fd);
}

/* Try an INLINE read of path opened with flags; return the errno, 0 if data came back. */
static int wronly_read(const char *path, int flags, const char *secret, bool *leaked)
{
	int fd = open(path, flags | O_CLOEXEC), rc;

	*leaked = false;
	if (fd < 0)
		return -errno;
	sri_init(LACUNA_SR_INLINE, 0, 4096);
	rc = xioctl(fd, LACUNA_IOC_SPARSE_READ_INLINE, sri);
	if (!rc && sri->h.data_bytes >= strlen(secret))
		*leaked = memmem(sri->data, sri->h.data_bytes, secret, strlen(secret)) != NULL;
	close(fd);
	return rc;
}

/*
 * A descriptor open for writing only must not read data: read(2) on it
 * is EBADF, and so must the sparse read be. Checked as root, and as an
 * unprivileged user on a file that user may write but not read.
 */
static void bat_wronly(struct bat *b)
{
	static const char secret[] = "lt_sparsecheck-secret-4f1d";
	static const int flags[] = { O_WRONLY, O_WRONLY | O_DIRECT };
	static const char *const names[] = { "O_WRONLY", "O_WRONLY|O_DIRECT" };
	char buf[4096];
	bool leaked;
	unsigned int k;
	int fd, rc, st;
	pid_t pid;

	printf("# write-only descriptors\n");
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, secret, sizeof(secret) - 1);
	unlink(scpath(b, "secret"));
	fd = open(b->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fchmod(fd, 0622) < 0) {
		check(false, "make %s: %s", b->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	for (k = 0; k < 2; k++) {
		rc = wronly_read(b->path, flags[k], secret, &leaked);
		if (rc < 0) {
			check(false, "open %s %s: %s", b->path, names[k], strerror(-rc));
			continue;
		}
		check(rc == EBADF && !leaked, "INLINE read on an %s descriptor: %s%s (want EBADF)",
		      names[k], ename(rc), leaked ? ", and the data came back" : "");
		still_good(b, "that");
	}
	if (geteuid() != 0) {
		note("not root: the unprivileged write-only check is skipped");
		goto out;
	}
	/* as nobody, on a file mode 0622 owned by root */
	for (k = 0; k < 2; k++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
				_exit(201);
			rc = wronly_read(b->path, flags[k], secret, &leaked);
			if (rc < 0)
				_exit(rc == -EACCES ? 202 : 203);
			_exit(leaked ? 200 : rc);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
			check(false, "fork/wait for the unprivileged %s check", names[k]);
			continue;
		}
		rc = WEXITSTATUS(st);
		if (rc >= 201) {
			note("unprivileged %s check not run (%s)", names[k],
			     rc == 202 ? "open refused: path not accessible to nobody"
				       : "setuid/open failed");
			continue;
		}
		check(rc == EBADF, "uid 65534, file mode 0622 (write, no read): INLINE read on an %s "
		      "descriptor: %s (want EBADF)", names[k],
		      rc == 200 ? "the file's data came back" : ename(rc));
	}
out:
	unlink(scpath(b, "secret"));
}

/*
 * The INLINE reply has room for LACUNA_INLINE_MAX bytes; what follows
 * data_bytes must not be daemon memory (e.g. an earlier reply's data).
 */
static void bat_inline_tail(struct bat *b)
{
	uint8_t *full = malloc(LACUNA_INLINE_MAX);
	unsigned int round, leaks = 0;
	size_t k, first = 0, same = 0, tail = 0;

	printf("# inline reply tail\n");
	if (!full)
		return;
	for (round = 0; round < 20; round++) {
		/* a reply full of the file's data, then a reply with one byte */
		sri_init(LACUNA_SR_INLINE, b->data_off, b->data_len);
		if (xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri))
			break;
		memcpy(full, sri->data, LACUNA_INLINE_MAX);
		sri_init(LACUNA_SR_INLINE, b->data_off, 1);
		memset(sri->data, 0, sizeof(sri->data));
		if (xioctl(b->fd, LACUNA_IOC_SPARSE_READ_INLINE, sri))
			break;
		for (k = sri->h.data_bytes; k < sizeof(sri->data) && !sri->data[k]; k++)
			;
		if (k == sizeof(sri->data))
			continue;
		if (!leaks) {
			first = k;
			for (k = sri->h.data_bytes; k < b->data_len; k++) {
				tail++;
				same += sri->data[k] == full[k];
			}
		}
		leaks++;
	}
	check(round == 20, "inline tail rounds: %u of 20 calls worked", round);
	check(!leaks, "INLINE reply bytes past data_bytes are zero (%u of %u replies carried "
	      "other bytes, first at data[%zu]; in the first, %zu of the %zu bytes up to the "
	      "file data's length equal the previous reply's file data)",
	      leaks, round, first, same, tail);
	free(full);
}

static int thread_rc;
static struct {
	int fd;
	uint64_t tok[2];
	uint64_t off, len;
} thread_arg;

static void *thread_read(void *unused)
{
	struct lacuna_sparse_read *s = malloc(sizeof(*s));

	(void)unused;
	if (!s) {
		thread_rc = ENOMEM;
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	hdr_init(&s->h, sizeof(*s), LACUNA_SR_ARENA, thread_arg.off, thread_arg.len);
	s->h.token[0] = thread_arg.tok[0];
	s->h.token[1] = thread_arg.tok[1];
	s->h.arena_len = thread_arg.len;
	thread_rc = xioctl(thread_arg.fd, LACUNA_IOC_SPARSE_READ, s);
	if (!thread_rc)	/* twice: the second use goes by the remembered thread */
		thread_rc = xioctl(thread_arg.fd, LACUNA_IOC_SPARSE_READ, s);
	free(s);
	return NULL;
}

/* Run fn in a child process; its exit code is an errno (0 = OK). */
static int in_child(struct bat *b, const struct reg *r, bool own_reg)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct reg mine;
		const uint64_t *tok = r->tok;

		if (own_reg) {
			if (reg_open(b->info.ctl_path, 1 << 16, &mine))
				_exit(250);
			tok = mine.tok;
		}
		_exit(arena_read(b->fd, tok, 0, 1 << 16, b->data_off, b->data_len));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 255;
	return WEXITSTATUS(st);
}

static void bat_arena(struct bat *b)
{
	struct want w = { "ARENA read", 0, 0, NULL, 0, b->ref, b->size, true };
	struct reg r, r2;
	uint64_t tok[2], n;
	pthread_t t;
	int rc;

	printf("# arena and tokens\n");
	rc = reg_open(b->info.ctl_path, 1 << 20, &r);
	if (!check_errno(-rc, 0, "register a 1 MiB arena by hand"))
		return;
	memset(r.base, SC_POISON, r.len);
	rc = arena_read(b->fd, r.tok, 3, r.len - 3, 0, UINT64_MAX);
	if (check_errno(rc, 0, "ARENA read of the whole file at arena offset 3")) {
		to_result(b->res, &sr->h, sr->segs, LACUNA_SR_MAX_SEGS, r.base + 3);
		w.len = UINT64_MAX;
		w.buf = r.base + 3;
		w.buflen = r.len - 3;
		check(!check_reply(&w, b->res, b->tmp), "ARENA reply checked (%" PRIu64 " data bytes)",
		      b->res->data_bytes);
		check(r.base[0] == SC_POISON && r.base[1] == SC_POISON && r.base[2] == SC_POISON,
		      "ARENA: nothing written before arena_off");
	}
	tok[0] = r.tok[0] ^ 1;
	tok[1] = r.tok[1];
	BAD_CALL(b, arena_read(b->fd, tok, 0, 4096, b->data_off, 4096), EACCES,
		 "ARENA with an unknown token");
	tok[0] = tok[1] = 0;
	BAD_CALL(b, arena_read(b->fd, tok, 0, 4096, b->data_off, 4096), EACCES,
		 "ARENA with a zero token");

	n = r.len;
	BAD_CALL(b, arena_read(b->fd, r.tok, n + 1, 1, b->data_off, 4096), ERANGE,
		 "ARENA window starting past the arena");
	BAD_CALL(b, arena_read(b->fd, r.tok, n, 1, b->data_off, 4096), ERANGE,
		 "ARENA window [len, +1)");
	BAD_CALL(b, arena_read(b->fd, r.tok, 0, n + 1, b->data_off, 4096), ERANGE,
		 "ARENA window one byte longer than the arena");
	BAD_CALL(b, arena_read(b->fd, r.tok, 1, UINT64_MAX, b->data_off, 4096), ERANGE,
		 "ARENA window [1, +UINT64_MAX)");
	BAD_CALL(b, arena_read(b->fd, r.tok, UINT64_MAX, 2, b->data_off, 4096), ERANGE,
		 "ARENA window at UINT64_MAX (wraps)");
	BAD_CALL(b, arena_read(b->fd, r.tok, 0, 0, b->data_off, 4096), ENOBUFS,
		 "ARENA arena_len 0 with data to read");
	BAD_CALL(b, arena_read(b->fd, r.tok, n, 0, b->data_off, 4096), ENOBUFS,
		 "ARENA empty window at the arena's end with data to read");
	rc = arena_read(b->fd, r.tok, 0, 0, b->size + 10, 4096);
	check(rc == 0 && sr->h.nsegs == 0 && (sr->h.flags & LACUNA_SR_EOF),
	      "ARENA arena_len 0 past EOF: %s, %u segs, flags 0x%x", ename(rc), sr->h.nsegs,
	      sr->h.flags);
	rc = arena_read(b->fd, r.tok, 0, 0, b->hole_off, UINT64_MAX);
	check(rc == 0 && sr->h.nsegs == 1 && sr->segs[0].kind == LACUNA_SEG_HOLE &&
		      (sr->h.flags & LACUNA_SR_SHORT) && sr->h.data_bytes == 0,
	      "ARENA arena_len 0 at a hole before data: %s, %u segs (want 1 hole), flags 0x%x "
	      "(want SHORT)", ename(rc), sr->h.nsegs, sr->h.flags);
	rc = arena_read(b->fd, r.tok, 0, 1, b->data_off, UINT64_MAX);
	check(rc == 0 && sr->h.nsegs == 1 && sr->h.data_bytes == 1 &&
		      (sr->h.flags & LACUNA_SR_SHORT) && sr->h.next_offset == b->data_off + 1,
	      "ARENA arena_len 1 in data: %s, %" PRIu64 " data bytes, flags 0x%x, next %" PRIu64,
	      ename(rc), sr->h.data_bytes, sr->h.flags, sr->h.next_offset);

	/* the token belongs to this process */
	rc = in_child(b, &r, false);
	check_errno(rc, EPERM, "ARENA with the parent's token from a forked child");
	still_good(b, "the stolen token");
	rc = in_child(b, &r, true);
	check_errno(rc, 0, "ARENA with its own token from a forked child");
	thread_arg.fd = b->fd;
	thread_arg.tok[0] = r.tok[0];
	thread_arg.tok[1] = r.tok[1];
	thread_arg.off = b->data_off;
	thread_arg.len = b->data_len;
	if (pthread_create(&t, NULL, thread_read, NULL) == 0) {
		pthread_join(t, NULL);
		check_errno(thread_rc, 0, "ARENA with the token from another thread (twice)");
	}
	rc = arena_read(b->fd, r.tok, 0, 4096, b->data_off, 4096);
	check_errno(rc, 0, "ARENA with the token after the fork and the thread");

	/* tokens of two connections of one process; unregistering; closing */
	rc = reg_open(b->info.ctl_path, 1 << 16, &r2);
	if (check_errno(-rc, 0, "a second connection and arena")) {
		check_errno(arena_read(b->fd, r2.tok, 0, 4096, b->data_off, 4096), 0,
			    "ARENA with the second connection's token");
		check_ctl(ctl_req(r.sock, LACUNA_CTL_UNREGISTER, 0, r2.tok, -1, NULL), ENOENT,
			  "UNREGISTER of another connection's token");
		check_errno(arena_read(b->fd, r2.tok, 0, 4096, b->data_off, 4096), 0,
			    "that token still works");
		tok[0] = r2.tok[0];
		tok[1] = r2.tok[1];
		close(r2.sock);
		r2.sock = -1;
		/* a round trip on another connection: the daemon has seen the close */
		check_ctl(ctl_req(r.sock, LACUNA_CTL_UNREGISTER, 0, tok, -1, NULL), ENOENT,
			  "round trip after closing the second connection");
		BAD_CALL(b, arena_read(b->fd, tok, 0, 4096, b->data_off, 4096), EACCES,
			 "ARENA with the token of a closed connection");
		reg_close(&r2);
	}
	check_ctl(ctl_req(r.sock, LACUNA_CTL_UNREGISTER, 0, r.tok, -1, NULL), 0,
		  "UNREGISTER of this connection's token");
	BAD_CALL(b, arena_read(b->fd, r.tok, 0, 4096, b->data_off, 4096), EACCES,
		 "ARENA with an unregistered token");
	check_ctl(ctl_req(r.sock, LACUNA_CTL_UNREGISTER, 0, r.tok, -1, NULL), ENOENT,
		  "UNREGISTER of it again");
	reg_close(&r);
}

/* Registration requests the daemon must refuse, and its limits. */
static void bat_register(struct bat *b)
{
	struct lacuna_ctl_msg m, ans;
	uint64_t toks[64][2], tok[2];
	unsigned int k, nreg;
	int s, fd, fds[5], rc;
	char big[sizeof(m) + 8];

	printf("# control socket: registrations\n");
	s = ctl_connect(b->info.ctl_path, 5);
	if (!check_errno(s < 0 ? -s : 0, 0, "connect to %s", b->info.ctl_path))
		return;
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, -1, NULL), EBADF,
		  "REGISTER without a descriptor");
	fd = open(b->file, O_RDWR | O_CLOEXEC);
	check_ctl(fd < 0 ? -errno : ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EPERM,
		  "REGISTER with a regular file");
	if (fd >= 0)
		close(fd);
	fd = make_memfd(1 << 16, true, 0);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EPERM,
		  "REGISTER with an unsealed memfd");
	close(fd);
	fd = make_memfd(1 << 16, false, 0);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EPERM,
		  "REGISTER with a memfd that cannot be sealed");
	close(fd);
	fd = make_memfd(1 << 16, true, F_SEAL_GROW);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EPERM,
		  "REGISTER with a memfd sealed against growing only");
	close(fd);
	fd = make_memfd(1 << 16, true, F_SEAL_SHRINK | F_SEAL_WRITE);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EPERM,
		  "REGISTER with a memfd sealed against writing");
	close(fd);
	fd = make_memfd(1 << 16, true, F_SEAL_SHRINK);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, (1 << 16) + 1, NULL, fd, NULL), ERANGE,
		  "REGISTER arena_len one byte bigger than the memfd");
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 0, NULL, fd, NULL), EINVAL,
		  "REGISTER arena_len 0");
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, b->info.arena_max + 1, NULL, fd, NULL), EINVAL,
		  "REGISTER arena_len arena_max+1");
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, UINT64_MAX, NULL, fd, NULL), EINVAL,
		  "REGISTER arena_len UINT64_MAX");
	for (k = 0; k < 5; k++)
		fds[k] = fd;
	m = ctl_msg(LACUNA_CTL_REGISTER, 4096, NULL);
	rc = ctl_xfer(s, &m, sizeof(m), fds, 5, &ans);
	check_ctl(rc ? rc : -ans.status, EINVAL, "REGISTER with 5 descriptors (control truncated)");
	m = ctl_msg(LACUNA_CTL_REGISTER, 4096, NULL);
	rc = ctl_xfer(s, &m, sizeof(m), fds, 2, &ans);
	check_ctl(rc ? rc : -ans.status, 0, "REGISTER with 2 descriptors (the first is used)");

	/* the message itself */
	m = ctl_msg(LACUNA_CTL_UNREGISTER, 0, NULL);
	rc = ctl_xfer(s, &m, 10, NULL, 0, &ans);
	check_ctl(rc ? rc : -ans.status, EINVAL, "a 10-byte message");
	memset(big, 0, sizeof(big));
	memcpy(big, &m, sizeof(m));
	rc = ctl_xfer(s, big, sizeof(big), NULL, 0, &ans);
	check_ctl(rc ? rc : -ans.status, EINVAL, "a message 8 bytes too long (size field right)");
	m.size = sizeof(m) + 8;
	memcpy(big, &m, sizeof(m));
	rc = ctl_xfer(s, big, sizeof(big), NULL, 0, &ans);
	check_ctl(rc ? rc : -ans.status, EINVAL, "a message 8 bytes too long (size field too)");
	m = ctl_msg(LACUNA_CTL_UNREGISTER, 0, NULL);
	m.size = sizeof(m) - 1;
	rc = ctl_xfer(s, &m, sizeof(m), NULL, 0, &ans);
	check_ctl(rc ? rc : -ans.status, EINVAL, "a message with a wrong size field");
	m = ctl_msg(LACUNA_CTL_REGISTER, 4096, NULL);
	m.version = 2;
	rc = ctl_xfer(s, &m, sizeof(m), &fd, 1, &ans);
	check_ctl(rc ? rc : -ans.status, EPROTO, "REGISTER with version 2");
	m = ctl_msg(99, 4096, NULL);
	rc = ctl_xfer(s, &m, sizeof(m), &fd, 1, &ans);
	check_ctl(rc ? rc : -ans.status, EOPNOTSUPP, "op 99");
	m = ctl_msg(0, 4096, NULL);
	rc = ctl_xfer(s, &m, sizeof(m), &fd, 1, &ans);
	check_ctl(rc ? rc : -ans.status, EOPNOTSUPP, "op 0");
	tok[0] = 42;
	tok[1] = 43;
	check_ctl(ctl_req(s, LACUNA_CTL_UNREGISTER, 0, tok, -1, NULL), ENOENT,
		  "UNREGISTER of an unknown token");
	close(fd);
	close(s);
	still_good(b, "the bad messages");

	/* registrations per connection: regs_max, then EMFILE */
	s = ctl_connect(b->info.ctl_path, 5);
	fd = make_memfd(4096, true, F_SEAL_SHRINK);
	nreg = b->info.regs_max < 64 ? (unsigned int)b->info.regs_max : 63;
	for (k = 0; k < nreg; k++) {
		rc = ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, toks[k]);
		if (rc)
			break;
	}
	check(k == nreg, "%u registrations on one connection (regs_max %" PRIu64 "): %u worked",
	      nreg, b->info.regs_max, k);
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EMFILE,
		  "registration #%u on one connection", nreg + 1);
	check_errno(arena_read(b->fd, toks[0], 0, 4096, b->data_off, 4096), 0,
		    "the first of them still works");
	check_ctl(ctl_req(s, LACUNA_CTL_UNREGISTER, 0, toks[0], -1, NULL), 0,
		  "UNREGISTER one of them");
	check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), 0,
		  "then one more registration works");
	close(fd);
	close(s);

	/* bytes per connection */
	s = ctl_connect(b->info.ctl_path, 5);
	fd = make_memfd(b->info.arena_max, true, F_SEAL_SHRINK);
	if (fd < 0) {
		note("memfd of %" PRIu64 " bytes: %s: byte limit not checked", b->info.arena_max,
		     strerror(-fd));
	} else {
		uint64_t used = 0;

		for (k = 0; k < 16 && used + b->info.arena_max <= b->info.conn_bytes_max; k++) {
			rc = ctl_req(s, LACUNA_CTL_REGISTER, b->info.arena_max, NULL, fd, NULL);
			if (!check_ctl(rc, 0, "REGISTER arena_max (%" PRIu64 ") #%u",
				       b->info.arena_max, k + 1))
				break;
			used += b->info.arena_max;
		}
		check_ctl(ctl_req(s, LACUNA_CTL_REGISTER, 4096, NULL, fd, NULL), EDQUOT,
			  "REGISTER past %llu bytes on one connection",
			  (unsigned long long)b->info.conn_bytes_max);
		close(fd);
	}
	close(s);
	still_good(b, "the registration limits");
}

/* The control thread must keep serving others whatever one client does. */
static void bat_ctl_robust(struct bat *b)
{
	struct lacuna_ctl_msg m = ctl_msg(LACUNA_CTL_UNREGISTER, 0, NULL), ans;
	int g, f, h, socks[SC_CTL_CONNS_MAX + 8], rc;
	unsigned int k, sent, served = 0, refused = 0, n = SC_CTL_CONNS_MAX + 8;

	printf("# control socket: misbehaving clients\n");
	/* an empty message is an end of file: that connection only is closed */
	f = ctl_connect(b->info.ctl_path, 5);
	rc = f < 0 ? f : ctl_xfer(f, &m, 0, NULL, 0, &ans);
	check(rc == -ECONNRESET, "an empty message closes that connection: %s",
	      rc ? strerror(-rc) : "answered");
	if (f >= 0)
		close(f);

	/* a client that sends and never reads its answers */
	g = ctl_connect(b->info.ctl_path, 3);
	f = ctl_connect(b->info.ctl_path, 3);
	if (g < 0 || f < 0) {
		check(false, "connect: %s", strerror(-(g < 0 ? g : f)));
		goto conns;
	}
	check_ctl(ctl_req(g, LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL), ENOENT,
		  "round trip on a first connection");
	check_ctl(ctl_req(f, LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL), ENOENT,
		  "round trip on a second connection");
	for (sent = 0; sent < 4000; sent++) {
		struct pollfd p = { .fd = f, .events = POLLOUT };

		if (send(f, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m))
			continue;
		if (errno != EAGAIN || poll(&p, 1, 300) != 1)
			break;	/* the daemon stopped reading (or closed) */
		sent--;
	}
	usleep(100000);
	rc = ctl_req(g, LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL);
	check(rc == ENOENT, "the first connection is served while the second sent %u requests "
	      "without reading the answers: %s", sent,
	      rc == -EAGAIN ? "no answer in 3 s (the control thread is stuck)"
			    : rc < 0 ? strerror(-rc) : ename(rc));
	close(f);
	close(g);
	h = ctl_connect(b->info.ctl_path, 5);
	rc = h < 0 ? h : ctl_req(h, LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL);
	check_ctl(rc, ENOENT, "a new connection is served once that client went away");
	if (h >= 0)
		close(h);

conns:
	/* more connections than the daemon keeps: the extra ones closed, no hang */
	for (k = 0; k < n; k++) {
		socks[k] = ctl_connect(b->info.ctl_path, 3);
		rc = socks[k] < 0 ? socks[k]
				  : ctl_req(socks[k], LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL);
		if (rc == ENOENT)
			served++;
		else if (rc == -ECONNRESET || rc == -ECONNREFUSED || rc == -EAGAIN)
			refused++;
	}
	check(served <= SC_CTL_CONNS_MAX && served >= SC_CTL_CONNS_MAX - 2 && served + refused == n,
	      "%u connections at once: %u served, %u refused (limit %d)", n, served, refused,
	      SC_CTL_CONNS_MAX);
	for (k = 0; k < n; k++)
		if (socks[k] >= 0)
			close(socks[k]);
	h = ctl_connect(b->info.ctl_path, 5);
	rc = h < 0 ? h : ctl_req(h, LACUNA_CTL_UNREGISTER, 0, m.token, -1, NULL);
	check_ctl(rc, ENOENT, "a new connection is served after they closed");
	if (h >= 0)
		close(h);
	still_good(b, "the misbehaving clients");
}

/* liblacuna's own argument checks and its data paths. */
static void bat_lib(struct bat *b)
{
	struct lacuna_client *c = NULL;
	struct want w = { "lib", 0, 0, NULL, 0, b->ref, b->size, true };
	uint8_t small[100], *big, *arena;
	size_t alen;
	int rc;

	printf("# liblacuna\n");
	rc = lacuna_client_open(b->fd, 0, &c);
	if (!check_errno(-rc, 0, "lacuna_client_open without an arena"))
		return;
	check_errno(-lacuna_sparse_read(c, b->fd, 0, 10, 7, small, sizeof(small), b->res), EINVAL,
		    "lacuna_sparse_read how=7");
	check_errno(-lacuna_sparse_read(c, b->fd, 0, 10, LACUNA_READ_DATA, NULL, 10, b->res),
		    ENOBUFS, "lacuna_sparse_read DATA into NULL");
	check_errno(-lacuna_sparse_read(c, b->fd, 0, 10, LACUNA_READ_DATA, small, 0, b->res),
		    ENOBUFS, "lacuna_sparse_read DATA into 0 bytes");
	check_errno(-lacuna_sparse_read(c, b->fd, 1ull << 63, 10, LACUNA_READ_MAP, NULL, 0,
					b->res),
		    EINVAL, "lacuna_sparse_read at 2^63");
	/* data clipped to a small buffer (inline path) */
	memset(small, SC_POISON, sizeof(small));
	rc = lacuna_sparse_read(c, b->fd, b->data_off, b->data_len, LACUNA_READ_DATA, small,
				sizeof(small), b->res);
	w.what = "lacuna_sparse_read, no arena, 100-byte buffer over a longer data segment";
	w.off = b->data_off;
	w.len = b->data_len;
	w.buf = small;
	w.buflen = sizeof(small);
	if (check_errno(-rc, 0, "%s", w.what))
		check(!check_reply(&w, b->res, b->tmp), "%s: reply checked", w.what);
	lacuna_client_close(c);
	lacuna_client_close(NULL);

	rc = lacuna_client_open(b->fd, 1 << 16, &c);
	if (!check_errno(-rc, 0, "lacuna_client_open with a 64 KiB arena"))
		return;
	arena = lacuna_client_arena(c, &alen);
	check(arena && alen == 1 << 16, "lacuna_client_arena: %zu bytes", alen);
	big = malloc(1 << 20);
	if (big) {
		memset(big, SC_POISON, 1 << 20);
		rc = lacuna_sparse_read(c, b->fd, 0, UINT64_MAX, LACUNA_READ_DATA, big, 1 << 20,
					b->res);
		w.what = "staged through a 64 KiB arena into a 1 MiB buffer";
		w.off = 0;
		w.len = UINT64_MAX;
		w.buf = big;
		w.buflen = 1 << 16;	/* the staging room */
		if (check_errno(-rc, 0, "%s", w.what))
			check(!check_reply(&w, b->res, b->tmp), "%s: reply checked", w.what);
		free(big);
	}
	memset(arena, SC_POISON, alen);
	rc = lacuna_sparse_read(c, b->fd, b->data_off + 1, UINT64_MAX, LACUNA_READ_DATA,
				arena + 5, 1000, b->res);
	w.what = "into the arena at +5, 1000 bytes";
	w.off = b->data_off + 1;
	w.buf = arena + 5;
	w.buflen = 1000;
	if (check_errno(-rc, 0, "%s", w.what))
		check(!check_reply(&w, b->res, b->tmp), "%s: reply checked", w.what);
	lacuna_client_close(c);
	rc = lacuna_client_open(b->fd, (size_t)b->info.arena_max + 4096, &c);
	check_errno(-rc, EINVAL, "lacuna_client_open with an arena of arena_max+4096");
	if (!rc)
		lacuna_client_close(c);
}

/* Find a hole followed by data, and the first data segment, of FILE. */
static int bat_layout(struct bat *b)
{
	struct segv m = { 0 };
	uint32_t fl = 0;
	size_t i;
	int rc = whole_map(NULL, b->ref, &m, &fl);

	b->data_len = 0;
	b->hole_off = UINT64_MAX;
	for (i = 0; !rc && i < m.n; i++) {
		if (m.v[i].kind == LACUNA_SEG_DATA && !b->data_len) {
			b->data_off = m.v[i].off;
			b->data_len = m.v[i].len;
		}
		if (m.v[i].kind == LACUNA_SEG_HOLE && i + 1 < m.n && b->hole_off == UINT64_MAX)
			b->hole_off = m.v[i].off;
	}
	free(m.v);
	if (rc || !b->data_len || b->hole_off == UINT64_MAX || b->data_len < 2 ||
	    b->data_len > LACUNA_INLINE_MAX) {
		fprintf(stderr, "lt_sparsecheck: %s needs a hole followed by data and a first data "
			"segment of 2..%d bytes\n", b->file, LACUNA_INLINE_MAX);
		return -EINVAL;
	}
	return 0;
}

static int cmd_bad(int argc, char **argv)
{
	struct bat b = { .plain = "/proc/self/exe" };
	struct stat st;
	int i;

	if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--plain"))) {
		usage();
		return 2;
	}
	b.file = argv[1];
	b.dir = argv[2];
	if (argc == 5)
		b.plain = argv[4];
	b.fd = open(b.file, O_RDONLY | O_CLOEXEC);
	b.ref = open(b.file, O_RDONLY | O_CLOEXEC);
	sr = malloc(sizeof(*sr));
	sri = malloc(sizeof(*sri));
	b.res = malloc(sizeof(*b.res));
	b.tmp = malloc(sizeof(*b.tmp));
	scratch = malloc(SC_IO_CHUNK);
	if (b.fd < 0 || b.ref < 0 || fstat(b.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "lt_sparsecheck: %s: not an openable regular file\n", b.file);
		return 2;
	}
	if (!sr || !sri || !b.res || !b.tmp || !scratch)
		return 2;
	b.size = (uint64_t)st.st_size;
	if (bat_layout(&b))
		return 2;
	/* a hang anywhere is a failure, not a stuck test (default action: killed) */
	alarm(100);
	printf("# bad-input battery on %s (size %" PRIu64 ", hole at %" PRIu64 ", data [%" PRIu64
	       ", +%" PRIu64 "))\n", b.file, b.size, b.hole_off, b.data_off, b.data_len);
	bat_info(&b);
	if (!b.info.version) {
		check(false, "%s is not on lacunafs: the rest is not checked", b.file);
		return 1;
	}
	bat_ranges(&b);
	bat_header(&b);
	bat_special(&b);
	bat_wronly(&b);
	bat_inline_tail(&b);
	bat_arena(&b);
	bat_register(&b);
	bat_ctl_robust(&b);
	bat_lib(&b);
	for (i = 0; i < 3; i++)
		still_good(&b, "the battery");
	check(kill((pid_t)b.info.daemon_pid, 0) == 0, "the daemon (pid %" PRIu64 ") is alive",
	      b.info.daemon_pid);
	printf("# bad: %u checks, %u failed\n", nchecks, nfails);
	close(b.fd);
	close(b.ref);
	free(sr);
	free(sri);
	free(b.res);
	free(b.tmp);
	free(scratch);
	return nfails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mapdiff"))
		return cmd_mapdiff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bad"))
		return cmd_bad(argc - 1, argv + 1);
	usage();
	return 2;
}
