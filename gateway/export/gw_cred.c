// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-thread credentials: each worker thread runs its filesystem calls
 * with the NFS caller's fsuid, fsgid and supplementary groups. The raw
 * syscalls change only the calling thread (glibc's setgroups() and
 * setresuid() would change every thread of the process). With an fsuid
 * other than 0 the kernel drops the thread's filesystem capabilities, so
 * permission checks are those of that user; back at 0 they return.
 *
 * The identity in force is remembered per thread and left in force
 * between COMPOUNDs, so consecutive requests of one caller cost no
 * syscall; what needs root's capabilities (open_by_handle_at() when a
 * handle is resolved) steps out of it and back.
 */
#include <errno.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gw.h"
#include "log.h"

static __thread struct gw_cred cur;
static __thread bool cur_set; /* cur is in force (else root, no groups) */

bool gw_cred_same(const struct gw_cred *a, const struct gw_cred *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

static int apply(uid_t uid, gid_t gid, unsigned int ngroups, const uint32_t *groups)
{
	gid_t g[GW_GROUPS_MAX];
	unsigned int i;

	for (i = 0; i < ngroups && i < GW_GROUPS_MAX; i++)
		g[i] = groups[i];
	/* groups and gid first: once fsuid is not 0 the capability to change them may be gone */
	if (syscall(SYS_setgroups, (size_t)i, g) < 0) {
		log_err("setgroups: %s", strerror(errno));
		return -errno;
	}
	setfsgid(gid);
	if ((gid_t)setfsgid((gid_t)-1) != gid) {
		log_err("setfsgid(%u) failed", gid);
		return -EPERM;
	}
	setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid) {
		log_err("setfsuid(%u) failed", uid);
		return -EPERM;
	}
	return 0;
}

int gw_cred_enter(const struct gw_cred *cred)
{
	int err;

	if (!cred) {
		gw_cred_leave();
		return 0;
	}
	if (cur_set && gw_cred_same(&cur, cred))
		return 0;
	/* back to root first, so that the capability to set groups is there */
	if (cur_set)
		gw_cred_leave();
	err = apply(cred->uid, cred->gid, cred->ngroups, cred->groups);
	if (err) {
		apply(0, 0, 0, NULL);
		return err;
	}
	cur = *cred;
	cur_set = true;
	return 0;
}

bool gw_cred_current(struct gw_cred *out)
{
	if (cur_set)
		*out = cur;
	return cur_set;
}

void gw_cred_leave(void)
{
	if (!cur_set)
		return;
	setfsuid(0);
	setfsgid(0);
	syscall(SYS_setgroups, (size_t)0, NULL);
	cur_set = false;
}
