/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lacunafs control socket: where a client registers the shared
 * memory arena that the sparse-read ioctl writes data into (see
 * include/lacuna/ioctl.h for the protocol).
 *
 * Lock order: lfs_ctl's registry mutex is a leaf. A registration in use
 * by an ioctl is pinned by a reference, taken and dropped under that
 * mutex; the range lock and I/O happen with the mutex released.
 */
#ifndef LACUNA_LFS_CTL_H
#define LACUNA_LFS_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lacuna/ioctl.h"

/* limits a client connection lives within */
#define LFS_CTL_REGS_MAX 16		    /* registrations per connection */
/*
 * An arena costs the daemon address space only (the pages are the
 * client's memfd's): big enough for lacunad's pool at its largest
 * max_record (512 chunks of 64 MiB + 64 KiB).
 */
#define LFS_CTL_ARENA_MAX (64ULL << 30)	     /* bytes of one arena */
#define LFS_CTL_CONN_BYTES_MAX (64ULL << 30) /* bytes per connection */
#define LFS_CTL_CONNS_MAX 64		    /* connections at once */
/*
 * Connections a uid other than root may hold at once, and the
 * connections only root may take: local users cannot crowd out the
 * registrations of lacunad (root), however many connect.
 */
#define LFS_CTL_CONNS_PER_UID 4
#define LFS_CTL_CONNS_ROOT 16
#define LFS_CTL_REFUSE_LOG_SEC 60 /* a refused connection is logged at most this often */

struct lfs_reg;

/* Start the control thread. Fills path with the socket's name ('@' = abstract). */
int lfs_ctl_start(char *path, size_t len);
void lfs_ctl_stop(void);

/*
 * Find the registration named by token for the process whose thread tid
 * made the ioctl, and pin it. Returns 0, -EACCES for an unknown token,
 * -EPERM when the token belongs to another process.
 */
int lfs_ctl_get(const uint64_t token[2], pid_t tid, struct lfs_reg **out, void **base, size_t *len);
void lfs_ctl_put(struct lfs_reg *reg);
/* The registration's memfd (the daemon's own descriptor of it). */
int lfs_reg_memfd(const struct lfs_reg *reg);

#endif
