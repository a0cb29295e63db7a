// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_exerciser: a randomized, reproducible file-operation exerciser.
 *
 *   lt_exerciser [--seed N] [--ops N] [--max-size BYTES] [--verbose] FILE
 *
 * FILE is created (or truncated) and a second scratch file, FILE.src, is
 * made beside it as the source of copy_file_range. A seeded generator then
 * picks N operations by weight: pwrite (aligned and not, 1 byte to
 * 1.5 MiB, some past EOF leaving holes), ftruncate down and up, punch hole,
 * zero range (with and without KEEP_SIZE), plain fallocate, copy_file_range
 * from FILE.src, changes to FILE.src, fsync/fdatasync, close and reopen,
 * comparisons through read-only opens (fresh, and one held open while
 * the file changes), and a SEEK_DATA/SEEK_HOLE walk. Every operation is
 * mirrored in an in-memory model of both files.
 *
 * After each operation the size from fstat must equal the model's and the
 * bytes of the touched range (with a margin on both sides) must equal the
 * model's; every LT_FULL_EVERY operations the whole of both files is
 * compared. Regions SEEK_DATA/SEEK_HOLE report as holes must be zeros in
 * the model. An fallocate mode or copy_file_range that the filesystem
 * does not support (EOPNOTSUPP and the like) is reported once and not
 * chosen again.
 *
 * Data is not random: each 8-byte aligned word of the file holds a marker
 * byte (which file), the number of the operation that wrote it and its own
 * offset, so the bytes found at a mismatch tell where they came from.
 *
 * Exit status: 0 when every check passed, 1 on the first mismatch or
 * unexpected error (reported with the operation, its arguments and the
 * seed), 2 on bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>

#define KiB ((uint64_t)1024)
#define MiB (KiB * 1024)

#define LT_PAGE ((uint64_t)4096)
#define LT_WRITE_MAX (1536 * KiB) /* largest pwrite */
#define LT_COPY_MAX (2 * MiB)	  /* largest copy_file_range */
#define LT_RANGE_MAX (4 * MiB)	  /* largest punch/zero/allocate */
#define LT_TRUNC_UP_MAX (8 * MiB) /* largest growth by ftruncate */
#define LT_HOLE_JUMP (4 * MiB)	  /* how far past EOF a write may start */
#define LT_SRC_MAX (8 * MiB)	  /* FILE.src never grows past this */
#define LT_MARGIN LT_PAGE	  /* bytes verified beyond a touched range */
#define LT_RBUF (4 * MiB)	  /* read-back chunk */
#define LT_FULL_EVERY 50	  /* compare whole files this often */
#define LT_ROCHECK_MAX (4 * MiB)  /* window compared by a read-only open */
#define LT_HISTORY 64		  /* operations remembered for a report */
#define LT_DESC 192

#define LT_DEFAULT_OPS 3000UL
#define LT_DEFAULT_MAX (64 * MiB)
#define LT_MIN_MAX (1 * MiB)
#define LT_MAX_MAX (1024 * MiB)

enum lt_op {
	OP_WRITE,
	OP_TRUNC,
	OP_PUNCH,
	OP_ZERO,
	OP_ALLOC,
	OP_COPY,
	OP_SRC,
	OP_SYNC,
	OP_REOPEN,
	OP_ROCHECK,
	OP_SEEK,
	OP_NR
};

struct lt_file;

/* The operations, chosen with these weights; each acts on FILE. */
static const struct lt_opdef {
	const char *name;
	unsigned int weight;
	void (*fn)(struct lt_file *f);
} lt_opdefs[OP_NR];

/* One file under test and its model; the model is zero past size. */
struct lt_file {
	char *path;
	int fd;
	uint8_t tag; /* marker byte in the data written to it */
	uint8_t *model;
	uint64_t size;
	uint64_t max;
};

static struct {
	uint64_t seed;
	uint64_t rng;
	unsigned long nops;
	uint64_t max_size;
	bool verbose;

	unsigned long opno; /* operation being run, from 1 */
	char desc[LT_DESC]; /* that operation and its arguments */
	char history[LT_HISTORY][LT_DESC + 16];

	bool disabled[OP_NR];
	unsigned long count[OP_NR];
	unsigned long short_copies;
	unsigned long short_writes;
	unsigned long seek_races; /* SEEK_DATA said data, SEEK_HOLE then a hole */

	uint8_t *wbuf;
	uint8_t *rbuf;
	int rofd; /* read-only open of FILE, kept across operations */
	struct lt_file f;
	struct lt_file src;
} lt;

/* ------------------------------------------------------------ randomness */

static uint64_t rnd(void)
{
	uint64_t z = (lt.rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n == 0 gives 0. */
static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Uniform in [lo, hi]. */
static uint64_t rnd_range(uint64_t lo, uint64_t hi)
{
	return lo + rnd_below(hi - lo + 1);
}

static bool chance(unsigned int percent)
{
	return rnd_below(100) < percent;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ------------------------------------------------------------- reporting */

static void lt_print_history(void)
{
	unsigned long first = lt.opno >= LT_HISTORY ? lt.opno - LT_HISTORY + 1 : 0;
	unsigned long i;

	fprintf(stderr, "last operations:\n");
	for (i = first; i <= lt.opno; i++)
		fprintf(stderr, "  %s\n", lt.history[i % LT_HISTORY]);
}

static void lt_print_rerun(void)
{
	fprintf(stderr,
		"seed %" PRIu64 "; rerun: lt_exerciser --seed %" PRIu64
		" --ops %lu --max-size %" PRIu64 " %s\n",
		lt.seed, lt.seed, lt.nops, lt.max_size, lt.f.path);
}

/* An unexpected failure or a broken rule: report it with the seed, exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2))) lt_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "lt_exerciser: FAIL at op %lu (%s): ", lt.opno, lt.desc);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	lt_print_history();
	lt_print_rerun();
	exit(1);
}

static void lt_hex(const char *label, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "  %-9s", label);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %02x", p[i]);
	fputc('\n', stderr);
}

/* Say where an 8-byte aligned word of written data came from. */
static void lt_decode_word(const char *label, const uint8_t *w)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | w[i];
	if (v == 0) {
		fprintf(stderr, "  %s word: zeros\n", label);
		return;
	}
	if ((v >> 56) != lt.f.tag && (v >> 56) != lt.src.tag) {
		fprintf(stderr, "  %s word: %016" PRIx64 " (not written by this run)\n", label, v);
		return;
	}
	fprintf(stderr,
		"  %s word: written by op %" PRIu64 " (mod 2^20) to %s offset %" PRIu64 "\n", label,
		(v >> 36) & 0xfffff, (v >> 56) == lt.f.tag ? "FILE" : "FILE.src",
		(v & UINT64_C(0xfffffffff)) << 3);
}

/*
 * Contents differ: buf holds the file's bytes [start, start + n), the
 * model the expected ones. Report the first difference and exit 1.
 */
static void __attribute__((noreturn))
lt_mismatch(const struct lt_file *f, const char *via, uint64_t start, const uint8_t *buf, size_t n)
{
	const uint8_t *exp = f->model + start;
	size_t first = 0, last = 0, ndiff = 0, i, show;
	uint64_t w;

	for (i = 0; i < n; i++) {
		if (buf[i] == exp[i])
			continue;
		if (!ndiff)
			first = i;
		last = i;
		ndiff++;
	}
	fflush(stdout);
	fprintf(stderr, "lt_exerciser: MISMATCH at op %lu: %s\n", lt.opno, lt.desc);
	fprintf(stderr, "  %s (read via %s), size %" PRIu64 "\n", f->path, via, f->size);
	fprintf(stderr,
		"  first differing offset %" PRIu64 " (0x%" PRIx64 "); %zu bytes differ in "
		"[%" PRIu64 ", %" PRIu64 "), the last at %" PRIu64 "\n",
		start + first, start + first, ndiff, start, start + n, start + last);
	show = min_u64(16, n - first);
	lt_hex("expected:", exp + first, show);
	lt_hex("actual:", buf + first, show);
	w = (start + first) & ~(uint64_t)7;
	if (w >= start && w + 8 <= start + n) {
		lt_decode_word("expected", exp + (w - start));
		lt_decode_word("actual", buf + (w - start));
	}
	lt_print_history();
	lt_print_rerun();
	exit(1);
}

/* --------------------------------------------------------------- checking */

static void lt_check_size(const struct lt_file *f)
{
	struct stat st;

	if (fstat(f->fd, &st) < 0)
		lt_die("fstat %s: %s", f->path, strerror(errno));
	if ((uint64_t)st.st_size != f->size)
		lt_die("MISMATCH: %s: fstat size %lld, model size %" PRIu64, f->path,
		       (long long)st.st_size, f->size);
}

/* Read [off, off + len) of fd, which must all exist, into buf. */
static void lt_read_exact(const struct lt_file *f, int fd, uint8_t *buf, uint64_t off, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0)
			lt_die("pread %s at %" PRIu64 ": %s", f->path, off + done, strerror(errno));
		if (n == 0)
			lt_die("MISMATCH: pread %s at %" PRIu64
			       " hit end of file, model size %" PRIu64,
			       f->path, off + done, f->size);
		done += (size_t)n;
	}
}

/* Compare [lo, hi) of the file read through fd with the model. */
static void lt_compare(const struct lt_file *f, int fd, const char *via, uint64_t lo, uint64_t hi)
{
	uint64_t off;
	size_t len;

	hi = min_u64(hi, f->size);
	for (off = lo; off < hi; off += len) {
		len = (size_t)min_u64(hi - off, LT_RBUF);
		lt_read_exact(f, fd, lt.rbuf, off, len);
		if (memcmp(lt.rbuf, f->model + off, len))
			lt_mismatch(f, via, off, lt.rbuf, len);
	}
}

/* A read at the end of the file must return nothing. */
static void lt_check_eof(const struct lt_file *f)
{
	ssize_t n = pread(f->fd, lt.rbuf, LT_PAGE, (off_t)f->size);

	if (n < 0)
		lt_die("pread %s at EOF %" PRIu64 ": %s", f->path, f->size, strerror(errno));
	if (n > 0)
		lt_die("MISMATCH: pread %s at model EOF %" PRIu64 " returned %zd bytes", f->path,
		       f->size, n);
}

/* The checks after an operation that touched [lo, hi) of f. */
static void lt_verify(const struct lt_file *f, uint64_t lo, uint64_t hi)
{
	lt_check_size(f);
	lo = lo > LT_MARGIN ? lo - LT_MARGIN : 0;
	hi = hi + LT_MARGIN;
	lt_compare(f, f->fd, "the open fd", lo, hi);
	if (hi >= f->size)
		lt_check_eof(f);
}

static void lt_verify_all(const struct lt_file *f)
{
	lt_check_size(f);
	lt_compare(f, f->fd, "the open fd", 0, f->size);
	lt_check_eof(f);
}

/* ------------------------------------------------------------ choosing */

/* Data for [off, off + len) of f, written by the current operation. */
static void lt_fill(const struct lt_file *f, uint8_t *buf, uint64_t off, size_t len)
{
	uint64_t hdr = (uint64_t)f->tag << 56 | (uint64_t)(lt.opno & 0xfffff) << 36;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t p = off + i;
		uint64_t w = hdr | ((p >> 3) & UINT64_C(0xfffffffff));

		buf[i] = (uint8_t)(w >> (8 * (p & 7)));
	}
}

static uint64_t lt_pick_len(uint64_t maxlen)
{
	uint64_t len;

	switch (rnd_below(4)) {
	case 0:
		len = rnd_range(1, 512);
		break;
	case 1:
		len = rnd_range(1, 64 * KiB);
		break;
	case 2:
		len = rnd_range(1, 256 * KiB);
		break;
	default:
		len = rnd_range(1, maxlen);
		break;
	}
	return min_u64(len, maxlen);
}

/*
 * A range [*off, *off + *len) of at most maxlen bytes inside f->max:
 * mostly within or near the current data, sometimes past EOF (leaving a
 * hole) or anywhere; a third of the time page aligned.
 */
static void lt_pick_range(const struct lt_file *f, uint64_t maxlen, uint64_t *off, uint64_t *len)
{
	uint64_t l = lt_pick_len(min_u64(maxlen, f->max)), o, lim;
	unsigned int r = (unsigned int)rnd_below(100);
	bool aligned = chance(33);

	if (aligned) {
		l = (l + LT_PAGE - 1) & ~(LT_PAGE - 1);
		if (l > f->max)
			l = f->max & ~(LT_PAGE - 1);
	}
	lim = f->max - l;
	if (r < 60)
		o = rnd_below(f->size + 1);
	else if (r < 80)
		o = f->size - min_u64(f->size, 64 * KiB) + rnd_below(128 * KiB);
	else if (r < 97)
		o = f->size + rnd_below(LT_HOLE_JUMP);
	else
		o = rnd_below(lim + 1);
	if (o > lim)
		o = rnd_below(lim + 1);
	if (aligned)
		o &= ~(LT_PAGE - 1);
	*off = o;
	*len = l;
}

static void lt_set_desc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void lt_set_desc(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lt.desc, sizeof(lt.desc), fmt, ap);
	va_end(ap);
	snprintf(lt.history[lt.opno % LT_HISTORY], sizeof(lt.history[0]), "#%lu %s", lt.opno,
		 lt.desc);
	if (lt.verbose)
		printf("#%lu %s\n", lt.opno, lt.desc);
}

static const char *lt_name(const struct lt_file *f)
{
	return f == &lt.f ? "FILE" : "SRC";
}

/* An operation the filesystem does not support: say so once, stop choosing it. */
static void lt_disable(enum lt_op op, const char *call, int err)
{
	if (!lt.disabled[op])
		printf("lt_exerciser: %s: %s; no more %s operations\n", call, strerror(err),
		       lt_opdefs[op].name);
	lt.disabled[op] = true;
}

static bool lt_unsupported(int err)
{
	return err == EOPNOTSUPP || err == ENOSYS;
}

/* ------------------------------------------------------------ operations */

static void lt_model_write(struct lt_file *f, uint64_t off, const uint8_t *buf, uint64_t len)
{
	memcpy(f->model + off, buf, len);
	f->size = max_u64(f->size, off + len);
}

/* Zero [off, off + len) of the model, which may lie partly past EOF. */
static void lt_model_zero(struct lt_file *f, uint64_t off, uint64_t len)
{
	uint64_t end = min_u64(off + len, f->size);

	if (off < end)
		memset(f->model + off, 0, end - off);
}

static void lt_model_truncate(struct lt_file *f, uint64_t size)
{
	if (size < f->size)
		memset(f->model + size, 0, f->size - size);
	f->size = size;
}

static void op_write(struct lt_file *f)
{
	uint64_t off, len;
	ssize_t n;

	lt_pick_range(f, LT_WRITE_MAX, &off, &len);
	lt_set_desc("pwrite %s off=%" PRIu64 " len=%" PRIu64 " (size %" PRIu64 ")", lt_name(f), off,
		    len, f->size);
	lt_fill(f, lt.wbuf, off, len);
	n = pwrite(f->fd, lt.wbuf, len, (off_t)off);
	if (n < 0)
		lt_die("pwrite: %s", strerror(errno));
	if ((uint64_t)n > len)
		lt_die("pwrite returned %zd for %" PRIu64 " bytes", n, len);
	if ((uint64_t)n < len) {
		lt.short_writes++;
		printf("lt_exerciser: op %lu: short pwrite, %zd of %" PRIu64 " bytes\n", lt.opno, n,
		       len);
	}
	lt_model_write(f, off, lt.wbuf, (uint64_t)n);
	lt_verify(f, off, off + len);
}

static void op_truncate(struct lt_file *f)
{
	uint64_t old = f->size, size;

	if (chance(50))
		size = rnd_below(old + 1);
	else
		size = old + rnd_below(min_u64(LT_TRUNC_UP_MAX, f->max - old) + 1);
	if (chance(33))
		size &= ~(LT_PAGE - 1);
	lt_set_desc("ftruncate %s %" PRIu64 " -> %" PRIu64, lt_name(f), old, size);
	if (ftruncate(f->fd, (off_t)size) < 0)
		lt_die("ftruncate: %s", strerror(errno));
	lt_model_truncate(f, size);
	lt_verify(f, min_u64(old, size), max_u64(old, size));
}

/* Returns -errno when the mode is not supported, 0 otherwise. */
static int lt_fallocate(struct lt_file *f, enum lt_op op, int mode, const char *mname, uint64_t off,
			uint64_t len)
{
	lt_set_desc("fallocate %s %s off=%" PRIu64 " len=%" PRIu64 " (size %" PRIu64 ")",
		    lt_name(f), mname, off, len, f->size);
	if (fallocate(f->fd, mode, (off_t)off, (off_t)len) == 0)
		return 0;
	if (lt_unsupported(errno)) {
		char call[96];

		snprintf(call, sizeof(call), "fallocate(%s)", mname);
		lt_disable(op, call, errno);
		return -errno;
	}
	lt_die("fallocate(%s): %s", mname, strerror(errno));
}

static void op_punch(struct lt_file *f)
{
	uint64_t off, len;

	lt_pick_range(f, LT_RANGE_MAX, &off, &len);
	if (!lt_fallocate(f, OP_PUNCH, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  "PUNCH_HOLE|KEEP_SIZE", off, len))
		lt_model_zero(f, off, len);
	lt_verify(f, off, off + len);
}

static void op_zero(struct lt_file *f)
{
	bool keep = chance(50);
	uint64_t off, len;
	int rc;

	lt_pick_range(f, LT_RANGE_MAX, &off, &len);
	rc = lt_fallocate(f, OP_ZERO, FALLOC_FL_ZERO_RANGE | (keep ? FALLOC_FL_KEEP_SIZE : 0),
			  keep ? "ZERO_RANGE|KEEP_SIZE" : "ZERO_RANGE", off, len);
	if (!rc) {
		if (!keep)
			f->size = max_u64(f->size, off + len);
		lt_model_zero(f, off, len);
	}
	lt_verify(f, off, off + len);
}

static void op_alloc(struct lt_file *f)
{
	uint64_t off, len;

	lt_pick_range(f, LT_RANGE_MAX, &off, &len);
	if (!lt_fallocate(f, OP_ALLOC, 0, "0", off, len))
		f->size = max_u64(f->size, off + len);
	lt_verify(f, off, off + len);
}

static void op_copy(struct lt_file *f)
{
	struct lt_file *s = &lt.src;
	uint64_t off_in, off_out, len;
	loff_t in, out;
	ssize_t n;

	lt_pick_range(f, LT_COPY_MAX, &off_out, &len);
	if (chance(85))
		off_in = rnd_below(s->size + 1);
	else
		off_in = s->size - min_u64(s->size, 64 * KiB) + rnd_below(128 * KiB);
	if (chance(33))
		off_in &= ~(LT_PAGE - 1);
	lt_set_desc("copy_file_range SRC off=%" PRIu64 " -> FILE off=%" PRIu64 " len=%" PRIu64
		    " (sizes %" PRIu64 ", %" PRIu64 ")",
		    off_in, off_out, len, s->size, f->size);
	in = (loff_t)off_in;
	out = (loff_t)off_out;
	n = copy_file_range(s->fd, &in, f->fd, &out, len, 0);
	if (n < 0) {
		if (lt_unsupported(errno) || errno == EXDEV) {
			lt_disable(OP_COPY, "copy_file_range", errno);
			lt_verify(f, off_out, off_out + len);
			return;
		}
		lt_die("copy_file_range: %s", strerror(errno));
	}
	if ((uint64_t)n > len || off_in + (uint64_t)n > max_u64(s->size, off_in))
		lt_die("copy_file_range returned %zd: more than asked or than the source holds", n);
	if (n == 0 && off_in < s->size)
		lt_die("MISMATCH: copy_file_range returned 0 before the source's end (%" PRIu64 ")",
		       s->size);
	if ((uint64_t)in != off_in + (uint64_t)n || (uint64_t)out != off_out + (uint64_t)n)
		lt_die("copy_file_range returned %zd but moved the offsets to %lld, %lld", n,
		       (long long)in, (long long)out);
	if ((uint64_t)n < len && off_in + (uint64_t)n < s->size) {
		lt.short_copies++;
		if (lt.verbose)
			printf("  short copy: %zd of %" PRIu64 " bytes\n", n, len);
	}
	if (n > 0)
		lt_model_write(f, off_out, s->model + off_in, (uint64_t)n);
	lt_verify(f, off_out, off_out + len);
	lt_check_size(s);
}

/* Change the copy source: write to it, punch it or cut it. */
static void op_src(struct lt_file *f)
{
	unsigned int r = (unsigned int)rnd_below(100);

	f = &lt.src; /* this one acts on FILE.src instead */
	if (r < 15)
		op_truncate(f);
	else if (r < 35 && !lt.disabled[OP_PUNCH])
		op_punch(f);
	else
		op_write(f);
}

static void op_sync(struct lt_file *f)
{
	bool data = chance(50);

	if (chance(20))
		f = &lt.src;
	lt_set_desc("%s %s", data ? "fdatasync" : "fsync", lt_name(f));
	if ((data ? fdatasync(f->fd) : fsync(f->fd)) < 0)
		lt_die("%s: %s", data ? "fdatasync" : "fsync", strerror(errno));
	lt_check_size(f);
}

static int lt_open(struct lt_file *f, int flags)
{
	int fd = open(f->path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		lt_die("open %s: %s", f->path, strerror(errno));
	return fd;
}

static void lt_reopen(struct lt_file *f)
{
	if (close(f->fd) < 0)
		lt_die("close %s: %s", f->path, strerror(errno));
	f->fd = lt_open(f, O_RDWR);
}

static void op_reopen(struct lt_file *f)
{
	bool both = chance(50);

	lt_set_desc("reopen FILE%s", both ? " and SRC" : "");
	lt_reopen(f);
	if (close(lt.rofd) < 0)
		lt_die("close %s: %s", f->path, strerror(errno));
	lt.rofd = lt_open(f, O_RDONLY);
	lt_verify_all(f);
	if (both) {
		lt_reopen(&lt.src);
		lt_verify_all(&lt.src);
	}
}

/*
 * Compare a window of FILE read through a read-only descriptor: a fresh
 * open, or one held open since the last reopen while FILE was changed
 * through the other. Read-only opens may read through the page cache.
 */
static void op_rocheck(struct lt_file *f)
{
	uint64_t off = 0, len = f->size;
	bool fresh = chance(50);
	int fd;

	if (len > LT_ROCHECK_MAX) {
		len = LT_ROCHECK_MAX;
		off = rnd_below(f->size - len + 1) & ~(LT_PAGE - 1);
	}
	lt_set_desc("read-only %s of FILE, compare off=%" PRIu64 " len=%" PRIu64,
		    fresh ? "open" : "fd held open", off, len);
	if (!fresh) {
		lt_compare(f, lt.rofd, "a read-only fd held open", off, off + len);
		return;
	}
	fd = lt_open(f, O_RDONLY);
	lt_compare(f, fd, "a fresh read-only open", off, off + len);
	if (close(fd) < 0)
		lt_die("close %s: %s", f->path, strerror(errno));
}

/* A region the filesystem calls a hole must be zeros in the model. */
static void lt_check_hole(const struct lt_file *f, uint64_t lo, uint64_t hi, const char *how)
{
	const uint8_t *m = f->model;
	uint64_t i;

	if (lo >= hi || (!m[lo] && !memcmp(m + lo, m + lo + 1, hi - lo - 1)))
		return;
	for (i = lo; i < hi; i++)
		if (m[i])
			lt_die("MISMATCH: %s reports [%" PRIu64 ", %" PRIu64 ") as a hole, "
			       "but the model has data at %" PRIu64 " (size %" PRIu64 ")",
			       how, lo, hi, i, f->size);
}

static off_t lt_seek(const struct lt_file *f, uint64_t off, int whence)
{
	off_t r = lseek(f->fd, (off_t)off, whence);

	if (r < 0 && errno != ENXIO)
		lt_die("lseek(%" PRIu64 ", %s): %s", off,
		       whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE", strerror(errno));
	return r;
}

/*
 * Walk the file's data and holes with SEEK_DATA/SEEK_HOLE, then probe a
 * few random offsets. Maps are not canonical (an unwritten extent is data
 * while pages of it are cached) nor stable (those pages may be evicted
 * between two calls), so only "holes are zeros" and the bounds are checked.
 */
static void op_seek(struct lt_file *f)
{
	uint64_t size = f->size, pos = 0, p;
	unsigned long regions = 0, races = 0;
	off_t d, h;
	int i;

	lt_set_desc("SEEK_DATA/SEEK_HOLE walk of FILE (size %" PRIu64 ")", size);
	lt_check_size(f);
	while (pos < size) {
		d = lt_seek(f, pos, SEEK_DATA);
		if (d < 0) {
			lt_check_hole(f, pos, size, "SEEK_DATA (ENXIO)");
			break;
		}
		if ((uint64_t)d < pos || (uint64_t)d >= size)
			lt_die("MISMATCH: SEEK_DATA from %" PRIu64 " returned %lld, size %" PRIu64,
			       pos, (long long)d, size);
		lt_check_hole(f, pos, (uint64_t)d, "SEEK_DATA");
		h = lt_seek(f, (uint64_t)d, SEEK_HOLE);
		if (h < d || (uint64_t)h > size)
			lt_die("MISMATCH: SEEK_HOLE from data at %lld returned %lld, size %" PRIu64,
			       (long long)d, (long long)h, size);
		if (h == d) {
			/*
			 * Data a moment ago, a hole now: clean cached pages over
			 * an unwritten extent were evicted in between. Walk on.
			 */
			lt.seek_races++;
			if (++races > 1000)
				lt_die("SEEK_DATA and SEEK_HOLE disagree about %lld again and "
				       "again",
				       (long long)d);
		}
		pos = (uint64_t)h;
		regions++;
	}
	/* the virtual hole at EOF: nothing at or past size, SEEK_HOLE ends there */
	if (lt_seek(f, size, SEEK_DATA) >= 0 || lt_seek(f, size, SEEK_HOLE) >= 0)
		lt_die("MISMATCH: SEEK_DATA or SEEK_HOLE at EOF %" PRIu64
		       " did not fail with ENXIO",
		       size);
	if (size) {
		h = lt_seek(f, size - 1, SEEK_HOLE);
		if (h < 0 || ((uint64_t)h != size && (uint64_t)h != size - 1))
			lt_die("MISMATCH: SEEK_HOLE from %" PRIu64 " returned %lld, size %" PRIu64,
			       size - 1, (long long)h, size);
		lt_check_hole(f, (uint64_t)h, size, "SEEK_HOLE before EOF");
	}
	for (i = 0; i < 8 && size; i++) {
		p = rnd_below(size);
		d = lt_seek(f, p, SEEK_DATA);
		if (d < 0) {
			lt_check_hole(f, p, size, "SEEK_DATA probe (ENXIO)");
		} else {
			if ((uint64_t)d < p || (uint64_t)d >= size)
				lt_die("MISMATCH: SEEK_DATA from %" PRIu64 " returned %lld", p,
				       (long long)d);
			lt_check_hole(f, p, (uint64_t)d, "SEEK_DATA probe");
		}
		h = lt_seek(f, p, SEEK_HOLE);
		if (h < 0 || (uint64_t)h < p || (uint64_t)h > size)
			lt_die("MISMATCH: SEEK_HOLE from %" PRIu64 " returned %lld, size %" PRIu64,
			       p, (long long)h, size);
	}
	if (lt.verbose)
		printf("  %lu data regions\n", regions);
}

static enum lt_op lt_choose(void)
{
	unsigned int total = 0, r;
	int op;

	for (op = 0; op < OP_NR; op++)
		if (!lt.disabled[op])
			total += lt_opdefs[op].weight;
	r = (unsigned int)rnd_below(total);
	for (op = 0; op < OP_NR; op++) {
		if (lt.disabled[op])
			continue;
		if (r < lt_opdefs[op].weight)
			break;
		r -= lt_opdefs[op].weight;
	}
	return op < OP_NR ? (enum lt_op)op : OP_WRITE; /* write is never disabled */
}

static const struct lt_opdef lt_opdefs[OP_NR] = {
	[OP_WRITE] = { "write", 34, op_write },	  [OP_TRUNC] = { "truncate", 8, op_truncate },
	[OP_PUNCH] = { "punch", 10, op_punch },	  [OP_ZERO] = { "zero", 8, op_zero },
	[OP_ALLOC] = { "alloc", 6, op_alloc },	  [OP_COPY] = { "copy", 10, op_copy },
	[OP_SRC] = { "src", 4, op_src },	  [OP_SYNC] = { "sync", 4, op_sync },
	[OP_REOPEN] = { "reopen", 2, op_reopen }, [OP_ROCHECK] = { "rocheck", 3, op_rocheck },
	[OP_SEEK] = { "seek", 4, op_seek },
};

/* ------------------------------------------------------------ setup */

static void lt_file_init(struct lt_file *f, const char *path, const char *suffix, uint64_t max,
			 uint8_t tag)
{
	size_t n = strlen(path) + strlen(suffix) + 1;

	f->path = malloc(n);
	f->model = calloc(1, max);
	if (!f->path || !f->model) {
		fprintf(stderr, "lt_exerciser: malloc of %" PRIu64 " bytes failed\n", max);
		exit(1);
	}
	snprintf(f->path, n, "%s%s", path, suffix);
	f->max = max;
	f->tag = tag;
	f->size = 0;
	f->fd = lt_open(f, O_RDWR | O_CREAT | O_TRUNC);
}

/* Give the copy source some data with holes between. */
static void lt_src_init(void)
{
	int i;

	for (i = 0; i < 8; i++)
		op_write(&lt.src);
	lt_verify_all(&lt.src);
}

static int lt_parse_u64(const char *s, uint64_t *out, bool suffixes)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (suffixes && *end) {
		unsigned int shift = 0;

		switch (*end) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return -EINVAL;
		}
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
		v <<= shift;
		end++;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static void __attribute__((noreturn)) lt_usage(FILE *to, int status)
{
	fprintf(to,
		"usage: lt_exerciser [--seed N] [--ops N] [--max-size BYTES[K|M|G]] [--verbose] "
		"FILE\n"
		"  Applies N (default %lu) random operations to FILE (and FILE.src), checking\n"
		"  each against an in-memory model. FILE stays below --max-size (default %" PRIu64
		"\n"
		"  MiB, at least %" PRIu64 " MiB, at most %" PRIu64 " MiB).\n"
		"  Exit 0: all checks passed; 1: mismatch or error; 2: bad usage.\n",
		LT_DEFAULT_OPS, LT_DEFAULT_MAX / MiB, LT_MIN_MAX / MiB, LT_MAX_MAX / MiB);
	exit(status);
}

static void lt_parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_seed = false;
	uint64_t v;
	int c;

	lt.nops = LT_DEFAULT_OPS;
	lt.max_size = LT_DEFAULT_MAX;
	while ((c = getopt_long(argc, argv, "s:n:m:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (lt_parse_u64(optarg, &lt.seed, false))
				goto bad;
			have_seed = true;
			break;
		case 'n':
			if (lt_parse_u64(optarg, &v, false) || v > 100000000)
				goto bad;
			lt.nops = (unsigned long)v;
			break;
		case 'm':
			if (lt_parse_u64(optarg, &v, true) || v < LT_MIN_MAX || v > LT_MAX_MAX)
				goto bad;
			lt.max_size = v;
			break;
		case 'v':
			lt.verbose = true;
			break;
		case 'h':
			lt_usage(stdout, 0);
		default:
			lt_usage(stderr, 2);
		}
	}
	if (optind != argc - 1)
		lt_usage(stderr, 2);
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		lt.seed = (uint64_t)ts.tv_sec * UINT64_C(1000003) ^ (uint64_t)ts.tv_nsec ^
			  (uint64_t)getpid() << 32;
	}
	return;
bad:
	fprintf(stderr, "lt_exerciser: bad value for --%s: '%s'\n",
		c == 's'   ? "seed"
		: c == 'n' ? "ops"
			   : "max-size",
		optarg);
	lt_usage(stderr, 2);
}

int main(int argc, char **argv)
{
	unsigned long i;
	int op;

	lt_parse_args(argc, argv);
	lt.rng = lt.seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("lt_exerciser: seed %" PRIu64 ", %lu ops, max size %" PRIu64 ", file %s\n", lt.seed,
	       lt.nops, lt.max_size, argv[optind]);

	lt.wbuf = malloc(max_u64(LT_WRITE_MAX, LT_RANGE_MAX));
	lt.rbuf = malloc(LT_RBUF);
	if (!lt.wbuf || !lt.rbuf) {
		fprintf(stderr, "lt_exerciser: malloc failed\n");
		return 1;
	}
	snprintf(lt.desc, sizeof(lt.desc), "setup");
	lt_file_init(&lt.f, argv[optind], "", lt.max_size, 0xa5);
	lt_file_init(&lt.src, argv[optind], ".src", min_u64(LT_SRC_MAX, lt.max_size), 0x5a);
	lt.rofd = lt_open(&lt.f, O_RDONLY);
	lt_src_init();

	for (i = 1; i <= lt.nops; i++) {
		enum lt_op o;

		lt.opno = i;
		o = lt_choose();
		lt.count[o]++;
		lt_opdefs[o].fn(&lt.f);
		if (i % LT_FULL_EVERY == 0 || i == lt.nops) {
			lt_verify_all(&lt.f);
			lt_verify_all(&lt.src);
		}
	}
	if (close(lt.f.fd) < 0 || close(lt.src.fd) < 0 || close(lt.rofd) < 0)
		lt_die("close: %s", strerror(errno));

	printf("lt_exerciser: seed %" PRIu64 ": %lu ops passed:", lt.seed, lt.nops);
	for (op = 0; op < OP_NR; op++)
		printf(" %s %lu%s", lt_opdefs[op].name, lt.count[op],
		       lt.disabled[op] ? " (unsupported)" : "");
	printf("; short copies %lu, short writes %lu, seek races %lu; final size %" PRIu64
	       ", src size %" PRIu64 "\n",
	       lt.short_copies, lt.short_writes, lt.seek_races, lt.f.size, lt.src.size);
	free(lt.wbuf);
	free(lt.rbuf);
	free(lt.f.model);
	free(lt.src.model);
	free(lt.f.path);
	free(lt.src.path);
	return 0;
}
