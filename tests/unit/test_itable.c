// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the lacunafs inode table: insert and find by (dev, ino),
 * lookup counting, forget to zero, growth past many entries, and
 * concurrent lookups/forgets from several threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../fusefs/lfs_itable.h"

static struct lfs_inode *mk(dev_t dev, ino_t ino)
{
	struct lfs_inode *in = calloc(1, sizeof(*in));

	assert_non_null(in);
	in->dev = dev;
	in->ino = ino;
	in->fd = -1;
	return in;
}

static void release(struct lfs_inode *in)
{
	free(in);
}

static void test_insert_get_forget(void **state)
{
	struct lfs_itable t;
	struct lfs_inode *a = mk(1, 100), *dup = mk(1, 100), *b = mk(2, 100);

	assert_int_equal(lfs_itable_init(&t), 0);
	assert_null(lfs_itable_get(&t, 1, 100, 1));
	assert_ptr_equal(lfs_itable_insert(&t, a, 1), a);
	/* same key from a racing lookup: existing one wins, counts add */
	assert_ptr_equal(lfs_itable_insert(&t, dup, 2), a);
	free(dup);
	assert_int_equal(a->nlookup, 3);
	/* same ino on another device is another inode */
	assert_ptr_equal(lfs_itable_insert(&t, b, 1), b);
	assert_int_equal(lfs_itable_count(&t), 2);
	assert_ptr_equal(lfs_itable_get(&t, 1, 100, 1), a);
	assert_int_equal(a->nlookup, 4);

	assert_false(lfs_itable_forget(&t, a, 3));
	assert_ptr_equal(lfs_itable_get(&t, 1, 100, 0), a);
	assert_true(lfs_itable_forget(&t, a, 1));
	assert_null(lfs_itable_get(&t, 1, 100, 0));
	free(a);
	/* forgetting more than was looked up clamps at zero */
	assert_true(lfs_itable_forget(&t, b, 99));
	free(b);
	assert_int_equal(lfs_itable_count(&t), 0);
	lfs_itable_destroy(&t, release);
}

static void test_growth(void **state)
{
	enum { N = 50000 };
	struct lfs_itable t;
	size_t i;

	assert_int_equal(lfs_itable_init(&t), 0);
	for (i = 0; i < N; i++)
		assert_non_null(lfs_itable_insert(&t, mk(7, (ino_t)i * 4096 + 3), 1));
	assert_int_equal(lfs_itable_count(&t), N);
	assert_true(t.tab.mask + 1 >= N);
	for (i = 0; i < N; i++) {
		struct lfs_inode *in = lfs_itable_get(&t, 7, (ino_t)i * 4096 + 3, 0);

		assert_non_null(in);
		assert_int_equal(in->ino, (ino_t)i * 4096 + 3);
	}
	for (i = 0; i < N; i += 2) {
		struct lfs_inode *in = lfs_itable_get(&t, 7, (ino_t)i * 4096 + 3, 0);

		assert_true(lfs_itable_forget(&t, in, 1));
		free(in);
	}
	assert_int_equal(lfs_itable_count(&t), N / 2);
	assert_null(lfs_itable_get(&t, 7, 3, 0));
	assert_non_null(lfs_itable_get(&t, 7, 4096 + 3, 0));
	lfs_itable_destroy(&t, release);
}

struct worker {
	struct lfs_itable *t;
	unsigned int seed;
};

/* Each thread looks up and forgets a shared set of keys. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 20000; i++) {
		ino_t ino = (ino_t)(rand_r(&w->seed) % 64);
		struct lfs_inode *in = lfs_itable_get(w->t, 9, ino, 1);

		if (!in) {
			struct lfs_inode *fresh = mk(9, ino);

			in = lfs_itable_insert(w->t, fresh, 1);
			if (in != fresh)
				free(fresh);
		}
		assert_int_equal(in->ino, ino);
		if (lfs_itable_forget(w->t, in, 1))
			free(in);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct lfs_itable t;
	pthread_t th[4];
	struct worker w[4];
	int i;

	assert_int_equal(lfs_itable_init(&t), 0);
	for (i = 0; i < 4; i++) {
		w[i].t = &t;
		w[i].seed = (unsigned int)i + 1;
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* every lookup was forgotten: nothing may be left */
	assert_int_equal(lfs_itable_count(&t), 0);
	lfs_itable_destroy(&t, release);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_get_forget),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
