// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The duplicate request cache of NFSv4.0 (4.1 has the session's slots).
 * A 4.0 client that lost a reply, or its connection, sends the same call
 * again with the same xid, from the same address and port (a Linux
 * client reconnects from its old port). Run again, a CREATE would answer
 * EXIST, a REMOVE NOENT: the first reply must be sent instead.
 *
 * Only replies of COMPOUNDs holding an operation that changes something
 * (nfs4_compound.c marks them) are kept, keyed by xid, the caller's address and port,
 * program, version and procedure, and checked against a checksum and the
 * length of the whole call (an xid reused for another call runs it).
 * Replies of more than GW_DRC_REPLY_MAX bytes are not kept. The cache is
 * bounded by drc_entries (lacunad.conf) and by drc_entries *
 * GW_DRC_BYTES_PER_ENTRY bytes of replies; past either the least
 * recently used entries go. Hits are counted (drc_hits in the stats).
 * Stream transports only: an RDMA reply is not a plain byte string.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gw.h"
#include "gw_drc.h"
#include "nfs4.h"

#define GW_DRC_BUCKETS 1024

struct drc_entry {
	struct drc_entry *hnext;
	struct drc_entry *prev, *next; /* LRU, most recent first */
	struct gw_drc_key key;
	uint64_t sum;
	size_t call_len, len;
	uint8_t reply[];
};

/* One server's cache. Lock order: taken last, nothing taken under it. */
struct gw_drc {
	pthread_mutex_t lock;
	struct drc_entry *bucket[GW_DRC_BUCKETS];
	struct drc_entry lru; /* list head */
	size_t n, bytes;
	unsigned int max; /* drc_entries in force */
};

int gw_drc_create(struct gw_drc **out)
{
	struct gw_drc *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	d->lru.prev = d->lru.next = &d->lru;
	*out = d;
	return 0;
}

void gw_drc_configure(struct gw_drc *d, unsigned int entries)
{
	__atomic_store_n(&d->max, entries, __ATOMIC_RELAXED);
}

unsigned int gw_drc_entries(const struct gw_drc *d)
{
	return __atomic_load_n(&d->max, __ATOMIC_RELAXED);
}

static uint32_t key_hash(const struct gw_drc_key *k)
{
	uint32_t h = k->xid * 2654435761u;
	const uint8_t *a = (const uint8_t *)&k->peer;
	socklen_t i;

	for (i = 0; i < k->peer_len; i++)
		h = (h ^ a[i]) * 16777619u;
	return h % GW_DRC_BUCKETS;
}

static bool same_key(const struct drc_entry *e, const struct gw_drc_key *k)
{
	const struct gw_drc_key *a = &e->key;

	return a->xid == k->xid && a->prog == k->prog && a->vers == k->vers &&
	       a->proc == k->proc && a->peer_len == k->peer_len &&
	       !memcmp(&a->peer, &k->peer, k->peer_len);
}

static void unlink_entry(struct gw_drc *d, struct drc_entry *e)
{
	struct drc_entry **pp;

	for (pp = &d->bucket[key_hash(&e->key)]; *pp; pp = &(*pp)->hnext)
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	e->prev->next = e->next;
	e->next->prev = e->prev;
	__atomic_store_n(&d->n, d->n - 1, __ATOMIC_RELAXED);
	d->bytes -= e->len;
	free(e);
}

static void lru_front(struct gw_drc *d, struct drc_entry *e)
{
	e->next = d->lru.next;
	e->prev = &d->lru;
	d->lru.next->prev = e;
	d->lru.next = e;
}

/* The entry of @k (lock held), or NULL */
static struct drc_entry *find(struct gw_drc *d, const struct gw_drc_key *k)
{
	struct drc_entry *e;

	for (e = d->bucket[key_hash(k)]; e; e = e->hnext)
		if (same_key(e, k))
			return e;
	return NULL;
}

int gw_drc_lookup(struct gw_drc *d, const struct gw_drc_key *k, const void *call, size_t call_len,
		  struct xdr_out *out)
{
	struct drc_entry *e;
	int rc = 0;

	if (!__atomic_load_n(&d->n, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&d->lock);
	e = find(d, k);
	if (e && e->call_len == call_len && e->sum == gw_fnv1a64(call, call_len)) {
		e->prev->next = e->next;
		e->next->prev = e->prev;
		lru_front(d, e);
		rc = xdr_out_write(out, e->reply, e->len) ? -ENOMEM : 1;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

void gw_drc_insert(struct gw_drc *d, const struct gw_drc_key *k, const void *call, size_t call_len,
		   const struct xdr_out *out, size_t off, unsigned int max_entries)
{
	size_t len = xdr_out_len(out) - off;
	size_t max_bytes = (size_t)max_entries * GW_DRC_BYTES_PER_ENTRY;
	struct drc_entry *e, *old;

	if (!max_entries || len > GW_DRC_REPLY_MAX || xdr_out_len(out) < off)
		return;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return;
	if (xdr_out_copy(out, off, e->reply, len) != len) {
		free(e);
		return;
	}
	e->key = *k;
	e->sum = gw_fnv1a64(call, call_len);
	e->call_len = call_len;
	e->len = len;
	pthread_mutex_lock(&d->lock);
	old = find(d, k);
	if (old)
		unlink_entry(d, old);
	while (d->n && (d->n + 1 > max_entries || d->bytes + len > max_bytes))
		unlink_entry(d, d->lru.prev);
	e->hnext = d->bucket[key_hash(k)];
	d->bucket[key_hash(k)] = e;
	lru_front(d, e);
	d->bytes += len;
	__atomic_store_n(&d->n, d->n + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
}

void gw_drc_destroy(struct gw_drc *d)
{
	if (!d)
		return;
	while (d->lru.next != &d->lru)
		unlink_entry(d, d->lru.next);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
