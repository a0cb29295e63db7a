// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_nfs_torture: atomicity of lacunad's READ_PLUS under concurrent change.
 *
 *   lt_nfs_torture --port P --name PATH [--host A] [--seed N] [--seconds S]
 *                  [--writers W] [--readers R] [--small N] [--big N]
 *                  [--nfs-writes] [--min-replies N] [--max-replies N]
 *                  [--stop-after N] [--timeout T] [--expect-race[=KIND]] FILE
 *
 * FILE (created or truncated) is a file on the lacunafs mount that a
 * lacunad on A:P (default 127.0.0.1) exports; PATH is the same file as
 * the NFS client names it, relative to the export's root. FILE is cut
 * into regions of varied sizes and alignments, with never-written gaps
 * between some of them: random ones (a few bytes to 1 MiB) and probes of
 * the sizes that matter, 1 byte, 4 KiB, 64 KiB, 1 MiB - 4 KiB, 1 MiB,
 * the mount's write unit and one byte more, over 1 MiB (through the
 * mount) or up to the server's maxwrite (over NFS), each once at a page
 * boundary and once not. Reader threads, each over its own TCP connection
 * and NFSv4.2 session (EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE),
 * send SEQUENCE + PUTFH + READ_PLUS with the anonymous stateid on random
 * ranges (region starts, probes, anywhere, around and past EOF; 1 byte to
 * 1 MiB) and check every reply. Writer threads change regions, each
 * change one call, in one of two modes:
 *
 *   through the mount (default): a pwrite of the whole region with a
 *   pattern unique to that write, from a buffer starting at byte 0, 1,
 *   212, 511, 2048 or 4095 of a page, a PUNCH_HOLE or a ZERO_RANGE
 *   (KEEP_SIZE); the first writer also truncates the file into its last
 *   regions and restores the size, at once or by rewriting the regions
 *   it cut (writes that extend the file).
 *
 *   over NFS (--nfs-writes): each writer over its own TCP connection and
 *   NFSv4.2 session, with the open stateid of its OPEN (CLAIM_FH, share
 *   WRITE) or the anonymous stateid, a coin toss per call: WRITE of the
 *   whole region FILE_SYNC4, UNSTABLE4, UNSTABLE4 followed by a COMMIT,
 *   or DEALLOCATE of the region. The bytes ahead of a WRITE's data vary
 *   (COMPOUND tag, AUTH_SYS machine name and gids), so the data lands at
 *   many offsets of the server's receive buffer.
 *
 * The run lasts at least --seconds and until --min-replies replies were
 * checked; it ends early at --stop-after violations or at --max-replies
 * replies. --timeout (default 600 s) only guards against a hang: a run
 * still going then fails, saying it timed out.
 *
 * Operation
 * ---------
 * The parts. This file lays FILE out in regions, runs the readers and
 * the writers and judges the run; lt_nfs_torture_write.c has the writers
 * and the history they log, lt_nfs_torture_check.c what must be atomic,
 * the pattern and the checks of every reply, lt_nfs_torture_nfs.c the
 * NFSv4.2 client readers and writers speak, lt_nfs_torture.h the state
 * they share.
 *
 * Negative controls. Without lacunafs's range lock
 * (LACUNA_TEST_DISABLE_RANGELOCK=1 in the daemon's environment) the
 * SEEK_DATA/SEEK_HOLE walk and the preads interleave with the writes and
 * replies stop being snapshots; with lacunad writing an NFS WRITE by a
 * plain pwrite through the mount from its receive buffer
 * (LACUNA_TEST_PLAIN_WRITE=1) a WRITE whose data does not start on a page
 * reaches lacunafs in two pieces and a reply can show half of it ("torn").
 * --expect-race passes only if at least one violation (of KIND if given:
 * torn, stale, snapshot, size, malformed) is found.
 *
 * Exit status: 0 pass (no violation and at least --min-replies replies
 * checked; with --expect-race: a violation found), 1 fail (or timed
 * out), 2 bad arguments or a failed call (the message names it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lacuna/ioctl.h"

#include "lt_nfs_torture.h"

#define LT_KIB UINT64_C(1024)
#define LT_BIG_MAX LT_MIB	   /* the random big regions */
#define LT_REGION_MAX (3 * LT_MIB) /* any region: one change */
#define LT_REGIONS_MAX 4096
#define LT_PROBES_MAX 32
#define LT_THREADS_MAX 32
#define LT_SMALL_REPLY 65536 /* a writer's replies */
#define LT_HDR_MAX 1024	     /* the bytes of a WRITE call ahead of its data, at most */

static const char *const lt_op_names[LT_OP_NR] = {
	"writes",
	"punches",
	"zero-ranges",
	"truncates",
	"NFS WRITEs FILE_SYNC4",
	"NFS WRITEs UNSTABLE4",
	"NFS DEALLOCATEs",
};

struct lt_state lt = {
	.seed = 1,
	.seconds = 5,
	.timeout = 600,
	.nwriters = 2,
	.nreaders = 2,
	.nbig = 4,
	.nsmall = 120,
	.min_replies = 100,
	.expect_kind = -1,
	.host = "127.0.0.1",
	.op_lock = PTHREAD_MUTEX_INITIALIZER,
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
	.data_off_min = UINT32_MAX,
};

void lt_die(const char *fmt, ...)
{
	/*
	 * Readers and writers die together when the server goes away, and
	 * exit() must not run twice at once (its stdio and atexit cleanup
	 * would free the same memory twice): the first one in exits, the
	 * others wait here for the process to end.
	 */
	static pthread_mutex_t die_lock = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	pthread_mutex_lock(&die_lock);
	fprintf(stderr, "lt_nfs_torture: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

void *lt_xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		lt_die("realloc: %s", strerror(ENOMEM));
	return p;
}

/* ---------------------------------------------------------------- layout */

static void add_region(uint64_t *off, uint64_t len, bool gap, bool probe)
{
	struct lt_region *r;

	if (lt.nrg == LT_REGIONS_MAX)
		lt_die("layout: more than %d regions", LT_REGIONS_MAX);
	lt.rg = lt_xrealloc(lt.rg, (lt.nrg + 1) * sizeof(*lt.rg));
	r = &lt.rg[lt.nrg++];
	memset(r, 0, sizeof(*r));
	r->start = *off;
	r->len = len;
	r->gap = gap;
	r->probe = probe;
	*off += len;
}

/*
 * The sizes that matter. Through the mount: 1 byte, 4 KiB, 64 KiB,
 * 1 MiB - 4 KiB, the write units and one byte more (the largest writes
 * that arrive whole from any buffer / from an aligned one, the smallest
 * that may not), 1 MiB and 1 MiB + 1 and two over 1 MiB (pieces at any
 * buffer offset). Over NFS: the same small ones, then up to maxwrite: 1
 * MiB, maxwrite and the sizes just below it that a write from a receive
 * buffer not on a page boundary splits.
 */
static unsigned int probe_sizes(uint64_t *sz)
{
	uint64_t cand[LT_PROBES_MAX / 2], lim = lt.nfs_writes ? lt.maxwrite : LT_REGION_MAX;
	unsigned int n = 0, k = 0, i, j;

	cand[n++] = 1;
	cand[n++] = LT_PAGE;
	cand[n++] = 64 * LT_KIB;
	cand[n++] = LT_MIB - LT_PAGE;
	cand[n++] = LT_MIB;
	if (lt.nfs_writes) {
		cand[n++] = lt.maxwrite;
		cand[n++] = lt.maxwrite - 1;
		cand[n++] = lt.maxwrite - 212;
		cand[n++] = lt.maxwrite - 700;
	} else {
		cand[n++] = lt.unit;
		cand[n++] = lt.unit + 1;
		cand[n++] = lt.unit_al;
		cand[n++] = lt.unit_al + 1;
		cand[n++] = LT_MIB + 1;
		cand[n++] = LT_MIB + 64 * LT_KIB + 3;
		cand[n++] = 2 * LT_MIB + 5000;
	}
	for (i = 0; i < n; i++) {
		if (!cand[i] || cand[i] > lim || cand[i] > LT_REGION_MAX)
			continue;
		for (j = 0; j < k && sz[j] != cand[i]; j++)
			;
		if (j == k)
			sz[k++] = cand[i];
	}
	return k;
}

/*
 * Big regions (64 KiB + 1 .. 1 MiB, some page aligned), small ones
 * (1-64 bytes, up to a page, aligned pages, unaligned up to 64 KiB) and
 * the probes, each size twice (at a page boundary and off one), in a
 * shuffled order, a big one second to last so that truncates cut into
 * it; gaps (never written, so holes or zeros) between some of them.
 */
static void make_layout(void)
{
	uint64_t s = lt.seed * 0x9E3779B97F4A7C15ULL + 1, off = 0, psz[LT_PROBES_MAX / 2];
	uint64_t bigmax = lt.nfs_writes && lt.maxwrite < LT_BIG_MAX ? lt.maxwrite : LT_BIG_MAX;
	unsigned int np = probe_sizes(psz), n = lt.nbig + lt.nsmall + 2 * np, i, k;
	struct item {
		uint64_t len;
		bool aligned, unaligned, probe;
	} *it = calloc(n, sizeof(*it)), tmp;

	if (!it)
		lt_die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < lt.nbig + lt.nsmall; i++) {
		unsigned int c = (unsigned int)lt_rnd_in(&s, 0, 9);

		if (i < lt.nbig) {
			it[i].aligned = c < 4;
			it[i].len = lt_rnd_in(&s, 64 * LT_KIB + 1, bigmax);
		} else if (c < 3) {
			it[i].len = lt_rnd_in(&s, 1, 64);
		} else if (c < 6) {
			it[i].len = lt_rnd_in(&s, 65, LT_PAGE);
		} else if (c < 8) {
			it[i].aligned = true;
			it[i].len = lt_rnd_in(&s, 1, 16) * LT_PAGE;
		} else {
			it[i].len = lt_rnd_in(&s, LT_PAGE + 1, 64 * LT_KIB);
		}
		if (it[i].aligned)
			it[i].len = (it[i].len + LT_PAGE - 1) & ~(LT_PAGE - 1);
		if (it[i].len > bigmax)
			it[i].len = bigmax;
	}
	for (k = 0; k < 2 * np; k++, i++) {
		it[i].len = psz[k / 2];
		it[i].probe = true;
		it[i].aligned = k % 2 == 0;
		it[i].unaligned = k % 2 == 1;
	}
	/* shuffle, then a big one second to last */
	for (i = n - 1; i > 0; i--) {
		k = (unsigned int)lt_rnd_in(&s, 0, i);
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
		if (lt_rnd_in(&s, 0, 5) == 0)
			gap += lt_rnd_in(&s, 1, 5) * LT_PAGE +
			       (it[i].aligned ? 0 : lt_rnd_in(&s, 0, 100));
		if (it[i].aligned && ((off + gap) & (LT_PAGE - 1)))
			gap += LT_PAGE - ((off + gap) & (LT_PAGE - 1));
		if (it[i].unaligned && !((off + gap) & (LT_PAGE - 1)))
			gap += lt_rnd_in(&s, 1, LT_PAGE - 1);
		if (gap)
			add_region(&off, gap, true, false);
		add_region(&off, it[i].len, false, it[i].probe);
	}
	free(it);
	lt.fsize = off;
	lt.cut_from = lt.rg[lt.nrg >= 3 ? lt.nrg - 3 : 0].start;
	lt.writable = calloc(lt.nrg, sizeof(*lt.writable));
	lt.probes = calloc(lt.nrg, sizeof(*lt.probes));
	if (!lt.writable || !lt.probes)
		lt_die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < lt.nrg; i++) {
		if (lt.rg[i].len > lt.maxlen)
			lt.maxlen = lt.rg[i].len;
		if (!lt.rg[i].gap)
			lt.writable[lt.nwritable++] = i;
		if (lt.rg[i].probe) {
			lt.probes[lt.nprobes++] = i;
			lt.probe_bytes += lt.rg[i].len;
		}
	}
	if (lt.nfs_writes && lt.maxlen > lt.maxwrite)
		lt_die("layout: a region of %" PRIu64 " bytes, more than maxwrite %" PRIu64,
		       lt.maxlen, lt.maxwrite);
}

/* the region holding offset x (x < fsize) */
unsigned int lt_region_at(uint64_t x)
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

/* ---------------------------------------------------------------- readers */

static bool lt_is_race(int v)
{
	return v != LT_V_ERROR;
}

/* a point of the probes, all of their bytes alike: mostly in the long ones */
static const struct lt_region *probe_point(uint64_t *s, uint64_t *at)
{
	uint64_t k = lt_rnd_in(s, 0, lt.probe_bytes - 1);
	unsigned int i;

	for (i = 0; k >= lt.rg[lt.probes[i]].len; i++)
		k -= lt.rg[lt.probes[i]].len;
	*at = lt.rg[lt.probes[i]].start + k;
	return &lt.rg[lt.probes[i]];
}

static void pick_range(struct lt_reader *rd)
{
	uint64_t *s = &rd->rng, at, back;
	unsigned int c = (unsigned int)lt_rnd_in(s, 0, 31);
	const struct lt_region *r;

	if (c < 2) {
		rd->off = 0;
		rd->count = LT_COUNT_MAX;
	} else if (c < 7) {
		/* around the end of the file, often past it while it is cut */
		rd->off = lt_rnd_in(s, lt.cut_from, lt.fsize + LT_PAGE);
		rd->count = lt_rnd_in(s, 1, LT_COUNT_MAX);
	} else if (c < 22 || !lt.nprobes) {
		rd->off = lt_rnd_in(s, 0, lt.fsize - 1);
		if (c < 11)
			rd->off = lt.rg[lt_rnd_in(s, 0, lt.nrg - 1)].start;
		rd->count = UINT64_C(1) << lt_rnd_in(s, 0, 19);
		rd->count += lt_rnd_in(s, 0, rd->count);
	} else {
		/*
		 * 1 MiB over a point of a probe: anywhere in it, or in its
		 * last 8 KiB, where a write of 1 MiB or a little less from a
		 * buffer not on a page boundary is cut in two
		 */
		r = probe_point(s, &at);
		if (c >= 27)
			at = r->start + r->len - lt_rnd_in(s, 1, r->len < 8192 ? r->len : 8192);
		back = lt_rnd_in(s, 0, LT_COUNT_MAX - 1);
		rd->off = at > back ? at - back : 0;
		rd->count = LT_COUNT_MAX;
	}
	if (rd->count > LT_COUNT_MAX)
		rd->count = LT_COUNT_MAX;
}

static uint64_t races_found(void)
{
	uint64_t v = 0;
	int k;

	for (k = 0; k < LT_V_NR; k++)
		if (lt.expect_kind < 0 ? lt_is_race(k) : k == lt.expect_kind)
			v += LT_LOAD(lt.viol[k]);
	return v;
}

static void *reader(void *arg)
{
	struct lt_reader *rd = arg;

	while (!LT_LOAD(lt.stop)) {
		pick_range(rd);
		rd->s0 = LT_LOAD(lt.done);
		lt_read_plus(rd);
		rd->s1 = LT_LOAD(lt.started);
		lt_check_reply(rd);
		if (lt.stop_after && races_found() >= lt.stop_after)
			LT_STORE(lt.stop, true);
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: lt_nfs_torture --port P --name PATH [--host A] [--seed N] [--seconds S]\n"
		"                      [--writers W] [--readers R] [--small N] [--big N]\n"
		"                      [--nfs-writes] [--min-replies N] [--max-replies N]\n"
		"                      [--stop-after N] [--timeout T] [--expect-race[=KIND]] FILE\n"
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
		{ "timeout", required_argument, NULL, 'T' },
		{ "writers", required_argument, NULL, 'w' },
		{ "readers", required_argument, NULL, 'r' },
		{ "small", required_argument, NULL, 'm' },
		{ "big", required_argument, NULL, 'b' },
		{ "nfs-writes", no_argument, NULL, 'W' },
		{ "min-replies", required_argument, NULL, 'n' },
		{ "max-replies", required_argument, NULL, 'M' },
		{ "stop-after", required_argument, NULL, 'a' },
		{ "expect-race", optional_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	int c, k;

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
		case 'T':
			lt.timeout = (unsigned int)num(optarg);
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
		case 'W':
			lt.nfs_writes = true;
			break;
		case 'n':
			lt.min_replies = num(optarg);
			break;
		case 'M':
			lt.max_replies = num(optarg);
			break;
		case 'a':
			lt.stop_after = num(optarg);
			break;
		case 'x':
			lt.expect_race = true;
			if (!optarg)
				break;
			for (k = 0; k < LT_V_NR && strcmp(optarg, lt_viol_names[k]); k++)
				;
			if (k == LT_V_NR || !lt_is_race(k))
				usage();
			lt.expect_kind = k;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || !lt.port || lt.port > 65535 || !lt.name || !lt.nwriters ||
	    !lt.nreaders || lt.nwriters > LT_THREADS_MAX || lt.nreaders > LT_THREADS_MAX ||
	    lt.nbig + lt.nsmall < 3 || lt.nbig + lt.nsmall > LT_REGIONS_MAX / 2 || !lt.timeout)
		usage();
	lt.path = argv[optind];
}

/* The mount's write units (LACUNA_IOC_INFO), checked against the model of lt_piece_len() */
static void mount_units(void)
{
	struct lacuna_info info = { .size = sizeof(info) };

	if (sysconf(_SC_PAGESIZE) != (long)LT_PAGE)
		lt_die("the page size is %ld, not %" PRIu64, sysconf(_SC_PAGESIZE), LT_PAGE);
	if (ioctl(lt.wfd, LACUNA_IOC_INFO, &info) < 0)
		lt_die("ioctl(LACUNA_IOC_INFO) on %s: %s (not on lacunafs?)", lt.path,
		       strerror(errno));
	lt.unit = info.write_unit;
	lt.unit_al = info.write_unit_aligned;
	if (!lt.unit || lt.unit > lt.unit_al || lt.unit_al > lt.unit + LT_PAGE - 1 ||
	    lt.unit_al % LT_PAGE || lt.unit < LT_PAGE)
		lt_die("LACUNA_IOC_INFO: write_unit %" PRIu64 ", write_unit_aligned %" PRIu64
		       ": not the kernel's pieces of pages this tool models",
		       lt.unit, lt.unit_al);
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void report(double secs)
{
	uint64_t total = 0;
	unsigned int k;

	printf("# lt_nfs_torture: %.1f s, changes:", secs);
	for (k = 0; k < LT_OP_NR; k++)
		if (lt.ops[k])
			printf(" %" PRIu64 " %s", lt.ops[k], lt_op_names[k]);
	printf("\n");
	if (lt.nfs_writes) {
		printf("# lt_nfs_torture: NFS calls with the open stateid %" PRIu64
		       ", the anonymous one %" PRIu64 "; %" PRIu64 " COMMITs; %" PRIu64
		       " WRITEs of more than the mount's write unit; WRITE data at record "
		       "offsets %u..%u\n",
		       lt.open_calls, lt.anon_calls, lt.commits, lt.nfs_over_unit,
		       lt.data_off_min == UINT32_MAX ? 0 : lt.data_off_min, lt.data_off_max);
	} else {
		printf("# lt_nfs_torture: writes through the mount by buffer page offset:");
		for (k = 0; k < LT_NBUFOFFS; k++)
			printf(" +%u %" PRIu64, lt_bufoffs[k], lt.by_bufoff[k]);
		printf("; %" PRIu64 " longer than the write unit, %" PRIu64
		       " of them in the kernel's pieces\n",
		       lt.over_unit, lt.in_pieces);
	}
	printf("# lt_nfs_torture: %" PRIu64 " READ_PLUS replies checked (%" PRIu64
	       " with eof, %" PRIu64 " at or past EOF), %" PRIu64 " holes, %" PRIu64
	       " MiB of data, %" PRIu64 " regions seen mid-write in whole pieces\n",
	       lt.replies, lt.eofs, lt.past_eof, lt.holes, lt.data_bytes / LT_MIB, lt.split_views);
	for (k = 0; k < LT_V_NR; k++)
		total += lt.viol[k];
	printf("# lt_nfs_torture: %" PRIu64 " violations:", total);
	for (k = 0; k < LT_V_NR; k++)
		printf(" %" PRIu64 " %s", lt.viol[k], lt_viol_names[k]);
	printf("\n");
}

int main(int argc, char **argv)
{
	pthread_t wt[LT_THREADS_MAX], rt[LT_THREADS_MAX];
	pthread_rwlockattr_t rwa;
	struct lt_reader *rds;
	struct lt_writer *wrs;
	struct timespec t0;
	uint64_t total = 0, replies;
	unsigned int i;
	bool pass, timed_out = false;
	double secs;
	int rc, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	rc = pthread_rwlock_init(&lt.hist_lock, &rwa);
	if (rc)
		lt_die("pthread_rwlock_init: %s", strerror(rc));
	pthread_rwlockattr_destroy(&rwa);
	lt.wfd = open(lt.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (lt.wfd < 0)
		lt_die("open %s: %s", lt.path, strerror(errno));
	mount_units();

	rds = calloc(lt.nreaders, sizeof(*rds));
	wrs = calloc(lt.nwriters, sizeof(*wrs));
	if (!rds || !wrs)
		lt_die("calloc: %s", strerror(ENOMEM));
	for (i = 0; i < lt.nreaders; i++) {
		rds[i].rng = (lt.seed + 2000 + i) * 0x9E3779B97F4A7C15ULL | 1;
		lt_conn_init(&rds[i].c, i, LT_REPLY_MAX + 4096);
		lt_nfs_setup(&rds[i].c, 65536);
	}
	lt.maxwrite = lt_nfs_maxwrite(&rds[0].c);
	if (lt.nfs_writes && (lt.maxwrite < LT_PAGE || lt.maxwrite > LT_REGION_MAX))
		lt_die("maxwrite %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", lt.maxwrite,
		       LT_PAGE, LT_REGION_MAX);
	make_layout();
	lt_setup_file();
	for (i = 0; i < lt.nreaders; i++) {
		rds[i].view = malloc(lt.fsize + LT_PAGE);
		if (!rds[i].view)
			lt_die("malloc: %s", strerror(ENOMEM));
	}
	for (i = 0; i < lt.nwriters; i++) {
		wrs[i].id = i;
		wrs[i].rng = (lt.seed + 1000 + i) * 0x9E3779B97F4A7C15ULL | 1;
		wrs[i].buf = lt_alloc_aligned(lt.maxlen + LT_PAGE);
		if (!lt.nfs_writes)
			continue;
		lt_conn_init(&wrs[i].c, LT_THREADS_MAX + i, LT_SMALL_REPLY);
		lt_nfs_setup(&wrs[i].c, (uint32_t)(lt.maxwrite + 2 * LT_HDR_MAX));
		if (wrs[i].c.maxreq < lt.maxwrite + LT_HDR_MAX)
			lt_die("the server grants requests of %u bytes, less than maxwrite %" PRIu64
			       " and its header",
			       wrs[i].c.maxreq, lt.maxwrite);
		lt_nfs_open(&wrs[i]);
	}
	printf("# lt_nfs_torture: seed %" PRIu64 ", file %" PRIu64 " bytes, %u regions "
	       "(%u probes), %u writers %s, %u readers over %s:%u, %u s%s\n",
	       lt.seed, lt.fsize, lt.nrg, lt.nprobes, lt.nwriters,
	       lt.nfs_writes ? "over NFS" : "through the mount", lt.nreaders, lt.host, lt.port,
	       lt.seconds, lt.expect_race ? ", expecting a race" : "");
	printf("# lt_nfs_torture: the mount's write unit %" PRIu64 " bytes (%" PRIu64
	       " from a page-aligned buffer); the server's maxwrite %" PRIu64 "\n",
	       lt.unit, lt.unit_al, lt.maxwrite);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < lt.nreaders; i++) {
		rc = pthread_create(&rt[i], NULL, reader, &rds[i]);
		if (rc)
			lt_die("pthread_create: %s", strerror(rc));
	}
	for (i = 0; i < lt.nwriters; i++) {
		rc = pthread_create(&wt[i], NULL, lt_writer_thread, &wrs[i]);
		if (rc)
			lt_die("pthread_create: %s", strerror(rc));
	}
	/*
	 * With --expect-race and --max-replies only a race found or the
	 * replies bound end the run; otherwise it lasts --seconds and until
	 * --min-replies were checked. --timeout is a guard against a hang.
	 */
	for (;;) {
		usleep(20000);
		secs = elapsed(&t0);
		replies = LT_LOAD(lt.replies);
		if (LT_LOAD(lt.stop))
			break;
		if (lt.max_replies && replies >= lt.max_replies)
			break;
		if (secs >= lt.seconds && !(lt.expect_race && lt.max_replies) &&
		    (lt.expect_race || replies >= lt.min_replies))
			break;
		if (secs >= lt.timeout) {
			timed_out = true;
			break;
		}
	}
	LT_STORE(lt.stop, true);
	for (i = 0; i < lt.nwriters; i++)
		pthread_join(wt[i], NULL);
	for (i = 0; i < lt.nreaders; i++)
		pthread_join(rt[i], NULL);
	secs = elapsed(&t0);
	report(secs);

	for (k = 0; k < LT_V_NR; k++)
		total += lt.viol[k];
	if (lt.expect_race) {
		pass = races_found() > 0;
		printf("%s: %s (%s)\n", pass ? "PASS" : "FAIL",
		       pass	   ? "the race was caught"
		       : timed_out ? "timed out before a race was caught"
				   : "no race caught although one was expected",
		       lt.expect_kind >= 0 ? lt_viol_names[lt.expect_kind] : "any kind");
	} else {
		pass = total == 0 && lt.replies >= lt.min_replies && !timed_out;
		printf("%s: %s\n", pass ? "PASS" : "FAIL",
		       total	   ? "violations found"
		       : timed_out ? "timed out before enough replies were checked"
		       : lt.replies < lt.min_replies ? "too few replies checked"
						     : "every reply was a consistent snapshot");
	}
	for (i = 0; i < lt.nwriters; i++) {
		if (lt.nfs_writes) {
			lt_nfs_close(&wrs[i]);
			lt_conn_close(&wrs[i].c);
		}
		free(wrs[i].buf);
	}
	for (i = 0; i < lt.nreaders; i++) {
		lt_conn_close(&rds[i].c);
		free(rds[i].view);
	}
	free(wrs);
	free(rds);
	close(lt.wfd);
	return pass ? 0 : 1;
}
