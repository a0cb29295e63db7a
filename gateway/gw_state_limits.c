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
 * operations, rare next to I/O, can afford. Clients that never confirm
 * (EXCHANGE_ID with no CREATE_SESSION) are not counted: they go at the
 * end of their lease. Each refusal is counted in the statistics
 * (state_refused). Opens and locks per client are not bounded here.
 */
#include <stdbool.h>
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

static uint32_t gw_state_refuse(const struct nfs4_compound *c, uint32_t status, const char *why)
{
	static _Atomic long logged;
	long now = (long)time(NULL);
	char a[64];

	gw_limit_hit(&c->srv->stats.state_refused, "state_refused", c->conn ? c->conn->id : 0);
	if (now - atomic_load(&logged) >= GW_STATE_LOG_SEC) {
		atomic_store(&logged, now);
		log_warn("nfs4: no new state for %s: %s (logged once a minute)",
			 gw_addr_str(&c->conn->peer, a, sizeof(a)), why);
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
		return gw_state_refuse(c, NFS4ERR_PERM,
				       "its address is in no export's client list");
	nfs4_state_get_stats(c->srv, &ss);
	if (session && ss.sessions >= lim->max_sessions)
		return gw_state_refuse(c, NFS4ERR_DELAY, "max_sessions reached");
	if (!session && ss.clients >= lim->max_clients)
		return gw_state_refuse(c, c->minor ? NFS4ERR_DELAY : NFS4ERR_RESOURCE,
				       "max_clients reached");
	return NFS4_OK;
}
