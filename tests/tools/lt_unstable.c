// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_unstable: changes made behind lacunafs are flagged, not hidden.
 *
 *   lt_unstable [--seconds S] MOUNT_FILE BACKING_FILE
 *
 * A writer thread rewrites the first MiB of BACKING_FILE directly (not
 * through the mount, so the range lock cannot hold it off), each time
 * with one byte value repeated. A reader makes sparse reads of that MiB
 * through MOUNT_FILE. A reply not flagged LACUNA_SR_UNSTABLE must be one
 * generation throughout; a torn one would have to be flagged. Passes when
 * no unflagged reply is torn and the daemon noticed the writer at least
 * once (a retry or an UNSTABLE flag), which shows the detection ran.
 * Exit 0 pass, 1 fail, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

#define LEN (1024 * 1024)

static atomic_bool stop;
static const char *backing;

static void *writer(void *arg)
{
	unsigned char *buf = malloc(LEN);
	unsigned char g = 1;
	int fd = open(backing, O_WRONLY);

	if (!buf || fd < 0) {
		perror("writer: open");
		exit(2);
	}
	while (!atomic_load(&stop)) {
		memset(buf, g, LEN);
		if (pwrite(fd, buf, LEN, 0) != LEN) {
			perror("writer: pwrite");
			exit(2);
		}
		g = g == 255 ? 1 : g + 1;
	}
	close(fd);
	free(buf);
	return arg;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct lacuna_result *res = malloc(sizeof(*res));
	unsigned long replies = 0, flagged = 0, retried = 0, torn = 0;
	struct lacuna_client *c;
	double seconds = 3, end;
	unsigned char *arena;
	pthread_t th;
	size_t alen;
	int fd, rc, argi = 1;

	if (argc > 2 && !strcmp(argv[1], "--seconds")) {
		seconds = atof(argv[2]);
		argi = 3;
	}
	if (argc - argi != 2 || seconds <= 0 || !res) {
		fprintf(stderr, "usage: lt_unstable [--seconds S] MOUNT_FILE BACKING_FILE\n");
		return 2;
	}
	backing = argv[argi + 1];
	fd = open(argv[argi], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, LEN) < 0) {
		perror("open/ftruncate");
		return 2;
	}
	rc = lacuna_client_open(fd, LEN, &c);
	if (rc) {
		fprintf(stderr, "lacuna_client_open: %s\n", strerror(-rc));
		return 2;
	}
	arena = lacuna_client_arena(c, &alen);
	pthread_create(&th, NULL, writer, NULL);
	end = now() + seconds;
	while (now() < end) {
		unsigned int i;
		size_t j;

		rc = lacuna_sparse_read(c, fd, 0, LEN, LACUNA_READ_DATA, arena, alen, res);
		if (rc == -EAGAIN)
			continue;
		if (rc) {
			fprintf(stderr, "lacuna_sparse_read: %s\n", strerror(-rc));
			return 1;
		}
		replies++;
		retried += res->retries > 0;
		if (res->flags & LACUNA_SR_UNSTABLE) {
			flagged++;
			continue;
		}
		for (i = 0; i < res->nsegs; i++) {
			const struct lacuna_extent *e = &res->segs[i];

			if (e->kind != LACUNA_SEG_DATA)
				continue;
			for (j = 1; j < e->length; j++) {
				if (e->data[j] != e->data[0]) {
					torn++;
					break;
				}
			}
		}
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("%lu replies: %lu retried, %lu flagged unstable, %lu torn without the flag\n",
	       replies, retried, flagged, torn);
	lacuna_client_close(c);
	close(fd);
	free(res);
	if (torn)
		return 1;
	if (retried + flagged == 0) {
		printf("the daemon never noticed the writer behind the mount\n");
		return 1;
	}
	return 0;
}
