// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the chunk pool: argument checks, one mapping with
 * aligned distinct chunks, exhaustion and recovery, LIFO reuse,
 * reference counts, per-owner caps (charged until the last reference
 * goes), the global cap, statistics, address helpers, the sealed memfd
 * backing, concurrent get/put from several threads with every chunk
 * handed to one user at a time, and misuse aborting.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "chunk.h"

#define CSZ 4096
#define NCHUNKS 8

static void test_create_args(void **state)
{
	struct chunk_pool *p = (void *)1;

	assert_int_equal(chunk_pool_create(&p, 0, 1, 0), -EINVAL);
	assert_null(p);
	assert_int_equal(chunk_pool_create(&p, CHUNK_SIZE_MIN - CHUNK_SIZE_ALIGN, 1, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CSZ + 1, 1, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CHUNK_SIZE_MAX + CHUNK_SIZE_ALIGN, 1, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CSZ, 0, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CSZ, CHUNK_POOL_CHUNKS_MAX + 1, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CHUNK_SIZE_MAX, 1U << 11, 0), -EINVAL);
	assert_int_equal(chunk_pool_create(&p, CSZ, 1, 0x100), -EINVAL);
	/* smallest and a non-page-multiple size work */
	assert_int_equal(chunk_pool_create(&p, CHUNK_SIZE_MIN, 3, 0), 0);
	assert_int_equal(chunk_pool_length(p), (size_t)getpagesize());
	chunk_pool_destroy(p);
	chunk_pool_destroy(NULL);
}

static void test_get_all(void **state)
{
	struct chunk_pool_stats st;
	struct chunk_pool *p;
	void *c[NCHUNKS + 1], *x;
	uint8_t *base;
	int i, j;

	assert_int_equal(chunk_pool_create(&p, CSZ, NCHUNKS, 0), 0);
	base = chunk_pool_base(p);
	assert_non_null(base);
	assert_int_equal(chunk_pool_length(p), CSZ * NCHUNKS);
	assert_int_equal(chunk_pool_chunk_size(p), CSZ);
	assert_int_equal(chunk_pool_fd(p), -1);
	for (i = 0; i < NCHUNKS; i++) {
		assert_int_equal(chunk_get(p, NULL, &c[i]), 0);
		assert_true(chunk_pool_contains(p, c[i]));
		assert_int_equal(((uint8_t *)c[i] - base) % CSZ, 0);
		memset(c[i], i, CSZ); /* every byte is ours to write */
		for (j = 0; j < i; j++)
			assert_ptr_not_equal(c[i], c[j]);
	}
	assert_ptr_equal(c[0], base); /* lowest first */
	assert_int_equal(chunk_get(p, NULL, &x), -ENOMEM);
	assert_null(x);
	chunk_pool_get_stats(p, &st);
	assert_int_equal(st.in_use, NCHUNKS);
	assert_int_equal(st.peak, NCHUNKS);
	assert_int_equal(st.gets, NCHUNKS);
	assert_int_equal(st.fail_pool, 1);
	assert_int_equal(st.nchunks, NCHUNKS);
	assert_int_equal(st.cap, NCHUNKS);
	assert_int_equal(st.chunk_size, CSZ);

	/* LIFO: the chunk just put is the next one out */
	chunk_put(p, c[3]);
	assert_int_equal(chunk_get(p, NULL, &x), 0);
	assert_ptr_equal(x, c[3]);
	for (i = 0; i < NCHUNKS; i++)
		chunk_put(p, c[i]);
	chunk_pool_get_stats(p, &st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.peak, NCHUNKS);
	/* all back: all can be taken again */
	for (i = 0; i < NCHUNKS; i++)
		assert_int_equal(chunk_get(p, NULL, &c[i]), 0);
	for (i = 0; i < NCHUNKS; i++)
		chunk_put(p, c[i]);
	chunk_pool_destroy(p);
}

static void test_refs(void **state)
{
	struct chunk_pool *p;
	uint8_t *c;
	void *x;

	assert_int_equal(chunk_pool_create(&p, CSZ, 2, 0), 0);
	assert_int_equal(chunk_get(p, NULL, (void **)&c), 0);
	assert_int_equal(chunk_refs(p, c), 1);
	chunk_hold(p, c + 100); /* any address inside the chunk */
	chunk_hold(p, c + CSZ - 1);
	assert_int_equal(chunk_refs(p, c + 7), 3);
	chunk_put(p, c);
	chunk_put(p, c + 5);
	assert_int_equal(chunk_refs(p, c), 1);
	assert_int_equal(chunk_get(p, NULL, &x), 0); /* the other chunk */
	assert_ptr_not_equal(x, c);
	chunk_put(p, c + CSZ - 1);
	assert_int_equal(chunk_refs(p, c), 0);
	chunk_put(p, x);
	assert_int_equal(chunk_get(p, NULL, &x), 0);
	chunk_put(p, x);
	chunk_pool_destroy(p);
}

static void test_owner_cap(void **state)
{
	struct chunk_pool_stats st;
	struct chunk_owner a, b;
	struct chunk_pool *p;
	void *c[NCHUNKS], *x;
	int i;

	assert_int_equal(chunk_pool_create(&p, CSZ, NCHUNKS, 0), 0);
	chunk_owner_init(&a, p, 3 * CSZ);
	chunk_owner_init(&b, p, 0);
	assert_false(chunk_owner_busy(&a));
	for (i = 0; i < 3; i++)
		assert_int_equal(chunk_get(p, &a, &c[i]), 0);
	assert_int_equal(chunk_owner_bytes(&a), 3 * CSZ);
	assert_true(chunk_owner_busy(&a));
	assert_int_equal(chunk_get(p, &a, &x), -ENOBUFS); /* at the cap, not over */
	assert_null(x);
	assert_int_equal(chunk_owner_bytes(&a), 3 * CSZ);
	/* b (no cap) takes the rest of the pool */
	for (i = 3; i < NCHUNKS; i++)
		assert_int_equal(chunk_get(p, &b, &c[i]), 0);
	assert_int_equal(chunk_owner_bytes(&b), (NCHUNKS - 3) * CSZ);
	assert_int_equal(chunk_get(p, &b, &x), -ENOMEM);
	assert_int_equal(chunk_owner_bytes(&b), (NCHUNKS - 3) * CSZ);
	chunk_pool_get_stats(p, &st);
	assert_int_equal(st.fail_owner, 1);
	assert_int_equal(st.fail_pool, 1);

	/* a's chunk stays charged to a while b holds a reference to it */
	chunk_hold(p, c[0]);
	chunk_put(p, c[0]);
	assert_int_equal(chunk_owner_bytes(&a), 3 * CSZ);
	chunk_put(p, c[0]);
	assert_int_equal(chunk_owner_bytes(&a), 2 * CSZ);
	assert_int_equal(chunk_get(p, &a, &c[0]), 0);
	for (i = 0; i < NCHUNKS; i++)
		chunk_put(p, c[i]);
	assert_false(chunk_owner_busy(&a));
	assert_false(chunk_owner_busy(&b));

	/* a cap that is not a whole number of chunks rounds down */
	chunk_owner_init(&a, p, 2 * CSZ + CSZ / 2);
	assert_int_equal(chunk_get(p, &a, &c[0]), 0);
	assert_int_equal(chunk_get(p, &a, &c[1]), 0);
	assert_int_equal(chunk_get(p, &a, &x), -ENOBUFS);
	chunk_put(p, c[0]);
	chunk_put(p, c[1]);
	chunk_pool_destroy(p);
}

static void test_pool_cap(void **state)
{
	struct chunk_pool_stats st;
	struct chunk_pool *p;
	void *c[3], *x;

	assert_int_equal(chunk_pool_create(&p, CSZ, NCHUNKS, 0), 0);
	assert_int_equal(chunk_pool_set_cap(p, 0), -EINVAL);
	assert_int_equal(chunk_pool_set_cap(p, NCHUNKS + 1), -EINVAL);
	assert_int_equal(chunk_pool_set_cap(p, 2), 0);
	assert_int_equal(chunk_get(p, NULL, &c[0]), 0);
	assert_int_equal(chunk_get(p, NULL, &c[1]), 0);
	assert_int_equal(chunk_get(p, NULL, &x), -ENOMEM);
	chunk_pool_get_stats(p, &st);
	assert_int_equal(st.cap, 2);
	assert_int_equal(st.in_use, 2);
	/* lowering the cap below what is out refuses gets until enough come back */
	assert_int_equal(chunk_pool_set_cap(p, 1), 0);
	chunk_put(p, c[1]);
	assert_int_equal(chunk_get(p, NULL, &x), -ENOMEM);
	chunk_put(p, c[0]);
	assert_int_equal(chunk_get(p, NULL, &c[0]), 0);
	assert_int_equal(chunk_pool_set_cap(p, 3), 0);
	assert_int_equal(chunk_get(p, NULL, &c[1]), 0);
	assert_int_equal(chunk_get(p, NULL, &c[2]), 0);
	assert_int_equal(chunk_get(p, NULL, &x), -ENOMEM);
	chunk_put(p, c[0]);
	chunk_put(p, c[1]);
	chunk_put(p, c[2]);
	chunk_pool_destroy(p);
}

static void test_addresses(void **state)
{
	struct chunk_pool *p;
	uint8_t *base;

	/* 3 chunks of 192 bytes: the mapping is one page, the tail unused */
	assert_int_equal(chunk_pool_create(&p, 192, 3, 0), 0);
	base = chunk_pool_base(p);
	assert_true(chunk_pool_contains(p, base));
	assert_true(chunk_pool_contains(p, base + 3 * 192 - 1));
	assert_false(chunk_pool_contains(p, base + 3 * 192));
	assert_false(chunk_pool_contains(p, base - 1));
	assert_ptr_equal(chunk_of(p, base + 191), base);
	assert_ptr_equal(chunk_of(p, base + 192), base + 192);
	assert_ptr_equal(chunk_of(p, base + 2 * 192 + 100), base + 2 * 192);
	assert_int_equal(chunk_pool_offset(p, base + 500), 500);
	chunk_pool_destroy(p);
}

static void test_memfd(void **state)
{
	const size_t big = 1 << 20;
	struct chunk_pool *p;
	uint8_t *c, buf[16];
	struct stat st;
	int fd, seals;

	assert_int_equal(chunk_pool_create(&p, big, 64, CHUNK_POOL_MEMFD), 0);
	fd = chunk_pool_fd(p);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	seals = fcntl(fd, F_GET_SEALS);
	assert_true(seals >= 0);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_GROW);
	assert_true(seals & F_SEAL_SEAL);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 64 * big);
	assert_true(st.st_blocks * 512 < (off_t)big); /* sparse until touched */
	assert_int_equal(ftruncate(fd, 0), -1);	      /* sealed */

	/* what is written through a chunk is in the memfd at its offset */
	assert_int_equal(chunk_get(p, NULL, (void **)&c), 0);
	assert_int_equal(chunk_get(p, NULL, (void **)&c), 0);
	memcpy(c + 10, "lacuna chunk", 12);
	assert_int_equal(pread(fd, buf, 12, (off_t)chunk_pool_offset(p, c + 10)), 12);
	assert_memory_equal(buf, "lacuna chunk", 12);
	assert_int_equal(chunk_pool_offset(p, c), big);
	chunk_put(p, c);
	chunk_put(p, chunk_pool_base(p));
	chunk_pool_destroy(p);

	/* POPULATE prefaults */
	assert_int_equal(chunk_pool_create(&p, CSZ, 4, CHUNK_POOL_MEMFD | CHUNK_POOL_POPULATE), 0);
	assert_int_equal(fstat(chunk_pool_fd(p), &st), 0);
	assert_true(st.st_blocks * 512 >= 4 * CSZ);
	chunk_pool_destroy(p);
}

/* ---------------------------------------------------------------- threads */

#define THREADS 4
#define ROUNDS 200000
#define HELD_MAX 3

struct worker {
	struct chunk_pool *p;
	struct chunk_owner owner;
	unsigned int id;
	unsigned long ok, refused;
	int bad;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t *held[HELD_MAX] = { 0 };
	unsigned int seed = w->id * 7919 + 1, i, k;
	uint64_t stamp;

	for (i = 0; i < ROUNDS; i++) {
		k = (unsigned int)rand_r(&seed) % HELD_MAX;
		if (held[k]) {
			/* nobody else wrote into our chunk meanwhile */
			stamp = (uint64_t)w->id << 32 | ((uintptr_t)held[k] & 0xffffffff);
			if (held[k][0] != stamp || held[k][511] != stamp)
				w->bad++;
			chunk_put(w->p, held[k]);
			held[k] = NULL;
			continue;
		}
		if (chunk_get(w->p, &w->owner, (void **)&held[k])) {
			w->refused++;
			continue;
		}
		w->ok++;
		stamp = (uint64_t)w->id << 32 | ((uintptr_t)held[k] & 0xffffffff);
		held[k][0] = stamp;
		held[k][511] = stamp;
	}
	for (k = 0; k < HELD_MAX; k++)
		if (held[k])
			chunk_put(w->p, held[k]);
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[THREADS];
	struct chunk_pool_stats st;
	struct chunk_pool *p;
	pthread_t tid[THREADS];
	void *c[NCHUNKS];
	unsigned long ok = 0, refused = 0;
	int i;

	/* fewer chunks than THREADS * HELD_MAX: gets fail now and then */
	assert_int_equal(chunk_pool_create(&p, CSZ, NCHUNKS, 0), 0);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .p = p, .id = (unsigned int)i + 1 };
		chunk_owner_init(&w[i].owner, p, i == 0 ? 2 * CSZ : 0);
		assert_int_equal(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_int_equal(w[i].bad, 0);
		assert_false(chunk_owner_busy(&w[i].owner));
		ok += w[i].ok;
		refused += w[i].refused;
	}
	chunk_pool_get_stats(p, &st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.gets, ok);
	assert_int_equal(st.fail_pool + st.fail_owner, refused);
	assert_true(st.peak <= NCHUNKS);
	/* the free stack is intact: every chunk comes out exactly once */
	for (i = 0; i < NCHUNKS; i++)
		assert_int_equal(chunk_get(p, NULL, &c[i]), 0);
	for (i = 0; i < NCHUNKS; i++)
		chunk_put(p, c[i]);
	chunk_pool_destroy(p);
}

/* Misuse is a bug, not an error: the pool aborts. */
static void expect_abort(void (*fn)(struct chunk_pool *))
{
	struct chunk_pool *p;
	int status;
	pid_t pid;

	assert_int_equal(chunk_pool_create(&p, CSZ, 2, 0), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(2); /* keep the message out of the test log */
		fn(p);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	chunk_pool_destroy(p);
}

static void put_free(struct chunk_pool *p)
{
	chunk_put(p, chunk_pool_base(p));
}

static void hold_free(struct chunk_pool *p)
{
	chunk_hold(p, chunk_pool_base(p));
}

static void put_outside(struct chunk_pool *p)
{
	void *c;

	if (chunk_get(p, NULL, &c) == 0)
		chunk_put(p, (uint8_t *)c + 2 * CSZ);
}

static void test_misuse(void **state)
{
	expect_abort(put_free);
	expect_abort(hold_free);
	expect_abort(put_outside);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_args), cmocka_unit_test(test_get_all),
		cmocka_unit_test(test_refs),	    cmocka_unit_test(test_owner_cap),
		cmocka_unit_test(test_pool_cap),    cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_memfd),	    cmocka_unit_test(test_threads),
		cmocka_unit_test(test_misuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
