// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The limits of lacunad's TCP transport (gw_limits.h): how many
 * connections it keeps, in all and per client address, and how long a
 * connection may stay idle, take to send a record, or leave its replies
 * unread. Everything here runs on the loop thread.
 *
 * Operation
 * ---------
 * Connections. Every connection is charged to its client address (IPv4
 * as v4-mapped IPv6, so both families count alike) in a hash table of
 * struct gw_addr. A new connection over max_connections_per_client for
 * its address, or over max_connections in all, takes the place of an
 * idle connection (of that address, or of anyone) if there is one: no
 * request out, no reply queued, no record begun. The one idle the
 * longest among those that never carried a whole request goes first (a
 * flood of connections that send nothing replaces itself, not the
 * clients at work between two calls), else the one idle the longest. Else it is
 * refused: closed at once, before anything is read from it. The loop's
 * list of connections is kept in order of last activity (bytes received
 * or sent), least recent first, so the idle connection to drop is the
 * first idle one on it. max_connections = auto leaves GW_FD_RESERVE fds
 * and half of the rest of RLIMIT_NOFILE (raised to its hard limit at
 * start) to files and everything else, so accepting never runs out of
 * fds.
 *
 * Time. Once a second (the loop's tick) every connection is looked at:
 * one idle for idle_timeout, one whose record (or its mark) began
 * record_timeout ago and has not all arrived although lacunad was
 * reading it (a connection lacunad stopped reading is not timed while
 * it waits; its record's clock starts again when it goes on), one whose queued replies
 * have not moved for send_timeout (a client that does not read, which
 * has also made the connection stop being read, see gw_tcp.c) is
 * closed. Each case is counted in the statistics.
 *
 * Requests and records. A request counts against its address's
 * max_requests_per_client from the time its record is whole until its
 * reply is sent (its reply's chunk is held that long), and a record that
 * needs a large chunk counts against max_records_per_client until it is
 * whole or dropped. Past either, the connection's next record waits
 * (GW_STALL_CLIENT, on the pool waiters' list, resumed when chunks come
 * back) so that a few addresses that send slowly or do not read cannot
 * hold the whole pool.
 *
 * Fair within an address. The share is the address's, but the stalls
 * fall on the connections that hold something of it. A connection
 * holding something (a request out or its reply queued, a record begun)
 * waits while its address is at its share, less one request for each
 * connection of the address that holds nothing and waits
 * (addr->waiting_empty): requests given back go to those first. A
 * connection holding nothing starts its record within the share when
 * there is room, else it takes a spare: one request or record past the
 * share, kept until the connection holds nothing again. So a fresh
 * connection, or one that has had all its replies, is served at once
 * even while other connections of its address hold the whole share and
 * never read their replies (until send_timeout closes them).
 *
 * What bounds the spares: a connection holds at most one (only one
 * holding nothing takes one), an address has at most
 * max_connections_per_client connections, and the spares of all
 * addresses together are at most struct gw_tcp's spare_max, an eighth of the
 * large pool (64 of its 512 chunks), so connections that each send one
 * call and never read take no more of the pools than their addresses'
 * shares and that eighth. When the spares are all out, a connection
 * holding nothing waits for its address's share like the others, and
 * goes first when there is room.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gw_tcp.h"
#include "log.h"

#define GW_TCP_LIMIT_LOG_SEC 60


static uint64_t gw_addr_hash(const uint8_t key[16])
{
	return hash_fnv1a64(key, 16);
}

static struct gw_addr *gw_addr_get(struct gw_tcp *t, const uint8_t key[16])
{
	uint64_t h = gw_addr_hash(key);
	struct gw_addr *a;
	struct hnode *n;

	HTABLE_FOR_EACH_HASH(&t->addrs, h, n) {
		a = container_of(n, struct gw_addr, hnode);
		if (!memcmp(a->key, key, 16))
			return a;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	memcpy(a->key, key, 16);
	htable_add(&t->addrs, &a->hnode, h);
	return a;
}

static void gw_addr_put(struct gw_tcp *t, struct gw_addr *a)
{
	if (a->conns || a->records || a->reqs)
		return;
	htable_del(&t->addrs, &a->hnode);
	free(a);
}

void gw_tcp_limits_load(struct gw_tcp *t)
{
	struct gw_snap *sn = gw_snap_get(t->srv);

	t->lim = sn->cfg->limits;
	gw_snap_put(sn);
	t->max_conns = gw_limits_max_conns(&t->lim, gw_limits_nofile());
}

static bool gw_conn_idle(const struct gw_conn *c)
{
	return !c->closing && !c->nreq && !c->sq_head && !c->rec.buf && !c->mark_got &&
	       c->spill_off == c->spill_len && !gw_tcp_tls_tx_pending(c);
}

static unsigned int gw_addr_open(const struct gw_addr *a)
{
	return a->conns - a->closing;
}

/*
 * The idle connection to close, of address @a (NULL: of anyone) and not
 * @keep. Of anyone: one of the address holding the most connections, so
 * that a flood from a few addresses costs those addresses their own
 * connections and not a newcomer that has not sent its first call yet.
 * Within an address: the one idle the longest of those that never
 * carried a whole request, else the one idle the longest (struct gw_tcp's all is
 * in order of last activity, the oldest first).
 */
static struct gw_conn *gw_tcp_oldest_idle(struct gw_tcp *t, const struct gw_addr *a,
					  const struct gw_conn *keep)
{
	struct gw_conn *c, *old = NULL;
	unsigned int n, old_n = 0;
	struct list_head *l;

	for (l = t->all.next; l != &t->all; l = l->next) {
		c = container_of(l, struct gw_conn, all);
		if (c == keep || !gw_conn_idle(c) || (a && c->addr != a))
			continue;
		n = c->addr ? gw_addr_open(c->addr) : 0;
		if (!old || n > old_n || (n == old_n && old->used && !c->used)) {
			old = c;
			old_n = n;
		}
	}
	return old;
}

static void gw_tcp_limit_log(const char *what, const struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	time_t now = gw_tcp_now();
	char a[64];

	if (now - t->limit_logged < GW_TCP_LIMIT_LOG_SEC)
		return;
	t->limit_logged = now;
	log_warn("tcp: %s reached (connection from %s): refusing connections or closing idle "
		 "ones (logged once a minute)",
		 what, net_addr_str(&c->info.peer, a, sizeof(a)));
}

/* Make room for @c under one limit: 0, or -EBUSY when no idle connection can go. */
static int gw_tcp_make_room(struct gw_conn *c, const struct gw_addr *a, const char *what)
{
	struct gw_tcp *t = c->tcp;
	struct gw_conn *old = gw_tcp_oldest_idle(t, a, c);

	gw_tcp_limit_log(what, c);
	if (!old) {
		gw_limit_hit(&t->srv->stats.conns_refused, "conns_refused", c->info.id);
		return -EBUSY;
	}
	gw_limit_hit(&t->srv->stats.conns_evicted, "conns_evicted", old->info.id);
	gw_conn_close(old, false, "idle, closed to make room for a new connection");
	return 0;
}

int gw_tcp_limits_admit(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	uint8_t key[16];
	struct gw_addr *a;
	int ret;

	net_addr_key(&c->info.peer, c->info.peer_len, key);
	a = gw_addr_get(t, key);
	if (!a)
		return -ENOMEM;
	c->addr = a;
	a->conns++;
	c->active = c->rec_since = c->send_since = gw_tcp_now();
	/*
	 * connections closing do not count: many may close in one batch of
	 * completions, and their fds go when it ends (GW_FD_RESERVE covers them)
	 */
	if (gw_addr_open(a) > t->lim.max_conns_client) {
		ret = gw_tcp_make_room(c, a, "max_connections_per_client");
		if (ret)
			return ret;
	}
	if (t->nconns - t->nclosing > t->max_conns)
		return gw_tcp_make_room(c, NULL, "max_connections");
	return 0;
}

void gw_tcp_limits_closing(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	t->nclosing++;
	if (c->addr)
		c->addr->closing++;
}

void gw_tcp_limits_release(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	struct gw_addr *a = c->addr;

	t->nclosing--; /* only closing connections are freed */
	if (!a)
		return;
	a->closing--;
	gw_tcp_client_unwait(c);
	gw_tcp_spare_put(c);
	if (c->rec_counted) {
		a->records--;
		c->rec_counted = false;
	}
	a->conns--;
	c->addr = NULL;
	gw_addr_put(t, a);
}

/* @c has no request out and no record begun. */
static bool gw_conn_empty(const struct gw_conn *c)
{
	return !c->nreq && !c->rec.buf;
}

bool gw_tcp_client_may_start(struct gw_conn *c, bool large)
{
	struct gw_tcp *t = c->tcp;
	struct gw_addr *a = c->addr;
	bool full;

	if (!a)
		return true;
	full = a->reqs >= t->lim.client_requests || (large && a->records >= t->lim.client_records);
	/* those holding something leave a request to each waiting one holding nothing */
	if (!gw_conn_empty(c))
		return !full && a->reqs + a->waiting_empty < t->lim.client_requests;
	if (!full || c->spare)
		return true;
	if (t->spare < t->spare_max) {
		c->spare = true;
		t->spare++;
		return true;
	}
	if (!c->wait_empty) {
		c->wait_empty = true;
		a->waiting_empty++;
	}
	return false;
}

void gw_tcp_client_unwait(struct gw_conn *c)
{
	if (!c->wait_empty)
		return;
	c->wait_empty = false;
	c->addr->waiting_empty--;
}

void gw_tcp_spare_put(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	if (!c->spare || !gw_conn_empty(c))
		return;
	c->spare = false;
	t->spare--;
	t->freed = true; /* a connection waiting for one may go on */
}

void gw_tcp_touch(struct gw_conn *c)
{
	struct gw_tcp *t = c->tcp;
	c->active = gw_tcp_now();
	if (c->all.next != &t->all) {
		list_del(&c->all);
		list_add_tail(&c->all, &t->all);
	}
}

void gw_tcp_limits_tick(struct gw_tcp *t)
{
	const struct gw_limits *lim = &t->lim;
	struct list_head *l, *next;
	struct gw_conn *c;
	time_t now;

	gw_tcp_limits_load(t);
	if (t->stopping)
		return;
	now = gw_tcp_now();
	for (l = t->all.next; l != &t->all; l = next) {
		next = l->next;
		c = container_of(l, struct gw_conn, all);
		if (c->closing)
			continue;
		if (lim->idle_timeout && gw_conn_idle(c) &&
		    now - c->active >= (time_t)lim->idle_timeout) {
			gw_limit_hit(&t->srv->stats.conns_idle_closed, "conns_idle_closed",
				     c->info.id);
			gw_conn_close(c, false, "idle_timeout");
		} else if (lim->record_timeout && (c->rec.buf || c->mark_got) &&
			   c->stall == GW_STALL_NONE &&
			   now - c->rec_since >= (time_t)lim->record_timeout) {
			gw_limit_hit(&t->srv->stats.conns_record_timeout, "conns_record_timeout",
				     c->info.id);
			gw_conn_close(c, true, "record_timeout: a record did not finish arriving");
		} else if (lim->send_timeout && (c->sq_head || gw_tcp_tls_tx_pending(c)) &&
			   now - c->send_since >= (time_t)lim->send_timeout) {
			gw_limit_hit(&t->srv->stats.conns_send_timeout, "conns_send_timeout",
				     c->info.id);
			gw_conn_close(c, true,
				      "send_timeout: the client does not read its replies");
		}
	}
}
