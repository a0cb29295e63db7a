/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Acting with the caller's identity.
 *
 * The kernel checks permissions for lacunafs (default_permissions) with
 * the caller's full credentials, so the daemon needs the caller's ids only
 * where the backing filesystem derives something from them: the owner and
 * group of a new inode (including set-group-id directory inheritance and
 * the umask or default ACL), and the clearing of set-id bits when someone
 * other than a privileged caller writes a file.
 *
 * fsuid/fsgid and the umask are per thread here: each worker thread
 * unshares its fs_struct once, and setfsuid/setfsgid are per-thread
 * system calls. When creating, the daemon keeps its DAC capabilities
 * (the kernel already checked the caller's access; the caller may hold it
 * through supplementary groups the daemon does not carry), so only the
 * ownership comes from the switch.
 */
#ifndef LACUNA_LFS_CRED_H
#define LACUNA_LFS_CRED_H

#include <stdbool.h>

#include "lfs.h"

struct lfs_cred {
	bool switched;
	bool groups;
};

enum lfs_cred_mode {
	LFS_CRED_CREATE, /* ids + umask of the caller, daemon keeps DAC caps */
	LFS_CRED_WRITE,	 /* ids and groups of the caller, no fs capabilities:
			  * the backing fs clears set-id bits as for them */
};

int lfs_cred_init(void);
int lfs_cred_enter(fuse_req_t req, struct lfs_cred *c, enum lfs_cred_mode mode);
void lfs_cred_leave(struct lfs_cred *c);

#endif
