// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_arena: a server's chunk pool as the sparse-read arena.
 *
 *   lt_arena MOUNT_FILE BACKING_FILE
 *
 * Makes a memfd-backed chunk pool (common/chunk.h), registers it with
 * lacuna_client_open_arena(), reads MOUNT_FILE 1 MiB at a time with
 * LACUNA_READ_DATA straight into pool chunks, and compares every data
 * segment with pread of BACKING_FILE and every hole with zeros there.
 * Exit 0 pass, 1 mismatch or error, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk.h"
#include "lacuna/lacuna.h"

#define CHUNK (1024 * 1024)

static int check_range(int bfd, const struct lacuna_extent *e, uint8_t *tmp)
{
	uint64_t done = 0;

	while (done < e->length) {
		size_t n = e->length - done > CHUNK ? CHUNK : (size_t)(e->length - done);

		if (pread(bfd, tmp, n, (off_t)(e->offset + done)) != (ssize_t)n) {
			perror("pread backing");
			return -1;
		}
		if (e->kind == LACUNA_SEG_DATA
			    ? memcmp(tmp, e->data + done, n) != 0
			    : memchr(tmp, 0, n) != tmp || (n > 1 && memcmp(tmp, tmp + 1, n - 1))) {
			fprintf(stderr, "mismatch in %s at %llu+%llu\n",
				e->kind == LACUNA_SEG_DATA ? "data" : "hole",
				(unsigned long long)e->offset, (unsigned long long)e->length);
			return -1;
		}
		done += n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lacuna_result *res = malloc(sizeof(*res));
	uint8_t *tmp = malloc(CHUNK);
	struct lacuna_client *c;
	struct chunk_pool *pool;
	uint64_t off = 0, data = 0, holes = 0;
	void *chunk;
	int fd, bfd, rc;

	if (argc != 3 || !res || !tmp) {
		fprintf(stderr, "usage: lt_arena MOUNT_FILE BACKING_FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	bfd = open(argv[2], O_RDONLY);
	if (fd < 0 || bfd < 0) {
		perror("open");
		return 1;
	}
	rc = chunk_pool_create(&pool, CHUNK, 8, CHUNK_POOL_MEMFD);
	if (rc) {
		fprintf(stderr, "chunk_pool_create: %s\n", strerror(-rc));
		return 1;
	}
	rc = lacuna_client_open_arena(fd, chunk_pool_fd(pool), chunk_pool_base(pool),
				      chunk_pool_length(pool), &c);
	if (rc) {
		fprintf(stderr, "lacuna_client_open_arena: %s\n", strerror(-rc));
		return 1;
	}
	rc = chunk_get(pool, NULL, &chunk);
	if (rc) {
		fprintf(stderr, "chunk_get: %s\n", strerror(-rc));
		return 1;
	}
	for (;;) {
		unsigned int i;

		rc = lacuna_sparse_read(c, fd, off, UINT64_MAX, LACUNA_READ_DATA, chunk, CHUNK,
					res);
		if (rc) {
			fprintf(stderr, "lacuna_sparse_read at %llu: %s\n", (unsigned long long)off,
				strerror(-rc));
			return 1;
		}
		if (!res->atomic || (res->flags & LACUNA_SR_UNSTABLE)) {
			fprintf(stderr, "reply not atomic or unstable\n");
			return 1;
		}
		for (i = 0; i < res->nsegs; i++) {
			const struct lacuna_extent *e = &res->segs[i];

			if (e->kind == LACUNA_SEG_DATA &&
			    (e->data < (uint8_t *)chunk ||
			     e->data + e->length > (uint8_t *)chunk + CHUNK)) {
				fprintf(stderr, "data not in the pool chunk\n");
				return 1;
			}
			if (e->kind == LACUNA_SEG_HOLE && e->offset + e->length > res->file_size) {
				fprintf(stderr, "hole past EOF\n");
				return 1;
			}
			if (check_range(bfd, e, tmp))
				return 1;
			if (e->kind == LACUNA_SEG_DATA)
				data += e->length;
			else
				holes += e->length;
		}
		if ((res->flags & LACUNA_SR_EOF) || res->next_offset <= off)
			break;
		off = res->next_offset;
	}
	printf("read %llu data and %llu hole bytes into pool chunks\n", (unsigned long long)data,
	       (unsigned long long)holes);
	chunk_put(pool, chunk);
	lacuna_client_close(c);
	chunk_pool_destroy(pool);
	free(res);
	free(tmp);
	return 0;
}
