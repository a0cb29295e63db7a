// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs file I/O: open/create/read/write/flush/release/fsync,
 * fallocate, lseek (SEEK_DATA/SEEK_HOLE from the backing file),
 * copy_file_range and flock.
 *
 * Cache policy (see docs/lacunafs.md): the daemon must see every write,
 * because the sparse-read lock can only order what passes through it. So
 * an open that can write is direct_io: each write(2) becomes FUSE writes
 * that reach the daemon before the call returns and nothing written with
 * write(2) is held dirty in the kernel's page cache. A shared writable mmap
 * of it works where the kernel has FUSE_DIRECT_IO_ALLOW_MMAP (lfs_devio.c):
 * its dirty pages come back as writes (fi->writepage), under the range
 * lock like any other. A read-only open (with -o cache=auto, the
 * default) reads through the kernel page cache, which writes made through
 * the mount invalidate; it keeps the cache across opens only while the
 * backing file's mtime, ctime and size are those the cache was filled at.
 *
 * O_DIRECT is honoured on the backing file too. libfuse hands us write
 * data at whatever alignment it sits in its request buffer, so a write to
 * an O_DIRECT file is bounced through an aligned buffer when needed; the
 * offsets and lengths are the caller's, and the backing filesystem
 * accepts or rejects them exactly as it would without lacunafs.
 *
 * Range lock: every change to file data or size made here holds the
 * inode's range lock exclusively over what it changes (a write over its
 * bytes, or from 0 to EOF on an O_APPEND file whose offset the backing
 * filesystem decides; fallocate over its range; a size change over
 * [min(old, new), EOF); copy_file_range, and the clone ioctl of
 * lfs_clone.c, over the destination, with the source shared:
 * lfs_lock_pair), so that the sparse read, which holds it shared, never
 * sees half of a change.
 *
 * Set-id bits: a write, truncate or O_TRUNC open of a file with set-user-id
 * or set-group-id bits is made with the caller's ids and groups and no fs
 * capabilities, so the backing filesystem clears the bits exactly as it
 * would for that caller.
 *
 * Replies: open fuse_reply_open, create fuse_reply_create, read
 * fuse_reply_data/fuse_reply_buf, write and copy_file_range
 * fuse_reply_write, lseek fuse_reply_lseek, the rest fuse_reply_err.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/ioctl.h"
#include "lfs.h"
#include "lfs_cred.h"
#include "lfs_ctl.h"
#include "lfs_fdcache.h"
#include "lfs_rangelock.h"
#include "log.h"

#define LFS_DIO_ALIGN 4096
#define LFS_MAX_PIPE (1024 * 1024)

/* a restricted ioctl carries at most 16383 bytes each way (_IOC_SIZE) */
_Static_assert(sizeof(struct lacuna_write_inline) < (1u << 14), "LACUNA_IOC_WRITE_INLINE size");

static bool lfs_has_setid(const struct stat *st)
{
	return st->st_mode & (S_ISUID | S_ISGID);
}

/* [start, start + len) as a lock range, saturating at RL_EOF */
static uint64_t lfs_range_end(uint64_t start, uint64_t len)
{
	return len > RL_EOF - start ? RL_EOF : start + len;
}

static void lfs_wlock(struct lfs_inode *inode, struct rl_range *r, uint64_t start, uint64_t end)
{
	lfs_rl_lock(inode, r, start, end, RL_EXCLUSIVE);
	__atomic_fetch_add(&inode->wbusy, 1, __ATOMIC_ACQ_REL);
}

static void lfs_wunlock(struct lfs_inode *inode, struct rl_range *r)
{
	__atomic_fetch_add(&inode->wgen, 1, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&inode->wbusy, 1, __ATOMIC_ACQ_REL);
	rl_unlock(&inode->rl, r);
}

void lfs_lock_pair(struct lfs_inode *src, struct rl_range *rs, uint64_t s0, uint64_t s1,
		   struct lfs_inode *dst, struct rl_range *rd, uint64_t d0, uint64_t d1)
{
	if (src == dst) {
		/* one range over both: never wait for a second range of one lock */
		lfs_wlock(dst, rd, s0 < d0 ? s0 : d0, s1 > d1 ? s1 : d1);
	} else if ((uintptr_t)src < (uintptr_t)dst) {
		lfs_rl_lock(src, rs, s0, s1, RL_SHARED);
		lfs_wlock(dst, rd, d0, d1);
	} else {
		lfs_wlock(dst, rd, d0, d1);
		lfs_rl_lock(src, rs, s0, s1, RL_SHARED);
	}
}

void lfs_unlock_pair(struct lfs_inode *src, struct rl_range *rs, struct lfs_inode *dst,
		     struct rl_range *rd)
{
	if (src != dst)
		rl_unlock(&src->rl, rs);
	lfs_wunlock(dst, rd);
}

/*
 * Set the size of the file open as fd, holding the range lock over
 * [min(old, new), EOF). The old size is read again under the lock: if
 * the file shrank meanwhile, lock again from lower down.
 */
static int lfs_truncate_fd(fuse_req_t req, struct lfs_inode *inode, int fd, off_t size)
{
	struct lfs_cred cred = { false, false };
	struct rl_range r;
	struct stat st;
	uint64_t start;
	int rc;

	if (size < 0)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	for (;;) {
		start = (uint64_t)(st.st_size < size ? st.st_size : size);
		lfs_wlock(inode, &r, start, RL_EOF);
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			goto out_unlock;
		}
		if ((uint64_t)st.st_size >= start)
			break;	/* min(current size, size) >= start: the lock covers it */
		lfs_wunlock(inode, &r);
	}
	if (lfs_has_setid(&st)) {
		rc = lfs_cred_enter(req, &cred, LFS_CRED_WRITE);
		if (rc)
			goto out_unlock;
	}
	rc = ftruncate(fd, size) < 0 ? -errno : 0;
	lfs_cred_leave(&cred);
out_unlock:
	lfs_wunlock(inode, &r);
	return rc;
}

int lfs_setsize(fuse_req_t req, struct lfs_inode *inode, struct fuse_file_info *fi, off_t size)
{
	int fd, rc;

	if (fi && (lfs_file_of(fi)->flags & O_ACCMODE) != O_RDONLY)
		return lfs_truncate_fd(req, inode, lfs_file_of(fi)->fd, size);
	fd = lfs_reopen(inode, O_WRONLY);
	if (fd < 0)
		return fd;
	rc = lfs_truncate_fd(req, inode, fd, size);
	close(fd);
	return rc;
}

static bool lfs_ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * May the kernel keep the pages it cached for this inode? Only if the
 * backing file has not changed since they were read. Records the current
 * state for the next open.
 */
static bool lfs_cache_still_valid(struct lfs_inode *inode, const struct stat *st)
{
	bool keep;

	pthread_mutex_lock(&inode->cache_lock);
	keep = inode->cache_known && inode->cache_size == st->st_size &&
	       lfs_ts_eq(&inode->cache_mtime, &st->st_mtim) &&
	       lfs_ts_eq(&inode->cache_ctime, &st->st_ctim);
	inode->cache_known = true;
	inode->cache_size = st->st_size;
	inode->cache_mtime = st->st_mtim;
	inode->cache_ctime = st->st_ctim;
	pthread_mutex_unlock(&inode->cache_lock);
	return keep;
}

/* Wrap an open backing fd in a file handle and fill in fi's cache flags. */
static int lfs_file_setup(struct lfs_inode *inode, int fd, struct fuse_file_info *fi)
{
	struct lfs_file *f;
	struct stat st;
	bool writable = (fi->flags & O_ACCMODE) != O_RDONLY;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* an open file keeps its inode's path fd (lfs_fdcache.h) */
	rc = lfs_inode_fd(inode);
	if (rc < 0) {
		free(f);
		return rc;
	}
	f->inode = inode;
	f->fd = fd;
	f->flags = fi->flags;
	f->odirect = fi->flags & O_DIRECT;
	f->setid = writable && lfs_has_setid(&st);

	fi->direct_io = writable || f->odirect || lfs.cache == LFS_CACHE_NONE;
	fi->keep_cache = !fi->direct_io && lfs_cache_still_valid(inode, &st);
	if (writable) {
		/* pages cached by earlier read-only opens are stale after us */
		pthread_mutex_lock(&inode->cache_lock);
		inode->cache_known = false;
		pthread_mutex_unlock(&inode->cache_lock);
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	return 0;
}

static void lfs_file_free(struct lfs_file *f)
{
	lfs_inode_fd_put(f->inode);
	close(f->fd);
	free(f);
}

void lfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	int fd, rc;

	fd = lfs_reopen(inode, fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	rc = 0;
	if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) == O_RDONLY)
		rc = lfs_setsize(req, inode, NULL, 0);
	else if (fi->flags & O_TRUNC)
		rc = lfs_truncate_fd(req, inode, fd, 0);
	if (!rc)
		rc = lfs_file_setup(inode, fd, fi);
	if (rc) {
		close(fd);
		fuse_reply_err(req, -rc);
		return;
	}
	if (fuse_reply_open(req, fi) == -ENOENT)
		lfs_file_free(lfs_file_of(fi));
}

void lfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi)
{
	struct lfs_inode *dir = lfs_inode_of(parent);
	struct fuse_entry_param e;
	struct lfs_cred cred;
	bool existed = false;
	int fd, dfd, rc, flags;

	dfd = lfs_inode_fd(dir);
	if (dfd < 0) {
		rc = dfd;
		goto out_err;
	}
	rc = lfs_cred_enter(req, &cred, LFS_CRED_CREATE);
	if (rc) {
		lfs_inode_fd_put(dir);
		goto out_err;
	}
	/*
	 * O_EXCL first: a file this call creates needs no O_TRUNC. Only when
	 * the name exists (and the caller allowed that) open it and truncate
	 * it under the range lock.
	 */
	flags = (fi->flags | O_CREAT | O_CLOEXEC) & ~(O_NOFOLLOW | O_NOCTTY | O_TRUNC);
	fd = openat(dfd, name, flags | O_EXCL, mode);
	if (fd < 0 && lfs_fd_exhausted(errno))
		fd = openat(dfd, name, flags | O_EXCL, mode);
	if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
		existed = true;
		fd = openat(dfd, name, flags, mode);
	}
	rc = fd < 0 ? -errno : 0;
	lfs_cred_leave(&cred);
	lfs_inode_fd_put(dir);
	if (rc)
		goto out_err;
	rc = lfs_do_lookup(parent, name, &e);
	if (rc)
		goto out_close;
	/* an existing file opened with O_TRUNC is truncated under the lock */
	if (existed && (fi->flags & O_TRUNC))
		rc = lfs_truncate_fd(req, lfs_inode_of(e.ino), fd, 0);
	if (!rc)
		rc = lfs_file_setup(lfs_inode_of(e.ino), fd, fi);
	if (rc) {
		lfs_unref_inode(lfs_inode_of(e.ino), 1);
		goto out_close;
	}
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		lfs_file_free(lfs_file_of(fi));
		lfs_unref_inode(lfs_inode_of(e.ino), 1);
	}
	return;
out_close:
	close(fd);
out_err:
	fuse_reply_err(req, -rc);
}

static void *lfs_aligned_alloc(size_t size)
{
	void *p;

	if (posix_memalign(&p, LFS_DIO_ALIGN, size ? size : LFS_DIO_ALIGN))
		return NULL;
	return p;
}

void lfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct lfs_file *f = lfs_file_of(fi);
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	ssize_t n;
	void *buf;

	if (!f->odirect) {
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = f->fd;
		bv.buf[0].pos = off;
		fuse_reply_data(req, &bv, 0);
		return;
	}
	buf = lfs_aligned_alloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = pread(f->fd, buf, size, off);
	if (n < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

/* O_DIRECT write: straight from libfuse's buffer if aligned, else bounced. */
static ssize_t lfs_write_direct(struct lfs_file *f, struct fuse_bufvec *in_buf, off_t off)
{
	size_t size = fuse_buf_size(in_buf);
	struct fuse_bufvec bounce = FUSE_BUFVEC_INIT(size);
	ssize_t n;
	void *buf;

	if (in_buf->count == 1 && !(in_buf->buf[0].flags & FUSE_BUF_IS_FD) &&
	    ((uintptr_t)in_buf->buf[0].mem % LFS_DIO_ALIGN) == 0)
		return pwrite(f->fd, in_buf->buf[0].mem, size, off) < 0 ? -errno : (ssize_t)size;
	buf = lfs_aligned_alloc(size);
	if (!buf)
		return -ENOMEM;
	bounce.buf[0].mem = buf;
	n = fuse_buf_copy(&bounce, in_buf, 0);
	if (n >= 0) {
		n = pwrite(f->fd, buf, (size_t)n, off);
		if (n < 0)
			n = -errno;
	}
	free(buf);
	return n;
}

/*
 * A pipe per worker thread, for splicing arena data into the backing
 * file; closed when the thread exits (libfuse starts and ends workers).
 */
struct lfs_pipe {
	int fd[2];
	size_t size;
};

static pthread_key_t lfs_pipe_key;
static pthread_once_t lfs_pipe_once = PTHREAD_ONCE_INIT;

static void lfs_pipe_free(void *arg)
{
	struct lfs_pipe *p = arg;

	close(p->fd[0]);
	close(p->fd[1]);
	free(p);
}

static void lfs_pipe_key_init(void)
{
	if (pthread_key_create(&lfs_pipe_key, lfs_pipe_free))
		log_err("pthread_key_create: arena writes will not splice");
}

static struct lfs_pipe *lfs_pipe_get(void)
{
	struct lfs_pipe *p;
	int sz;

	pthread_once(&lfs_pipe_once, lfs_pipe_key_init);
	p = pthread_getspecific(lfs_pipe_key);
	if (p)
		return p;
	p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	if (pipe2(p->fd, O_CLOEXEC) < 0) {
		free(p);
		return NULL;
	}
	/* as large as an unprivileged pipe may be (fs.pipe-max-size), else the default */
	sz = fcntl(p->fd[1], F_SETPIPE_SZ, LFS_MAX_PIPE);
	if (sz < 0)
		sz = fcntl(p->fd[1], F_GETPIPE_SZ);
	p->size = sz > 0 ? (size_t)sz : 65536;
	if (pthread_setspecific(lfs_pipe_key, p)) {
		lfs_pipe_free(p);
		return NULL;
	}
	return p;
}

/* A pipe left holding bytes after an error is of no further use. */
static void lfs_pipe_drop(struct lfs_pipe *p)
{
	pthread_setspecific(lfs_pipe_key, NULL);
	lfs_pipe_free(p);
}

/*
 * Copy len bytes at soff of the arena's memfd to off of fd, through the
 * thread's pipe: the pages go by reference into the pipe and are copied
 * once, by the kernel, into the backing file's page cache. Reading them
 * through our own mapping of the arena instead would make every write
 * touch the pages the client has just written through its mapping, which
 * costs much more than the copy on some virtual machines (measured: a
 * quarter of the throughput at times). Returns bytes written or -errno.
 */
static ssize_t lfs_splice_write(int src, uint64_t soff, int fd, off_t off, size_t len)
{
	struct lfs_pipe *p = lfs_pipe_get();
	size_t done = 0;
	ssize_t n, m;
	int err = 0;

	if (!p)
		return -ENOMEM;
	while (done < len && !err) {
		loff_t in = (loff_t)(soff + done), out = (loff_t)(off + done);
		size_t want = len - done < p->size ? len - done : p->size;

		n = splice(src, &in, p->fd[1], NULL, want, SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		while (n > 0) {
			m = splice(p->fd[0], NULL, fd, &out, (size_t)n, SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				err = m < 0 ? -errno : -EIO;
				lfs_pipe_drop(p);
				break;
			}
			n -= m;
			done += (size_t)m;
		}
	}
	return done ? (ssize_t)done : err;
}

/*
 * Write in_buf at off under one exclusive hold of the range lock; *size,
 * when asked, is the file's size right after, read under the lock. With
 * src >= 0 the same bytes are also at soff of the file src (the arena's
 * memfd), and are spliced from there. Returns the bytes written or -errno
 * (nothing written).
 */
static ssize_t lfs_write_locked(fuse_req_t req, struct lfs_inode *inode, struct lfs_file *f,
				struct fuse_bufvec *in_buf, off_t off, int src, uint64_t soff,
				uint64_t *size)
{
	size_t len = fuse_buf_size(in_buf);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(len);
	struct lfs_cred cred = { false, false };
	struct rl_range r;
	struct stat st;
	ssize_t n;

	if (f->flags & O_APPEND)
		lfs_wlock(inode, &r, 0, RL_EOF);
	else
		lfs_wlock(inode, &r, (uint64_t)off, lfs_range_end((uint64_t)off, len));
	/* A write by someone else must clear set-id bits: write as them. */
	if (f->setid) {
		n = lfs_cred_enter(req, &cred, LFS_CRED_WRITE);
		if (n)
			goto out_unlock;
	}
	if (f->odirect) {
		n = lfs_write_direct(f, in_buf, off);
	} else if (src >= 0) {
		n = lfs_splice_write(src, soff, f->fd, off, len);
	} else {
		/* a short write goes on (a signal); a full disk then says so */
		out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK | FUSE_BUF_FD_RETRY;
		out.buf[0].fd = f->fd;
		out.buf[0].pos = off;
		n = fuse_buf_copy(&out, in_buf, 0);
	}
	lfs_cred_leave(&cred);
	if (size && n >= 0)
		*size = fstat(f->fd, &st) < 0 ? 0 : (uint64_t)st.st_size;
out_unlock:
	lfs_wunlock(inode, &r);
	return n;
}

/*
 * Pages of a shared writable mapping written back by the kernel
 * (fi->writepage): at their own offset, from the page cache, through
 * whichever writable open of the inode the kernel picked. If that open
 * is O_APPEND (pwrite would append) or O_DIRECT (the last page may end at
 * an unaligned EOF), write them through a plain descriptor instead, with
 * the open's set-id handling. Returns the bytes written or -errno.
 */
static ssize_t lfs_write_page(fuse_req_t req, struct lfs_inode *inode, struct lfs_file *f,
			      struct fuse_bufvec *in_buf, off_t off)
{
	struct lfs_file plain = *f;
	ssize_t n;

	if (!(f->flags & O_APPEND) && !f->odirect)
		return lfs_write_locked(req, inode, f, in_buf, off, -1, 0, NULL);
	plain.fd = lfs_reopen(inode, O_WRONLY);
	if (plain.fd < 0)
		return plain.fd;
	plain.flags = (f->flags & ~(O_APPEND | O_DIRECT | O_ACCMODE)) | O_WRONLY;
	plain.odirect = false;
	n = lfs_write_locked(req, inode, &plain, in_buf, off, -1, 0, NULL);
	close(plain.fd);
	return n;
}

void lfs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off,
		      struct fuse_file_info *fi)
{
	ssize_t n;

	if (fuse_buf_size(in_buf) == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	if (fi->writepage)
		n = lfs_write_page(req, lfs_inode_of(ino), lfs_file_of(fi), in_buf, off);
	else
		n = lfs_write_locked(req, lfs_inode_of(ino), lfs_file_of(fi), in_buf, off, -1, 0,
				     NULL);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

/*
 * LACUNA_IOC_WRITE(_INLINE): the data from the caller's arena or from the
 * ioctl, under one hold of the lock whatever its size and alignment
 * (include/lacuna/ioctl.h). The kernel did not see this write, so its
 * cached attributes (size, times) are dropped before the reply; its
 * cached pages of this file are not: invalidating them from a request
 * can deadlock against a read that holds one locked while it waits for
 * us. Cached readers see the change as they see any change behind the
 * kernel's back (FUSE_CAP_AUTO_INVAL_DATA, at the next attribute fetch).
 * Replies: fuse_reply_ioctl (the struct, header only for the inline
 * command) or fuse_reply_err.
 */
void lfs_ioctl_write(fuse_req_t req, fuse_ino_t ino, struct lfs_file *f, unsigned int cmd,
		     const void *in_buf)
{
	struct lacuna_write w;
	struct fuse_bufvec bv;
	struct lfs_reg *reg = NULL;
	void *base;
	size_t len;
	ssize_t n;
	int rc, src = -1;

	memcpy(&w, in_buf, sizeof(w));
	if (w.size != (cmd == LACUNA_IOC_WRITE ? sizeof(struct lacuna_write) :
						 sizeof(struct lacuna_write_inline)) ||
	    w.in_pad || (w.flags & ~(LACUNA_WR_DSYNC | LACUNA_WR_SYNC))) {
		rc = -EINVAL;
		goto out;
	}
	if (w.version != LACUNA_ABI_VERSION) {
		rc = -EPROTO;
		goto out;
	}
	if (w.offset > (uint64_t)INT64_MAX || w.length > (uint64_t)INT64_MAX - w.offset) {
		rc = -EFBIG;
		goto out;
	}
	bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT(w.length);
	if (cmd == LACUNA_IOC_WRITE_INLINE) {
		if (w.length > LACUNA_WRITE_INLINE_MAX) {
			rc = -EINVAL;
			goto out;
		}
		bv.buf[0].mem = (void *)((const struct lacuna_write_inline *)in_buf)->data;
	} else {
		rc = lfs_ctl_get(w.token, fuse_req_ctx(req)->pid, &reg, &base, &len);
		if (rc)
			goto out;
		if (w.arena_off > len || w.length > len - w.arena_off) {
			rc = -ERANGE;
			goto out;
		}
		bv.buf[0].mem = (uint8_t *)base + w.arena_off;
		src = lfs_reg_memfd(reg);
	}
	w.written = 0;
	w.file_size = 0;
	n = w.length ? lfs_write_locked(req, lfs_inode_of(ino), f, &bv, (off_t)w.offset, src,
					w.arena_off, &w.file_size) :
		       0;
	rc = n < 0 ? (int)n : 0;
	if (n > 0) {
		w.written = (uint64_t)n;
		fuse_lowlevel_notify_inval_inode(lfs.se, ino, -1, 0);
		if ((w.flags & LACUNA_WR_SYNC) && fsync(f->fd) < 0)
			rc = -errno;
		else if ((w.flags & LACUNA_WR_DSYNC) && fdatasync(f->fd) < 0)
			rc = -errno;
	}
out:
	if (reg)
		lfs_ctl_put(reg);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_ioctl(req, 0, &w, sizeof(w));
}

void lfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close() of a duplicate reports deferred errors of some filesystems */
	int fd = dup(lfs_file_of(fi)->fd);
	int rc = fd < 0 ? -errno : (close(fd) < 0 ? -errno : 0);

	fuse_reply_err(req, -rc);
}

void lfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	lfs_file_free(lfs_file_of(fi));
	fuse_reply_err(req, 0);
}

void lfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = lfs_file_of(fi)->fd;
	int rc = datasync ? fdatasync(fd) : fsync(fd);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}

void lfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		      struct fuse_file_info *fi)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	struct rl_range r;
	int rc;

	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* modes that shift data (collapse/insert range) would need [offset, EOF) */
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	lfs_wlock(inode, &r, (uint64_t)offset, lfs_range_end((uint64_t)offset, (uint64_t)length));
	rc = fallocate(lfs_file_of(fi)->fd, mode, offset, length) < 0 ? errno : 0;
	lfs_wunlock(inode, &r);
	fuse_reply_err(req, rc);
}

void lfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	off_t res = lseek(lfs_file_of(fi)->fd, off, whence);

	if (res < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

void lfs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			    struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			    struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct lfs_inode *src = lfs_inode_of(ino_in), *dst = lfs_inode_of(ino_out);
	uint64_t s0 = (uint64_t)off_in, d0 = (uint64_t)off_out;
	struct rl_range rs, rd;
	ssize_t n;

	if (off_in < 0 || off_out < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (len == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	lfs_lock_pair(src, &rs, s0, lfs_range_end(s0, len), dst, &rd, d0, lfs_range_end(d0, len));
	n = copy_file_range(lfs_file_of(fi_in)->fd, &off_in, lfs_file_of(fi_out)->fd, &off_out, len,
			    (unsigned int)flags);
	if (n < 0)
		n = -errno;
	lfs_unlock_pair(src, &rs, dst, &rd);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

void lfs_op_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	int rc = flock(lfs_file_of(fi)->fd, op);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}
