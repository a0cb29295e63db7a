// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The intrusive hash table's bucket array (htable.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "htable.h"

int htable_init(struct htable *t, size_t nbuckets)
{
	size_t n = 1;

	while (n < nbuckets)
		n <<= 1;
	t->bucket = calloc(n, sizeof(*t->bucket));
	if (!t->bucket)
		return -ENOMEM;
	t->mask = n - 1;
	t->count = 0;
	return 0;
}

void htable_fini(struct htable *t)
{
	free(t->bucket);
	t->bucket = NULL;
	t->mask = 0;
	t->count = 0;
}

bool htable_grow(struct htable *t)
{
	size_t n = (t->mask + 1) * 2, i;
	struct hnode **b = calloc(n, sizeof(*b));
	struct hnode *e, *next;

	if (!b)
		return false;
	for (i = 0; i <= t->mask; i++) {
		for (e = t->bucket[i]; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(t->bucket);
	t->bucket = b;
	t->mask = n - 1;
	return true;
}
