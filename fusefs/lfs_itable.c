// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode table of lacunafs (see lfs_itable.h): a chained hash keyed by the
 * backing (dev, ino) pair, as libfuse's passthrough_hp keys its map, so
 * that hard links and repeated lookups of one backing inode share one
 * FUSE node and one O_PATH fd.
 */
#include <errno.h>
#include <stdlib.h>

#include "lfs_itable.h"

#define LFS_ITABLE_MIN_BUCKETS 1024

static size_t lfs_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino ^ ((uint64_t)dev * 0x9e3779b97f4a7c15ULL);

	/* splitmix64 finaliser: spreads sequential inode numbers */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
}

int lfs_itable_init(struct lfs_itable *t)
{
	int rc;

	t->nbuckets = LFS_ITABLE_MIN_BUCKETS;
	t->count = 0;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	rc = pthread_mutex_init(&t->lock, NULL);
	if (rc) {
		free(t->buckets);
		return -rc;
	}
	return 0;
}

void lfs_itable_destroy(struct lfs_itable *t, void (*release)(struct lfs_inode *))
{
	size_t i;

	for (i = 0; i < t->nbuckets; i++) {
		struct lfs_inode *in = t->buckets[i], *next;

		for (; in; in = next) {
			next = in->hnext;
			in->hnext = NULL;
			if (release)
				release(in);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	t->count = 0;
	pthread_mutex_destroy(&t->lock);
}

static struct lfs_inode *lfs_itable_find_locked(struct lfs_itable *t, dev_t dev, ino_t ino)
{
	struct lfs_inode *in = t->buckets[lfs_hash(dev, ino) & (t->nbuckets - 1)];

	for (; in; in = in->hnext)
		if (in->ino == ino && in->dev == dev)
			return in;
	return NULL;
}

/* Double the bucket array; on allocation failure keep the old one. */
static void lfs_itable_grow_locked(struct lfs_itable *t)
{
	size_t n = t->nbuckets * 2, i;
	struct lfs_inode **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		struct lfs_inode *in = t->buckets[i], *next;

		for (; in; in = next) {
			size_t h = lfs_hash(in->dev, in->ino) & (n - 1);

			next = in->hnext;
			in->hnext = b[h];
			b[h] = in;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
}

struct lfs_inode *lfs_itable_get(struct lfs_itable *t, dev_t dev, ino_t ino, uint64_t n)
{
	struct lfs_inode *in;

	pthread_mutex_lock(&t->lock);
	in = lfs_itable_find_locked(t, dev, ino);
	if (in)
		in->nlookup += n;
	pthread_mutex_unlock(&t->lock);
	return in;
}

struct lfs_inode *lfs_itable_insert(struct lfs_itable *t, struct lfs_inode *fresh, uint64_t n)
{
	struct lfs_inode *in;
	size_t h;

	pthread_mutex_lock(&t->lock);
	in = lfs_itable_find_locked(t, fresh->dev, fresh->ino);
	if (in) {
		in->nlookup += n;
		pthread_mutex_unlock(&t->lock);
		return in;
	}
	if (t->count + 1 > t->nbuckets / 4 * 3)
		lfs_itable_grow_locked(t);
	h = lfs_hash(fresh->dev, fresh->ino) & (t->nbuckets - 1);
	fresh->nlookup = n;
	fresh->hnext = t->buckets[h];
	t->buckets[h] = fresh;
	t->count++;
	pthread_mutex_unlock(&t->lock);
	return fresh;
}

bool lfs_itable_forget(struct lfs_itable *t, struct lfs_inode *inode, uint64_t n)
{
	struct lfs_inode **pp;
	bool gone = false;

	pthread_mutex_lock(&t->lock);
	if (n > inode->nlookup)
		n = inode->nlookup;
	inode->nlookup -= n;
	if (inode->nlookup == 0) {
		pp = &t->buckets[lfs_hash(inode->dev, inode->ino) & (t->nbuckets - 1)];
		for (; *pp; pp = &(*pp)->hnext) {
			if (*pp == inode) {
				*pp = inode->hnext;
				inode->hnext = NULL;
				t->count--;
				gone = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	return gone;
}

size_t lfs_itable_count(struct lfs_itable *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
