/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunafs private state shared by its operation files.
 *
 * A FUSE node id is the address of a struct lfs_inode (the root is
 * FUSE_ROOT_ID and maps to lfs.root). A file handle is the address of a
 * struct lfs_file, a directory handle that of a struct lfs_dir.
 */
#ifndef LACUNA_LFS_H
#define LACUNA_LFS_H

#define FUSE_USE_VERSION 314

#include <dirent.h>
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "lfs_itable.h"

enum lfs_cache_mode {
	LFS_CACHE_AUTO, /* page cache for read-only opens, direct_io otherwise */
	LFS_CACHE_NONE, /* direct_io for every open */
};

struct lfs {
	const char *backing; /* as given on the command line */
	char *backing_real;  /* realpath() of it */
	dev_t backing_dev;   /* the filesystem we serve; others are refused */
	int proc_fd;	     /* /proc/self/fd, for reopening O_PATH fds */
	struct lfs_inode root;
	struct lfs_itable itable;
	double entry_timeout;
	double attr_timeout;
	enum lfs_cache_mode cache;
	bool as_root; /* daemon runs as root: act with callers' ids */
	bool debug;
	char ctl_path[108]; /* control socket, '@' = abstract */
	struct fuse_session *se;     /* for the kernel cache notifications */
	uint32_t write_unit;	     /* see struct lacuna_info */
	uint32_t write_unit_aligned; /* see struct lacuna_info */
	uint64_t clone_blksize;	     /* see struct lacuna_info; 0: no reflink */
};

extern struct lfs lfs;

/* The file handle behind fi->fh. */
struct lfs_file {
	struct lfs_inode *inode; /* whose path fd the open keeps pinned */
	int fd;
	int flags;    /* the open flags the caller used */
	bool odirect; /* backing fd has O_DIRECT: writes need aligned buffers */
	bool setid;   /* file had set-id bits at open: write as the caller */
};

struct lfs_dir {
	DIR *dp;
	off_t offset;
	struct dirent *entry;
};

static inline struct lfs_inode *lfs_inode_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &lfs.root : (struct lfs_inode *)(uintptr_t)ino;
}

static inline struct lfs_file *lfs_file_of(struct fuse_file_info *fi)
{
	return (struct lfs_file *)(uintptr_t)fi->fh;
}

/* lfs_ops_entry.c */
int lfs_do_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e);
void lfs_unref_inode(struct lfs_inode *inode, uint64_t n);
void lfs_release_inode(struct lfs_inode *inode);
int lfs_reopen(struct lfs_inode *inode, int flags);
struct file_handle;
/* The regular file a backing handle names, with one lookup the caller drops (lfs_unref_inode) */
int lfs_handle_inode(struct file_handle *fh, struct lfs_inode **out);
void lfs_proc_path(char *buf, size_t len, int fd);

void lfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void lfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void lfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void lfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		    struct fuse_file_info *fi);
void lfs_op_readlink(fuse_req_t req, fuse_ino_t ino);
void lfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void lfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void lfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void lfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name);
void lfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void lfs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void lfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		   const char *newname, unsigned int flags);
void lfs_op_statfs(fuse_req_t req, fuse_ino_t ino);
void lfs_op_access(fuse_req_t req, fuse_ino_t ino, int mask);

/* lfs_ops_dir.c */
void lfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void lfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);
void lfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* lfs_ops_file.c */
/*
 * Lock [s0, s1) of src shared and [d0, d1) of dst exclusive (a change to
 * dst, counted as writes are), in the inodes' address order; when src is
 * dst, one exclusive range over both (never two ranges of one lock).
 */
void lfs_lock_pair(struct lfs_inode *src, struct rl_range *rs, uint64_t s0, uint64_t s1,
		   struct lfs_inode *dst, struct rl_range *rd, uint64_t d0, uint64_t d1);
void lfs_unlock_pair(struct lfs_inode *src, struct rl_range *rs, struct lfs_inode *dst,
		     struct rl_range *rd);
int lfs_setsize(fuse_req_t req, struct lfs_inode *inode, struct fuse_file_info *fi, off_t size);
void lfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi);
void lfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void lfs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off,
		      struct fuse_file_info *fi);
void lfs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void lfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void lfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		      struct fuse_file_info *fi);
void lfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi);
void lfs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			    struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			    struct fuse_file_info *fi_out, size_t len, int flags);
void lfs_op_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op);
void lfs_ioctl_write(fuse_req_t req, fuse_ino_t ino, struct lfs_file *f, unsigned int cmd,
		     const void *in_buf);

/* lfs_clone.c */
void lfs_clone_probe(void);
void lfs_ioctl_clone(fuse_req_t req, fuse_ino_t ino, struct lfs_file *f, const void *in_buf);

/* lfs_devio.c */
int lfs_devio_setup(struct fuse_session *se);
bool lfs_devio_mmap_offered(void);

/* lfs_sparse.c */
void lfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz);
int lfs_sparse_init(void);
void lfs_sparse_exit(void);

/* lfs_ops_xattr.c */
void lfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags);
void lfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void lfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void lfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
