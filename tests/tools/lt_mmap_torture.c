// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_mmap_torture: writes through a shared writable mapping race the
 * lacunafs sparse-read ioctl.
 *
 *   lt_mmap_torture [--seconds S] [--writers W] [--readers R]
 *                   [--regions N] [--region-kib K] [--stop-after N]
 *                   [--expect-race] FILE
 *   lt_mmap_torture write [--odirect|--append] FILE SIZE {OFF LEN BYTE}...
 *   lt_mmap_torture coherent FILE OFF
 *
 * write: open FILE read-write (with O_DIRECT or O_APPEND), extend it to
 * SIZE, map it MAP_SHARED PROT_WRITE, set LEN bytes at OFF to BYTE for
 * each triple, msync(MS_SYNC), unmap. coherent: with FILE mapped shared
 * and one byte at OFF read through the mapping, pwrite a different byte
 * there through a second descriptor; the mapping must show it at once.
 * Both print "ok - ..." or "FAIL ..." and exit 0 or 1 (2: bad usage).
 *
 * FILE (created or truncated, on a lacunafs mount) holds N regions of K
 * KiB (default 8 of 256), each starting on a 2 MiB boundary and followed
 * by a gap of at least 64 KiB never written (a hole). FILE is mapped
 * MAP_SHARED, PROT_WRITE. Writer threads each own
 * some regions and keep rewriting one whole region through the mapping
 * with a pattern unique to that write, then msync(MS_SYNC) it (which
 * waits for every dirty page of the range; sync_file_range's writeback
 * may skip busy pages).
 * Reader threads ask lacuna_sparse_read() for random ranges (8-byte
 * aligned, up to the whole file; half of them one whole region) and check
 * every reply.
 *
 * Operation
 * ---------
 * Unit. The pages a writeback writes reach lacunafs as FUSE writes of a
 * run of contiguous dirty pages, up to max_pages (256) pages each, and
 * each takes the range lock like a write(2). The page cache may hold a
 * mapping in large folios, written back whole, so a region starts on a
 * 2 MiB boundary (the largest folio): no folio holds pages of two regions,
 * and a region of up to 1 MiB made dirty whole and then written back is
 * the start of one such write, whatever the folios: a sparse read sees
 * all of the region's new bytes or none of them. The kernel also writes
 * dirty pages back on its own, and early on a FUSE mount (its bdi's
 * strict_limit, max_ratio 1%), in the middle of a writer's stores: that
 * splits a region legitimately. Run this on a mount whose limit is lifted
 * (strict_limit 0, max_ratio 100), as tests/integ/mmap_shared.sh does.
 *
 * Pattern. 8-byte word i of region r written by its g-th write holds
 * 1 << 63 | g << 28 | r << 20 | i (i < 2^20, so regions up to 8 MiB).
 * Any word says which write and which region it came from.
 *
 * Checks. Each reply: segments contiguous from the request's offset,
 * data segments' words the pattern of their place (or zero: an
 * unwritten region reads as zeros), holes only where words are zero;
 * then, for every region the reply covers, every covered word is of one
 * write (g), or all are zero. A region showing two writes, or pattern
 * and zeros, is torn: printed as "# VIOLATION ...". The reply must also
 * be marked atomic (taken under the range lock).
 *
 * Output: "ok - ..." or "FAIL ..." lines for tests/lib.sh's
 * lt_run_checks. Exit 0 (pass), 1 (a check failed), 2 (could not run).
 * --expect-race inverts the verdict: the run passes when a torn region
 * was seen (for a mount whose range lock is disabled), and stops after
 * --stop-after of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

#define LT_GAP (64 * 1024)
/* regions start on this, the largest page-cache folio (a PMD) */
#define LT_ALIGN (2 * 1024 * 1024)
#define LT_MAX_THREADS 16
#define LT_MAX_REGIONS 256

static struct {
	unsigned int seconds, nwriters, nreaders, nregions;
	size_t region, stride, size;
	unsigned long stop_after;
	bool expect_race;
	uint8_t *map;
	int rfd, wfd;
	struct lacuna_client *client;
	uint8_t *arena;
	bool stop;		 /* __atomic */
	unsigned long torn;	 /* __atomic */
	unsigned long errors;	 /* __atomic: malformed replies, failed calls */
	unsigned long replies;	 /* __atomic */
	unsigned long writes;	 /* __atomic */
	unsigned long notatomic; /* __atomic */
} lt = {
	.seconds = 5,
	.nwriters = 2,
	.nreaders = 2,
	.nregions = 8,
	.region = 256 * 1024,
	.stop_after = 3,
};

static void die(const char *what, int err)
{
	fprintf(stderr, "lt_mmap_torture: %s: %s\n", what, strerror(err));
	exit(2);
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint64_t lt_word(uint64_t g, unsigned int r, uint64_t i)
{
	return 1ULL << 63 | g << 28 | (uint64_t)r << 20 | i;
}

static void *writer(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg, r;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (w + 1), gen[LT_MAX_REGIONS] = { 0 };
	unsigned int mine[LT_MAX_REGIONS], nmine = 0;

	for (r = w; r < lt.nregions; r += lt.nwriters)
		mine[nmine++] = r;
	while (nmine && !__atomic_load_n(&lt.stop, __ATOMIC_RELAXED)) {
		uint64_t *p, g, i, n = lt.region / 8;

		r = mine[rnd(&seed) % nmine];
		g = ++gen[r];
		p = (uint64_t *)(lt.map + (size_t)r * lt.stride);
		for (i = 0; i < n; i++)
			p[i] = lt_word(g, r, i);
		if (msync(p, lt.region, MS_SYNC) < 0) {
			printf("FAIL msync: %s\n", strerror(errno));
			__atomic_fetch_add(&lt.errors, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&lt.stop, true, __ATOMIC_RELAXED);
			break;
		}
		__atomic_fetch_add(&lt.writes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

struct lt_seen {
	bool any;
	uint64_t g; /* 0: zeros */
	uint64_t at;
};

/* Record word value v found at file offset off; false if it is wrong. */
static bool see(struct lt_seen *seen, uint64_t off, uint64_t v, uint64_t req)
{
	unsigned int r = (unsigned int)(off / lt.stride);
	uint64_t in = off % lt.stride, g = 0;

	if (in >= lt.region) {
		if (v) {
			printf("# VIOLATION request at %llu: non-zero word in the gap at %llu\n",
			       (unsigned long long)req, (unsigned long long)off);
			__atomic_fetch_add(&lt.errors, 1, __ATOMIC_RELAXED);
			return false;
		}
		return true;
	}
	if (v) {
		g = (v >> 28) & ((1ULL << 35) - 1);
		if (v != lt_word(g, r, in / 8) || !g) {
			printf("# VIOLATION request at %llu: word %#llx at %llu is no pattern of "
			       "that place\n",
			       (unsigned long long)req, (unsigned long long)v,
			       (unsigned long long)off);
			__atomic_fetch_add(&lt.errors, 1, __ATOMIC_RELAXED);
			return false;
		}
	}
	if (!seen[r].any) {
		seen[r] = (struct lt_seen){ true, g, off };
		return true;
	}
	if (seen[r].g != g) {
		printf("# VIOLATION request at %llu: region %u torn: write %llu at %llu, "
		       "write %llu at %llu (0 = zeros)\n",
		       (unsigned long long)req, r, (unsigned long long)seen[r].g,
		       (unsigned long long)seen[r].at, (unsigned long long)g,
		       (unsigned long long)off);
		__atomic_fetch_add(&lt.torn, 1, __ATOMIC_RELAXED);
		seen[r].g = g; /* report each tear once */
		return false;
	}
	return true;
}

static void check_reply(const struct lacuna_result *res, uint64_t off)
{
	struct lt_seen seen[LT_MAX_REGIONS] = { 0 };
	uint64_t pos = off, o;
	unsigned int i;

	if (!res->atomic)
		__atomic_fetch_add(&lt.notatomic, 1, __ATOMIC_RELAXED);
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		if (e->offset != pos || (e->kind == LACUNA_SEG_DATA && !e->data)) {
			printf("# VIOLATION request at %llu: segment %u at %llu, expected at "
			       "%llu\n",
			       (unsigned long long)off, i, (unsigned long long)e->offset,
			       (unsigned long long)pos);
			__atomic_fetch_add(&lt.errors, 1, __ATOMIC_RELAXED);
			return;
		}
		/* words wholly inside the segment; the request is 8-byte aligned */
		for (o = (e->offset + 7) & ~7ULL; o + 8 <= e->offset + e->length; o += 8) {
			uint64_t v = 0;

			if (e->kind == LACUNA_SEG_DATA)
				memcpy(&v, e->data + (o - e->offset), 8);
			if (!see(seen, o, v, off))
				break;
		}
		pos = e->offset + e->length;
	}
}

static void *reader(void *arg)
{
	unsigned int n = (unsigned int)(uintptr_t)arg;
	uint64_t seed = 0xd1b54a32d192ed03ULL * (n + 7);
	struct lacuna_result *res = malloc(sizeof(*res));
	uint8_t *buf = lt.arena + (size_t)n * lt.size;

	if (!res)
		die("malloc", ENOMEM);
	while (!__atomic_load_n(&lt.stop, __ATOMIC_RELAXED)) {
		uint64_t off = (rnd(&seed) % lt.size) & ~7ULL;
		uint64_t len = ((rnd(&seed) % (lt.size - off)) & ~7ULL) + 8;
		int rc;

		if (rnd(&seed) & 1) {
			/* one whole region: the likeliest to meet a write */
			off = (rnd(&seed) % lt.nregions) * lt.stride;
			len = lt.region;
		}
		rc = lacuna_sparse_read(lt.client, lt.rfd, off, len, LACUNA_READ_DATA, buf, lt.size,
					res);

		if (rc) {
			printf("FAIL lacuna_sparse_read at %llu: %s\n", (unsigned long long)off,
			       strerror(-rc));
			__atomic_fetch_add(&lt.errors, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&lt.stop, true, __ATOMIC_RELAXED);
			break;
		}
		check_reply(res, off);
		__atomic_fetch_add(&lt.replies, 1, __ATOMIC_RELAXED);
		if (lt.expect_race && __atomic_load_n(&lt.torn, __ATOMIC_RELAXED) >= lt.stop_after)
			__atomic_store_n(&lt.stop, true, __ATOMIC_RELAXED);
	}
	free(res);
	return NULL;
}

static unsigned long arg_num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v == 0 || v > max) {
		fprintf(stderr, "lt_mmap_torture: bad number '%s' (1..%lu)\n", s, max);
		exit(2);
	}
	return v;
}

static int mmap_write(int argc, char **argv)
{
	bool odirect = argc > 2 && !strcmp(argv[2], "--odirect");
	bool append = argc > 2 && !strcmp(argv[2], "--append");
	int i = odirect || append ? 3 : 2, fd;
	size_t size;
	uint8_t *p;

	if (argc - i < 5 || (argc - i - 2) % 3) {
		fprintf(stderr, "usage: lt_mmap_torture write [--odirect|--append] FILE SIZE "
				"{OFF LEN BYTE}...\n");
		return 2;
	}
	fd = open(argv[i],
		  O_RDWR | O_CREAT | O_CLOEXEC | (odirect ? O_DIRECT : 0) | (append ? O_APPEND : 0),
		  0644);
	if (fd < 0)
		die(argv[i], errno);
	size = strtoull(argv[i + 1], NULL, 0);
	if (ftruncate(fd, (off_t)size) < 0)
		die("ftruncate", errno);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("FAIL mmap MAP_SHARED PROT_WRITE: %s\n", strerror(errno));
		return 1;
	}
	for (i += 2; i + 2 < argc; i += 3) {
		size_t off = strtoull(argv[i], NULL, 0), len = strtoull(argv[i + 1], NULL, 0);

		if (off > size || len > size - off)
			die("range past SIZE", EINVAL);
		memset(p + off, (int)strtol(argv[i + 2], NULL, 0), len);
	}
	if (msync(p, size, MS_SYNC) < 0) {
		printf("FAIL msync: %s\n", strerror(errno));
		return 1;
	}
	munmap(p, size);
	if (close(fd) < 0) {
		printf("FAIL close: %s\n", strerror(errno));
		return 1;
	}
	printf("ok - wrote through a shared mapping%s\n", odirect  ? " of an O_DIRECT open"
							  : append ? " of an O_APPEND open"
								   : "");
	return 0;
}

static int mmap_coherent(int argc, char **argv)
{
	volatile uint8_t *p;
	uint8_t old, new;
	size_t off;
	int fd, fd2;

	if (argc != 4) {
		fprintf(stderr, "usage: lt_mmap_torture coherent FILE OFF\n");
		return 2;
	}
	off = strtoull(argv[3], NULL, 0);
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	fd2 = open(argv[2], O_WRONLY | O_CLOEXEC);
	if (fd < 0 || fd2 < 0)
		die(argv[2], errno);
	p = mmap(NULL, off + 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("FAIL mmap: %s\n", strerror(errno));
		return 1;
	}
	old = p[off];
	new = (uint8_t)(old + 1);
	if (pwrite(fd2, &new, 1, (off_t)off) != 1)
		die("pwrite", errno);
	if (p[off] != new) {
		printf("FAIL the mapping shows %#x after a write(2) of %#x through the mount\n",
		       p[off], new);
		return 1;
	}
	printf("ok - the mapping shows a write(2) made through the mount\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "writers", required_argument, NULL, 'w' },
		{ "readers", required_argument, NULL, 'r' },
		{ "regions", required_argument, NULL, 'n' },
		{ "region-kib", required_argument, NULL, 'k' },
		{ "stop-after", required_argument, NULL, 'a' },
		{ "expect-race", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_t th[2 * LT_MAX_THREADS];
	unsigned int i, nth = 0;
	struct timespec end, now;
	int c, wfd, rc;

	if (argc > 1 && !strcmp(argv[1], "write"))
		return mmap_write(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "coherent"))
		return mmap_coherent(argc, argv);

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			lt.seconds = (unsigned int)arg_num(optarg, 3600);
			break;
		case 'w':
			lt.nwriters = (unsigned int)arg_num(optarg, LT_MAX_THREADS);
			break;
		case 'r':
			lt.nreaders = (unsigned int)arg_num(optarg, LT_MAX_THREADS);
			break;
		case 'n':
			lt.nregions = (unsigned int)arg_num(optarg, LT_MAX_REGIONS);
			break;
		case 'k':
			lt.region = arg_num(optarg, 8192) * 1024;
			break;
		case 'a':
			lt.stop_after = arg_num(optarg, 1000000);
			break;
		case 'x':
			lt.expect_race = true;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: lt_mmap_torture [options] FILE\n");
		return 2;
	}
	if (lt.region % 4096) {
		fprintf(stderr, "lt_mmap_torture: --region-kib must be a multiple of 4\n");
		return 2;
	}
	lt.stride = (lt.region + LT_GAP + LT_ALIGN - 1) / LT_ALIGN * LT_ALIGN;
	lt.size = lt.stride * lt.nregions;

	lt.wfd = wfd = open(argv[optind], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (wfd < 0)
		die(argv[optind], errno);
	if (ftruncate(wfd, (off_t)lt.size) < 0)
		die("ftruncate", errno);
	lt.map = mmap(NULL, lt.size, PROT_READ | PROT_WRITE, MAP_SHARED, wfd, 0);
	if (lt.map == MAP_FAILED)
		die("mmap MAP_SHARED PROT_WRITE", errno);
	lt.rfd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (lt.rfd < 0)
		die(argv[optind], errno);
	rc = lacuna_client_open(lt.rfd, lt.size * lt.nreaders, &lt.client);
	if (rc)
		die("lacuna_client_open", -rc);
	lt.arena = lacuna_client_arena(lt.client, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < lt.nwriters; i++)
		if (pthread_create(&th[nth++], NULL, writer, (void *)(uintptr_t)i))
			die("pthread_create", EAGAIN);
	for (i = 0; i < lt.nreaders; i++)
		if (pthread_create(&th[nth++], NULL, reader, (void *)(uintptr_t)i))
			die("pthread_create", EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += lt.seconds;
	do {
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!__atomic_load_n(&lt.stop, __ATOMIC_RELAXED) &&
		 (now.tv_sec < end.tv_sec ||
		  (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
	__atomic_store_n(&lt.stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);

	printf("# %lu region writes through the mapping, %lu sparse reads, %lu torn, %lu other "
	       "errors\n",
	       lt.writes, lt.replies, lt.torn, lt.errors);
	rc = 0;
	if (lt.errors) {
		printf("FAIL %lu malformed replies or failed calls\n", lt.errors);
		rc = 1;
	}
	if (!lt.writes || !lt.replies) {
		printf("FAIL no writes or no replies\n");
		rc = 1;
	}
	if (lt.expect_race) {
		if (lt.torn)
			printf("ok - %lu torn regions caught\n", lt.torn);
		else {
			printf("FAIL no torn region caught in %u s\n", lt.seconds);
			rc = 1;
		}
	} else if (lt.torn || lt.notatomic) {
		printf("FAIL %lu torn regions, %lu replies not atomic\n", lt.torn, lt.notatomic);
		rc = 1;
	} else {
		printf("ok - no torn region in %lu sparse reads against %lu mapped writes\n",
		       lt.replies, lt.writes);
	}
	lacuna_client_close(lt.client);
	munmap(lt.map, lt.size);
	close(lt.rfd);
	close(wfd);
	return rc;
}
