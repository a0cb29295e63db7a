// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs name-space operations: lookup and forget, attributes, and the
 * calls that create, link, rename and remove names.
 *
 * Every inode is reached through its O_PATH fd (pinned in the fd cache for
 * the call, lfs_fdcache.h), never by path, so a rename elsewhere in the
 * tree cannot redirect an operation. Entries on a
 * different filesystem than the backing directory's (something mounted
 * under it) are refused with EXDEV: their inode numbers could collide
 * with ours behind the single st_dev the FUSE mount reports.
 *
 * Each callback sends exactly one reply: fuse_reply_entry/attr/readlink/
 * statfs or fuse_reply_err (forget: fuse_reply_none).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lacuna/ioctl.h"
#include "lfs.h"
#include "lfs_cred.h"
#include "lfs_fdcache.h"
#include "log.h"

void lfs_proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int lfs_reopen(struct lfs_inode *inode, int flags)
{
	char name[16];
	int fd, pfd;

	pfd = lfs_inode_fd(inode);
	if (pfd < 0)
		return pfd;
	snprintf(name, sizeof(name), "%d", pfd);
	fd = openat(lfs.proc_fd, name, (flags | O_CLOEXEC) & ~O_NOFOLLOW);
	if (fd < 0 && lfs_fd_exhausted(errno))
		fd = openat(lfs.proc_fd, name, (flags | O_CLOEXEC) & ~O_NOFOLLOW);
	if (fd < 0)
		fd = -errno;
	lfs_inode_fd_put(inode);
	return fd;
}

void lfs_release_inode(struct lfs_inode *inode)
{
	if (inode == &lfs.root)
		return;
	lfs_inode_fd_fini(inode);
	pthread_mutex_destroy(&inode->cache_lock);
	rl_destroy(&inode->rl);
	free(inode);
}

void lfs_unref_inode(struct lfs_inode *inode, uint64_t n)
{
	if (lfs_itable_forget(&lfs.itable, inode, n))
		lfs_release_inode(inode);
}

static int lfs_stat_fd(int fd, struct stat *st)
{
	return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* The entry of the inode @fd (an O_PATH fd, consumed) is open on */
static int entry_of_fd(int fd, const char *name, struct fuse_entry_param *e)
{
	struct lfs_inode *inode, *fresh;
	int rc;

	rc = lfs_stat_fd(fd, &e->attr);
	if (rc)
		goto out_close;
	if (e->attr.st_dev != lfs.backing_dev) {
		log_warn("refusing to cross into another filesystem at '%s' (dev %u:%u)", name,
			 major(e->attr.st_dev), minor(e->attr.st_dev));
		rc = -EXDEV;
		goto out_close;
	}

	inode = lfs_itable_get(&lfs.itable, e->attr.st_dev, e->attr.st_ino, 1);
	if (inode) {
		close(fd);
		goto out_entry;
	}
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		rc = -ENOMEM;
		goto out_close;
	}
	fresh->dev = e->attr.st_dev;
	fresh->ino = e->attr.st_ino;
	fresh->type = e->attr.st_mode & S_IFMT;
	pthread_mutex_init(&fresh->cache_lock, NULL);
	rc = rl_init(&fresh->rl);
	if (rc) {
		pthread_mutex_destroy(&fresh->cache_lock);
		free(fresh);
		goto out_close;
	}
	/* from here the fd is the inode's, closed by lfs_release_inode */
	rc = lfs_inode_fd_init(fresh, fd);
	if (rc) {
		lfs_release_inode(fresh);
		return rc;
	}
	inode = lfs_itable_insert(&lfs.itable, fresh, 1);
	if (inode != fresh)
		lfs_release_inode(fresh); /* lost a race with another lookup */
out_entry:
	e->ino = (fuse_ino_t)(uintptr_t)inode;
	e->attr_timeout = lfs.attr_timeout;
	e->entry_timeout = lfs.entry_timeout;
	return 0;

out_close:
	close(fd);
	return rc;
}

int lfs_do_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	struct lfs_inode *dir = lfs_inode_of(parent);
	int fd, dfd, rc;

	memset(e, 0, sizeof(*e));
	/* ".." of the root would lead out of the backing directory */
	if (dir == &lfs.root && !strcmp(name, ".."))
		name = ".";
	dfd = lfs_inode_fd(dir);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && lfs_fd_exhausted(errno))
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	lfs_inode_fd_put(dir);
	if (rc)
		return rc;
	return entry_of_fd(fd, name, e);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* An O_PATH fd of the backing file @fh names: open_by_handle_at(2) on the backing directory */
static int open_handle(struct file_handle *fh)
{
	int mfd, fd;

	/* open_by_handle_at() wants a real fd of the filesystem, not O_PATH */
	mfd = lfs_reopen(&lfs.root, O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return mfd;
	fd = open_by_handle_at(mfd, fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	close(mfd);
	if (fd < 0)
		return errno == EINVAL || errno == ESTALE ? -ENOENT : -errno;
	return fd;
}

#define LFS_WALK_MAX 4096 /* directory levels walked up from a directory found by handle */

/*
 * Does backing fd @fd (found by its handle, @st its stat) lie under the
 * backing directory? Any inode of the backing filesystem has a handle,
 * including those outside the directory lacunafs serves. A directory is
 * walked up by ".." (the kernel always connects directories decoded from
 * handles) until the backing directory (inside) or the filesystem's root
 * (outside). For anything else the kernel's path for it is all there is
 * (its /proc/self/fd link): under the backing directory or not, when the
 * kernel has one. A file nothing has looked up by name since it was last
 * evicted (a reboot, dropped caches) is a disconnected dentry, whose link
 * is "/": where it lies cannot be told, and it is taken. 0 or -ENOENT.
 */
static int handle_inside(int fd, const struct stat *st)
{
	char link[32], path[PATH_MAX + 16];
	const char *root = lfs.backing_real;
	size_t rlen;
	ssize_t n;

	if (S_ISDIR(st->st_mode)) {
		struct stat cur = *st, up;
		int dfd = fd, pfd, i, rc = -ENOENT;

		for (i = 0; i < LFS_WALK_MAX; i++) {
			if (cur.st_dev == lfs.root.dev && cur.st_ino == lfs.root.ino) {
				rc = 0;
				break;
			}
			pfd = openat(dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (pfd < 0)
				break;
			if (dfd != fd)
				close(dfd);
			dfd = pfd;
			/* the filesystem's root is its own parent; another st_dev: past it */
			if (fstat(dfd, &up) < 0 || up.st_dev != cur.st_dev ||
			    (up.st_ino == cur.st_ino))
				break;
			cur = up;
		}
		if (dfd != fd)
			close(dfd);
		return rc;
	}
	if (!root || !strcmp(root, "/"))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -ENOENT;
	path[n] = '\0';
	if (!strcmp(path, "/"))
		return 0; /* disconnected: cannot tell */
	rlen = strlen(root);
	if (strncmp(path, root, rlen) || (path[rlen] != '/' && path[rlen] != '\0'))
		return -ENOENT;
	return 0;
}

/*
 * LACUNA_FH_NAME + hex (see include/lacuna/ioctl.h): the file the backing
 * filesystem's handle names, found by open_by_handle_at(2) on the
 * backing directory, without a path or a cached dentry.
 */
static int lookup_handle(const char *hex, struct fuse_entry_param *e)
{
	struct {
		struct file_handle fh;
		unsigned char buf[LACUNA_FH_NAME_BYTES];
	} h;
	unsigned char bytes[LACUNA_FH_NAME_BYTES];
	size_t n = strlen(hex), i;
	uint32_t type = 0;
	int fd, hi, lo;

	memset(e, 0, sizeof(*e));
	if (n < 10 || n % 2 || (n - 8) / 2 > LACUNA_FH_NAME_BYTES)
		return -ENOENT;
	for (i = 0; i < 8; i++) {
		hi = hexval(hex[i]);
		if (hi < 0)
			return -ENOENT;
		type = type << 4 | (uint32_t)hi;
	}
	h.fh.handle_type = (int)type;
	h.fh.handle_bytes = (unsigned int)((n - 8) / 2);
	for (i = 0; i < h.fh.handle_bytes; i++) {
		hi = hexval(hex[8 + 2 * i]);
		lo = hexval(hex[9 + 2 * i]);
		if (hi < 0 || lo < 0)
			return -ENOENT;
		bytes[i] = (unsigned char)(hi << 4 | lo);
	}
	memcpy(h.fh.f_handle, bytes, h.fh.handle_bytes);
	fd = open_handle(&h.fh);
	if (fd < 0)
		return fd;
	memset(&e->attr, 0, sizeof(e->attr));
	if (lfs_stat_fd(fd, &e->attr) < 0 || handle_inside(fd, &e->attr)) {
		/* outside the backing directory: as if it named nothing */
		close(fd);
		return -ENOENT;
	}
	if (S_ISDIR(e->attr.st_mode)) {
		/* a second name would move the directory's dentry: not for directories */
		close(fd);
		return -EISDIR;
	}
	return entry_of_fd(fd, "(by handle)", e);
}

int lfs_handle_inode(struct file_handle *fh, struct lfs_inode **out)
{
	struct fuse_entry_param e;
	int fd, rc;

	fd = open_handle(fh);
	if (fd < 0)
		return fd;
	memset(&e, 0, sizeof(e));
	rc = lfs_stat_fd(fd, &e.attr);
	if (!rc)
		rc = handle_inside(fd, &e.attr);
	if (!rc && !S_ISREG(e.attr.st_mode))
		rc = -EINVAL;
	if (rc) {
		close(fd);
		return rc;
	}
	rc = entry_of_fd(fd, "(by handle)", &e);
	if (!rc)
		*out = lfs_inode_of(e.ino);
	return rc;
}

void lfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int rc;

	if (!strncmp(name, LACUNA_FH_NAME, sizeof(LACUNA_FH_NAME) - 1)) {
		/* as open_by_handle_at(): CAP_DAC_READ_SEARCH, i.e. root here */
		rc = fuse_req_ctx(req)->uid == 0
			     ? lookup_handle(name + sizeof(LACUNA_FH_NAME) - 1, &e)
			     : -ENOENT;
		if (!rc)
			e.entry_timeout = 0; /* the name is no real entry: never cached */
	} else {
		rc = lfs_do_lookup(parent, name, &e);
	}

	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_entry(req, &e);
}

void lfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	lfs_unref_inode(lfs_inode_of(ino), nlookup);
	fuse_reply_none(req);
}

void lfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		lfs_unref_inode(lfs_inode_of(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

void lfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int rc;

	if (fi) {
		rc = fstat(lfs_file_of(fi)->fd, &st) < 0 ? -errno : 0;
	} else {
		struct lfs_inode *inode = lfs_inode_of(ino);
		int fd = lfs_inode_fd(inode);

		if (fd < 0) {
			rc = fd;
		} else {
			rc = lfs_stat_fd(fd, &st);
			lfs_inode_fd_put(inode);
		}
	}
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, lfs.attr_timeout);
}

static void lfs_set_time(struct timespec *ts, int valid, int now_bit, int set_bit,
			 const struct timespec *val)
{
	if (valid & now_bit)
		ts->tv_nsec = UTIME_NOW;
	else if (valid & set_bit)
		*ts = *val;
	else
		ts->tv_nsec = UTIME_OMIT;
}

void lfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		    struct fuse_file_info *fi)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	char path[64];
	int rc = 0, ifd;

	ifd = lfs_inode_fd(inode);
	if (ifd < 0) {
		fuse_reply_err(req, -ifd);
		return;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(ifd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
			goto out;
		}
	}
	if (valid & FUSE_SET_ATTR_MODE) {
		if (inode->type == S_IFLNK) {
			rc = -EOPNOTSUPP;
			goto out;
		}
		if (fi) {
			rc = fchmod(lfs_file_of(fi)->fd, attr->st_mode) < 0 ? -errno : 0;
		} else {
			lfs_proc_path(path, sizeof(path), ifd);
			rc = chmod(path, attr->st_mode) < 0 ? -errno : 0;
		}
		if (rc)
			goto out;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		rc = lfs_setsize(req, inode, fi, attr->st_size);
		if (rc)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2];

		lfs_set_time(&tv[0], valid, FUSE_SET_ATTR_ATIME_NOW, FUSE_SET_ATTR_ATIME,
			     &attr->st_atim);
		lfs_set_time(&tv[1], valid, FUSE_SET_ATTR_MTIME_NOW, FUSE_SET_ATTR_MTIME,
			     &attr->st_mtim);
		if (fi)
			rc = futimens(lfs_file_of(fi)->fd, tv) < 0 ? -errno : 0;
		else
			rc = utimensat(ifd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0
				     ? -errno
				     : 0;
		if (rc)
			goto out;
	}
out:
	lfs_inode_fd_put(inode);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	lfs_op_getattr(req, ino, fi);
}

void lfs_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	char buf[PATH_MAX + 1];
	int fd = lfs_inode_fd(inode);
	ssize_t n;

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	n = readlinkat(fd, "", buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	lfs_inode_fd_put(inode);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (n == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[n] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

/* Create a directory, node or symlink as the caller, then look it up. */
static void lfs_make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  dev_t rdev, const char *link)
{
	struct lfs_inode *dir = lfs_inode_of(parent);
	struct fuse_entry_param e;
	struct lfs_cred cred;
	int rc, dfd;

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
	if (link)
		rc = symlinkat(link, dfd, name);
	else if (S_ISDIR(mode))
		rc = mkdirat(dfd, name, mode);
	else
		rc = mknodat(dfd, name, mode, rdev);
	if (rc < 0)
		rc = -errno;
	lfs_cred_leave(&cred);
	lfs_inode_fd_put(dir);
	if (rc)
		goto out_err;
	rc = lfs_do_lookup(parent, name, &e);
	if (rc)
		goto out_err;
	fuse_reply_entry(req, &e);
	return;
out_err:
	fuse_reply_err(req, -rc);
}

void lfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	lfs_make_node(req, parent, name, mode, rdev, NULL);
}

void lfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	lfs_make_node(req, parent, name, S_IFDIR | mode, 0, NULL);
}

void lfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	lfs_make_node(req, parent, name, S_IFLNK, 0, link);
}

void lfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	struct lfs_inode *inode = lfs_inode_of(ino), *dir = lfs_inode_of(parent);
	struct fuse_entry_param e;
	int rc, fd, dfd;

	fd = lfs_inode_fd(inode);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	dfd = lfs_inode_fd(dir);
	if (dfd < 0) {
		rc = dfd;
	} else {
		rc = linkat(fd, "", dfd, name, AT_EMPTY_PATH) < 0 ? -errno : 0;
		lfs_inode_fd_put(dir);
	}
	lfs_inode_fd_put(inode);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	rc = lfs_do_lookup(parent, name, &e);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_entry(req, &e);
}

static void lfs_remove(fuse_req_t req, fuse_ino_t parent, const char *name, int flags)
{
	struct lfs_inode *dir = lfs_inode_of(parent);
	int dfd = lfs_inode_fd(dir), rc;

	if (dfd < 0) {
		fuse_reply_err(req, -dfd);
		return;
	}
	rc = unlinkat(dfd, name, flags) < 0 ? errno : 0;
	lfs_inode_fd_put(dir);
	fuse_reply_err(req, rc);
}

void lfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	lfs_remove(req, parent, name, 0);
}

void lfs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	lfs_remove(req, parent, name, AT_REMOVEDIR);
}

void lfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		   const char *newname, unsigned int flags)
{
	struct lfs_inode *from = lfs_inode_of(parent), *to = lfs_inode_of(newparent);
	int ffd, tfd, rc;

	ffd = lfs_inode_fd(from);
	if (ffd < 0) {
		fuse_reply_err(req, -ffd);
		return;
	}
	tfd = lfs_inode_fd(to);
	if (tfd < 0) {
		rc = -tfd;
	} else {
		rc = renameat2(ffd, name, tfd, newname, flags) < 0 ? errno : 0;
		lfs_inode_fd_put(to);
	}
	lfs_inode_fd_put(from);
	fuse_reply_err(req, rc);
}

void lfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct lfs_inode *inode = lfs_inode_of(ino);
	int fd = lfs_inode_fd(inode), rc;
	struct statvfs sv;

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	rc = fstatvfs(fd, &sv) < 0 ? errno : 0;
	lfs_inode_fd_put(inode);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_statfs(req, &sv);
}

/*
 * access(2) is answered by the kernel itself under default_permissions;
 * this serves a mount made without it: the mode bits against the caller's
 * uid, gid and supplementary groups.
 */
void lfs_op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t groups[64];
	struct stat st;
	mode_t bits;
	int rc, n, i;

	struct lfs_inode *inode = lfs_inode_of(ino);
	int fd = lfs_inode_fd(inode);

	if (fd < 0) {
		rc = fd;
		goto out;
	}
	rc = lfs_stat_fd(fd, &st);
	lfs_inode_fd_put(inode);
	if (rc || mask == F_OK)
		goto out;
	if (ctx->uid == 0) {
		/* root may execute only what someone may execute */
		if ((mask & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111))
			rc = -EACCES;
		goto out;
	}
	if (ctx->uid == st.st_uid) {
		bits = (st.st_mode >> 6) & 7;
	} else {
		bool member = ctx->gid == st.st_gid;

		n = fuse_req_getgroups(req, 64, groups);
		for (i = 0; !member && i < n && i < 64; i++)
			member = groups[i] == st.st_gid;
		bits = member ? (st.st_mode >> 3) & 7 : st.st_mode & 7;
	}
	if (((mode_t)mask & bits) != (mode_t)mask)
		rc = -EACCES;
out:
	fuse_reply_err(req, -rc);
}
