// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The atomic sparse-read ioctl of lacunafs (include/lacuna/ioctl.h).
 *
 * Operation
 * ---------
 * LACUNA_IOC_SPARSE_READ(_INLINE) on an open file takes the inode's range
 * lock shared over [min(offset, size), EOF): every write, fallocate,
 * truncate and copy through the mount that could change the answer (the
 * range's bytes, the holes that run on past it, the file size) holds the
 * lock exclusively over what it changes, so it happens wholly before or
 * wholly after the read. Under the lock the daemon:
 *
 *   1. fstat()s the backing file (size, allocated blocks, change time);
 *   2. waits for a write behind the mount that is under way (see below);
 *   3. if the allocation covers the whole file there can be no hole: one
 *      data segment, no hole search (LACUNA_SR_DENSE);
 *   4. otherwise walks SEEK_DATA/SEEK_HOLE from offset, emitting holes
 *      whole (a hole that starts in range is reported to its end, even
 *      past offset + length) and data clipped to the range and to the
 *      room left for data;
 *   5. preads the data segments into the caller's arena, or into the
 *      inline reply buffer;
 *   6. fstat()s again. The same ctime and size: nothing changed the file
 *      during the pass, and its answer stands. Otherwise see below.
 *
 * Changes behind the mount. The lock cannot exclude a process that writes
 * the backing file directly; the ctime comparison is how such a change
 * is noticed. But a changed ctime or size has two possible authors: a
 * change behind the mount, or one through the mount below offset, which
 * our lock does not cover and which changes the same inode's ctime. The
 * inode's counters tell whether a change through the mount ran during the
 * pass (wgen moved, or wbusy was nonzero at either end), not that it was
 * the only change: a write behind the mount into the range, made while a
 * write through the mount ran below it, would pass for the latter and a
 * torn answer for an atomic one. So such a pass is not accepted: the lock
 * is dropped and taken again shared over the whole file, [0, EOF), where
 * no change through the mount can run, and the read is repeated (it does
 * not count as a retry). Under that lock, and in a pass during which no
 * change through the mount ran, a changed ctime or size was made behind
 * the mount: the read is repeated, at most LFS_SR_RETRIES times (counted
 * in h->retries), and then reported LACUNA_SR_UNSTABLE. Once the whole
 * file is locked it stays locked for the passes left. The held range is
 * never widened in place: waiting for [0, offset) while holding
 * [offset, EOF) could wait on a writer queued for both, which waits on us
 * (the lock is FIFO-fair, and one inode's ranges are taken one at a time).
 * Writes through the mount below offset thus wait for a pass only when a
 * pass saw a change; ordinary concurrent writes are never reported
 * UNSTABLE.
 *
 * What the comparison sees: with multigrain timestamps (kernels 6.13 and
 * later) a change made after the ctime was read gets a distinct ctime
 * (before, two changes within one clock tick may share one), and a
 * buffered write sets it before it copies any data. So a buffered write
 * behind the mount that begins after step 1 shows in step 6, and one
 * already under way has finished before the walk: step 2 waits for it on
 * XFS, the walk's first SEEK_DATA/SEEK_HOLE on ext4. A writer through a
 * shared mapping or with O_DIRECT behind the mount is not ordered that
 * way and may go unnoticed.
 *
 * The table stops early (LACUNA_SR_SHORT) when it is full or the data
 * room is used up; next_offset says where to continue.
 *
 * Errors: ENOTTY unknown command; EINVAL bad size, flags or mode, or a
 * range past 2^63; EPROTO wrong ABI version; EISDIR on a directory;
 * EBADF on a descriptor not open for reading;
 * EACCES unknown arena token; EPERM a token of another process; ERANGE
 * an arena window outside the registration; ENOBUFS no room for any data.
 * Replies: fuse_reply_ioctl or fuse_reply_err.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/ioctl.h"
#include "lfs.h"
#include "lfs_ctl.h"
#include "lfs_metrics.h"
#include "lfs_rangelock.h"
#include "srwalk.h"
#include "log.h"

#define LFS_SR_RETRIES 3

/*
 * Testing only: accept a changed ctime or size whenever a change through
 * the mount ran during the pass, and retry under the same lock: the rule
 * before the whole-file pass that tells such a change from one behind the
 * mount. Set from LACUNA_TEST_TRUST_MOUNT_WRITES, or by a disabled range
 * lock, which leaves nothing for the whole-file pass to exclude. Written
 * once, before the session loop starts.
 */
static bool lfs_sr_trust_mount;

static bool lfs_same_change(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Take the shared lock from min(offset, size) to EOF: every change of the
 * size locks [min(old, new), EOF), so it overlaps ours even when it lies
 * wholly below offset (a read past EOF still reports a size that some
 * completed change left). If the file shrank before we got the lock,
 * lock again from lower down. *whole: the lock covers the whole file, so
 * no change through the mount can run while it is held.
 */
static int lfs_sr_lock(struct lfs_inode *inode, int fd, uint64_t offset, struct rl_range *r,
		       struct stat *st_locked, uint64_t *gen, uint64_t *busy, bool *whole)
{
	struct stat st;
	uint64_t start;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	for (;;) {
		start = offset < (uint64_t)st.st_size ? offset : (uint64_t)st.st_size;
		rc = lfs_rl_lock(inode, r, start, RL_EOF, RL_SHARED);
		if (rc)
			return rc;
		/* sampled before the fstat, as each pass does (step 6) */
		*gen = __atomic_load_n(&inode->wgen, __ATOMIC_ACQUIRE);
		*busy = __atomic_load_n(&inode->wbusy, __ATOMIC_ACQUIRE);
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			rl_unlock(&inode->rl, r);
			return rc;
		}
		if ((uint64_t)st.st_size >= start) {
			*st_locked = st;
			*whole = start == 0;
			return 0;
		}
		rl_unlock(&inode->rl, r);
	}
}

/*
 * Step 2: wait for a buffered write behind the mount that is under way,
 * whose ctime the fstat of step 1 may already have read. On XFS such a
 * write holds the inode's IOLOCK exclusively; SEEK_DATA/SEEK_HOLE do not
 * take it, and would map as a hole what the write is about to fill,
 * while the preads after them wait for it and return its data. FIEMAP
 * takes the IOLOCK shared, so asking it about one byte waits for the
 * write; its answer is not used (the map is SEEK_DATA/SEEK_HOLE's). A
 * one-byte read would wait as well, but would cache pages of unwritten
 * extents, which SEEK_DATA then reports as data. On ext4 the walk's first
 * SEEK_DATA/SEEK_HOLE waits already (the inode lock, shared).
 */
static void lfs_sr_settle(int fd, uint64_t offset)
{
	struct fiemap fm = { .fm_start = offset, .fm_length = 1, .fm_extent_count = 0 };

	(void)ioctl(fd, FS_IOC_FIEMAP, &fm);
}

/* Steps 1-6 under the range lock, as many passes as it takes. */
static int lfs_sparse_read(struct lfs_inode *inode, int fd, struct lacuna_sr_hdr *h,
			   struct lacuna_seg *segs, uint32_t maxsegs, const struct srw_dest *dst)
{
	struct rl_range r;
	struct stat st0, st1;
	uint64_t gen0 = 0, gen1, busy0 = 0, busy1;
	bool unstable, whole = false, sampled = true, mount;
	unsigned int retries = 0;
	int rc;

	/* the fstat taken under the lock starts the first pass */
	rc = lfs_sr_lock(inode, fd, h->offset, &r, &st0, &gen0, &busy0, &whole);
	if (rc)
		return rc;
	for (;;) {
		if (!sampled) {
			gen0 = __atomic_load_n(&inode->wgen, __ATOMIC_ACQUIRE);
			busy0 = __atomic_load_n(&inode->wbusy, __ATOMIC_ACQUIRE);
			if (fstat(fd, &st0) < 0) {
				rc = -errno;
				break;
			}
		}
		sampled = false;
		unstable = false;
		lfs_sr_settle(fd, h->offset);
		rc = srw_walk(fd, &st0, h, segs, maxsegs, dst, &unstable);
		if (rc)
			break;
		if (fstat(fd, &st1) < 0) {
			rc = -errno;
			break;
		}
		busy1 = __atomic_load_n(&inode->wbusy, __ATOMIC_ACQUIRE);
		gen1 = __atomic_load_n(&inode->wgen, __ATOMIC_ACQUIRE);
		if (!unstable && lfs_same_change(&st0, &st1))
			break;
		/*
		 * A change through the mount (below offset) ran during the pass
		 * and may be all that changed; never under the whole-file lock.
		 */
		mount = !unstable && (gen0 != gen1 || busy0 || busy1);
		if (mount && lfs_sr_trust_mount)
			break;
		if (!mount) {
			/* made behind the mount */
			if (retries == LFS_SR_RETRIES) {
				h->flags |= LACUNA_SR_UNSTABLE;
				break;
			}
			retries++;
		}
		if (!whole && !lfs_sr_trust_mount) {
			rl_unlock(&inode->rl, &r);
			rc = lfs_sr_lock(inode, fd, 0, &r, &st0, &gen0, &busy0, &whole);
			if (rc)
				return rc;
			sampled = true;
		}
	}
	h->retries = retries;
	rl_unlock(&inode->rl, &r);
	return rc;
}

static int lfs_sr_check(const struct lacuna_sr_hdr *h, size_t size)
{
	if (h->size != size || h->in_flags != 0)
		return -EINVAL;
	if (h->version != LACUNA_ABI_VERSION)
		return -EPROTO;
	if (h->offset > (uint64_t)INT64_MAX)
		return -EINVAL;
	return 0;
}

/*
 * Run the sparse read on the file behind f, through a descriptor good for
 * pread at any alignment (an O_DIRECT one is not: reopen without it).
 */
static int lfs_sr_run(struct lfs_inode *inode, struct lfs_file *f, struct lacuna_sr_hdr *h,
		      struct lacuna_seg *segs, uint32_t maxsegs, const struct srw_dest *dst)
{
	int fd, rc;

	if (!f->odirect)
		return lfs_sparse_read(inode, f->fd, h, segs, maxsegs, dst);
	fd = lfs_reopen(inode, O_RDONLY);
	if (fd < 0)
		return fd;
	rc = lfs_sparse_read(inode, fd, h, segs, maxsegs, dst);
	close(fd);
	return rc;
}

/* The one reply of both sparse-read ioctls: the struct, or the error. */
static void lfs_sr_reply(fuse_req_t req, int rc, void *sr, size_t size)
{
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_ioctl(req, 0, sr, size);
	free(sr);
}

static void lfs_ioctl_sparse(fuse_req_t req, struct lfs_inode *inode, struct lfs_file *f,
			     const void *in_buf, size_t in_bufsz)
{
	struct lacuna_sparse_read *sr;
	struct srw_dest dst = { NULL, 0 };
	struct lfs_reg *reg = NULL;
	int rc;

	sr = malloc(sizeof(*sr));
	if (!sr) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(sr, in_buf, sizeof(*sr));
	rc = lfs_sr_check(&sr->h, sizeof(*sr));
	if (rc)
		goto out;
	if (sr->h.mode == LACUNA_SR_ARENA) {
		void *base;
		size_t len;

		rc = lfs_ctl_get(sr->h.token, fuse_req_ctx(req)->pid, &reg, &base, &len);
		if (rc)
			goto out;
		if (sr->h.arena_off > len || sr->h.arena_len > len - sr->h.arena_off) {
			rc = -ERANGE;
			goto out;
		}
		dst.buf = (uint8_t *)base + sr->h.arena_off;
		dst.len = sr->h.arena_len;
	} else if (sr->h.mode != LACUNA_SR_MAP) {
		rc = -EINVAL;
		goto out;
	}
	rc = lfs_sr_run(inode, f, &sr->h, sr->segs, LACUNA_SR_MAX_SEGS, &dst);
out:
	lfs_mx_sparse_read(inode, &sr->h, rc);
	if (reg)
		lfs_ctl_put(reg);
	lfs_sr_reply(req, rc, sr, sizeof(*sr));
}

static void lfs_ioctl_sparse_inline(fuse_req_t req, struct lfs_inode *inode, struct lfs_file *f,
				    const void *in_buf)
{
	struct lacuna_sparse_read_inline *sr;
	struct srw_dest dst;
	int rc;

	/* zeroed: the whole struct goes back, data past data_bytes included */
	sr = calloc(1, sizeof(*sr));
	if (!sr) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(sr, in_buf, sizeof(sr->h));
	rc = lfs_sr_check(&sr->h, sizeof(*sr));
	if (!rc && sr->h.mode != LACUNA_SR_INLINE && sr->h.mode != LACUNA_SR_MAP)
		rc = -EINVAL;
	if (rc)
		goto out;
	dst.buf = sr->h.mode == LACUNA_SR_INLINE ? sr->data : NULL;
	dst.len = sizeof(sr->data);
	rc = lfs_sr_run(inode, f, &sr->h, sr->segs, LACUNA_INLINE_SEGS, &dst);
out:
	lfs_mx_sparse_read(inode, &sr->h, rc);
	lfs_sr_reply(req, rc, sr, sizeof(*sr));
}

static void lfs_ioctl_info(fuse_req_t req, const void *in_buf)
{
	struct lacuna_info info;

	memcpy(&info, in_buf, sizeof(info));
	if (info.size != sizeof(info)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = LACUNA_ABI_VERSION;
	info.max_segs = LACUNA_SR_MAX_SEGS;
	info.inline_max = LACUNA_INLINE_MAX;
	info.arena_max = LFS_CTL_ARENA_MAX;
	info.regs_max = LFS_CTL_REGS_MAX;
	info.conn_bytes_max = LFS_CTL_CONN_BYTES_MAX;
	info.conns_max = LFS_CTL_CONNS_MAX;
	info.write_unit = lfs.write_unit;
	info.write_unit_aligned = lfs.write_unit_aligned;
	info.clone_blksize = lfs.clone_blksize;
	info.daemon_pid = (uint64_t)getpid();
	snprintf(info.ctl_path, sizeof(info.ctl_path), "%s", lfs.ctl_path);
	fuse_reply_ioctl(req, 0, &info, sizeof(info));
}

static bool lfs_ioctl_known(unsigned int cmd)
{
	switch (cmd) {
	case LACUNA_IOC_INFO:
	case LACUNA_IOC_SPARSE_READ:
	case LACUNA_IOC_SPARSE_READ_INLINE:
	case LACUNA_IOC_WRITE:
	case LACUNA_IOC_WRITE_INLINE:
	case LACUNA_IOC_CLONE_RANGE:
		return true;
	default:
		return false;
	}
}

/*
 * The inode flags (lsattr) and the extended attributes of FS_IOC_FSGETXATTR
 * of a file or directory, read from the backing inode, so that they show
 * as they do there. The kernel asks for them itself (fileattr_get) with an
 * int, or a struct fsxattr, to fill. Setting them (chattr) is not passed
 * on: ENOTTY. Replies: fuse_reply_ioctl or fuse_reply_err.
 */
static void lfs_ioctl_getattr(fuse_req_t req, struct lfs_inode *inode, unsigned int cmd,
			      size_t out_bufsz)
{
	union {
		int flags;
		struct fsxattr fsx;
	} u;
	size_t len = cmd == FS_IOC_FSGETXATTR ? sizeof(u.fsx) : sizeof(u.flags);
	int fd, rc;

	if (inode->type != S_IFREG && inode->type != S_IFDIR) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (out_bufsz < len) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fd = lfs_reopen(inode, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	memset(&u, 0, sizeof(u));
	rc = ioctl(fd, cmd, &u) < 0 ? errno : 0;
	close(fd);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_ioctl(req, 0, &u, len);
}

void lfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	bool write = cmd == LACUNA_IOC_WRITE || cmd == LACUNA_IOC_WRITE_INLINE ||
		     cmd == LACUNA_IOC_CLONE_RANGE;
	int accmode;

	if (cmd == FS_IOC_GETFLAGS || cmd == FS_IOC_FSGETXATTR) {
		lfs_ioctl_getattr(req, inode, cmd, out_bufsz);
		return;
	}
	if (!lfs_ioctl_known(cmd)) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (_IOC_SIZE(cmd) != in_bufsz || _IOC_SIZE(cmd) != out_bufsz) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (cmd == LACUNA_IOC_INFO) {
		lfs_ioctl_info(req, in_buf);
		return;
	}
	if (inode->type != S_IFREG) {
		fuse_reply_err(req, inode->type == S_IFDIR ? EISDIR : EINVAL);
		return;
	}
	/* as read(2) and write(2): a descriptor open for that */
	accmode = lfs_file_of(fi)->flags & O_ACCMODE;
	if (accmode == (write ? O_RDONLY : O_WRONLY)) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (cmd == LACUNA_IOC_CLONE_RANGE)
		lfs_ioctl_clone(req, ino, lfs_file_of(fi), in_buf);
	else if (write)
		lfs_ioctl_write(req, ino, lfs_file_of(fi), cmd, in_buf);
	else if (cmd == LACUNA_IOC_SPARSE_READ)
		lfs_ioctl_sparse(req, inode, lfs_file_of(fi), in_buf, in_bufsz);
	else
		lfs_ioctl_sparse_inline(req, inode, lfs_file_of(fi), in_buf);
}

int lfs_sparse_init(void)
{
	const char *v = getenv("LACUNA_TEST_TRUST_MOUNT_WRITES");

	if (rl_disabled_for_testing()) {
		log_warn("RANGE LOCK DISABLED FOR TESTING (LACUNA_TEST_DISABLE_RANGELOCK): "
			 "sparse reads are not atomic");
		lfs_sr_trust_mount = true;
	}
	if (v && *v && strcmp(v, "0") != 0) {
		log_warn("WRITES THROUGH THE MOUNT TRUSTED FOR TESTING "
			 "(LACUNA_TEST_TRUST_MOUNT_WRITES): a change behind the mount "
			 "that coincides with one through it goes unnoticed");
		lfs_sr_trust_mount = true;
	}
	return lfs_ctl_start(lfs.ctl_path, sizeof(lfs.ctl_path));
}

void lfs_sparse_exit(void)
{
	lfs_ctl_stop();
}
