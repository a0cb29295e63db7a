/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The O_PATH fds of lacunafs's inodes, as a bounded cache.
 *
 * The kernel may remember any number of inodes (every one it has looked
 * up and not yet forgotten), far more than RLIMIT_NOFILE allows open
 * fds. So an inode is identified by the backing filesystem's file handle
 * (name_to_handle_at), and its O_PATH fd is only a cache entry: at most
 * `cap` of them are open, the least recently used unpinned one is closed
 * when a new one is needed, and an evicted inode is reopened with
 * open_by_handle_at on the backing directory when next used. Everything
 * else about an inode (its lookup count, its range lock) lives in the
 * struct lfs_inode, which eviction does not touch.
 *
 * Callers pin an fd for as long as they use it (lfs_inode_fd ...
 * lfs_inode_fd_put): a pinned fd is never closed under them. An open file
 * pins its inode's fd until it is released.
 *
 * Where the backing filesystem gives no handles, or the daemon may not
 * open by handle (no CAP_DAC_READ_SEARCH), every inode keeps its fd for
 * its whole life, as before: said once at mount time.
 *
 * Lock order: the cache lock is a leaf lock, taken after anything else;
 * no system call is made under it (fds are closed after it is dropped).
 */
#ifndef LACUNA_LFS_FDCACHE_H
#define LACUNA_LFS_FDCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "lfs_itable.h"

/* fds not given to the cache: open files, directories, sockets, pipes */
#define LFS_FD_RESERVE_MIN 256
#define LFS_FD_CACHE_MIN 16

/*
 * Size the cache and probe the backing directory open as dir_fd (an
 * ordinary read-only fd, used as open_by_handle_at's mount fd; kept).
 * cap 0: from RLIMIT_NOFILE's soft limit minus the reserve. Logs the
 * outcome in one line. Returns 0 or -errno.
 */
int lfs_fdcache_init(int dir_fd, size_t cap);
void lfs_fdcache_exit(void);

/*
 * A new inode's fd, just opened: take its file handle and make the fd a
 * cache entry (or, without handles, the inode's for good). Done before
 * the inode is visible to other threads. Returns 0 or -errno.
 */
int lfs_inode_fd_init(struct lfs_inode *inode, int fd);
/* Close the inode's fd, if open, and free its handle. */
void lfs_inode_fd_fini(struct lfs_inode *inode);

/* The inode's O_PATH fd, pinned until lfs_inode_fd_put; or -errno. */
int lfs_inode_fd(struct lfs_inode *inode);
void lfs_inode_fd_put(struct lfs_inode *inode);

/*
 * An open or similar call failed with err: when that is EMFILE/ENFILE,
 * log it (once, with the numbers), close unpinned cached fds and return
 * true so that the caller retries once.
 */
bool lfs_fd_exhausted(int err);

#endif
