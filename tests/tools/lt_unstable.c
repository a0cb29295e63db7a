// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_unstable: changes made behind lacunafs are flagged, not hidden.
 *
 *   lt_unstable [--case behind|coincident|mount] [--replies N] [--expect-tear]
 *               MOUNT_FILE BACKING_FILE
 *
 * The file is 2 MiB. Sparse reads through MOUNT_FILE read its second MiB,
 * the range R = [1 MiB, 2 MiB), so lacunafs locks [1 MiB, EOF) and writes
 * through the mount below 1 MiB run alongside them.
 *
 * A writer behind the mount (on BACKING_FILE directly, where the range
 * lock cannot hold it off) loops over generations g = 1..255: one pwrite
 * of byte g over R, starting 64 KiB below it, then a hole punched over H,
 * the middle half of R, and in odd generations one over F, R's first
 * eighth. So at every moment R holds one generation, with zeros in its
 * holes or not, and an answer that does not is torn. The shapes are
 * chosen so that tears show on both filesystems:
 *   - ext4 does not serialize buffered reads with writes: a pread that
 *     overlaps the pwrite returns pages of two generations;
 *   - XFS makes a pread wait for a pwrite (the inode's IOLOCK), but an
 *     answer is read in two preads, one each side of H; the next pwrite,
 *     usually queued for the lock already, lands between them, and the
 *     second part, or what the walk had just mapped as H, is of the next
 *     generation;
 *   - XFS's SEEK_DATA/SEEK_HOLE do not wait for a pwrite at all: a walk
 *     that begins while one is on its way to R maps F, then reads the
 *     rest after the write, an even generation with an odd one's hole.
 *     (Hence the start below R: the write reaches F late.)
 *
 * Cases:
 *   behind      the writer behind the mount alone;
 *   coincident  the same, while a thread keeps writing through the mount
 *               below R, so a change through the mount runs during most
 *               reads (the inode's write counters keep moving);
 *   mount       only the writes through the mount below R: R never
 *               changes, and no reply may be flagged or retried.
 *
 * A reply not flagged LACUNA_SR_UNSTABLE must be one generation
 * throughout: data of one byte value g; zeros or holes only where
 * generation g has holes (H, and F if g is odd). Without --expect-tear, N replies (default 2000)
 * are checked: a torn one fails, and in behind and coincident the daemon must have noticed the
 * writer at least once (a retry or an UNSTABLE flag). With --expect-tear the run passes at the
 * first unflagged torn reply and fails if none comes within N replies: for a daemon that is known
 * to let them through, it shows the check can see them.
 *
 * Exit 0 pass, 1 fail, 2 usage or a failed call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

#define LT_MIB (1024 * 1024)
#define LT_R0 LT_MIB /* the range read */
#define LT_RLEN LT_MIB
#define LT_H0 (LT_R0 + LT_RLEN / 4) /* punched in every generation */
#define LT_H1 (LT_R0 + 3 * LT_RLEN / 4)
#define LT_F1 (LT_R0 + LT_RLEN / 8) /* [R0, F1) punched in odd ones */
#define LT_BELOW (64 * 1024)	    /* the writer behind starts this far below R */
#define LT_FSIZE (LT_R0 + LT_RLEN)
#define LT_MWRITE (64 * 1024) /* one write through the mount, below R */

enum lt_case { LT_BEHIND, LT_COINCIDENT, LT_MOUNT };

static atomic_bool stop;
static atomic_ulong behind_writes, mount_writes;
static const char *backing, *mounted;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* may generation g have zeros (a hole) over [start, end)? */
static bool lt_zero_ok(unsigned int g, uint64_t start, uint64_t end)
{
	return (start >= LT_H0 && end <= LT_H1) || (g % 2 && start >= LT_R0 && end <= LT_F1);
}

static void lt_punch(int fd, off_t start, off_t end)
{
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, start, end - start))
		die("fallocate");
}

/* generation g over R, from a little below it; then its holes */
static void lt_generation(int fd, unsigned char *buf, unsigned char g)
{
	memset(buf, g, LT_BELOW + LT_RLEN);
	if (pwrite(fd, buf, LT_BELOW + LT_RLEN, LT_R0 - LT_BELOW) != LT_BELOW + LT_RLEN)
		die("pwrite");
	lt_punch(fd, LT_H0, LT_H1);
	if (g % 2)
		lt_punch(fd, LT_R0, LT_F1);
}

static void *behind_writer(void *arg)
{
	unsigned char *buf = malloc(LT_BELOW + LT_RLEN);
	unsigned char g = 2;
	int fd = open(backing, O_WRONLY);

	if (!buf || fd < 0)
		die("behind writer: open");
	while (!atomic_load(&stop)) {
		lt_generation(fd, buf, g);
		atomic_fetch_add(&behind_writes, 1);
		g = g == 255 ? 1 : g + 1;
	}
	close(fd);
	free(buf);
	return arg;
}

/* writes through the mount, all below R */
static void *mount_writer(void *arg)
{
	unsigned char *buf = malloc(LT_MWRITE);
	unsigned long i = 0;
	int fd = open(mounted, O_WRONLY);

	if (!buf || fd < 0)
		die("mount writer: open");
	while (!atomic_load(&stop)) {
		memset(buf, (int)(i & 0xff), LT_MWRITE);
		if (pwrite(fd, buf, LT_MWRITE, (off_t)(i % (LT_R0 / LT_MWRITE)) * LT_MWRITE) !=
		    LT_MWRITE)
			die("mount writer: pwrite");
		atomic_fetch_add(&mount_writes, 1);
		i++;
	}
	close(fd);
	free(buf);
	return arg;
}

/* NULL when the reply is one generation of R, else what is wrong with it */
static const char *torn(const struct lacuna_result *res, unsigned int *gen)
{
	uint64_t pos = LT_R0, j;
	unsigned int i, g = 0;

	for (i = 0; i < res->nsegs && !g; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		for (j = 0; e->kind == LACUNA_SEG_DATA && j < e->length && !g; j++)
			g = e->data[j];
	}
	if (!g)
		return "no data";
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		if (e->offset != pos)
			return "segments not contiguous from the offset";
		pos += e->length;
		if (e->kind == LACUNA_SEG_HOLE) {
			if (!lt_zero_ok(g, e->offset, pos))
				return "a hole where its generation has data";
			continue;
		}
		for (j = 0; j < e->length; j++) {
			unsigned int b = e->data[j];

			if (b == g || (b == 0 && lt_zero_ok(g, e->offset + j, e->offset + j + 1)))
				continue;
			return b ? "two generations" : "zeros where its generation has data";
		}
	}
	if (pos < LT_FSIZE)
		return "short of the range";
	*gen = g;
	return NULL;
}

/* the first torn reply, for the log */
static void print_torn(const struct lacuna_result *res, const char *why)
{
	unsigned int i;

	printf("torn reply without the flag (%u retries): %s:", res->retries, why);
	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];

		printf(" %s [%llu, +%llu)", e->kind == LACUNA_SEG_DATA ? "data" : "hole",
		       (unsigned long long)e->offset, (unsigned long long)e->length);
		if (e->kind == LACUNA_SEG_DATA)
			printf(" %u..%u", e->data[0], e->data[e->length - 1]);
	}
	printf("\n");
}

/* the file, empty, then all of generation 1 (holes too), before any read */
static void setup(int mfd)
{
	unsigned char *buf = malloc(LT_FSIZE);
	int fd = open(backing, O_WRONLY);

	if (!buf || fd < 0)
		die("setup: open");
	memset(buf, 1, LT_FSIZE);
	if (ftruncate(mfd, 0) < 0 || pwrite(fd, buf, LT_FSIZE, 0) != LT_FSIZE)
		die("setup: pwrite");
	lt_generation(fd, buf, 1);
	close(fd);
	free(buf);
}

static int usage(void)
{
	fprintf(stderr, "usage: lt_unstable [--case behind|coincident|mount] [--replies N] "
			"[--expect-tear] MOUNT_FILE BACKING_FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "behind", "coincident", "mount" };
	unsigned long want = 2000, replies = 0, clean = 0, retried = 0, flagged = 0, ntorn = 0;
	unsigned long changed = 0;
	enum lt_case which = LT_BEHIND;
	bool expect_tear = false;
	struct lacuna_result *res;
	struct lacuna_client *c;
	pthread_t bth, mth;
	unsigned char *arena;
	size_t alen;
	int fd, rc, i, status;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--case") && i + 1 < argc) {
			i++;
			for (which = LT_BEHIND; which <= LT_MOUNT; which++)
				if (!strcmp(argv[i], names[which]))
					break;
			if (which > LT_MOUNT)
				return usage();
		} else if (!strcmp(argv[i], "--replies") && i + 1 < argc) {
			want = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--expect-tear")) {
			expect_tear = true;
		} else {
			return usage();
		}
	}
	if (argc - i != 2 || want == 0 || (expect_tear && which == LT_MOUNT))
		return usage();
	mounted = argv[i];
	backing = argv[i + 1];
	res = malloc(sizeof(*res));
	fd = open(mounted, O_RDWR | O_CREAT, 0644);
	if (!res || fd < 0)
		die("open");
	setup(fd);
	rc = lacuna_client_open(fd, LT_RLEN, &c);
	if (rc) {
		fprintf(stderr, "lacuna_client_open: %s\n", strerror(-rc));
		return 2;
	}
	arena = lacuna_client_arena(c, &alen);
	if (which != LT_MOUNT)
		pthread_create(&bth, NULL, behind_writer, NULL);
	if (which != LT_BEHIND)
		pthread_create(&mth, NULL, mount_writer, NULL);
	while (replies < want && !(expect_tear && ntorn)) {
		unsigned int gen = 0;
		const char *why;

		rc = lacuna_sparse_read(c, fd, LT_R0, LT_RLEN, LACUNA_READ_DATA, arena, alen, res);
		if (rc == -EAGAIN)
			continue;
		if (rc) {
			fprintf(stderr, "lacuna_sparse_read: %s\n", strerror(-rc));
			exit(2);
		}
		if (!res->atomic) {
			fprintf(stderr, "%s: not on lacunafs\n", mounted);
			exit(2);
		}
		replies++;
		if (res->flags & LACUNA_SR_UNSTABLE) {
			flagged++;
			continue;
		}
		retried += res->retries > 0;
		why = torn(res, &gen);
		if (why) {
			if (!ntorn++)
				print_torn(res, why);
			continue;
		}
		clean++;
		if (which == LT_MOUNT && gen != 1)
			changed++;
	}
	atomic_store(&stop, true);
	if (which != LT_MOUNT)
		pthread_join(bth, NULL);
	if (which != LT_BEHIND)
		pthread_join(mth, NULL);
	printf("%s: %lu replies (%lu writes behind the mount, %lu through it): %lu one "
	       "generation (%lu after a retry), %lu flagged unstable, %lu torn without the flag\n",
	       names[which], replies, atomic_load(&behind_writes), atomic_load(&mount_writes),
	       clean, retried, flagged, ntorn);
	lacuna_client_close(c);
	close(fd);
	free(res);
	if (expect_tear) {
		if (ntorn)
			return 0;
		printf("no torn reply came through in %lu replies\n", replies);
		return 1;
	}
	status = ntorn ? 1 : 0;
	if (which == LT_MOUNT && (flagged || retried)) {
		printf("writes through the mount below the range were taken for changes behind "
		       "it\n");
		status = 1;
	}
	if (changed) {
		printf("%lu replies saw the range changed by writes below it\n", changed);
		status = 1;
	}
	if (which != LT_MOUNT && retried + flagged == 0) {
		printf("the daemon never noticed the writer behind the mount\n");
		status = 1;
	}
	return status;
}
