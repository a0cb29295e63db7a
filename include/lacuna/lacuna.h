/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liblacuna: the client side of the lacunafs atomic sparse read.
 *
 * lacuna_sparse_read() returns, for a range of an open file, the
 * data/hole segments and (if asked) the data. On a file in a lacunafs
 * mount the answer is taken under the inode's range lock (atomic); on any
 * other file it falls back to SEEK_DATA/SEEK_HOLE and pread, which is
 * correct only if nobody changes the file meanwhile, and says so
 * (result.atomic = false).
 *
 * For bulk data the caller registers a shared arena with the lacunafs
 * daemon (lacuna_client_open with arena_len > 0) and reads into memory
 * inside it (lacuna_client_arena): the daemon then preads straight into
 * it, one copy from the page cache. Data asked into other memory is
 * staged through the arena, or through the inline ioctl without one.
 *
 * lacuna_write() is the counterpart: a write applied under one hold of
 * the range lock, its data taken from the arena (or from the ioctl, for
 * small writes).
 *
 * A client may be used by several threads at once when each reads into
 * its own part of the arena. Functions return 0 or a negative errno.
 */
#ifndef LACUNA_LACUNA_H
#define LACUNA_LACUNA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lacuna/ioctl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lacuna_client;

struct lacuna_extent {
	uint64_t offset;
	uint64_t length;
	uint32_t kind;	     /* LACUNA_SEG_DATA or LACUNA_SEG_HOLE */
	const uint8_t *data; /* DATA read with LACUNA_READ_DATA, else NULL */
};

struct lacuna_result {
	uint64_t file_size;
	uint64_t next_offset; /* continue here */
	uint64_t data_bytes;
	uint64_t hole_bytes;
	uint32_t flags;	  /* LACUNA_SR_EOF, _UNSTABLE, _SHORT, _DENSE */
	uint32_t retries; /* rereads caused by changes behind the mount */
	bool atomic;	  /* taken under the lacunafs range lock */
	unsigned int nsegs;
	struct lacuna_extent segs[LACUNA_SR_MAX_SEGS];
};

#define LACUNA_READ_MAP 0  /* segments only */
#define LACUNA_READ_DATA 1 /* segments and data */

/*
 * Is fd on lacunafs? Fills info (may be NULL) when it is. Any error
 * (ENOTTY from another filesystem, a wrong ABI...) means no.
 */
bool lacuna_is_lacunafs(int fd, struct lacuna_info *info);

/*
 * A client for the lacunafs mount holding fd, with a shared arena of
 * arena_len bytes registered on its control socket (0: no arena).
 * -ENOTTY when fd is not on lacunafs.
 */
int lacuna_client_open(int fd, size_t arena_len, struct lacuna_client **out);
/*
 * The same with an arena the caller made and keeps: memfd (sealed with
 * F_SEAL_SHRINK, at least len bytes) mapped shared at base. A server can
 * make its pool of reply buffers the arena this way. The mapping stays the
 * caller's to unmap, after lacuna_client_close().
 */
int lacuna_client_open_arena(int fd, int memfd, void *base, size_t len, struct lacuna_client **out);
void lacuna_client_close(struct lacuna_client *c);
/* The arena (NULL without one). */
void *lacuna_client_arena(struct lacuna_client *c, size_t *len);

/*
 * Segments of [off, off + len) of fd and, with LACUNA_READ_DATA, their
 * data into buf (buflen bytes; data segments are clipped to fit). c ==
 * NULL reads without lacunafs: SEEK_DATA/SEEK_HOLE + pread, not atomic.
 * A short result (LACUNA_SR_SHORT) continues at res->next_offset.
 */
int lacuna_sparse_read(struct lacuna_client *c, int fd, uint64_t off, uint64_t len,
		       unsigned int how, void *buf, size_t buflen, struct lacuna_result *res);

struct lacuna_wresult {
	uint64_t written;   /* bytes written */
	uint64_t file_size; /* size right after the write (atomic writes only, else 0) */
	bool atomic;	    /* applied under one hold of the lacunafs range lock */
};

/*
 * Write len bytes of buf at off of fd (open for writing) under one hold of
 * the inode's range lock: a concurrent sparse read sees all of it or none
 * of it, whatever len and the alignment of buf. flags: LACUNA_WR_DSYNC,
 * LACUNA_WR_SYNC. buf must lie in the client's arena (the daemon writes
 * from there, no copy), or len be at most LACUNA_WRITE_INLINE_MAX (sent
 * in the ioctl); else -E2BIG. c == NULL writes with pwrite: not atomic.
 * A short write (a full disk) is 0 with res->written < len; nothing
 * written is the error. -ENOTTY: fd is not on lacunafs (any more).
 */
int lacuna_write(struct lacuna_client *c, int fd, uint64_t off, const void *buf, size_t len,
		 unsigned int flags, struct lacuna_wresult *res);

#ifdef __cplusplus
}
#endif
#endif
