/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chunk pool: the large buffers lacunad builds its replies in and reads
 * file data into. One pool is one mapping, so it can be registered as a
 * single RDMA memory region and, when made on a memfd, shared with
 * lacunafs as the arena its sparse read preads into.
 *
 * Operation
 * ---------
 * chunk_pool_create() maps nchunks * chunk_size bytes at once (anonymous
 * and MAP_NORESERVE, or MAP_SHARED over a memfd sealed against shrinking
 * and growing); pages are only committed when first touched, so a large
 * pool costs address space, not memory, until it is used. The pool never
 * grows and never moves: chunk_pool_base() and chunk_pool_length() stay
 * valid for its whole life, and the offset of a chunk in the mapping is
 * its offset in the memfd.
 *
 * A chunk is handed out whole, to one user, with one reference
 * (chunk_get). The user carves it into as many pieces as it likes (the
 * replies of one connection, see xdr.h) and may share it by taking more
 * references (chunk_hold); the chunk returns to the pool when the last
 * reference is dropped (chunk_put). Chunks come back dirty: nothing is
 * zeroed.
 *
 * Free chunks sit on a lock-free LIFO stack of indices (a Treiber stack
 * whose head carries a 32-bit generation tag against ABA), so get and
 * put are a few atomic operations and never sleep. LIFO order hands out
 * the chunk most recently used, whose pages are most likely resident.
 *
 * Accounting: every chunk is charged to the chunk_owner given to
 * chunk_get() (a connection, say) until its last reference goes, in
 * bytes, against the owner's cap (-ENOBUFS past it). The pool as a whole
 * hands out at most chunk_pool_set_cap() chunks (default: all of them;
 * -ENOMEM past it). Both checks reserve first and undo on failure, so
 * concurrent gets never exceed a cap. Statistics are kept with relaxed
 * atomics and are approximate while other threads run.
 *
 * Thread safety: every function may be called from any thread, except
 * chunk_pool_create/destroy and chunk_owner_init, which the caller
 * orders against everything else. An owner must outlive every chunk
 * charged to it (chunk_owner_busy() says whether any is left). There is
 * no lock, hence no lock order.
 */
#ifndef LACUNA_CHUNK_H
#define LACUNA_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* chunk_size must be a multiple of CHUNK_SIZE_ALIGN, within these bounds */
#define CHUNK_SIZE_ALIGN 64
#define CHUNK_SIZE_MIN 64
#define CHUNK_SIZE_MAX (1UL << 30)
/* nchunks bound: indices fit the stack's 32-bit slots */
#define CHUNK_POOL_CHUNKS_MAX (1U << 24)
/* bound on the whole mapping */
#define CHUNK_POOL_LENGTH_MAX (1ULL << 40)

/* chunk_pool_create() flags */
#define CHUNK_POOL_MEMFD 0x1	/* back the pool by a sealed memfd (chunk_pool_fd) */
#define CHUNK_POOL_POPULATE 0x2 /* prefault every page at creation */

struct chunk_pool;

/* Bytes charged to one user, with an optional cap. Fields are private. */
struct chunk_owner {
	struct chunk_pool *pool;
	size_t bytes;	   /* atomic */
	size_t cap;	   /* 0: no cap */
	uint64_t fail_cap; /* atomic: gets refused by the cap */
};

struct chunk_pool_stats {
	size_t chunk_size;
	uint32_t nchunks;
	uint32_t cap;	     /* chunks the pool may hand out at once */
	uint32_t in_use;     /* chunks out now */
	uint32_t peak;	     /* most chunks out at once */
	uint64_t gets;	     /* successful chunk_get() calls */
	uint64_t fail_pool;  /* refused by the pool's cap (or empty) */
	uint64_t fail_owner; /* refused by an owner's cap */
};

/*
 * Map a pool of @nchunks chunks of @chunk_size bytes. A chunk_size that
 * is a multiple of the page size gives page-aligned chunks (O_DIRECT,
 * RDMA). -EINVAL on bad sizes or flags, -ENOMEM or the -errno of
 * memfd_create/ftruncate/fcntl/mmap.
 */
int chunk_pool_create(struct chunk_pool **out, size_t chunk_size, uint32_t nchunks,
		      unsigned int flags);
/* Unmap the pool and close its memfd. No chunk may still be out. */
void chunk_pool_destroy(struct chunk_pool *p);

void *chunk_pool_base(const struct chunk_pool *p);
size_t chunk_pool_length(const struct chunk_pool *p);
size_t chunk_pool_chunk_size(const struct chunk_pool *p);
/* The memfd of a CHUNK_POOL_MEMFD pool (owned by the pool), else -1. */
int chunk_pool_fd(const struct chunk_pool *p);

/* Hand out at most @cap chunks at once (1 .. nchunks); -EINVAL outside. */
int chunk_pool_set_cap(struct chunk_pool *p, uint32_t cap);
void chunk_pool_get_stats(struct chunk_pool *p, struct chunk_pool_stats *st);

/* Is @addr inside the pool's mapping? */
bool chunk_pool_contains(const struct chunk_pool *p, const void *addr);
/* Start of the chunk holding @addr, which must be inside the pool. */
void *chunk_of(const struct chunk_pool *p, const void *addr);
/* Offset of @addr from the pool's base (its offset in the memfd). */
uint64_t chunk_pool_offset(const struct chunk_pool *p, const void *addr);

/* An owner of @pool charged at most @cap_bytes (0: unlimited). */
void chunk_owner_init(struct chunk_owner *o, struct chunk_pool *pool, size_t cap_bytes);
size_t chunk_owner_bytes(const struct chunk_owner *o);
bool chunk_owner_busy(const struct chunk_owner *o);

/*
 * Take a free chunk with one reference, charged to @o (may be NULL).
 * Returns 0 and *chunk; -ENOBUFS when @o would go over its cap; -ENOMEM
 * when the pool is at its cap.
 */
int chunk_get(struct chunk_pool *p, struct chunk_owner *o, void **chunk);
/* Another reference to the chunk holding @addr (any address inside it). */
void chunk_hold(struct chunk_pool *p, const void *addr);
/* Drop a reference to the chunk holding @addr; the last one frees it. */
void chunk_put(struct chunk_pool *p, const void *addr);
/* References held on the chunk holding @addr (for tests). */
uint32_t chunk_refs(struct chunk_pool *p, const void *addr);

#endif
