// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsmeta: metadata micro-benchmark for bench/fs-bench.sh. In an empty
 * directory it creates N empty files (open O_CREAT|O_EXCL, close), then
 * stat()s each of them, then unlinks each of them, timing the three
 * phases separately with CLOCK_MONOTONIC. One process, one thread, names
 * in creation order: it measures the round trip of one metadata operation
 * at a time, which is what a FUSE daemon adds to.
 *
 * With -d, before the stat phase and again before the unlink phase it
 * calls sync() and writes 2 to /proc/sys/vm/drop_caches (needs root), so
 * that every stat and every unlink starts with a name lookup that is not
 * cached by the kernel: on a FUSE mount each one then reaches the daemon,
 * whatever the entry timeout and however long the create phase took. The
 * backing filesystem's directory and inode blocks stay in its page cache.
 *
 * Usage: fsmeta [-d] DIR [N]   (DIR is created and removed; default N 10000)
 * Output, one line per phase, for the script to parse:
 *   create SECONDS OPS_PER_SECOND
 *   stat SECONDS OPS_PER_SECOND
 *   unlink SECONDS OPS_PER_SECOND
 * Exit status 0 on success, 1 with a message naming the failing call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FSMETA_NAME_MAX 64

static double fsmeta_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fsmeta_name(char *buf, const char *dir, long i)
{
	snprintf(buf, FSMETA_NAME_MAX + strlen(dir), "%s/f%07ld", dir, i);
}

/* Forget cached dentries and inodes; returns 0 or -errno. */
static int fsmeta_drop_dentries(void)
{
	int fd, rc = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, "2\n", 2) != 2)
		rc = -errno;
	close(fd);
	/* let the FUSE daemons finish the FORGETs this sent them */
	usleep(200000);
	return rc;
}

static int fsmeta_between_phases(int drop)
{
	int rc;

	if (!drop)
		return 0;
	rc = fsmeta_drop_dentries();
	if (rc)
		fprintf(stderr, "fsmeta: write /proc/sys/vm/drop_caches: %s\n", strerror(-rc));
	return rc;
}

static void fsmeta_report(const char *phase, double secs, long n)
{
	printf("%s %.6f %.1f\n", phase, secs, secs > 0 ? n / secs : 0.0);
}

int main(int argc, char **argv)
{
	const char *dir;
	char *path;
	struct stat st;
	double t0;
	long n = 10000, i;
	int fd, drop = 0;

	if (argc > 1 && !strcmp(argv[1], "-d")) {
		drop = 1;
		argv++;
		argc--;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: fsmeta [-d] DIR [N]\n");
		return 1;
	}
	dir = argv[1];
	if (argc == 3) {
		n = strtol(argv[2], NULL, 10);
		if (n <= 0) {
			fprintf(stderr, "fsmeta: bad count '%s'\n", argv[2]);
			return 1;
		}
	}
	path = malloc(FSMETA_NAME_MAX + strlen(dir));
	if (!path) {
		fprintf(stderr, "fsmeta: malloc: %s\n", strerror(errno));
		return 1;
	}
	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "fsmeta: mkdir %s: %s\n", dir, strerror(errno));
		goto out_free;
	}

	t0 = fsmeta_now();
	for (i = 0; i < n; i++) {
		fsmeta_name(path, dir, i);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0) {
			fprintf(stderr, "fsmeta: open %s: %s\n", path, strerror(errno));
			goto out_free;
		}
		if (close(fd) < 0) {
			fprintf(stderr, "fsmeta: close %s: %s\n", path, strerror(errno));
			goto out_free;
		}
	}
	fsmeta_report("create", fsmeta_now() - t0, n);
	if (fsmeta_between_phases(drop))
		goto out_free;

	t0 = fsmeta_now();
	for (i = 0; i < n; i++) {
		fsmeta_name(path, dir, i);
		if (stat(path, &st) < 0) {
			fprintf(stderr, "fsmeta: stat %s: %s\n", path, strerror(errno));
			goto out_free;
		}
	}
	fsmeta_report("stat", fsmeta_now() - t0, n);
	if (fsmeta_between_phases(drop))
		goto out_free;

	t0 = fsmeta_now();
	for (i = 0; i < n; i++) {
		fsmeta_name(path, dir, i);
		if (unlink(path) < 0) {
			fprintf(stderr, "fsmeta: unlink %s: %s\n", path, strerror(errno));
			goto out_free;
		}
	}
	fsmeta_report("unlink", fsmeta_now() - t0, n);

	if (rmdir(dir) < 0) {
		fprintf(stderr, "fsmeta: rmdir %s: %s\n", dir, strerror(errno));
		goto out_free;
	}
	free(path);
	return 0;

out_free:
	free(path);
	return 1;
}
