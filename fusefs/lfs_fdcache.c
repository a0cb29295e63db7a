// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The bounded cache of lacunafs's inode O_PATH fds (see lfs_fdcache.h):
 * a doubly linked LRU list of the open, unpinned fds, under one mutex,
 * and the probe that decides at start whether inodes can be reopened by
 * file handle at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lfs_fdcache.h"
#include "log.h"

/* fds closed per put when over the bound; the rest go on later puts */
#define LFS_FD_EVICT_BATCH 16

static struct {
	pthread_mutex_t lock;
	struct list_head lru; /* inodes with an unpinned open fd, most recently used first */
	size_t open;		       /* cached fds open, pinned or not */
	size_t cap;
	int dir_fd; /* the backing directory: open_by_handle_at's mount fd */
	bool handles;
	int warned; /* __atomic: fd exhaustion logged */
} lfs_fdc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.lru = LIST_HEAD_INIT(lfs_fdc.lru),
	.dir_fd = -1,
};

static void lfs_lru_del(struct lfs_inode *in)
{
	list_del(&in->lru);
}

static void lfs_lru_add(struct lfs_inode *in)
{
	list_add(&in->lru, &lfs_fdc.lru);
}

/*
 * Take up to max least recently used unpinned fds off their inodes while
 * more than keep are open; their numbers go to fds, to be closed once the
 * lock is dropped. Returns how many.
 */
static size_t lfs_evict_locked(size_t keep, int *fds, size_t max)
{
	size_t n = 0;

	while (n < max && lfs_fdc.open > keep && !list_empty(&lfs_fdc.lru)) {
		struct lfs_inode *victim = list_last_entry(&lfs_fdc.lru, struct lfs_inode, lru);

		lfs_lru_del(victim);
		fds[n++] = victim->fd;
		victim->fd = -1;
		lfs_fdc.open--;
	}
	return n;
}

static void lfs_close_all(const int *fds, size_t n)
{
	while (n--)
		close(fds[n]);
}

/* The current soft RLIMIT_NOFILE, or 1024 if it cannot be read. */
static size_t lfs_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	return (size_t)rl.rlim_cur;
}

/* The handle of the file open as fd, allocated to its size; or -errno. */
static int lfs_handle_of(int fd, struct file_handle **out)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ), *small;
	int mount_id;

	if (!fh)
		return -ENOMEM;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", fh, &mount_id, AT_EMPTY_PATH) < 0) {
		int err = errno;

		free(fh);
		return -err;
	}
	small = realloc(fh, sizeof(*fh) + fh->handle_bytes);
	*out = small ? small : fh;
	return 0;
}

int lfs_fdcache_init(int dir_fd, size_t cap)
{
	size_t nofile = lfs_nofile(), reserve;
	struct file_handle *fh = NULL;
	int rc, fd;

	reserve = nofile / 4 > LFS_FD_RESERVE_MIN ? nofile / 4 : LFS_FD_RESERVE_MIN;
	if (!cap)
		cap = nofile > reserve + LFS_FD_CACHE_MIN ? nofile - reserve : LFS_FD_CACHE_MIN;
	lfs_fdc.cap = cap;
	lfs_fdc.dir_fd = dir_fd;

	rc = lfs_handle_of(dir_fd, &fh);
	if (rc) {
		log_info("backing filesystem gives no file handles (name_to_handle_at: %s): "
			 "one fd per inode the kernel knows, within RLIMIT_NOFILE %zu",
			 strerror(-rc), nofile);
		return rc == -ENOMEM ? rc : 0;
	}
	fd = open_by_handle_at(dir_fd, fh, O_PATH | O_CLOEXEC);
	free(fh);
	if (fd < 0) {
		log_info("cannot reopen by file handle (open_by_handle_at: %s): "
			 "one fd per inode the kernel knows, within RLIMIT_NOFILE %zu",
			 strerror(errno), nofile);
		return 0;
	}
	close(fd);
	lfs_fdc.handles = true;
	log_info("inodes by file handle, at most %zu path fds cached (RLIMIT_NOFILE %zu)", cap,
		 nofile);
	return 0;
}

void lfs_fdcache_exit(void)
{
	if (lfs_fdc.dir_fd >= 0)
		close(lfs_fdc.dir_fd);
	lfs_fdc.dir_fd = -1;
}

int lfs_inode_fd_init(struct lfs_inode *inode, int fd)
{
	int victims[LFS_FD_EVICT_BATCH];
	size_t n;
	int rc;

	inode->fd = fd;
	inode->fh = NULL;
	inode->fd_pins = 0;
	list_init(&inode->lru);
	if (!lfs_fdc.handles)
		return 0;
	rc = lfs_handle_of(fd, &inode->fh);
	if (rc == -ENOMEM)
		return rc;
	if (rc) /* this one inode keeps its fd, as without handles */
		return 0;
	pthread_mutex_lock(&lfs_fdc.lock);
	lfs_fdc.open++;
	lfs_lru_add(inode);
	n = lfs_evict_locked(lfs_fdc.cap, victims, LFS_FD_EVICT_BATCH);
	pthread_mutex_unlock(&lfs_fdc.lock);
	lfs_close_all(victims, n);
	return 0;
}

void lfs_inode_fd_fini(struct lfs_inode *inode)
{
	int fd;

	if (!inode->fh) {
		if (inode->fd >= 0)
			close(inode->fd);
		inode->fd = -1;
		return;
	}
	pthread_mutex_lock(&lfs_fdc.lock);
	fd = inode->fd;
	if (fd >= 0) {
		if (!inode->fd_pins)
			lfs_lru_del(inode);
		lfs_fdc.open--;
		inode->fd = -1;
	}
	pthread_mutex_unlock(&lfs_fdc.lock);
	if (fd >= 0)
		close(fd);
	free(inode->fh);
	inode->fh = NULL;
}

int lfs_inode_fd(struct lfs_inode *inode)
{
	int fd, extra = -1;

	if (!inode->fh)
		return inode->fd;
	pthread_mutex_lock(&lfs_fdc.lock);
	fd = inode->fd;
	if (fd >= 0 && inode->fd_pins++ == 0)
		lfs_lru_del(inode);
	pthread_mutex_unlock(&lfs_fdc.lock);
	if (fd >= 0)
		return fd;

	fd = open_by_handle_at(lfs_fdc.dir_fd, inode->fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && lfs_fd_exhausted(errno))
		fd = open_by_handle_at(lfs_fdc.dir_fd, inode->fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&lfs_fdc.lock);
	if (inode->fd >= 0) {
		/* another thread reopened it meanwhile: use that one */
		extra = fd;
		fd = inode->fd;
		if (inode->fd_pins == 0)
			lfs_lru_del(inode);
	} else {
		inode->fd = fd;
		lfs_fdc.open++;
	}
	inode->fd_pins++;
	pthread_mutex_unlock(&lfs_fdc.lock);
	if (extra >= 0)
		close(extra);
	return fd;
}

void lfs_inode_fd_put(struct lfs_inode *inode)
{
	int victims[LFS_FD_EVICT_BATCH];
	size_t n = 0;

	if (!inode->fh)
		return;
	pthread_mutex_lock(&lfs_fdc.lock);
	if (--inode->fd_pins == 0) {
		lfs_lru_add(inode);
		n = lfs_evict_locked(lfs_fdc.cap, victims, LFS_FD_EVICT_BATCH);
	}
	pthread_mutex_unlock(&lfs_fdc.lock);
	lfs_close_all(victims, n);
}

bool lfs_fd_exhausted(int err)
{
	int victims[256];
	size_t n, open, keep;

	if (err != EMFILE && err != ENFILE)
		return false;
	pthread_mutex_lock(&lfs_fdc.lock);
	open = lfs_fdc.open;
	/* give back a quarter of the cache (at least a batch) */
	keep = open > open / 4 + 64 ? open - open / 4 : (open > 64 ? open - 64 : 0);
	n = lfs_evict_locked(keep, victims, sizeof(victims) / sizeof(victims[0]));
	pthread_mutex_unlock(&lfs_fdc.lock);
	lfs_close_all(victims, n);
	if (!__atomic_exchange_n(&lfs_fdc.warned, 1, __ATOMIC_RELAXED))
		log_warn("out of file descriptors (%s): %zu inode path fds cached of at most %zu, "
			 "RLIMIT_NOFILE %zu; closed %zu cached fds and retried (logged once)",
			 strerror(err), open, lfs_fdc.cap, lfs_nofile(), n);
	return n > 0;
}
