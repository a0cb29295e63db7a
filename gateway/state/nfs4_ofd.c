// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Byte-range locks held in the kernel as well: each lock stateid (one
 * lock-owner on one file) has an open file description of its own on the
 * exported file, and its ranges are held there as open file description
 * (OFD) locks, F_OFD_SETLK and F_OFD_GETLK of fcntl(2). The locks of one
 * description never conflict with each other, those of two descriptions
 * or of a description and a process's POSIX lock do: NFS lock-owners stay
 * apart, and local users of the exported files (through the lacunafs
 * mount, whose POSIX locks the kernel keeps in the FUSE inode's lock
 * table, or on a plain directory) and NFS clients exclude each other.
 *
 * Operation
 * ---------
 * The calls here never wait (F_OFD_SETLK, not F_OFD_SETLKW) and never
 * reach a filesystem daemon: lacunafs leaves POSIX locks to the kernel
 * (no FUSE_CAP_POSIX_LOCKS), and local filesystems keep them in memory.
 * So they are made under the state lock, where lacunad's own table of
 * the ranges (nfs4_lockset.c) changes with them. nfs4_ofd_open() opens
 * a file on the export (for lacunafs, a FUSE round trip) and runs before
 * the state lock is taken; the fd is closed after it is dropped
 * (nfs4_state_defer_close()).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "nfs4_state.h"

int nfs4_ofd_open(struct gw_obj *o)
{
	int fd;

	/*
	 * A write lock needs a description open for writing, a read lock one
	 * open for reading: read-write if the caller may, else what it may
	 * (LOCK asks for the open's access mode anyway).
	 */
	fd = gw_obj_open(o, O_RDWR);
	if (fd == -EACCES || fd == -EPERM || fd == -EROFS || fd == -ETXTBSY)
		fd = gw_obj_open(o, O_RDONLY);
	if (fd == -EACCES || fd == -EPERM)
		fd = gw_obj_open(o, O_WRONLY);
	return fd;
}

static short ofd_type(uint32_t type)
{
	if (type == READ_LT || type == READW_LT)
		return F_RDLCK;
	return type ? F_WRLCK : F_UNLCK;
}

int nfs4_ofd_set(int fd, uint32_t type, uint64_t start, uint64_t end)
{
	struct flock fl;
	int64_t off, len;

	if (!nfs4_range_ofd(start, end, &off, &len))
		return 0;
	memset(&fl, 0, sizeof(fl)); /* OFD locks want l_pid 0 */
	fl.l_type = ofd_type(type);
	fl.l_whence = SEEK_SET;
	fl.l_start = off;
	fl.l_len = len;
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0)
		return errno == EACCES ? -EAGAIN : -errno;
	return 0;
}

int nfs4_ofd_test(int fd, uint32_t type, uint64_t start, uint64_t end, struct nfs4_lrange *r,
		  int *pid)
{
	struct flock fl;
	int64_t off, len;

	if (!nfs4_range_ofd(start, end, &off, &len))
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = ofd_type(type);
	fl.l_whence = SEEK_SET;
	fl.l_start = off;
	fl.l_len = len;
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	if (fl.l_type == F_UNLCK)
		return 0;
	r->start = (uint64_t)fl.l_start;
	r->end = fl.l_len == 0 ? UINT64_MAX : (uint64_t)fl.l_start + (uint64_t)fl.l_len - 1;
	r->type = fl.l_type == F_RDLCK ? READ_LT : WRITE_LT;
	r->owner = NULL;
	*pid = fl.l_pid;
	return 1;
}
