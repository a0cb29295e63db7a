// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bounds on the NFSv4 state clients can make lacunad hold, checked
 * before EXCHANGE_ID, SETCLIENTID and CREATE_SESSION create any, and the
 * order in which clients are reclaimed to make room.
 *
 * Operation
 * ---------
 * A client whose address no export admits creates no state at all
 * (NFS4ERR_PERM, gw_state_admit()): it could not use it, and otherwise
 * anyone who can reach the port could fill the server's memory.
 *
 * The client table. Every live client record counts, confirmed or not:
 * at most max_clients in all (auto: 1,024 per GiB of RAM, Linux nfsd's
 * rule, at least 4,096), at most max_clients_per_address of them made
 * from one address (auto: half the table, so that one address, be it a
 * flood or a host of many containers behind one NAT, never holds it
 * all), and at most max_unconfirmed_clients not confirmed yet. A new
 * record that would pass a bound first reclaims another
 * (gw_state_client_room()), in the order of Linux nfsd's courteous
 * server:
 *
 *   1. unconfirmed records (SETCLIENTID never confirmed, EXCHANGE_ID with
 *      no CREATE_SESSION), oldest first;
 *   2. confirmed clients holding no open and no lock (delegations are
 *      never granted), whose lease was renewed longest ago; their
 *      sessions go with them.
 *
 * For max_clients_per_address only the address's own records are
 * candidates: an address at its share reclaims its own, never another's.
 * A client in use by a COMPOUND (busy) is never reclaimed. Only when no
 * candidate is left is the new client refused: NFS4ERR_RESOURCE in 4.0,
 * NFS4ERR_DELAY in 4.1+ (state_refused). A reclaimed client is forgotten
 * as if it had never been (state_clients_reclaimed): its next SEQUENCE
 * is BADSESSION, its next RENEW or stateid STALE_CLIENTID, and it
 * recovers as after a server restart, with a new client ID. Reclaims and
 * refusals are logged at most once a minute, with the address holding
 * the most clients.
 *
 * Sessions. At most max_sessions (auto: max_clients) in all and
 * max_clients_per_address held by the clients of one address; the reply
 * caches of all of them share max_reply_cache. A CREATE_SESSION past one
 * of these reclaims a client that holds sessions but no open or lock, in
 * the same order (gw_state_session_room()), and is NFS4ERR_DELAY when
 * none is left (for the reply cache: fewer slots, or none, as
 * CREATE_SESSION grants them).
 *
 * Records that never hold state do not wait for the table to fill: the
 * laundromat forgets unconfirmed ones, and 4.1 clients with no session
 * and no state, unconfirmed_timeout seconds after their last use
 * (nfs4_state_reap(); state_clients_idle_expired).
 *
 * Counting walks the client list under the state lock, which these
 * operations, rare next to I/O, can afford.
 *
 * Opens, lock-owners and byte-range locks are bounded per client and in
 * all (gw_state_room(), checked by OPEN and LOCK before they make one,
 * and by a LOCKU that would cut a range in two): counters kept by
 * nfs4_state.c and nfs4_stateid.c, since OPEN and LOCK are frequent.
 * Past a bound the op is NFS4ERR_RESOURCE in 4.0 and NFS4ERR_DELAY in
 * 4.1+ (the NFSv4.1 XDR, RFC 5662: "NFS4ERR_RESOURCE is not a valid
 * error in NFSv4.1"; DELAY is among OPEN's, LOCK's and LOCKU's errors), so
 * a client that holds too much is refused while the others go on
 * (state_opens_refused, state_locks_refused). The total of opens,
 * max_opens = auto, follows RLIMIT_NOFILE: each open can hold an fd per
 * access mode, and the fds must last for the connections too.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw.h"
#include "netaddr.h"
#include "log.h"
#include "nfs4_state.h"

#define GW_STATE_LOG_SEC 60

static bool gw_state_addr_listed(const struct nfs4_caller *who)
{
	const struct gw_config *cfg = who->cfg;
	size_t i;

	for (i = 0; i < cfg->nexports; i++)
		if (gw_export_conf_match(&cfg->exports[i], (const struct sockaddr *)who->peer))
			return true;
	return false;
}

static void gw_client_key(const struct nfs4_client *clp, uint8_t key[16])
{
	net_addr_key(&clp->addr, sizeof(clp->addr), key);
}

/* An address key as text: IPv4 for a v4-mapped one */
static void gw_key_str(const uint8_t key[16], char *buf, size_t size)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(key, v4mapped, 12) ? !inet_ntop(AF_INET, key + 12, buf, (socklen_t)size)
				       : !inet_ntop(AF_INET6, key, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

static int gw_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/*
 * The address holding the most live client records, in @buf, and how
 * many (only when a line is logged: sorts a copy of every key).
 */
static unsigned int gw_state_top_addr(struct nfs4_state *st, char *buf, size_t size)
{
	struct nfs4_client *clp;
	uint8_t(*keys)[16];
	size_t n = 0, i, run, best = 0, at = 0;

	snprintf(buf, size, "?");
	list_for_each_entry(clp, &st->clients, list)
		n += !clp->expired;
	keys = n ? malloc(n * 16) : NULL;
	if (!keys)
		return 0;
	i = 0;
	list_for_each_entry(clp, &st->clients, list)
		if (!clp->expired && i < n)
			gw_client_key(clp, keys[i++]);
	qsort(keys, n, 16, gw_key_cmp);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && !memcmp(keys[i], keys[i + run], 16); run++)
			;
		if (run > best) {
			best = run;
			at = i;
		}
	}
	gw_key_str(keys[at], buf, size);
	free(keys);
	return (unsigned int)best;
}

/* Each kind of refusal or reclaim is logged at most once a minute */
enum {
	GW_STATE_LOG_CLIENT,
	GW_STATE_LOG_UNCONFIRMED,
	GW_STATE_LOG_OPEN,
	GW_STATE_LOG_LOCK,
	GW_STATE_LOG_RECLAIM,
	GW_STATE_LOG_N
};

static bool gw_state_log_due(int kind)
{
	static _Atomic long logged[GW_STATE_LOG_N];
	long now = (long)time(NULL), last = atomic_load(&logged[kind]);

	return now - last >= GW_STATE_LOG_SEC &&
	       atomic_compare_exchange_strong(&logged[kind], &last, now);
}

static const char *const gw_state_counter_names[GW_STATE_LOG_N] = {
	"state_refused",       "state_unconfirmed_evicted", "state_opens_refused",
	"state_locks_refused", "state_clients_reclaimed",
};

static uint32_t gw_state_refuse(const struct nfs4_caller *who, uint32_t status, const char *why,
				atomic_ullong *counter, int kind)
{
	char a[64] = "?";

	gw_limit_hit(counter, gw_state_counter_names[kind], who->conn_id);
	if (gw_state_log_due(kind)) {
		if (who->peer)
			net_addr_str(who->peer, a, sizeof(a));
		log_warn("nfs4: no new state for %s: %s (logged once a minute)", a, why);
	}
	return status;
}

/* A client table full: the refusal names the address that holds the most (state lock held) */
static uint32_t gw_state_refuse_client(const struct nfs4_caller *who, uint32_t status,
				       const char *why)
{
	char a[64] = "?", top[64];
	unsigned int n;

	gw_limit_hit(&who->srv->stats.state_refused, "state_refused", who->conn_id);
	if (gw_state_log_due(GW_STATE_LOG_CLIENT)) {
		n = gw_state_top_addr(who->srv->state, top, sizeof(top));
		if (who->peer)
			net_addr_str(who->peer, a, sizeof(a));
		log_warn("nfs4: no new client or session for %s: %s and every client it could "
			 "reclaim holds state or is busy; %s holds the most clients (%u) "
			 "(logged once a minute)",
			 a, why, top, n);
	}
	return status;
}

uint32_t gw_state_admit(const struct nfs4_caller *who)
{
	if (!who->cfg || !who->peer)
		return NFS4_OK; /* no configuration to check against (unit tests) */
	if (!gw_state_addr_listed(who))
		return gw_state_refuse(who, NFS4ERR_PERM,
				       "its address is in no export's client list",
				       &who->srv->stats.state_refused, GW_STATE_LOG_CLIENT);
	return NFS4_OK;
}

/* RAM does not change while lacunad runs: read it once */
static uint64_t gw_state_ram(void)
{
	static _Atomic uint64_t ram;
	uint64_t r = atomic_load(&ram);

	if (!r) {
		r = gw_limits_ram();
		atomic_store(&ram, r);
	}
	return r;
}

/* What a candidate for reclaiming must be */
#define GW_PICK_UNCONFIRMED 0x1 /* not confirmed yet */
#define GW_PICK_SESSIONS 0x2	/* holding a session */

/* Is @a to be reclaimed before @b (unconfirmed first, then the oldest lease)? */
static bool gw_reclaim_before(const struct nfs4_client *a, const struct nfs4_client *b)
{
	if (a->confirmed != b->confirmed)
		return !a->confirmed;
	return a->renewed <= b->renewed; /* the list is newest first: ties go to the older */
}

/*
 * The client to reclaim first among those of address @key (NULL: any),
 * other than @keep, matching @flags; NULL when every one holds state or
 * is busy. State lock held.
 */
static struct nfs4_client *gw_state_pick(struct nfs4_state *st, const uint8_t *key,
					 const struct nfs4_client *keep, unsigned int flags)
{
	struct nfs4_client *clp, *best = NULL;
	uint8_t k[16];

	list_for_each_entry(clp, &st->clients, list) {
		if (clp == keep || clp->expired || clp->busy || clp->nopens || clp->nlocks)
			continue;
		if ((flags & GW_PICK_UNCONFIRMED) && clp->confirmed)
			continue;
		if ((flags & GW_PICK_SESSIONS) && !clp->nsessions)
			continue;
		if (key) {
			gw_client_key(clp, k);
			if (memcmp(k, key, 16))
				continue;
		}
		if (!best || gw_reclaim_before(clp, best))
			best = clp;
	}
	return best;
}

/* Forget @clp to make room for what @why names (state lock held) */
static void gw_state_reclaim(const struct nfs4_caller *who, struct nfs4_client *clp,
			     const char *why, bool unconfirmed_bound)
{
	struct nfs4_state *st = who->srv->state;
	int kind = unconfirmed_bound ? GW_STATE_LOG_UNCONFIRMED : GW_STATE_LOG_RECLAIM;
	atomic_ullong *counter = unconfirmed_bound ? &who->srv->stats.state_unconfirmed_evicted
						   : &who->srv->stats.state_clients_reclaimed;
	char a[64], top[64];
	uint8_t key[16];
	unsigned int n;

	gw_limit_hit(counter, gw_state_counter_names[kind], who->conn_id);
	if (gw_state_log_due(kind)) {
		n = gw_state_top_addr(st, top, sizeof(top));
		gw_client_key(clp, key);
		gw_key_str(key, a, sizeof(a));
		log_warn("nfs4: %s reached: %s client %016llx of %s, holding no open or lock, "
			 "is forgotten to make room; %s holds the most clients (%u) (logged once "
			 "a minute)",
			 why, clp->confirmed ? "confirmed" : "unconfirmed",
			 (unsigned long long)clp->clientid, a, top, n);
	}
	nfs4_client_expire(st, clp, true);
}

struct gw_client_count {
	unsigned int all, addr, unconfirmed;
	unsigned int sessions, addr_sessions;
};

static void gw_state_count(struct nfs4_state *st, const uint8_t *key, struct gw_client_count *n)
{
	const struct nfs4_client *clp;
	uint8_t k[16];
	bool mine;

	memset(n, 0, sizeof(*n));
	list_for_each_entry(clp, &st->clients, list) {
		if (clp->expired)
			continue;
		gw_client_key(clp, k);
		mine = !memcmp(k, key, 16);
		n->all++;
		n->addr += mine;
		n->unconfirmed += !clp->confirmed;
		n->sessions += clp->nsessions;
		n->addr_sessions += mine ? clp->nsessions : 0;
	}
}

void gw_state_limits_log(const struct gw_limits *l)
{
	uint64_t ram = gw_state_ram();

	log_info("client table: %llu MiB of RAM: max_clients %u%s, max_clients_per_address %u%s, "
		 "max_sessions %u%s",
		 (unsigned long long)(ram >> 20), gw_limits_max_clients(l, ram),
		 l->max_clients ? "" : " (auto)", gw_limits_max_clients_addr(l, ram),
		 l->max_clients_addr ? "" : " (auto)", gw_limits_max_sessions(l, ram),
		 l->max_sessions ? "" : " (auto)");
}

/* What making room looks at: the limits, the caller's address, the RAM */
struct gw_room {
	const struct gw_limits *lim;
	uint8_t key[16];
	uint64_t ram;
};

/* false when there is nothing to check against (unit tests) */
static bool gw_room_init(const struct nfs4_caller *who, struct gw_room *r)
{
	if (!who->cfg || !who->peer)
		return false;
	r->lim = &who->cfg->limits;
	net_addr_key(who->peer, sizeof(*who->peer), r->key);
	r->ram = gw_state_ram();
	return true;
}

uint32_t gw_state_client_room(const struct nfs4_caller *who)
{
	struct nfs4_state *st = who->srv->state;
	struct gw_room r;
	struct gw_client_count n;
	struct nfs4_client *victim;
	const char *why;
	bool unconfirmed_bound;

	if (!gw_room_init(who, &r))
		return NFS4_OK;
	for (;;) {
		gw_state_count(st, r.key, &n);
		unconfirmed_bound = false;
		if (n.addr >= gw_limits_max_clients_addr(r.lim, r.ram)) {
			why = "max_clients_per_address";
			victim = gw_state_pick(st, r.key, NULL, 0);
		} else if (n.unconfirmed >= r.lim->max_unconfirmed) {
			why = "max_unconfirmed_clients";
			unconfirmed_bound = true;
			victim = gw_state_pick(st, r.key, NULL, GW_PICK_UNCONFIRMED);
			if (!victim)
				victim = gw_state_pick(st, NULL, NULL, GW_PICK_UNCONFIRMED);
		} else if (n.all >= gw_limits_max_clients(r.lim, r.ram)) {
			why = "max_clients";
			victim = gw_state_pick(st, NULL, NULL, 0);
		} else {
			return NFS4_OK;
		}
		if (!victim)
			return gw_state_refuse_client(
				who, who->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE, why);
		gw_state_reclaim(who, victim, why, unconfirmed_bound);
	}
}

uint32_t gw_state_session_room(const struct nfs4_caller *who, const struct nfs4_client *clp,
			       uint32_t slot_bytes)
{
	struct nfs4_state *st = who->srv->state;
	struct gw_room r;
	struct gw_client_count n;
	struct nfs4_client *victim;
	const char *why;

	if (!gw_room_init(who, &r))
		return NFS4_OK;
	for (;;) {
		gw_state_count(st, r.key, &n);
		if (n.addr_sessions >= gw_limits_max_clients_addr(r.lim, r.ram)) {
			why = "max_clients_per_address (sessions)";
			victim = gw_state_pick(st, r.key, clp, GW_PICK_SESSIONS);
		} else if (n.sessions >= gw_limits_max_sessions(r.lim, r.ram)) {
			why = "max_sessions";
			victim = gw_state_pick(st, NULL, clp, GW_PICK_SESSIONS);
		} else if (st->reply_cache + slot_bytes > r.lim->max_reply_cache) {
			why = "max_reply_cache";
			victim = gw_state_pick(st, NULL, clp, GW_PICK_SESSIONS);
			if (!victim)
				return NFS4_OK; /* CREATE_SESSION grants no slot: DELAY */
		} else {
			return NFS4_OK;
		}
		if (!victim)
			return gw_state_refuse_client(who, NFS4ERR_DELAY, why);
		gw_state_reclaim(who, victim, why, false);
	}
}

uint32_t gw_state_room(const struct nfs4_caller *who, const struct nfs4_client *clp,
		       enum gw_state_kind kind)
{
	const struct nfs4_state *st = who->srv->state;
	const struct gw_limits *lim;
	uint32_t full = who->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE;
	atomic_ullong *opens = &who->srv->stats.state_opens_refused;
	atomic_ullong *locks = &who->srv->stats.state_locks_refused;

	if (!who->cfg)
		return NFS4_OK; /* unit tests */
	lim = &who->cfg->limits;
	switch (kind) {
	case GW_STATE_OPEN:
		if (clp->nopens >= lim->max_opens_client)
			return gw_state_refuse(who, full, "max_opens_per_client reached", opens,
					       GW_STATE_LOG_OPEN);
		if (st->nopens >= gw_limits_max_opens(lim, gw_limits_nofile()))
			return gw_state_refuse(who, full, "max_opens reached", opens,
					       GW_STATE_LOG_OPEN);
		break;
	case GW_STATE_LOCK_OWNER:
		if (clp->nlock_owners >= lim->max_lock_owners_client)
			return gw_state_refuse(who, full, "max_lock_owners_per_client reached",
					       locks, GW_STATE_LOG_LOCK);
		if (st->nlock_owners >= lim->max_lock_owners)
			return gw_state_refuse(who, full, "max_lock_owners reached", locks,
					       GW_STATE_LOG_LOCK);
		break;
	case GW_STATE_LOCK:
		if (clp->nlocks >= lim->max_locks_client)
			return gw_state_refuse(who, full, "max_locks_per_client reached", locks,
					       GW_STATE_LOG_LOCK);
		if (st->nlocks >= lim->max_locks)
			return gw_state_refuse(who, full, "max_locks reached", locks,
					       GW_STATE_LOG_LOCK);
		break;
	}
	return NFS4_OK;
}
