// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LACUNA_IOC_CLONE_RANGE: a reflink of a range of one file into another
 * (include/lacuna/ioctl.h), as FICLONERANGE on the backing files, under
 * the range locks of both inodes.
 *
 * Operation
 * ---------
 * The ioctl arrives on the destination, whose open must allow writing
 * (lfs_op_ioctl checks the access mode, as for LACUNA_IOC_WRITE). The
 * source is named by its backing handle: a FUSE ioctl cannot carry a file
 * descriptor, and the handle is how an NFS server names files anyway. It
 * is resolved with open_by_handle_at(2) to an inode of the table (pinned
 * by one lookup until the reply) and opened for reading with the caller's
 * identity (fsuid, fsgid, groups, no fs capabilities): a handle is no
 * permission, so a caller who may not read the source gets EACCES. The
 * clone runs with that identity too, so the backing filesystem clears the
 * destination's set-id bits as a write by the caller would.
 *
 * Then both ranges are locked with lfs_lock_pair() (source shared,
 * destination exclusive, in address order; one range when they are one
 * inode), each to EOF when the length is 0, and FICLONERANGE runs on the
 * backing descriptors: a sparse read of either file sees the clone whole
 * or not at all, and no write through the mount changes the source range
 * midway. The kernel did not see this change to the destination: its
 * cached attributes are dropped before the reply, as for LACUNA_IOC_WRITE.
 *
 * Whether the backing filesystem reflinks at all is probed once at
 * startup (lfs_clone_probe) with an unnamed O_TMPFILE cloned onto itself;
 * LACUNA_IOC_INFO reports the answer as clone_blksize.
 *
 * Replies: fuse_reply_ioctl (struct lacuna_clone) or fuse_reply_err.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lacuna/ioctl.h"
#include "lfs.h"
#include "lfs_cred.h"
#include "lfs_fdcache.h"
#include "log.h"

_Static_assert(sizeof(struct lacuna_clone) < (1u << 14), "LACUNA_IOC_CLONE_RANGE size");

void lfs_clone_probe(void)
{
	struct file_clone_range fcr = { 0 };
	struct statfs sf;
	int dfd, fd;

	lfs.clone_blksize = 0;
	dfd = lfs_reopen(&lfs.root, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return;
	fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		log_info("cannot probe for reflink (O_TMPFILE: %s): no clone", strerror(errno));
		return;
	}
	/* an empty range of an empty file: 0 where the filesystem reflinks */
	fcr.src_fd = fd;
	if (ioctl(fd, FICLONERANGE, &fcr) == 0 && fstatfs(fd, &sf) == 0 && sf.f_bsize > 0)
		lfs.clone_blksize = (uint64_t)sf.f_bsize;
	close(fd);
	log_info("backing filesystem %s reflink (clone_blksize %llu)",
		 lfs.clone_blksize ? "can" : "cannot", (unsigned long long)lfs.clone_blksize);
}

/* Check the request; the source's handle into @h (room for LACUNA_FH_NAME_BYTES). */
static int clone_args(const struct lacuna_clone *cl, struct file_handle *h)
{
	if (cl->size != sizeof(*cl) || cl->flags || cl->in_pad ||
	    cl->handle_bytes > LACUNA_FH_NAME_BYTES || cl->handle_bytes == 0)
		return -EINVAL;
	if (cl->version != LACUNA_ABI_VERSION)
		return -EPROTO;
	if (cl->src_offset > (uint64_t)INT64_MAX || cl->dst_offset > (uint64_t)INT64_MAX ||
	    cl->length > (uint64_t)INT64_MAX - cl->src_offset ||
	    cl->length > (uint64_t)INT64_MAX - cl->dst_offset)
		return -EFBIG;
	if (!lfs.clone_blksize)
		return -EOPNOTSUPP;
	h->handle_type = (int)cl->handle_type;
	h->handle_bytes = cl->handle_bytes;
	memcpy(h->f_handle, cl->handle, cl->handle_bytes);
	return 0;
}

/* FICLONERANGE from @sfd into @f under both range locks; cl->cloned, file_size set */
static int clone_locked(struct lfs_inode *src, int sfd, struct lfs_inode *dst, struct lfs_file *f,
			struct lacuna_clone *cl)
{
	uint64_t s1 = cl->length ? cl->src_offset + cl->length : RL_EOF;
	uint64_t d1 = cl->length ? cl->dst_offset + cl->length : RL_EOF;
	struct file_clone_range fcr = {
		.src_fd = sfd,
		.src_offset = cl->src_offset,
		.src_length = cl->length,
		.dest_offset = cl->dst_offset,
	};
	struct rl_range rs, rd;
	struct stat ss, ds;
	int rc = 0;

	lfs_lock_pair(src, &rs, cl->src_offset, s1, dst, &rd, cl->dst_offset, d1);
	/* the length cloned "to the end" is the source's size now, under the lock */
	if (fstat(sfd, &ss) < 0) {
		rc = -errno;
		goto out_unlock;
	}
	if (ioctl(f->fd, FICLONERANGE, &fcr) < 0) {
		rc = -errno;
		goto out_unlock;
	}
	cl->cloned = cl->length				     ? cl->length
		     : (uint64_t)ss.st_size > cl->src_offset ? (uint64_t)ss.st_size - cl->src_offset
							     : 0;
	cl->file_size = fstat(f->fd, &ds) < 0 ? 0 : (uint64_t)ds.st_size;
out_unlock:
	lfs_unlock_pair(src, &rs, dst, &rd);
	return rc;
}

void lfs_ioctl_clone(fuse_req_t req, fuse_ino_t ino, struct lfs_file *f, const void *in_buf)
{
	struct {
		struct file_handle fh;
		unsigned char buf[LACUNA_FH_NAME_BYTES];
	} h;
	struct lfs_cred cred = { false, false };
	struct lfs_inode *src = NULL;
	struct lacuna_clone cl;
	char path[32];
	int rc, pfd, sfd;

	memcpy(&cl, in_buf, sizeof(cl));
	rc = clone_args(&cl, &h.fh);
	if (rc)
		goto out;
	rc = lfs_handle_inode(&h.fh, &src);
	if (rc)
		goto out;
	/*
	 * A handle is no permission: open the source for reading as the
	 * caller, through its pinned O_PATH fd (reopening an evicted one
	 * needs the capability the caller's identity lacks).
	 */
	pfd = lfs_inode_fd(src);
	if (pfd < 0) {
		rc = pfd;
		goto out_unref;
	}
	rc = lfs_cred_enter(req, &cred, LFS_CRED_WRITE);
	if (rc)
		goto out_put;
	lfs_proc_path(path, sizeof(path), pfd);
	sfd = open(path, O_RDONLY | O_CLOEXEC);
	if (sfd < 0) {
		rc = -errno;
		goto out_cred;
	}
	cl.cloned = 0;
	cl.file_size = 0;
	rc = clone_locked(src, sfd, lfs_inode_of(ino), f, &cl);
	close(sfd);
	if (!rc)
		fuse_lowlevel_notify_inval_inode(lfs.se, ino, -1, 0);
out_cred:
	lfs_cred_leave(&cred);
out_put:
	lfs_inode_fd_put(src);
out_unref:
	lfs_unref_inode(src, 1);
out:
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_ioctl(req, 0, &cl, sizeof(cl));
}
