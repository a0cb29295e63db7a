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
#include "htable.h"
#include "list.h"
#include "nfs4.h"

#define GW_DRC_BUCKETS 1024

struct drc_entry {
	struct hnode hnode;
	struct list_head lru; /* most recent first */
	struct gw_drc_key key;
	uint64_t sum;
	size_t call_len, len;
	uint8_t reply[];
};

/* One server's cache. Lock order: taken last, nothing taken under it. */
struct gw_drc {
	pthread_mutex_t lock;
	struct htable tab;    /* entries by key */
	struct list_head lru; /* entries, most recently used first */
	size_t n, bytes;
	unsigned int max; /* drc_entries in force */
};

int gw_drc_create(struct gw_drc **out)
{
	struct gw_drc *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	if (htable_init(&d->tab, GW_DRC_BUCKETS)) {
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	list_init(&d->lru);
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

static uint64_t key_hash(const struct gw_drc_key *k)
{
	return hash_fnv1a64(&k->peer, k->peer_len) ^ (k->xid * 2654435761u);
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
	htable_del(&d->tab, &e->hnode);
	list_del(&e->lru);
	__atomic_store_n(&d->n, d->n - 1, __ATOMIC_RELAXED);
	d->bytes -= e->len;
	free(e);
}

/* The entry of @k (lock held), or NULL */
static struct drc_entry *find(struct gw_drc *d, const struct gw_drc_key *k)
{
	uint64_t h = key_hash(k);
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&d->tab, h, n) {
		struct drc_entry *e = container_of(n, struct drc_entry, hnode);

		if (same_key(e, k))
			return e;
	}
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
	if (e && e->call_len == call_len && e->sum == hash_fnv1a64(call, call_len)) {
		list_move(&e->lru, &d->lru);
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
	e->sum = hash_fnv1a64(call, call_len);
	e->call_len = call_len;
	e->len = len;
	pthread_mutex_lock(&d->lock);
	old = find(d, k);
	if (old)
		unlink_entry(d, old);
	while (d->n && (d->n + 1 > max_entries || d->bytes + len > max_bytes))
		unlink_entry(d, list_last_entry(&d->lru, struct drc_entry, lru));
	htable_add(&d->tab, &e->hnode, key_hash(k));
	list_add(&e->lru, &d->lru);
	d->bytes += len;
	__atomic_store_n(&d->n, d->n + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
}

void gw_drc_destroy(struct gw_drc *d)
{
	if (!d)
		return;
	while (!list_empty(&d->lru))
		unlink_entry(d, list_first_entry(&d->lru, struct drc_entry, lru));
	htable_fini(&d->tab);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
