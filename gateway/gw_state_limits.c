// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bounds on the NFSv4 state clients can make lacunad hold, checked
 * before EXCHANGE_ID, SETCLIENTID and CREATE_SESSION create any:
 *
 *  - a client whose address no export admits creates no state at all
 *    (NFS4ERR_PERM): it could not use it, and otherwise anyone who can
 *    reach the port could fill the server's memory with clients and
 *    sessions;
 *  - at most max_clients confirmed clients (lacunad.conf(5)): past it a
 *    new client ID is NFS4ERR_RESOURCE in 4.0 and NFS4ERR_DELAY in 4.1+
 *    (NFS4ERR_RESOURCE is 4.0's);
 *  - at most max_sessions sessions in all, each holding up to 64 slots
 *    of cached replies: past it CREATE_SESSION is NFS4ERR_DELAY.
 *
 * Counting walks the state (nfs4_state_get_stats()), which these
 * operations, rare next to I/O, can afford. Each refusal is counted in
 * the statistics (state_refused).
 *
 * Clients that never confirm (SETCLIENTID with no SETCLIENTID_CONFIRM,
 * EXCHANGE_ID with no CREATE_SESSION) are not counted against
 * max_clients, so they cannot keep real clients out; they have a bound
 * of their own, max_unconfirmed_clients, past which the oldest is
 * forgotten to make room for the new one (gw_state_unconfirmed_room();
 * state_unconfirmed_evicted). A client confirms right after it is made,
 * so only clients that never come back lose their record. Confirming
 * one (SETCLIENTID_CONFIRM, its first CREATE_SESSION) checks max_clients
 * again (gw_state_confirm_room()): clients made while there was room
 * cannot all confirm past it.
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
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "gw.h"
#include "gw_xprt.h"
#include "log.h"
#include "nfs4_state.h"

#define GW_STATE_LOG_SEC 60

static bool gw_state_addr_listed(const struct nfs4_compound *c)
{
	const struct gw_config *cfg = c->srv->cfg; /* cfg_lock held for the COMPOUND */
	size_t i;

	for (i = 0; i < cfg->nexports; i++)
		if (gw_export_match(&cfg->exports[i], (const struct sockaddr *)&c->conn->peer))
			return true;
	return false;
}

/* Each kind of refusal is logged at most once a minute */
enum {
	GW_STATE_LOG_CLIENT,
	GW_STATE_LOG_UNCONFIRMED,
	GW_STATE_LOG_OPEN,
	GW_STATE_LOG_LOCK,
	GW_STATE_LOG_N
};

static uint32_t gw_state_refuse(const struct nfs4_compound *c, uint32_t status, const char *why,
				atomic_ullong *counter, int kind)
{
	static const char *const names[GW_STATE_LOG_N] = {
		"state_refused", "state_unconfirmed_evicted", "state_opens_refused",
		"state_locks_refused",
	};
	static _Atomic long logged[GW_STATE_LOG_N];
	long now = (long)time(NULL);
	char a[64] = "?";

	gw_limit_hit(counter, names[kind], c->conn ? c->conn->id : 0);
	if (now - atomic_load(&logged[kind]) >= GW_STATE_LOG_SEC) {
		atomic_store(&logged[kind], now);
		if (c->conn)
			gw_addr_str(&c->conn->peer, a, sizeof(a));
		log_warn("nfs4: no new state for %s: %s (logged once a minute)", a, why);
	}
	return status;
}

uint32_t gw_state_admit(struct nfs4_compound *c, bool session)
{
	const struct gw_limits *lim;
	struct nfs4_state_stats ss;

	if (!c->srv->cfg || !c->conn)
		return NFS4_OK; /* no configuration to check against (unit tests) */
	lim = &c->srv->cfg->limits;
	if (!gw_state_addr_listed(c))
		return gw_state_refuse(c, NFS4ERR_PERM, "its address is in no export's client list",
				       &c->srv->stats.state_refused, GW_STATE_LOG_CLIENT);
	nfs4_state_get_stats(c->srv, &ss);
	if (session && ss.sessions >= lim->max_sessions)
		return gw_state_refuse(c, NFS4ERR_DELAY, "max_sessions reached",
				       &c->srv->stats.state_refused, GW_STATE_LOG_CLIENT);
	if (!session && ss.clients >= lim->max_clients)
		return gw_state_refuse(c, c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE,
				       "max_clients reached", &c->srv->stats.state_refused,
				       GW_STATE_LOG_CLIENT);
	return NFS4_OK;
}

void gw_state_unconfirmed_room(struct nfs4_compound *c)
{
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp, *oldest;
	unsigned int n;

	if (!c->srv->cfg)
		return;
	for (;;) {
		/* clients are listed newest first: the last one seen is the oldest */
		n = 0;
		oldest = NULL;
		for (clp = st->clients; clp; clp = clp->next) {
			if (clp->confirmed || clp->expired)
				continue;
			n++;
			if (!clp->busy)
				oldest = clp;
		}
		if (n < c->srv->cfg->limits.max_unconfirmed || !oldest)
			return;
		nfs4_client_expire(st, oldest, true);
		gw_state_refuse(c, NFS4_OK,
				"max_unconfirmed_clients reached: the oldest unconfirmed one is forgotten",
				&c->srv->stats.state_unconfirmed_evicted, GW_STATE_LOG_UNCONFIRMED);
	}
}

uint32_t gw_state_confirm_room(struct nfs4_compound *c, const struct nfs4_client *clp)
{
	const struct nfs4_client *o;
	unsigned int n = 0;

	if (!c->srv->cfg)
		return NFS4_OK;
	for (o = c->srv->state->clients; o; o = o->next)
		/* a confirmed record of the same name is replaced, not added to */
		n += o->confirmed && !o->expired &&
		     !(o->minor == clp->minor && o->name_len == clp->name_len &&
		       !memcmp(o->name, clp->name, clp->name_len));
	if (n < c->srv->cfg->limits.max_clients)
		return NFS4_OK;
	return gw_state_refuse(c, c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE,
			       "max_clients reached (a client confirming)",
			       &c->srv->stats.state_refused, GW_STATE_LOG_CLIENT);
}

uint32_t gw_state_room(struct nfs4_compound *c, const struct nfs4_client *clp,
		       enum gw_state_kind kind)
{
	const struct nfs4_state *st = c->srv->state;
	const struct gw_limits *lim;
	uint32_t full = c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE;
	atomic_ullong *opens = &c->srv->stats.state_opens_refused;
	atomic_ullong *locks = &c->srv->stats.state_locks_refused;

	if (!c->srv->cfg)
		return NFS4_OK; /* unit tests */
	lim = &c->srv->cfg->limits;
	switch (kind) {
	case GW_STATE_OPEN:
		if (clp->nopens >= lim->max_opens_client)
			return gw_state_refuse(c, full, "max_opens_per_client reached", opens,
					       GW_STATE_LOG_OPEN);
		if (st->nopens >= gw_limits_max_opens(lim, gw_limits_nofile()))
			return gw_state_refuse(c, full, "max_opens reached", opens,
					       GW_STATE_LOG_OPEN);
		break;
	case GW_STATE_LOCK_OWNER:
		if (clp->nlock_owners >= lim->max_lock_owners_client)
			return gw_state_refuse(c, full, "max_lock_owners_per_client reached",
					       locks, GW_STATE_LOG_LOCK);
		if (st->nlock_owners >= lim->max_lock_owners)
			return gw_state_refuse(c, full, "max_lock_owners reached", locks,
					       GW_STATE_LOG_LOCK);
		break;
	case GW_STATE_LOCK:
		if (clp->nlocks >= lim->max_locks_client)
			return gw_state_refuse(c, full, "max_locks_per_client reached", locks,
					       GW_STATE_LOG_LOCK);
		if (st->nlocks >= lim->max_locks)
			return gw_state_refuse(c, full, "max_locks reached", locks,
					       GW_STATE_LOG_LOCK);
		break;
	}
	return NFS4_OK;
}
