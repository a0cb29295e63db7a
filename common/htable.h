/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An intrusive chained hash table: a struct hnode inside each element
 * holds the chain link and the element's hash, so removing needs no
 * rehash and growing needs no callback. Buckets are a power of two.
 * Lookups walk one chain and compare keys themselves:
 *
 *	struct hnode *n;
 *	HTABLE_FOR_EACH_HASH(&t, h, n)
 *		if (match(container_of(n, struct elem, node), key))
 *			...
 *
 * No locking: the owner's lock guards the table. Also the one FNV-1a of
 * the tree, for keys that are byte strings.
 */
#ifndef LACUNA_HTABLE_H
#define LACUNA_HTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "list.h" /* container_of */

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htable {
	struct hnode **bucket;
	size_t mask; /* buckets - 1 */
	size_t count;
};

/*
 * A table over the caller's @n buckets (a power of two), for a table
 * whose size is fixed at build time: a static one needs no init, and is
 * neither grown nor passed to htable_fini().
 */
#define HTABLE_INIT_FIXED(buckets, n) { .bucket = (buckets), .mask = (n) - 1, .count = 0 }

/* A table of at least @nbuckets buckets (rounded up to a power of two): 0 or -ENOMEM */
int htable_init(struct htable *t, size_t nbuckets);
void htable_fini(struct htable *t);
/* Double the buckets (when count passed their number, say): false if out of memory */
bool htable_grow(struct htable *t);

static inline struct hnode **htable_bucket(const struct htable *t, uint64_t hash)
{
	return &t->bucket[hash & t->mask];
}

static inline void htable_add(struct htable *t, struct hnode *n, uint64_t hash)
{
	struct hnode **b = htable_bucket(t, hash);

	n->hash = hash;
	n->next = *b;
	*b = n;
	t->count++;
}

/* Take @n out of @t: false if it was not there */
static inline bool htable_del(struct htable *t, struct hnode *n)
{
	struct hnode **pp;

	for (pp = htable_bucket(t, n->hash); *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return true;
		}
	}
	return false;
}

/* Every node @n of @t whose hash is @h */
#define HTABLE_FOR_EACH_HASH(t, h, n) \
	for (n = *htable_bucket(t, h); n; n = n->next) \
		if (n->hash == (h))

/* Every node @n of @t, in no order; the loop may htable_del() @n (@tmp: the next one) */
#define HTABLE_FOR_EACH_SAFE(t, i, n, tmp)                                  \
	for (i = 0; i <= (t)->mask; i++)                                    \
		for (n = (t)->bucket[i]; n && (tmp = n->next, 1); n = tmp)

/* FNV-1a, 64 bits, of @len bytes at @p */
static inline uint64_t hash_fnv1a64(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* FNV-1a, 32 bits, of @len bytes at @p */
static inline uint32_t hash_fnv1a32(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

#endif
