/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lacunafs inode table: every backing inode the kernel knows about,
 * keyed by the backing (st_dev, st_ino), with its backing file handle, an
 * O_PATH fd while one is cached (lfs_fdcache.h) and the FUSE lookup
 * count. Hashed with chaining; the bucket array doubles when the load
 * passes 3/4, so lookup and forget are O(1) however many inodes the
 * kernel caches.
 *
 * Lock order: itable->lock is a leaf lock. Nothing else is taken while it
 * is held, and no system call is made under it.
 */
#ifndef LACUNA_LFS_ITABLE_H
#define LACUNA_LFS_ITABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "htable.h"
#include "list.h"
#include "rangelock.h"

struct lfs_inode {
	struct hnode hnode; /* in the table, under itable->lock */
	dev_t dev;
	ino_t ino;
	mode_t type;	  /* S_IFMT bits */
	uint64_t nlookup; /* kernel lookups, under itable->lock */

	/*
	 * The backing inode is reached through an O_PATH | O_NOFOLLOW fd.
	 * With a file handle (fh), that fd is a cache entry (lfs_fdcache.c):
	 * -1 while evicted, reopened from fh on demand; fd, fd_pins and the
	 * LRU links are under the fd cache's lock. Without one (root, or a
	 * backing filesystem that gives no handles) fd is open for the
	 * inode's whole life and never changes.
	 */
	struct file_handle *fh; /* owned, or NULL */
	int fd;
	unsigned int fd_pins; /* callers using fd now: not evictable */
	struct list_head lru; /* on the fd cache's LRU while fd is open and unpinned */

	/*
	 * The inode's byte-range lock (common/rangelock.h): exclusive over
	 * what a write, fallocate, truncate or copy changes, shared over
	 * [offset, EOF) for the sparse read. wgen counts completed changes
	 * made through the mount, so the sparse read can tell them from
	 * changes made behind it. Lock order: rl before cache_lock; never
	 * two ranges of one inode at once; two inodes in address order.
	 */
	struct rl_lock rl;
	uint64_t wgen;	/* __atomic, incremented under rl */
	uint64_t wbusy; /* __atomic, changes in progress */

	/*
	 * Page-cache bookkeeping for read-only opens (lfs_ops_file.c):
	 * the mtime/ctime/size the kernel's cached pages were read at.
	 * Protected by cache_lock, taken after nothing else.
	 */
	pthread_mutex_t cache_lock;
	bool cache_known;
	struct timespec cache_mtime;
	struct timespec cache_ctime;
	off_t cache_size;
};

struct lfs_itable {
	pthread_mutex_t lock;
	struct htable tab; /* lfs_inodes by (dev, ino) */
};

int lfs_itable_init(struct lfs_itable *t);
/* Frees every remaining inode through release (which may be NULL). */
void lfs_itable_destroy(struct lfs_itable *t, void (*release)(struct lfs_inode *));

/*
 * Find (dev, ino) and add n to its lookup count. Returns NULL when it is
 * not in the table.
 */
struct lfs_inode *lfs_itable_get(struct lfs_itable *t, dev_t dev, ino_t ino, uint64_t n);

/*
 * Insert fresh (its dev/ino/fd set, nlookup ignored) with a lookup count
 * of n, unless an inode with the same key is already there: then that
 * one's count grows by n and it is returned, and the caller disposes of
 * fresh. Returns fresh when it was inserted. Never fails: when the
 * bucket array cannot grow, chains just get longer.
 */
struct lfs_inode *lfs_itable_insert(struct lfs_itable *t, struct lfs_inode *fresh, uint64_t n);

/*
 * Drop n lookups. Returns true when the count reached zero: the inode has
 * been unhashed and the caller must release it.
 */
bool lfs_itable_forget(struct lfs_itable *t, struct lfs_inode *inode, uint64_t n);

size_t lfs_itable_count(struct lfs_itable *t);

#endif
