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

static uint64_t lfs_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino ^ ((uint64_t)dev * 0x9e3779b97f4a7c15ULL);

	/* splitmix64 finaliser: spreads sequential inode numbers */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

int lfs_itable_init(struct lfs_itable *t)
{
	int rc;

	rc = htable_init(&t->tab, LFS_ITABLE_MIN_BUCKETS);
	if (rc)
		return rc;
	rc = pthread_mutex_init(&t->lock, NULL);
	if (rc) {
		htable_fini(&t->tab);
		return -rc;
	}
	return 0;
}

void lfs_itable_destroy(struct lfs_itable *t, void (*release)(struct lfs_inode *))
{
	struct hnode *n, *tmp;
	size_t i;

	HTABLE_FOR_EACH_SAFE(&t->tab, i, n, tmp) {
		n->next = NULL;
		if (release)
			release(container_of(n, struct lfs_inode, hnode));
	}
	htable_fini(&t->tab);
	pthread_mutex_destroy(&t->lock);
}

static struct lfs_inode *lfs_itable_find_locked(struct lfs_itable *t, dev_t dev, ino_t ino)
{
	uint64_t h = lfs_hash(dev, ino);
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&t->tab, h, n) {
		struct lfs_inode *in = container_of(n, struct lfs_inode, hnode);

		if (in->ino == ino && in->dev == dev)
			return in;
	}
	return NULL;
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

	pthread_mutex_lock(&t->lock);
	in = lfs_itable_find_locked(t, fresh->dev, fresh->ino);
	if (in) {
		in->nlookup += n;
		pthread_mutex_unlock(&t->lock);
		return in;
	}
	/* grow at 3/4 full; on allocation failure the chains just get longer */
	if (t->tab.count + 1 > (t->tab.mask + 1) / 4 * 3)
		htable_grow(&t->tab);
	fresh->nlookup = n;
	htable_add(&t->tab, &fresh->hnode, lfs_hash(fresh->dev, fresh->ino));
	pthread_mutex_unlock(&t->lock);
	return fresh;
}

bool lfs_itable_forget(struct lfs_itable *t, struct lfs_inode *inode, uint64_t n)
{
	bool gone = false;

	pthread_mutex_lock(&t->lock);
	if (n > inode->nlookup)
		n = inode->nlookup;
	inode->nlookup -= n;
	if (inode->nlookup == 0)
		gone = htable_del(&t->tab, &inode->hnode);
	pthread_mutex_unlock(&t->lock);
	return gone;
}

size_t lfs_itable_count(struct lfs_itable *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->tab.count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
