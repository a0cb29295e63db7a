// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs directory streams: opendir/readdir/readdirplus/releasedir/
 * fsyncdir over a DIR stream of the backing directory. Offsets are the
 * backing filesystem's telldir cookies, so they stay valid across calls.
 *
 * readdirplus looks up every entry it returns (one lookup count each, as
 * the kernel expects) and undoes the lookup of an entry that did not fit.
 * "." and ".." are returned without attributes; an entry on another
 * filesystem is listed without attributes, and a lookup of it fails.
 *
 * Replies: opendir fuse_reply_open, readdir* fuse_reply_buf, the others
 * fuse_reply_err; any callback may answer with fuse_reply_err instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfs.h"

static struct lfs_dir *lfs_dir_of(struct fuse_file_info *fi)
{
	return (struct lfs_dir *)(uintptr_t)fi->fh;
}

void lfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct lfs_dir *d = calloc(1, sizeof(*d));
	int fd, err;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = lfs_reopen(lfs_inode_of(ino), O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		err = -fd;
		goto out_free;
	}
	d->dp = fdopendir(fd);
	if (!d->dp) {
		err = errno;
		close(fd);
		goto out_free;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the opener was interrupted: nobody will release this */
		closedir(d->dp);
		free(d);
	}
	return;
out_free:
	free(d);
	fuse_reply_err(req, err);
}

static bool lfs_is_dot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static void lfs_do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi, bool plus)
{
	struct lfs_dir *d = lfs_dir_of(fi);
	char *buf, *p;
	size_t rem = size;
	int err = 0;

	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	p = buf;
	for (;;) {
		struct fuse_entry_param e;
		const char *name;
		off_t next;
		size_t used;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno; /* 0 at the end of the stream */
				break;
			}
		}
		next = d->entry->d_off;
		name = d->entry->d_name;
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = d->entry->d_ino;
		e.attr.st_mode = (mode_t)d->entry->d_type << 12;

		if (plus) {
			if (!lfs_is_dot(name)) {
				int rc = lfs_do_lookup(ino, name, &e);

				if (rc == -EXDEV || rc == -ENOENT) {
					/* a mount point, or gone meanwhile: no attributes */
					memset(&e, 0, sizeof(e));
					e.attr.st_ino = d->entry->d_ino;
					e.attr.st_mode = (mode_t)d->entry->d_type << 12;
				} else if (rc) {
					err = -rc;
					break;
				}
			}
			used = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (used > rem) {
				if (e.ino)
					lfs_unref_inode((struct lfs_inode *)(uintptr_t)e.ino, 1);
				break;
			}
		} else {
			used = fuse_add_direntry(req, p, rem, name, &e.attr, next);
			if (used > rem)
				break;
		}
		p += used;
		rem -= used;
		d->entry = NULL;
		d->offset = next;
	}
	/* An error after some entries: return what we have, report it next time. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

void lfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	lfs_do_readdir(req, ino, size, off, fi, false);
}

void lfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	lfs_do_readdir(req, ino, size, off, fi, true);
}

void lfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct lfs_dir *d = lfs_dir_of(fi);

	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

void lfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = dirfd(lfs_dir_of(fi)->dp);
	int rc = datasync ? fdatasync(fd) : fsync(fd);

	fuse_reply_err(req, rc < 0 ? errno : 0);
}
