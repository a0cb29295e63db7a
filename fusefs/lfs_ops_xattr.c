// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs extended attributes, passed to the backing inode through its
 * /proc/self/fd path (an O_PATH fd cannot carry xattr calls itself). A
 * symlink has no race-free path of that kind, so its xattrs are
 * EOPNOTSUPP, as with libfuse's passthrough_hp.
 *
 * Replies: getxattr/listxattr fuse_reply_buf (data) or fuse_reply_xattr
 * (size probe), set/remove fuse_reply_err.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/xattr.h>

#include "lfs.h"
#include "lfs_fdcache.h"

/* The inode's path, its fd pinned until lfs_xattr_done. */
static int lfs_xattr_path(fuse_ino_t ino, char *path, size_t len)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	int fd;

	if (inode->type == S_IFLNK)
		return -EOPNOTSUPP;
	fd = lfs_inode_fd(inode);
	if (fd < 0)
		return fd;
	lfs_proc_path(path, len, fd);
	return 0;
}

static void lfs_xattr_done(fuse_ino_t ino)
{
	lfs_inode_fd_put(lfs_inode_of(ino));
}

/* getxattr (name) or listxattr (name == NULL): a size probe or the data. */
static void lfs_xattr_read(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char path[64], *buf = NULL;
	int rc = lfs_xattr_path(ino, path, sizeof(path));
	ssize_t n;

	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (size) {
		buf = malloc(size);
		if (!buf) {
			lfs_xattr_done(ino);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = name ? getxattr(path, name, buf, size) : listxattr(path, buf, size);
	if (n < 0)
		n = -errno;
	lfs_xattr_done(ino);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void lfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	lfs_xattr_read(req, ino, name, size);
}

void lfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	lfs_xattr_read(req, ino, NULL, size);
}

void lfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags)
{
	char path[64];
	int rc = lfs_xattr_path(ino, path, sizeof(path));

	if (!rc) {
		if (setxattr(path, name, value, size, flags) < 0)
			rc = -errno;
		lfs_xattr_done(ino);
	}
	fuse_reply_err(req, -rc);
}

void lfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	char path[64];
	int rc = lfs_xattr_path(ino, path, sizeof(path));

	if (!rc) {
		if (removexattr(path, name) < 0)
			rc = -errno;
		lfs_xattr_done(ino);
	}
	fuse_reply_err(req, -rc);
}
