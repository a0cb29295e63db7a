// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sr_bench: the measuring program behind bench/sparse-bench.sh. Each
 * subcommand times whole passes over one file and prints one line per
 * pass of key=value fields, for the script to take medians of:
 *
 *   mkfile FILE SIZE [EXTENTS]
 *	write FILE: SIZE bytes of a non-zero pattern, or with EXTENTS > 0
 *	that many data extents spaced evenly, holes between them (the
 *	size is set first, so no write extends the file and XFS makes no
 *	speculative preallocation that would fill the holes)
 *   sparse FILE	liblacuna ARENA reads, CHUNK bytes a call, into the
 *			registered arena (FILE must be on lacunafs)
 *   pread FILE		pread of CHUNK bytes at a time into one buffer
 *   map FILE		LACUNA_READ_MAP over the whole file, looping on
 *			next_offset (lacunafs: the ioctl; elsewhere
 *			liblacuna's SEEK_DATA/SEEK_HOLE fallback)
 *   seek FILE		SEEK_DATA/SEEK_HOLE over the whole file
 *   rtt FILE		cost of one ioctl round trip: LACUNA_IOC_INFO, and a
 *			map-only sparse read of the first 4 KiB
 *   resident FILE	percent of FILE's pages in the page cache of the
 *			filesystem FILE is on (mmap + mincore; on a FUSE
 *			mount, the mount's own cache, not the backing one)
 *
 * Options: -c CHUNK (bytes, default 1 MiB), -r PASSES (default 1),
 * -n CALLS (rtt, default 20000), -l LABEL (the first word of each result
 * line instead of the subcommand's name), -p PID (also report the CPU
 * time that process, e.g. the lacunafs daemon, used during each pass:
 * its process CPU-time clock, all threads), --cold (pread: posix_fadvise
 * DONTNEED on the file before each pass, which empties the page cache of
 * that file on the filesystem it is opened on and nothing else; the
 * resident_pct field says what was left when the clock started).
 *
 * Buffers and the arena are touched before the clock starts (an untimed
 * first call, or for map and seek an untimed first pass that also loads
 * the extent tree), so first-touch costs are not counted. Every
 * pass checks that it delivered the whole file (sparse, pread) or covered
 * it (map, seek). sparse, map and rtt end with a line "ioctls total=N":
 * every ioctl the run made, untimed ones included (to relate counts taken
 * outside, such as the daemon's syscalls, to calls). Exit 0, or 1 with a
 * message naming the failing call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

static uint64_t chunk = 1 << 20;
static unsigned int passes = 1;
static unsigned long ncalls = 20000;
static long daemon_pid;
static int cold;
static const char *label;    /* -l: first word of each result line */
static unsigned long nioctl; /* ioctls issued, untimed ones included */

static void die(const char *call, int err)
{
	fprintf(stderr, "sr_bench: %s: %s\n", call, strerror(err));
	exit(1);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * CPU time daemon_pid has used so far, in ns, all its threads together,
 * those that have exited included (0 without -p)
 */
static uint64_t daemon_cpu_ns(void)
{
	static clockid_t clk;
	static bool have;
	int rc;

	if (!daemon_pid)
		return 0;
	if (!have) {
		rc = clock_getcpuclockid((pid_t)daemon_pid, &clk);
		if (rc)
			die("clock_getcpuclockid", rc);
		have = true;
	}
	return now_ns(clk);
}

/* per-pass counters */
struct pass {
	uint64_t t0, cpu0, dcpu0;
};

static void pass_start(struct pass *p)
{
	p->dcpu0 = daemon_cpu_ns();
	p->cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	p->t0 = now_ns(CLOCK_MONOTONIC);
}

static void pass_end(const struct pass *p, const char *what, unsigned int i, uint64_t bytes,
		     uint64_t calls, const char *extra)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC) - p->t0;
	uint64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - p->cpu0;
	uint64_t dcpu = daemon_cpu_ns() - p->dcpu0;

	if (label)
		what = label;
	printf("%s pass=%u bytes=%" PRIu64 " ns=%" PRIu64 " calls=%" PRIu64
	       " GBps=%.3f us_per_call=%.2f client_cpu_ns=%" PRIu64 " daemon_cpu_ns=%" PRIu64
	       "%s%s\n",
	       what, i, bytes, t, calls, t ? (double)bytes / (double)t : 0.0,
	       calls ? (double)t / 1000.0 / (double)calls : 0.0, cpu, daemon_pid ? dcpu : 0,
	       extra && *extra ? " " : "", extra ? extra : "");
	fflush(stdout);
}

static int open_ro(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open", errno);
	if (fstat(fd, st) < 0)
		die("fstat", errno);
	return fd;
}

/* percent of fd's pages in the page cache of the filesystem it is on */
static double resident_pct(int fd, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t n = (size + (uint64_t)pg - 1) / (uint64_t)pg, in = 0, i;
	unsigned char *vec;
	void *map;

	if (!size)
		return 100.0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap", errno);
	vec = malloc(n);
	if (!vec)
		die("malloc", ENOMEM);
	if (mincore(map, size, vec) < 0)
		die("mincore", errno);
	for (i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	munmap(map, size);
	return 100.0 * (double)in / (double)n;
}

static void fill_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
	for (; i < len; i++)
		buf[i] = 0xa5;
}

static void write_all(int fd, const uint8_t *buf, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("pwrite", n < 0 ? errno : EIO);
		buf += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
}

static int cmd_mkfile(const char *path, uint64_t size, uint64_t extents)
{
	const uint64_t bs = 1 << 20;
	uint64_t period, dlen, off, i;
	uint8_t *buf = malloc(bs);
	int fd;

	if (!buf)
		die("malloc", ENOMEM);
	fill_pattern(buf, bs, 1);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open", errno);
	if (ftruncate(fd, (off_t)size) < 0)
		die("ftruncate", errno);
	if (!extents) {
		for (off = 0; off < size; off += bs)
			write_all(fd, buf, size - off < bs ? size - off : bs, off);
	} else {
		/* page-aligned period and data length, data first, hole after */
		period = size / extents / 4096 * 4096;
		dlen = period / 2 / 4096 * 4096;
		if (!dlen || dlen > bs) {
			fprintf(stderr,
				"sr_bench: mkfile: %" PRIu64 " extents do not fit in %" PRIu64
				" bytes with 4 KiB pages and at most 1 MiB each\n",
				extents, size);
			return 1;
		}
		for (i = 0; i < extents; i++)
			write_all(fd, buf, dlen, i * period);
		printf("mkfile extents=%" PRIu64 " period=%" PRIu64 " data=%" PRIu64
		       " hole=%" PRIu64 "\n",
		       extents, period, dlen, period - dlen);
	}
	if (fsync(fd) < 0)
		die("fsync", errno);
	close(fd);
	free(buf);
	return 0;
}

static int cmd_sparse(const char *path)
{
	struct lacuna_result *res = malloc(sizeof(*res));
	struct lacuna_client *c;
	uint64_t size, off, calls, got;
	struct stat st;
	struct pass p;
	size_t alen;
	uint8_t *arena;
	unsigned int i;
	int fd, rc;

	if (!res)
		die("malloc", ENOMEM);
	fd = open_ro(path, &st);
	size = (uint64_t)st.st_size;
	rc = lacuna_client_open(fd, chunk, &c);
	if (rc)
		die("lacuna_client_open", -rc);
	nioctl += 2; /* LACUNA_IOC_INFO in lacuna_client_open, and the next */
	arena = lacuna_client_arena(c, &alen);
	rc = lacuna_sparse_read(c, fd, 0, chunk, LACUNA_READ_DATA, arena, alen, res);
	if (rc)
		die("lacuna_sparse_read", -rc);
	if (!res->atomic)
		die("lacuna_sparse_read: not through lacunafs", EINVAL);
	for (i = 1; i <= passes; i++) {
		char extra[64];

		calls = got = 0;
		pass_start(&p);
		for (off = 0; off < size; off = res->next_offset) {
			rc = lacuna_sparse_read(c, fd, off, chunk, LACUNA_READ_DATA, arena, alen,
						res);
			if (rc)
				die("lacuna_sparse_read", -rc);
			calls++;
			nioctl++;
			got += res->data_bytes;
			if (res->next_offset <= off)
				die("lacuna_sparse_read: no progress", EIO);
		}
		snprintf(extra, sizeof(extra), "dense=%d", !!(res->flags & LACUNA_SR_DENSE));
		pass_end(&p, "sparse", i, got, calls, extra);
		if (got != size)
			die("sparse: data bytes differ from the file size", EIO);
	}
	lacuna_client_close(c);
	close(fd);
	free(res);
	return 0;
}

static int cmd_pread(const char *path)
{
	uint64_t size, off, calls, got;
	struct stat st;
	struct pass p;
	unsigned int i;
	uint8_t *buf;
	int fd;

	fd = open_ro(path, &st);
	size = (uint64_t)st.st_size;
	if (posix_memalign((void **)&buf, 4096, chunk))
		die("posix_memalign", ENOMEM);
	memset(buf, 0, chunk);
	for (i = 1; i <= passes; i++) {
		char extra[64];
		double res_pct;

		if (cold) {
			int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);

			if (rc)
				die("posix_fadvise DONTNEED", rc);
		}
		res_pct = resident_pct(fd, size);
		snprintf(extra, sizeof(extra), "resident_pct=%.1f", res_pct);
		calls = got = 0;
		pass_start(&p);
		for (off = 0; off < size; off += chunk) {
			ssize_t n;

			do
				n = pread(fd, buf, chunk, (off_t)off);
			while (n < 0 && errno == EINTR);
			if (n < 0)
				die("pread", errno);
			calls++;
			got += (uint64_t)n;
			if ((uint64_t)n != chunk && off + (uint64_t)n != size)
				die("pread: short read", EIO);
		}
		pass_end(&p, cold ? "pread_cold" : "pread", i, got, calls, extra);
		if (got != size)
			die("pread: bytes read differ from the file size", EIO);
	}
	free(buf);
	close(fd);
	return 0;
}

static int cmd_map(const char *path)
{
	struct lacuna_result *res = malloc(sizeof(*res));
	struct lacuna_client *c = NULL;
	uint64_t size, off, calls, ndata, nhole, dbytes;
	struct stat st;
	struct pass p;
	unsigned int i, k;
	int fd, rc;

	if (!res)
		die("malloc", ENOMEM);
	fd = open_ro(path, &st);
	size = (uint64_t)st.st_size;
	rc = lacuna_client_open(fd, 0, &c);
	if (rc && rc != -ENOTTY)
		die("lacuna_client_open", -rc);
	nioctl++;
	for (i = 0; i <= passes; i++) { /* pass 0: untimed warm-up */
		char extra[128];

		calls = ndata = nhole = dbytes = 0;
		pass_start(&p);
		for (off = 0; off < size; off = res->next_offset) {
			rc = lacuna_sparse_read(c, fd, off, size - off, LACUNA_READ_MAP, NULL, 0,
						res);
			if (rc)
				die("lacuna_sparse_read", -rc);
			calls++;
			nioctl += c != NULL;
			for (k = 0; k < res->nsegs; k++) {
				if (res->segs[k].kind == LACUNA_SEG_DATA) {
					ndata++;
					dbytes += res->segs[k].length;
				} else {
					nhole++;
				}
			}
			if (res->next_offset <= off)
				die("lacuna_sparse_read: no progress", EIO);
		}
		snprintf(extra, sizeof(extra),
			 "data_segs=%" PRIu64 " hole_segs=%" PRIu64 " data_bytes=%" PRIu64
			 " atomic=%d",
			 ndata, nhole, dbytes, c != NULL);
		if (i)
			pass_end(&p, c ? "map" : "map_fallback", i, size, calls, extra);
	}
	lacuna_client_close(c);
	close(fd);
	free(res);
	return 0;
}

static int cmd_seek(const char *path)
{
	uint64_t size, pos, calls, ndata, nhole, dbytes;
	struct stat st;
	struct pass p;
	unsigned int i;
	int fd;

	fd = open_ro(path, &st);
	size = (uint64_t)st.st_size;
	for (i = 0; i <= passes; i++) { /* pass 0: untimed warm-up */
		char extra[128];

		calls = ndata = nhole = dbytes = 0;
		pass_start(&p);
		for (pos = 0; pos < size;) {
			off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;

			calls++;
			if (d < 0 && errno != ENXIO)
				die("lseek SEEK_DATA", errno);
			if (d < 0 || (uint64_t)d > pos) {
				nhole++;
				if (d < 0)
					break;
				pos = (uint64_t)d;
			}
			h = lseek(fd, (off_t)pos, SEEK_HOLE);
			calls++;
			if (h < 0)
				die("lseek SEEK_HOLE", errno);
			ndata++;
			dbytes += (uint64_t)h - pos;
			pos = (uint64_t)h;
		}
		snprintf(extra, sizeof(extra),
			 "data_segs=%" PRIu64 " hole_segs=%" PRIu64 " data_bytes=%" PRIu64, ndata,
			 nhole, dbytes);
		if (i)
			pass_end(&p, "seek", i, size, calls, extra);
	}
	close(fd);
	return 0;
}

static int cmd_rtt(const char *path)
{
	struct lacuna_result *res = malloc(sizeof(*res));
	struct lacuna_info info;
	struct lacuna_client *c;
	struct stat st;
	struct pass p;
	unsigned long k;
	int fd, rc;

	if (!res)
		die("malloc", ENOMEM);
	fd = open_ro(path, &st);
	rc = lacuna_client_open(fd, 0, &c);
	if (rc)
		die("lacuna_client_open", -rc);
	nioctl += 1 + 2 * ncalls;
	pass_start(&p);
	for (k = 0; k < ncalls; k++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (ioctl(fd, LACUNA_IOC_INFO, &info) < 0)
			die("ioctl LACUNA_IOC_INFO", errno);
	}
	pass_end(&p, "rtt_info", 1, 0, ncalls, NULL);
	pass_start(&p);
	for (k = 0; k < ncalls; k++) {
		rc = lacuna_sparse_read(c, fd, 0, 4096, LACUNA_READ_MAP, NULL, 0, res);
		if (rc)
			die("lacuna_sparse_read", -rc);
	}
	pass_end(&p, "rtt_map4k", 1, 0, ncalls, NULL);
	lacuna_client_close(c);
	close(fd);
	free(res);
	return 0;
}

static int cmd_resident(const char *path)
{
	struct stat st;
	int fd = open_ro(path, &st);

	printf("resident pct=%.1f\n", resident_pct(fd, (uint64_t)st.st_size));
	close(fd);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: sr_bench mkfile FILE SIZE [EXTENTS]\n"
		     "       sr_bench sparse|pread|map|seek|rtt|resident [-c CHUNK] [-r PASSES]\n"
		     "                [-n CALLS] [-p PID] [-l LABEL] [--cold] FILE\n"
		     "See the comment at the top of bench/sr_bench.c.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cold", no_argument, &cold, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	int o;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "mkfile")) {
		if (argc < 4 || argc > 5) {
			usage(stderr);
			return 1;
		}
		return cmd_mkfile(argv[2], strtoull(argv[3], NULL, 0),
				  argc == 5 ? strtoull(argv[4], NULL, 0) : 0);
	}
	optind = 2;
	while ((o = getopt_long(argc, argv, "c:r:n:p:l:h", lo, NULL)) != -1) {
		switch (o) {
		case 0:
			break;
		case 'c':
			chunk = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			passes = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			ncalls = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			label = optarg;
			break;
		case 'p':
			daemon_pid = strtol(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc - 1 || !chunk || !passes || !ncalls) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(cmd, "sparse"))
		o = cmd_sparse(argv[optind]);
	else if (!strcmp(cmd, "map"))
		o = cmd_map(argv[optind]);
	else if (!strcmp(cmd, "rtt"))
		o = cmd_rtt(argv[optind]);
	else
		o = -1;
	if (o >= 0) {
		printf("ioctls total=%lu\n", nioctl);
		return o;
	}
	if (!strcmp(cmd, "pread"))
		return cmd_pread(argv[optind]);
	if (!strcmp(cmd, "seek"))
		return cmd_seek(argv[optind]);
	if (!strcmp(cmd, "resident"))
		return cmd_resident(argv[optind]);
	usage(stderr);
	return 1;
}
