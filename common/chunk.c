// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Chunk pool: one mapping of equal chunks, a lock-free free stack,
 * per-chunk reference counts, per-owner and global caps. How it operates
 * is described in chunk.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chunk.h"

/* Per-chunk state, kept outside the mapping so a shared arena holds data only. */
struct chunk_slot {
	uint32_t next; /* atomic: free-stack link, index + 1 of the next free chunk, 0 = end */
	uint32_t refs; /* atomic: 0 while free */
	struct chunk_owner *owner; /* charged for it; set by chunk_get, read by the last put */
};

struct chunk_pool {
	uint8_t *base;
	size_t length;
	size_t chunk_size;
	uint32_t nchunks;
	int memfd;
	struct chunk_slot *slot;

	/* hot atomics, each on its own cache line */
	uint64_t head __attribute__((aligned(64)));   /* tag << 32 | (index + 1), 0 = empty */
	uint32_t in_use __attribute__((aligned(64))); /* reserved against cap */
	uint32_t cap;
	uint32_t peak;
	uint64_t gets __attribute__((aligned(64)));
	uint64_t fail_pool;
	uint64_t fail_owner;
};

#define CHUNK_IDX_NONE 0

static __attribute__((noreturn)) void chunk_bug(const char *what, const void *addr)
{
	fprintf(stderr, "chunk pool: %s (%p)\n", what, addr);
	abort();
}

static uint32_t chunk_index(const struct chunk_pool *p, const void *addr)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)p->base;

	if (a < b || a - b >= (uintptr_t)p->chunk_size * p->nchunks)
		chunk_bug("address outside the pool", addr);
	return (uint32_t)((a - b) / p->chunk_size);
}

static void chunk_push(struct chunk_pool *p, uint32_t idx)
{
	uint64_t old = __atomic_load_n(&p->head, __ATOMIC_RELAXED), new;

	do {
		__atomic_store_n(&p->slot[idx].next, (uint32_t)old, __ATOMIC_RELAXED);
		new = (((old >> 32) + 1) << 32) | (uint64_t)(idx + 1);
	} while (!__atomic_compare_exchange_n(&p->head, &old, new, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* Index of a free chunk, or -1 when the stack is empty. */
static int64_t chunk_pop(struct chunk_pool *p)
{
	uint64_t old = __atomic_load_n(&p->head, __ATOMIC_ACQUIRE), new;
	uint32_t top, next;

	do {
		top = (uint32_t)old;
		if (top == CHUNK_IDX_NONE)
			return -1;
		/* may be stale if top was popped meanwhile: the tag then fails the CAS */
		next = __atomic_load_n(&p->slot[top - 1].next, __ATOMIC_RELAXED);
		new = (((old >> 32) + 1) << 32) | next;
	} while (!__atomic_compare_exchange_n(&p->head, &old, new, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return (int64_t)top - 1;
}

static int chunk_map(struct chunk_pool *p, unsigned int flags)
{
	int mflags = 0;

	if (flags & CHUNK_POOL_POPULATE)
		mflags |= MAP_POPULATE;
	if (flags & CHUNK_POOL_MEMFD) {
		p->memfd = memfd_create("lacuna-chunks", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (p->memfd < 0)
			return -errno;
		/* lacunafs insists on F_SEAL_SHRINK before it maps an arena */
		if (ftruncate(p->memfd, (off_t)p->length) < 0 ||
		    fcntl(p->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
			return -errno;
		p->base = mmap(NULL, p->length, PROT_READ | PROT_WRITE, MAP_SHARED | mflags,
			       p->memfd, 0);
	} else {
		p->base = mmap(NULL, p->length, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | mflags, -1, 0);
	}
	if (p->base == MAP_FAILED) {
		p->base = NULL;
		return -errno;
	}
	return 0;
}

int chunk_pool_create(struct chunk_pool **out, size_t chunk_size, uint32_t nchunks,
		      unsigned int flags)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct chunk_pool *p;
	uint32_t i;
	int rc;

	*out = NULL;
	if (chunk_size < CHUNK_SIZE_MIN || chunk_size > CHUNK_SIZE_MAX ||
	    chunk_size % CHUNK_SIZE_ALIGN || nchunks == 0 || nchunks > CHUNK_POOL_CHUNKS_MAX ||
	    (uint64_t)chunk_size * nchunks > CHUNK_POOL_LENGTH_MAX ||
	    (flags & ~(CHUNK_POOL_MEMFD | CHUNK_POOL_POPULATE)))
		return -EINVAL;
	if (posix_memalign((void **)&p, 64, sizeof(*p)))
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->memfd = -1;
	p->chunk_size = chunk_size;
	p->nchunks = nchunks;
	p->cap = nchunks;
	p->length = (chunk_size * nchunks + page - 1) / page * page;
	p->slot = calloc(nchunks, sizeof(*p->slot));
	if (!p->slot) {
		rc = -ENOMEM;
		goto out_free_pool;
	}
	rc = chunk_map(p, flags);
	if (rc)
		goto out_close;
	/* push in reverse so the first gets return the lowest addresses */
	for (i = nchunks; i-- > 0;)
		chunk_push(p, i);
	*out = p;
	return 0;

out_close:
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->slot);
out_free_pool:
	free(p);
	return rc;
}

void chunk_pool_destroy(struct chunk_pool *p)
{
	if (!p)
		return;
	if (__atomic_load_n(&p->in_use, __ATOMIC_ACQUIRE))
		chunk_bug("destroyed with chunks out", p->base);
	munmap(p->base, p->length);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->slot);
	free(p);
}

void *chunk_pool_base(const struct chunk_pool *p)
{
	return p->base;
}

size_t chunk_pool_length(const struct chunk_pool *p)
{
	return p->length;
}

size_t chunk_pool_chunk_size(const struct chunk_pool *p)
{
	return p->chunk_size;
}

int chunk_pool_fd(const struct chunk_pool *p)
{
	return p->memfd;
}

int chunk_pool_set_cap(struct chunk_pool *p, uint32_t cap)
{
	if (cap == 0 || cap > p->nchunks)
		return -EINVAL;
	__atomic_store_n(&p->cap, cap, __ATOMIC_RELAXED);
	return 0;
}

void chunk_pool_get_stats(struct chunk_pool *p, struct chunk_pool_stats *st)
{
	st->chunk_size = p->chunk_size;
	st->nchunks = p->nchunks;
	st->cap = __atomic_load_n(&p->cap, __ATOMIC_RELAXED);
	st->in_use = __atomic_load_n(&p->in_use, __ATOMIC_RELAXED);
	st->peak = __atomic_load_n(&p->peak, __ATOMIC_RELAXED);
	st->gets = __atomic_load_n(&p->gets, __ATOMIC_RELAXED);
	st->fail_pool = __atomic_load_n(&p->fail_pool, __ATOMIC_RELAXED);
	st->fail_owner = __atomic_load_n(&p->fail_owner, __ATOMIC_RELAXED);
}

bool chunk_pool_contains(const struct chunk_pool *p, const void *addr)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)p->base;

	return a >= b && a - b < (uintptr_t)p->chunk_size * p->nchunks;
}

void *chunk_of(const struct chunk_pool *p, const void *addr)
{
	return p->base + (size_t)chunk_index(p, addr) * p->chunk_size;
}

uint64_t chunk_pool_offset(const struct chunk_pool *p, const void *addr)
{
	(void)chunk_index(p, addr);
	return (uint64_t)((const uint8_t *)addr - p->base);
}

void chunk_owner_init(struct chunk_owner *o, struct chunk_pool *pool, size_t cap_bytes)
{
	memset(o, 0, sizeof(*o));
	o->pool = pool;
	o->cap = cap_bytes;
}

size_t chunk_owner_bytes(const struct chunk_owner *o)
{
	return __atomic_load_n(&o->bytes, __ATOMIC_RELAXED);
}

bool chunk_owner_busy(const struct chunk_owner *o)
{
	return __atomic_load_n(&o->bytes, __ATOMIC_ACQUIRE) != 0;
}

static void chunk_note_peak(struct chunk_pool *p, uint32_t n)
{
	uint32_t peak = __atomic_load_n(&p->peak, __ATOMIC_RELAXED);

	while (n > peak && !__atomic_compare_exchange_n(&p->peak, &peak, n, true, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
		;
}

int chunk_get(struct chunk_pool *p, struct chunk_owner *o, void **chunk)
{
	size_t sz = p->chunk_size;
	uint32_t n;
	int64_t idx;

	*chunk = NULL;
	if (o && o->pool != p)
		chunk_bug("owner of another pool", o);
	if (o && o->cap) {
		size_t b = __atomic_add_fetch(&o->bytes, sz, __ATOMIC_RELAXED);

		if (b > o->cap) {
			__atomic_sub_fetch(&o->bytes, sz, __ATOMIC_RELAXED);
			__atomic_add_fetch(&o->fail_cap, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&p->fail_owner, 1, __ATOMIC_RELAXED);
			return -ENOBUFS;
		}
	} else if (o) {
		__atomic_add_fetch(&o->bytes, sz, __ATOMIC_RELAXED);
	}
	n = __atomic_add_fetch(&p->in_use, 1, __ATOMIC_ACQUIRE);
	if (n > __atomic_load_n(&p->cap, __ATOMIC_RELAXED))
		goto out_full;
	/*
	 * in_use <= nchunks was reserved and a put pushes before it gives
	 * its reservation back, so the stack holds a chunk for us.
	 */
	idx = chunk_pop(p);
	if (idx < 0)
		goto out_full;
	chunk_note_peak(p, n);
	p->slot[idx].owner = o;
	__atomic_store_n(&p->slot[idx].refs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->gets, 1, __ATOMIC_RELAXED);
	*chunk = p->base + (size_t)idx * sz;
	return 0;

out_full:
	__atomic_sub_fetch(&p->in_use, 1, __ATOMIC_RELEASE);
	if (o)
		__atomic_sub_fetch(&o->bytes, sz, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->fail_pool, 1, __ATOMIC_RELAXED);
	return -ENOMEM;
}

void chunk_hold(struct chunk_pool *p, const void *addr)
{
	uint32_t idx = chunk_index(p, addr);

	if (__atomic_fetch_add(&p->slot[idx].refs, 1, __ATOMIC_RELAXED) == 0)
		chunk_bug("hold of a free chunk", addr);
}

void chunk_put(struct chunk_pool *p, const void *addr)
{
	uint32_t idx = chunk_index(p, addr);
	struct chunk_owner *o;
	uint32_t refs;

	refs = __atomic_fetch_sub(&p->slot[idx].refs, 1, __ATOMIC_ACQ_REL);
	if (refs == 0)
		chunk_bug("put of a free chunk", addr);
	if (refs > 1)
		return;
	o = p->slot[idx].owner;
	p->slot[idx].owner = NULL;
	if (o)
		__atomic_sub_fetch(&o->bytes, p->chunk_size, __ATOMIC_RELEASE);
	chunk_push(p, idx);
	__atomic_sub_fetch(&p->in_use, 1, __ATOMIC_RELEASE);
}

uint32_t chunk_refs(struct chunk_pool *p, const void *addr)
{
	return __atomic_load_n(&p->slot[chunk_index(p, addr)].refs, __ATOMIC_RELAXED);
}
