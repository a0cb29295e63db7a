/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Taking an inode's range lock (common/rangelock.h) in lacunafs: every
 * acquisition goes through lfs_rl_lock(), which times the wait for the
 * metrics and the lock__wait tracepoint (lfs_metrics.h, docs/tracing.md).
 * Releases are plain rl_unlock() of inode->rl.
 */
#ifndef LACUNA_LFS_RANGELOCK_H
#define LACUNA_LFS_RANGELOCK_H

#include <stdint.h>

#include "lfs_itable.h"
#include "rangelock.h"

/* rl_lock() of @inode's range lock, timed: 0 or rl_lock()'s error. */
int lfs_rl_lock(struct lfs_inode *inode, struct rl_range *r, uint64_t start, uint64_t end,
		enum rl_mode mode);

#endif
