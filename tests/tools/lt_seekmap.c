// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_seekmap: make sparse files and compare their SEEK_DATA/SEEK_HOLE maps.
 *
 * A lacunafs mount answers lseek(SEEK_DATA/SEEK_HOLE) from the backing file,
 * so the view through the mount and the backing file itself must agree at
 * any moment. The maps are not canonical (ext4 and XFS report an unwritten
 * extent as data once its pages are cached, a hole may be reported as data),
 * so the tests compare two views taken at the same moment, and check a file
 * against the layout it was made from only as "no data reported as a hole,
 * holes read as zeros, data matches the pattern".
 *
 *   make FILE LAYOUT    create (or truncate) FILE and apply LAYOUT to it
 *   map FILE            print "data|hole OFFSET LENGTH" lines, then "size N"
 *   cmp A B             compare A and B: lseek results for a set of probe
 *                       offsets (0, every segment boundary of either file
 *                       and its neighbours, random offsets, sizes, past
 *                       EOF), then the contents byte for byte
 *   check FILE LAYOUT   check FILE against what LAYOUT should have made:
 *                       same size, no written byte inside a reported hole,
 *                       data reads as the pattern and the rest as zeros
 *   seek FILE data|hole OFFSET
 *                       print the lseek result, or the errno name
 *   probe FILE OFFSET...
 *                       one open of FILE, then for each OFFSET a line
 *                       "OFFSET DATA HOLE": the SEEK_DATA and SEEK_HOLE
 *                       results (or errno names), as seek prints them;
 *                       for many probes where starting a process is slow
 *                       (a test VM)
 *   drop FILE           fdatasync FILE and drop its cached pages, so that
 *                       unwritten extents are reported as holes again
 *
 * LAYOUT is a comma-separated list applied in order:
 *   size=N              ftruncate to N
 *   data@OFF+LEN        write the pattern over [OFF, OFF+LEN)
 *   unwritten@OFF+LEN   fallocate mode 0 (may extend the size)
 *   keep@OFF+LEN        fallocate FALLOC_FL_KEEP_SIZE
 *   punch@OFF+LEN       fallocate FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE
 *   zero@OFF+LEN        fallocate FALLOC_FL_ZERO_RANGE
 * Any extent item may end in *COUNT/STRIDE to repeat it COUNT times, STRIDE
 * bytes apart. Numbers take a k/M/G/T binary suffix. The pattern byte at an
 * offset depends only on that offset and is never zero.
 *
 * Options, after the command: -s SEED seeds the random probes (default 1);
 * -q reads only a few 1 MiB windows of each hole longer than 16 MiB (a hole
 * both files report, for cmp), so that files of many GiB stay quick.
 *
 * Exit status: 0 equal (or done), 1 differences found, 2 bad arguments or
 * a failed call (the message names it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define SM_IO_CHUNK (1 << 20)
/* bounds: segments in one map, layout items after repetition */
#define SM_SEGS_MAX (1 << 22)
#define SM_OPS_MAX (1 << 20)
#define SM_RANDOM_PROBES 256
/* difference lines printed per kind, segments printed per map */
#define SM_REPORT_MAX 20
#define SM_MAP_PRINT_MAX 64
/* with -q, holes at least this long are read only in sample windows */
#define SM_QUICK_MIN (16 * (off_t)SM_IO_CHUNK)

enum sm_kind { SM_SIZE, SM_DATA, SM_UNWRITTEN, SM_KEEP, SM_PUNCH, SM_ZERO };

static const char *const sm_kind_names[] = {
	[SM_SIZE] = "size", [SM_DATA] = "data",	  [SM_UNWRITTEN] = "unwritten",
	[SM_KEEP] = "keep", [SM_PUNCH] = "punch", [SM_ZERO] = "zero",
};

struct sm_op {
	enum sm_kind kind;
	off_t off;
	off_t len;
};

struct sm_layout {
	struct sm_op *v;
	size_t n, cap;
};

/* Sorted, disjoint, non-adjacent half-open ranges: the data of a model file. */
struct sm_range {
	off_t start, end;
};

struct sm_ranges {
	struct sm_range *v;
	size_t n, cap;
};

struct sm_seg {
	off_t off, len;
	bool data;
};

struct sm_map {
	struct sm_seg *v;
	size_t n, cap;
	off_t size;
};

/* Options: -s SEED for the random probes, -q to sample long holes only. */
static uint64_t sm_seed = 1;
static bool sm_quick;

static void usage(void)
{
	fprintf(stderr,
		"usage: lt_seekmap make FILE LAYOUT\n"
		"       lt_seekmap map FILE\n"
		"       lt_seekmap cmp [-q] [-s SEED] FILE_A FILE_B\n"
		"       lt_seekmap check [-q] FILE LAYOUT\n"
		"       lt_seekmap seek FILE data|hole OFFSET\n"
		"       lt_seekmap probe FILE OFFSET...\n"
		"       lt_seekmap drop FILE\n"
		"LAYOUT: comma-separated items applied in order:\n"
		"  size=N | KIND@OFF+LEN[*COUNT/STRIDE]\n"
		"  KIND: data (pattern), unwritten (fallocate 0), keep (KEEP_SIZE),\n"
		"        punch (PUNCH_HOLE), zero (ZERO_RANGE)\n"
		"  numbers take a k/M/G/T suffix, e.g. size=10M,data@0+4k,unwritten@8M+1M\n");
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "lt_seekmap: bad %s '%s'\n", what, arg);
	usage();
	return 2;
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return v;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(v, ncap * elem);
	if (!nv) {
		fprintf(stderr, "lt_seekmap: realloc: out of memory\n");
		exit(2);
	}
	*cap = ncap;
	return nv;
}

/* ------------------------------------------------------------ parsing */

/* Parse a number with an optional k/M/G/T suffix from *sp; advance *sp. */
static bool parse_num(const char **sp, off_t *out)
{
	static const char suffixes[] = "kmgt";
	const char *s = *sp, *suf;
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	suf = *end ? strchr(suffixes, tolower((unsigned char)*end)) : NULL;
	if (suf) {
		shift = 10 * (int)(suf - suffixes + 1);
		end++;
	}
	if (v > ((unsigned long long)INT64_MAX >> shift))
		return false;
	*out = (off_t)(v << shift);
	*sp = end;
	return true;
}

static bool parse_whole_num(const char *s, off_t *out)
{
	return parse_num(&s, out) && *s == '\0';
}

static void layout_add(struct sm_layout *l, enum sm_kind kind, off_t off, off_t len)
{
	l->v = grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = (struct sm_op){ .kind = kind, .off = off, .len = len };
}

/* Parse one item "size=N" or "KIND@OFF+LEN[*COUNT/STRIDE]"; false on junk. */
static bool parse_item(struct sm_layout *l, const char *item)
{
	const char *s;
	off_t off, len, count = 1, stride = 0, i;
	size_t k;

	if (!strncmp(item, "size=", 5)) {
		s = item + 5;
		if (!parse_whole_num(s, &len))
			return false;
		layout_add(l, SM_SIZE, 0, len);
		return true;
	}
	s = strchr(item, '@');
	if (!s)
		return false;
	for (k = SM_DATA; k <= SM_ZERO; k++)
		if (strlen(sm_kind_names[k]) == (size_t)(s - item) &&
		    !strncmp(item, sm_kind_names[k], s - item))
			break;
	if (k > SM_ZERO)
		return false;
	s++;
	if (!parse_num(&s, &off) || *s++ != '+' || !parse_num(&s, &len) || len == 0)
		return false;
	if (*s == '*') {
		s++;
		if (!parse_num(&s, &count) || *s++ != '/' || !parse_num(&s, &stride))
			return false;
		if (count == 0 || count > SM_OPS_MAX || stride < len)
			return false;
	}
	if (*s)
		return false;
	for (i = 0; i < count; i++) {
		off_t o = off + i * stride;

		if (o < off || o > INT64_MAX - len || l->n >= SM_OPS_MAX)
			return false;
		layout_add(l, (enum sm_kind)k, o, len);
	}
	return true;
}

static bool parse_layout(struct sm_layout *l, const char *spec)
{
	char *copy = strdup(spec), *save = NULL, *item;
	bool ok = true;

	if (!copy)
		return false;
	for (item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save))
		ok = parse_item(l, item);
	free(copy);
	return ok && l->n > 0;
}

/* ------------------------------------------------------------ pattern */

/* The pattern byte at an offset: a hash of the offset, never zero. */
static inline uint8_t pattern_byte(uint64_t off)
{
	uint64_t x = (off >> 3) + 0x9e3779b97f4a7c15ULL;
	uint8_t b;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	b = (uint8_t)(x >> ((off & 7) * 8));
	return b ? b : 0xa5;
}

static void pattern_fill(uint8_t *buf, off_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern_byte((uint64_t)off + i);
}

/* ------------------------------------------------------------ model */

static void ranges_remove(struct sm_ranges *r, off_t start, off_t end)
{
	size_t i, j = 0;
	struct sm_range *out;
	size_t cap = 0;

	out = grow(NULL, &cap, r->n + 2, sizeof(*out));
	for (i = 0; i < r->n; i++) {
		struct sm_range x = r->v[i];

		if (x.end <= start || x.start >= end) {
			out[j++] = x;
			continue;
		}
		if (x.start < start)
			out[j++] = (struct sm_range){ x.start, start };
		if (x.end > end)
			out[j++] = (struct sm_range){ end, x.end };
	}
	free(r->v);
	r->v = out;
	r->n = j;
	r->cap = cap;
}

static void ranges_add(struct sm_ranges *r, off_t start, off_t end)
{
	size_t i = 0, j;

	/* first range that touches or follows [start, end) */
	while (i < r->n && r->v[i].end < start)
		i++;
	j = i;
	while (j < r->n && r->v[j].start <= end) {
		if (r->v[j].start < start)
			start = r->v[j].start;
		if (r->v[j].end > end)
			end = r->v[j].end;
		j++;
	}
	/* replace v[i..j) by the merged range */
	if (j == i) {
		r->v = grow(r->v, &r->cap, r->n + 1, sizeof(*r->v));
		memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(*r->v));
		r->n++;
	} else if (j > i + 1) {
		memmove(&r->v[i + 1], &r->v[j], (r->n - j) * sizeof(*r->v));
		r->n -= j - i - 1;
	}
	r->v[i] = (struct sm_range){ start, end };
}

/* What LAYOUT makes of a new file: its data ranges and its size. */
static void model_build(const struct sm_layout *l, struct sm_ranges *data, off_t *size)
{
	size_t i;

	*size = 0;
	for (i = 0; i < l->n; i++) {
		const struct sm_op *op = &l->v[i];
		off_t end = op->off + op->len;

		switch (op->kind) {
		case SM_SIZE:
			*size = op->len;
			ranges_remove(data, op->len, INT64_MAX);
			break;
		case SM_DATA:
			ranges_add(data, op->off, end);
			/* fallthrough */
		case SM_UNWRITTEN:
		case SM_ZERO:
			if (end > *size)
				*size = end;
			if (op->kind == SM_ZERO)
				ranges_remove(data, op->off, end);
			break;
		case SM_KEEP:
			break;
		case SM_PUNCH:
			ranges_remove(data, op->off, end);
			break;
		}
	}
}

/* ------------------------------------------------------------ make */

static int apply_op(int fd, const char *path, const struct sm_op *op, uint8_t *buf)
{
	static const int modes[] = {
		[SM_UNWRITTEN] = 0,
		[SM_KEEP] = FALLOC_FL_KEEP_SIZE,
		[SM_PUNCH] = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		[SM_ZERO] = FALLOC_FL_ZERO_RANGE,
	};
	off_t done;

	switch (op->kind) {
	case SM_SIZE:
		if (ftruncate(fd, op->len) < 0) {
			fprintf(stderr, "lt_seekmap: ftruncate %s to %jd: %s\n", path,
				(intmax_t)op->len, strerror(errno));
			return -errno;
		}
		return 0;
	case SM_DATA:
		for (done = 0; done < op->len;) {
			size_t n = op->len - done > SM_IO_CHUNK ? SM_IO_CHUNK
								: (size_t)(op->len - done);
			ssize_t w;

			pattern_fill(buf, op->off + done, n);
			w = pwrite(fd, buf, n, op->off + done);
			if (w <= 0) {
				fprintf(stderr, "lt_seekmap: pwrite %s at %jd: %s\n", path,
					(intmax_t)(op->off + done),
					w < 0 ? strerror(errno) : "short");
				return w < 0 ? -errno : -EIO;
			}
			done += w;
		}
		return 0;
	default:
		if (fallocate(fd, modes[op->kind], op->off, op->len) < 0) {
			fprintf(stderr, "lt_seekmap: fallocate(%s) %s at %jd+%jd: %s\n",
				sm_kind_names[op->kind], path, (intmax_t)op->off, (intmax_t)op->len,
				strerror(errno));
			return -errno;
		}
		return 0;
	}
}

static int cmd_make(int argc, char **argv)
{
	struct sm_layout l = { 0 };
	uint8_t *buf;
	size_t i;
	int fd, rc = 0;

	if (argc != 2) {
		usage();
		return 2;
	}
	if (!parse_layout(&l, argv[1]))
		return bad("layout", argv[1]);
	buf = malloc(SM_IO_CHUNK);
	if (!buf) {
		fprintf(stderr, "lt_seekmap: malloc: out of memory\n");
		return 2;
	}
	fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "lt_seekmap: open %s: %s\n", argv[0], strerror(errno));
		rc = 2;
		goto out_free;
	}
	for (i = 0; i < l.n && rc == 0; i++)
		if (apply_op(fd, argv[0], &l.v[i], buf) < 0)
			rc = 2;
	if (close(fd) < 0 && rc == 0) {
		fprintf(stderr, "lt_seekmap: close %s: %s\n", argv[0], strerror(errno));
		rc = 2;
	}
out_free:
	free(buf);
	free(l.v);
	return rc;
}

/* ------------------------------------------------------------ maps */

static void map_add(struct sm_map *m, bool data, off_t off, off_t len)
{
	m->v = grow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
	m->v[m->n++] = (struct sm_seg){ .off = off, .len = len, .data = data };
}

/*
 * Walk FILE with SEEK_DATA/SEEK_HOLE. An answer that breaks the rules
 * (moving backwards, data past EOF) is reported and ends the walk with
 * -EIO; the segments found so far stay in the map.
 */
static int map_build(int fd, const char *name, struct sm_map *m)
{
	struct stat st;
	off_t off = 0, d, h;

	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "lt_seekmap: fstat %s: %s\n", name, strerror(errno));
		return -errno;
	}
	m->size = st.st_size;
	while (off < m->size) {
		if (m->n >= SM_SEGS_MAX) {
			fprintf(stderr, "lt_seekmap: %s: more than %d segments\n", name,
				SM_SEGS_MAX);
			return -E2BIG;
		}
		d = lseek(fd, off, SEEK_DATA);
		if (d < 0 && errno == ENXIO) {
			map_add(m, false, off, m->size - off);
			break;
		}
		if (d < 0) {
			fprintf(stderr, "lt_seekmap: lseek %s SEEK_DATA %jd: %s\n", name,
				(intmax_t)off, strerror(errno));
			return -errno;
		}
		if (d < off || d >= m->size) {
			fprintf(stderr, "%s: SEEK_DATA %jd returned %jd (size %jd)\n", name,
				(intmax_t)off, (intmax_t)d, (intmax_t)m->size);
			return -EIO;
		}
		if (d > off)
			map_add(m, false, off, d - off);
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0) {
			fprintf(stderr, "lt_seekmap: lseek %s SEEK_HOLE %jd: %s\n", name,
				(intmax_t)d, strerror(errno));
			return -errno;
		}
		if (h <= d || h > m->size) {
			fprintf(stderr, "%s: SEEK_HOLE %jd returned %jd (size %jd)\n", name,
				(intmax_t)d, (intmax_t)h, (intmax_t)m->size);
			return -EIO;
		}
		map_add(m, true, d, h - d);
		off = h;
	}
	return 0;
}

static void map_print(FILE *f, const char *prefix, const struct sm_map *m, size_t max)
{
	size_t i;

	for (i = 0; i < m->n && i < max; i++)
		fprintf(f, "%s%s %jd %jd\n", prefix, m->v[i].data ? "data" : "hole",
			(intmax_t)m->v[i].off, (intmax_t)m->v[i].len);
	if (i < m->n)
		fprintf(f, "%s... %zu more segments\n", prefix, m->n - i);
	fprintf(f, "%ssize %jd\n", prefix, (intmax_t)m->size);
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fprintf(stderr, "lt_seekmap: open %s: %s\n", path, strerror(errno));
	return fd;
}

static int cmd_map(int argc, char **argv)
{
	struct sm_map m = { 0 };
	int fd, rc;

	if (argc != 1) {
		usage();
		return 2;
	}
	fd = open_ro(argv[0]);
	if (fd < 0)
		return 2;
	rc = map_build(fd, argv[0], &m);
	map_print(stdout, "", &m, SIZE_MAX);
	close(fd);
	free(m.v);
	return rc < 0 ? 2 : 0;
}

/* ------------------------------------------------------------ contents */

/*
 * Runs of differing bytes, reported as "what differ in [start, end)" with
 * the first byte of each side, at most SM_REPORT_MAX of them.
 */
struct sm_diff {
	const char *what;
	off_t run_start; /* -1: no open run */
	uint8_t a0, b0;
	unsigned long runs;
};

static void diff_flush(struct sm_diff *d, off_t end)
{
	if (d->run_start < 0)
		return;
	if (d->runs < SM_REPORT_MAX)
		printf("%s differ in [%jd, %jd): first bytes 0x%02x 0x%02x\n", d->what,
		       (intmax_t)d->run_start, (intmax_t)end, d->a0, d->b0);
	d->runs++;
	d->run_start = -1;
}

/* Feed one chunk at OFF of both sides to the run tracker. */
static void diff_chunk(struct sm_diff *d, off_t off, const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	if (d->run_start < 0 && !memcmp(a, b, n))
		return;
	for (i = 0; i < n; i++) {
		if (a[i] != b[i] && d->run_start < 0) {
			d->run_start = off + i;
			d->a0 = a[i];
			d->b0 = b[i];
		} else if (a[i] == b[i] && d->run_start >= 0) {
			diff_flush(d, off + i);
		}
	}
}

static void diff_end(struct sm_diff *d, off_t end)
{
	diff_flush(d, end);
	if (d->runs > SM_REPORT_MAX)
		printf("%s differ in %lu more ranges\n", d->what, d->runs - SM_REPORT_MAX);
}

static int read_full(int fd, const char *name, uint8_t *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, off + got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "lt_seekmap: pread %s at %jd: %s\n", name,
				(intmax_t)(off + got), strerror(errno));
			return -errno;
		}
		if (r == 0) {
			printf("%s: end of file at %jd, before %jd\n", name, (intmax_t)(off + got),
			       (intmax_t)(off + n));
			memset(buf + got, 0, n - got);
			return 1;
		}
		got += r;
	}
	return 0;
}

/* ------------------------------------------------------------ cmp */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int cmp_off(const void *a, const void *b)
{
	off_t x = *(const off_t *)a, y = *(const off_t *)b;

	return x < y ? -1 : x > y;
}

struct sm_probes {
	off_t *v;
	size_t n, cap;
};

static void probe_add(struct sm_probes *p, off_t off)
{
	p->v = grow(p->v, &p->cap, p->n + 1, sizeof(*p->v));
	p->v[p->n++] = off;
}

static void probe_around(struct sm_probes *p, off_t off)
{
	if (off > 0)
		probe_add(p, off - 1);
	probe_add(p, off);
	if (off < INT64_MAX)
		probe_add(p, off + 1);
}

static void probes_from_map(struct sm_probes *p, const struct sm_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		probe_around(p, m->v[i].off);
		probe_around(p, m->v[i].off + m->v[i].len);
	}
	probe_around(p, m->size);
	probe_add(p, m->size + 4096);
}

/*
 * With -q the inside of a long hole is read only in a few windows (head,
 * tail, middle and two random places), so that a file of many GiB can be
 * checked in seconds. Add what is left out of the hole [s, e) to SKIP.
 */
static void skip_hole(struct sm_ranges *skip, off_t s, off_t e)
{
	const off_t win = SM_IO_CHUNK;
	off_t w[5], prev;
	size_t i;

	if (!sm_quick || e - s < SM_QUICK_MIN)
		return;
	w[0] = s;
	w[1] = e - win;
	w[2] = s + (e - s) / 2;
	w[3] = s + (off_t)(rng_next() % (uint64_t)(e - s - win));
	w[4] = s + (off_t)(rng_next() % (uint64_t)(e - s - win));
	for (i = 2; i < 5; i++)
		w[i] = (w[i] & ~(off_t)4095) < s ? s : (w[i] & ~(off_t)4095);
	qsort(w, 5, sizeof(w[0]), cmp_off);
	for (prev = s, i = 0; i < 5; i++) {
		if (w[i] > prev)
			ranges_add(skip, prev, w[i]);
		if (w[i] + win > prev)
			prev = w[i] + win;
	}
}

/* Skip inside the ranges that both maps report as holes. */
static void skip_common_holes(struct sm_ranges *skip, const struct sm_map *a,
			      const struct sm_map *b)
{
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		const struct sm_seg *x = &a->v[i], *y = &b->v[j];
		off_t s = x->off > y->off ? x->off : y->off;
		off_t xe = x->off + x->len, ye = y->off + y->len;
		off_t e = xe < ye ? xe : ye;

		if (!x->data && !y->data && s < e)
			skip_hole(skip, s, e);
		if (xe < ye)
			i++;
		else
			j++;
	}
}

/*
 * The length of the next read at *off before END, after moving *off past
 * skipped ranges (which also ends an open run of differences); 0 at END.
 */
static size_t next_read(const struct sm_ranges *skip, size_t *si, off_t *off, off_t end,
			struct sm_diff *d)
{
	size_t n;

	for (;;) {
		while (*si < skip->n && skip->v[*si].end <= *off)
			(*si)++;
		if (*si >= skip->n || skip->v[*si].start > *off)
			break;
		diff_flush(d, *off);
		*off = skip->v[*si].end;
	}
	if (*off >= end)
		return 0;
	n = end - *off > SM_IO_CHUNK ? SM_IO_CHUNK : (size_t)(end - *off);
	if (*si < skip->n && skip->v[*si].start - *off < (off_t)n)
		n = (size_t)(skip->v[*si].start - *off);
	return n;
}

/* lseek result or -errno */
static off_t seek_result(int fd, off_t off, int whence)
{
	off_t r = lseek(fd, off, whence);

	return r < 0 ? -errno : r;
}

static const char *result_str(off_t r, char *buf, size_t len)
{
	const char *name;

	if (r >= 0) {
		snprintf(buf, len, "%jd", (intmax_t)r);
		return buf;
	}
	name = strerrorname_np((int)-r);
	if (name)
		return name;
	snprintf(buf, len, "E%d", (int)-r);
	return buf;
}

static int cmd_cmp(int argc, char **argv)
{
	const char *na, *nb;
	struct sm_map ma = { 0 }, mb = { 0 };
	struct sm_probes p = { 0 };
	struct sm_diff bytes = { .what = "bytes", .run_start = -1 };
	struct sm_ranges skip = { 0 };
	unsigned long seek_diffs = 0;
	uint8_t *ba = NULL, *bb = NULL;
	off_t maxsize, off, common;
	size_t i, k, n, si = 0;
	int fa, fb, ea, eb, rc = 2;
	bool differ = false;

	if (argc != 2) {
		usage();
		return 2;
	}
	na = argv[0];
	nb = argv[1];

	fa = open_ro(na);
	if (fa < 0)
		return 2;
	fb = open_ro(nb);
	if (fb < 0)
		goto out_close_a;

	/* The two maps, taken one right after the other. */
	ea = map_build(fa, na, &ma);
	eb = map_build(fb, nb, &mb);
	if (ea < 0 || eb < 0) {
		printf("map walk failed (see above)\n");
		differ = true;
	}
	if (ma.size != mb.size) {
		printf("size: A=%jd B=%jd\n", (intmax_t)ma.size, (intmax_t)mb.size);
		differ = true;
	}

	/* Probe offsets from both maps, the ends, and random ones. */
	probe_add(&p, -1);
	probe_add(&p, 0);
	probes_from_map(&p, &ma);
	probes_from_map(&p, &mb);
	maxsize = ma.size > mb.size ? ma.size : mb.size;
	probe_add(&p, maxsize + (1LL << 32));
	for (i = 0; i < SM_RANDOM_PROBES; i++)
		probe_add(&p, (off_t)(rng_next() % (uint64_t)(maxsize + 2)));
	qsort(p.v, p.n, sizeof(*p.v), cmp_off);
	for (i = 0, k = 0; i < p.n; i++)
		if (k == 0 || p.v[i] != p.v[k - 1])
			p.v[k++] = p.v[i];
	p.n = k;

	for (i = 0; i < p.n; i++) {
		static const int whences[] = { SEEK_DATA, SEEK_HOLE };

		for (k = 0; k < 2; k++) {
			off_t ra = seek_result(fa, p.v[i], whences[k]);
			off_t rb = seek_result(fb, p.v[i], whences[k]);
			char sa[32], sb[32];

			if (ra == rb)
				continue;
			if (seek_diffs++ < SM_REPORT_MAX)
				printf("%s %jd: A=%s B=%s\n", k ? "SEEK_HOLE" : "SEEK_DATA",
				       (intmax_t)p.v[i], result_str(ra, sa, sizeof(sa)),
				       result_str(rb, sb, sizeof(sb)));
		}
	}
	if (seek_diffs > SM_REPORT_MAX)
		printf("%lu more lseek differences\n", seek_diffs - SM_REPORT_MAX);
	if (seek_diffs) {
		printf("lseek results differ at %lu of %zu probes (seed %" PRIu64 ")\n", seek_diffs,
		       2 * p.n, sm_seed);
		differ = true;
	}

	/* Contents, byte for byte, over the common size. */
	ba = malloc(SM_IO_CHUNK);
	bb = malloc(SM_IO_CHUNK);
	if (!ba || !bb) {
		fprintf(stderr, "lt_seekmap: malloc: out of memory\n");
		goto out_free;
	}
	common = ma.size < mb.size ? ma.size : mb.size;
	skip_common_holes(&skip, &ma, &mb);
	for (off = 0; (n = next_read(&skip, &si, &off, common, &bytes)) > 0; off += n) {
		ea = read_full(fa, na, ba, n, off);
		eb = read_full(fb, nb, bb, n, off);
		if (ea < 0 || eb < 0)
			goto out_free;
		if (ea || eb)
			differ = true;
		diff_chunk(&bytes, off, ba, bb, n);
	}
	diff_end(&bytes, common);
	if (bytes.runs)
		differ = true;

	if (differ) {
		printf("map A (%s):\n", na);
		map_print(stdout, "  ", &ma, SM_MAP_PRINT_MAX);
		printf("map B (%s):\n", nb);
		map_print(stdout, "  ", &mb, SM_MAP_PRINT_MAX);
	}
	rc = differ ? 1 : 0;
out_free:
	free(ba);
	free(bb);
	free(p.v);
	free(skip.v);
	free(ma.v);
	free(mb.v);
	close(fb);
out_close_a:
	close(fa);
	return rc;
}

/* ------------------------------------------------------------ check */

/* Expected bytes of [off, off+n) from the model's data ranges. */
static void expected_fill(const struct sm_ranges *data, uint8_t *buf, off_t off, size_t n)
{
	off_t end = off + (off_t)n;
	size_t i;

	memset(buf, 0, n);
	for (i = 0; i < data->n; i++) {
		off_t s = data->v[i].start, e = data->v[i].end;

		if (e <= off || s >= end)
			continue;
		if (s < off)
			s = off;
		if (e > end)
			e = end;
		pattern_fill(buf + (s - off), s, (size_t)(e - s));
	}
}

static int cmd_check(int argc, char **argv)
{
	struct sm_layout l = { 0 };
	struct sm_ranges data = { 0 };
	struct sm_map m = { 0 };
	struct sm_diff bytes = { .what = "bytes (file, expected)", .run_start = -1 };
	struct sm_ranges skip = { 0 };
	unsigned long lies = 0;
	uint8_t *buf = NULL, *exp = NULL;
	off_t size, off;
	size_t i, j, n, si = 0;
	int fd, rc = 2;
	bool differ = false;

	if (argc != 2) {
		usage();
		return 2;
	}
	if (!parse_layout(&l, argv[1]))
		return bad("layout", argv[1]);
	model_build(&l, &data, &size);
	fd = open_ro(argv[0]);
	if (fd < 0)
		goto out_free_model;

	if (map_build(fd, argv[0], &m) < 0) {
		printf("map walk failed (see above)\n");
		differ = true;
	}
	if (m.size != size) {
		printf("size: file %jd, expected %jd\n", (intmax_t)m.size, (intmax_t)size);
		differ = true;
	}
	/* No byte written by the layout may be reported as a hole. */
	for (i = 0; i < m.n; i++) {
		off_t hs = m.v[i].off, he = m.v[i].off + m.v[i].len;

		if (m.v[i].data)
			continue;
		for (j = 0; j < data.n; j++) {
			off_t s = data.v[j].start > hs ? data.v[j].start : hs;
			off_t e = data.v[j].end < he ? data.v[j].end : he;

			if (s >= e)
				continue;
			if (lies++ < SM_REPORT_MAX)
				printf("data reported as hole in [%jd, %jd)\n", (intmax_t)s,
				       (intmax_t)e);
		}
	}
	if (lies) {
		differ = true;
		if (lies > SM_REPORT_MAX)
			printf("data reported as hole in %lu more ranges\n", lies - SM_REPORT_MAX);
	}

	/* Holes and unwritten ranges read as zeros, data as the pattern. */
	buf = malloc(SM_IO_CHUNK);
	exp = malloc(SM_IO_CHUNK);
	if (!buf || !exp) {
		fprintf(stderr, "lt_seekmap: malloc: out of memory\n");
		goto out_free;
	}
	if (m.size < size)
		size = m.size;
	for (i = 0; i < m.n; i++)
		if (!m.v[i].data)
			skip_hole(&skip, m.v[i].off, m.v[i].off + m.v[i].len);
	for (j = 0; j < data.n && skip.n; j++)
		ranges_remove(&skip, data.v[j].start, data.v[j].end);
	for (off = 0; (n = next_read(&skip, &si, &off, size, &bytes)) > 0; off += n) {
		int e = read_full(fd, argv[0], buf, n, off);

		if (e < 0)
			goto out_free;
		if (e)
			differ = true;
		expected_fill(&data, exp, off, n);
		diff_chunk(&bytes, off, buf, exp, n);
	}
	diff_end(&bytes, size);
	if (bytes.runs)
		differ = true;
	if (differ) {
		printf("map (%s):\n", argv[0]);
		map_print(stdout, "  ", &m, SM_MAP_PRINT_MAX);
	}
	rc = differ ? 1 : 0;
out_free:
	free(buf);
	free(exp);
	free(skip.v);
	free(m.v);
	close(fd);
out_free_model:
	free(data.v);
	free(l.v);
	return rc;
}

/* ------------------------------------------------------------ seek */

static int cmd_seek(int argc, char **argv)
{
	char sbuf[32];
	off_t off;
	int fd, whence;

	if (argc != 3) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "data"))
		whence = SEEK_DATA;
	else if (!strcmp(argv[1], "hole"))
		whence = SEEK_HOLE;
	else
		return bad("whence", argv[1]);
	if (!strcmp(argv[2], "-1"))
		off = -1;
	else if (!parse_whole_num(argv[2], &off))
		return bad("offset", argv[2]);
	fd = open_ro(argv[0]);
	if (fd < 0)
		return 2;
	printf("%s\n", result_str(seek_result(fd, off, whence), sbuf, sizeof(sbuf)));
	close(fd);
	return 0;
}

/* ------------------------------------------------------------ probe */

static int cmd_probe(int argc, char **argv)
{
	char sd[32], sh[32];
	off_t off;
	int fd, i;

	if (argc < 2) {
		usage();
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-1") && !parse_whole_num(argv[i], &off))
			return bad("offset", argv[i]);
	fd = open_ro(argv[0]);
	if (fd < 0)
		return 2;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-1"))
			off = -1;
		else
			parse_whole_num(argv[i], &off);
		printf("%jd %s %s\n", (intmax_t)off,
		       result_str(seek_result(fd, off, SEEK_DATA), sd, sizeof(sd)),
		       result_str(seek_result(fd, off, SEEK_HOLE), sh, sizeof(sh)));
	}
	close(fd);
	return 0;
}

/* ------------------------------------------------------------ drop */

/*
 * Flush FILE and drop its clean cached pages, so that two files that went
 * through the same calls have the same (canonical) map again.
 */
static int cmd_drop(int argc, char **argv)
{
	int fd, rc;

	if (argc != 1) {
		usage();
		return 2;
	}
	fd = open_ro(argv[0]);
	if (fd < 0)
		return 2;
	if (fdatasync(fd) < 0) {
		fprintf(stderr, "lt_seekmap: fdatasync %s: %s\n", argv[0], strerror(errno));
		close(fd);
		return 2;
	}
	rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (rc)
		fprintf(stderr, "lt_seekmap: posix_fadvise %s: %s\n", argv[0], strerror(rc));
	close(fd);
	return rc ? 2 : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "make", cmd_make },	{ "map", cmd_map },   { "cmp", cmd_cmp },
		{ "check", cmd_check }, { "seek", cmd_seek }, { "probe", cmd_probe },
		{ "drop", cmd_drop },
	};
	off_t seed;
	size_t i;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		usage();
		return 2;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]))
		return bad("command", argv[1]);
	/* options follow the command: getopt sees it as argv[0] */
	while ((opt = getopt(argc - 1, argv + 1, "+qs:")) != -1) {
		switch (opt) {
		case 'q':
			sm_quick = true;
			break;
		case 's':
			if (!parse_whole_num(optarg, &seed))
				return bad("seed", optarg);
			sm_seed = (uint64_t)seed;
			break;
		default:
			usage();
			return 2;
		}
	}
	rng_state = sm_seed ? sm_seed : 1;
	return cmds[i].fn(argc - 1 - optind, argv + 1 + optind);
}
