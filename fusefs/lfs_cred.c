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

static struct __user_cap_data_struct lfs_caps[_LINUX_CAPABILITY_U32S_3];
static __thread bool lfs_thread_fs_private;

int lfs_cred_init(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (syscall(SYS_capget, &hdr, lfs_caps) < 0) {
		int err = errno;

		log_err("capget: %s", strerror(err));
		return -err;
	}
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
	return 0;
}

int lfs_cred_enter(fuse_req_t req, struct lfs_cred *c, enum lfs_cred_mode mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	int rc;

	c->switched = false;
	if (mode == LFS_CRED_CREATE) {
		rc = lfs_cred_private_fs();
		if (rc)
			return rc;
		umask(ctx->umask);
	}
	if (!lfs.as_root || (ctx->uid == 0 && ctx->gid == 0))
		return 0;

	syscall(SYS_setfsgid, ctx->gid);
	syscall(SYS_setfsuid, ctx->uid);
	c->switched = true;
	if (syscall(SYS_setfsuid, -1) != (long)ctx->uid || syscall(SYS_setfsgid, -1) != (long)ctx->gid) {
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
	if (!c->switched)
		return;
	/* Going back to fsuid 0 raises the fs capabilities again. */
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
	c->switched = false;
}
