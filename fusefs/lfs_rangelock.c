// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Range-lock acquisitions of lacunafs's inodes, timed (lfs_rangelock.h).
 */
#include "lfs_metrics.h"
#include "lfs_rangelock.h"
#include "metrics.h"

int lfs_rl_lock(struct lfs_inode *inode, struct rl_range *r, uint64_t start, uint64_t end,
		enum rl_mode mode)
{
	uint64_t t0 = mx_now_ns();
	int rc = rl_lock(&inode->rl, r, start, end, mode, NULL);

	lfs_mx_lock_wait(inode, start, end, mode, mx_now_ns() - t0);
	return rc;
}
