/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunafs's metrics (-o metrics=ADDR:PORT, served at /metrics by
 * common/metrics.c) and tracepoints (docs/tracing.md): how long range
 * locks are waited for, and what the sparse-read ioctls did. Counters
 * are relaxed atomics added to by the FUSE worker threads, no lock.
 */
#ifndef LACUNA_LFS_METRICS_H
#define LACUNA_LFS_METRICS_H

#include <stdint.h>

#include <lacuna/ioctl.h>

#include "lfs_itable.h"
#include "metrics.h"
#include "rangelock.h"

/* @inode's range lock taken over [@start, @end) in @mode after a wait of @ns (lfs_rangelock.c). */
void lfs_mx_lock_wait(const struct lfs_inode *inode, uint64_t start, uint64_t end,
		      enum rl_mode mode, uint64_t ns);

/* A sparse-read ioctl of @inode answered with @rc and the header @h. */
void lfs_mx_sparse_read(const struct lfs_inode *inode, const struct lacuna_sr_hdr *h, int rc);

/* An arena of @len bytes registered by @pid (@rc: 0 or the -errno refused with); returns @rc. */
int lfs_mx_arena(int pid, uint64_t len, int rc);

/* Serve /metrics at @addr (ADDR:PORT) from a thread: 0 or -errno, reported. */
int lfs_metrics_start(const char *addr);
void lfs_metrics_stop(void);

#endif
