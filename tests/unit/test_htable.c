// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/htable.h and common/list.h: adds, finds, removes
 * and grows with colliding hashes; lists as LRUs and queues, with
 * removal while iterating.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "htable.h"
#include "list.h"

struct elem {
	int key;
	struct hnode node;
	struct list_head link;
};

static struct elem *find(struct htable *t, int key, uint64_t h)
{
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(t, h, n) {
		struct elem *e = container_of(n, struct elem, node);

		if (e->key == key)
			return e;
	}
	return NULL;
}

/* Many elements, hashes colliding in pairs, through two growths */
static void test_htable_add_find_del_grow(void **state)
{
	static struct elem e[1000];
	struct htable t;
	struct hnode *n, *tmp;
	size_t i, seen = 0;
	int k;

	(void)state;
	assert_int_equal(htable_init(&t, 100), 0);
	assert_int_equal(t.mask, 127);
	for (k = 0; k < 1000; k++) {
		e[k].key = k;
		htable_add(&t, &e[k].node, (uint64_t)(k / 2));
		if (t.count > t.mask + 1)
			assert_true(htable_grow(&t));
	}
	assert_int_equal(t.count, 1000);
	assert_true(t.mask + 1 >= 1000);
	for (k = 0; k < 1000; k++)
		assert_ptr_equal(find(&t, k, (uint64_t)(k / 2)), &e[k]);
	assert_null(find(&t, 1000, 500));
	for (k = 0; k < 1000; k += 2)
		assert_true(htable_del(&t, &e[k].node));
	assert_false(htable_del(&t, &e[0].node));
	assert_int_equal(t.count, 500);
	for (k = 0; k < 1000; k++)
		assert_true((find(&t, k, (uint64_t)(k / 2)) != NULL) == (k % 2 == 1));
	HTABLE_FOR_EACH_SAFE(&t, i, n, tmp) {
		assert_int_equal(container_of(n, struct elem, node)->key % 2, 1);
		htable_del(&t, n);
		seen++;
	}
	assert_int_equal(seen, 500);
	assert_int_equal(t.count, 0);
	htable_fini(&t);
}

static void test_fnv(void **state)
{
	(void)state;
	/* the published FNV-1a test vectors */
	assert_true(hash_fnv1a64("", 0) == 0xcbf29ce484222325ULL);
	assert_true(hash_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);
	assert_true(hash_fnv1a32("a", 1) == 0xe40c292cu);
	assert_true(hash_fnv1a32("foobar", 6) == 0xbf9cf968u);
	/* lacunad's export id of "/srv/nfs" (gw_export.c), in every file handle it gave out */
	assert_true(hash_fnv1a32("/srv/nfs", 8) == 0x89bfbee9u);
}

static void test_list(void **state)
{
	struct list_head h = LIST_HEAD_INIT(h);
	struct elem e[5], *p, *tmp;
	int k, order[5], n = 0;

	(void)state;
	assert_true(list_empty(&h));
	for (k = 0; k < 5; k++) {
		e[k].key = k;
		list_add_tail(&e[k].link, &h);
	}
	list_move(&e[3].link, &h); /* 3 0 1 2 4 */
	assert_ptr_equal(list_first_entry(&h, struct elem, link), &e[3]);
	assert_ptr_equal(list_last_entry(&h, struct elem, link), &e[4]);
	list_for_each_entry_safe(p, tmp, &h, link) {
		order[n++] = p->key;
		if (p->key % 2 == 0)
			list_del(&p->link);
	}
	assert_int_equal(n, 5);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 0);
	assert_int_equal(order[4], 4);
	n = 0;
	list_for_each_entry(p, &h, link)
		order[n++] = p->key;
	assert_int_equal(n, 2);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 1);
	assert_true(list_empty(&e[0].link));
	list_for_each_entry_safe_reverse(p, tmp, &h, link)
		list_del(&p->link);
	assert_true(list_empty(&h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_htable_add_find_del_grow),
		cmocka_unit_test(test_fnv),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
