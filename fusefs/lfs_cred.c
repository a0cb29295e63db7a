// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-thread identity switching for lacunafs; see lfs_cred.h for why and
 * when. Raw system calls are used on purpose: glibc's setgroups/setuid
 * wrappers broadcast to every thread of the process, these must not.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lfs_cred.h"
#include "log.h"

#define LFS_CRED_NGROUPS_MAX 256

static struct __user_cap_data_struct lfs_caps[_LINUX_CAPABILITY_U32S_3];
static gid_t lfs_groups[LFS_CRED_NGROUPS_MAX]; /* the daemon's own */
static int lfs_ngroups;
static __thread bool lfs_thread_fs_private;
static __thread mode_t lfs_thread_umask; /* valid once fs_private */

int lfs_cred_init(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (syscall(SYS_capget, &hdr, lfs_caps) < 0) {
		int err = errno;

		log_err("capget: %s", strerror(err));
		return -err;
	}
	lfs_ngroups = getgroups(LFS_CRED_NGROUPS_MAX, lfs_groups);
	if (lfs_ngroups < 0) {
		int err = errno;

		log_err("getgroups: %s", strerror(err));
		return -err;
	}
	return 0;
}

/*
 * Take on the caller's supplementary groups for this thread, so that the
 * backing filesystem's "is the writer in the file's group" test (which
 * decides whether a write or truncate clears set-group-id) sees them.
 */
static int lfs_cred_groups(fuse_req_t req, struct lfs_cred *c)
{
	gid_t groups[LFS_CRED_NGROUPS_MAX];
	int n = fuse_req_getgroups(req, LFS_CRED_NGROUPS_MAX, groups);

	if (n < 0 || n > LFS_CRED_NGROUPS_MAX)
		n = 0; /* unknown: the caller's primary group only */
	if (syscall(SYS_setgroups, (size_t)n, groups) < 0) {
		int err = errno;

		log_err("setgroups: %s", strerror(err));
		return -err;
	}
	c->groups = true;
	return 0;
}

/* Give this worker thread its own umask (and cwd) once. */
static int lfs_cred_private_fs(void)
{
	if (lfs_thread_fs_private)
		return 0;
	if (unshare(CLONE_FS) < 0) {
		int err = errno;

		log_err("unshare(CLONE_FS): %s", strerror(err));
		return -err;
	}
	lfs_thread_fs_private = true;
	/*
	 * The copied fs_struct carries the umask of whichever thread created
	 * this one (libfuse starts workers from workers): start from a known 0.
	 */
	umask(0);
	lfs_thread_umask = 0;
	return 0;
}

int lfs_cred_enter(fuse_req_t req, struct lfs_cred *c, enum lfs_cred_mode mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	int rc;

	c->switched = false;
	c->groups = false;
	if (mode == LFS_CRED_CREATE) {
		rc = lfs_cred_private_fs();
		if (rc)
			return rc;
		if (ctx->umask != lfs_thread_umask) {
			umask(ctx->umask);
			lfs_thread_umask = ctx->umask;
		}
	}
	if (!lfs.as_root || (ctx->uid == 0 && ctx->gid == 0))
		return 0;

	if (mode == LFS_CRED_WRITE) {
		rc = lfs_cred_groups(req, c);
		if (rc)
			return rc;
	}
	syscall(SYS_setfsgid, ctx->gid);
	syscall(SYS_setfsuid, ctx->uid);
	c->switched = true;
	if (syscall(SYS_setfsuid, -1) != (long)ctx->uid ||
	    syscall(SYS_setfsgid, -1) != (long)ctx->gid) {
		lfs_cred_leave(c);
		log_err("setfsuid/setfsgid(%u, %u) did not take", ctx->uid, ctx->gid);
		return -EPERM;
	}
	/*
	 * A non-zero fsuid drops the fs capabilities from the effective set;
	 * for creation take them back, so the backing filesystem applies
	 * ownership rules but does not repeat the kernel's access check.
	 */
	if (mode == LFS_CRED_CREATE && syscall(SYS_capset, &hdr, lfs_caps) < 0) {
		rc = -errno;
		lfs_cred_leave(c);
		log_err("capset: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

void lfs_cred_leave(struct lfs_cred *c)
{
	if (c->groups) {
		syscall(SYS_setgroups, (size_t)lfs_ngroups, lfs_groups);
		c->groups = false;
	}
	if (!c->switched)
		return;
	/* Going back to fsuid 0 raises the fs capabilities again. */
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
	c->switched = false;
}
