// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4.0 client IDs (RFC 7530 §16.33, §16.34, §16.29): SETCLIENTID,
 * SETCLIENTID_CONFIRM and RENEW.
 *
 * Operation
 * ---------
 * SETCLIENTID follows RFC 7530 §16.33.5 as Linux nfsd does. A client is
 * known by its nfs_client_id4 id string; the verifier tells its
 * incarnations apart. A new incarnation (or a new client) gets a new
 * unconfirmed record with a new clientid and confirm verifier, replacing
 * any earlier unconfirmed record of that name; SETCLIENTID_CONFIRM makes
 * it the confirmed one and expires the previous incarnation, dropping
 * its state. The same incarnation asking again (what a client does to
 * change its callback) keeps its clientid and gets a new confirm
 * verifier. A name confirmed by another principal that still holds state
 * is CLID_INUSE.
 *
 * The callback address is decoded and ignored: this server grants no
 * delegations and never calls back.
 *
 * RENEW renews the lease of a confirmed clientid: STALE_CLIENTID for one
 * from a previous run, unknown or unconfirmed, EXPIRED for one whose
 * lease ran out (its record stays a while after its state is dropped).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "nfs4_ops.h"
#include "nfs4_state.h"

#define NFS4_NETID_MAX 64
#define NFS4_UADDR_MAX 128

struct setclientid_args {
	uint8_t verf[NFS4_VERIFIER_SIZE];
	const uint8_t *id;
	uint32_t id_len;
	uint32_t cb_program, cb_ident;
};
_Static_assert(sizeof(struct setclientid_args) <= NFS4_ARGS_MAX, "SETCLIENTID args");

int nfs4_dec_setclientid(struct xdr_in *x, void *args)
{
	struct setclientid_args *a = args;
	const uint8_t *p;
	uint32_t len;

	if (xdr_dec_opaque_fixed_copy(x, a->verf, NFS4_VERIFIER_SIZE) ||
	    xdr_dec_opaque(x, &a->id, &a->id_len, NFS4_OPAQUE_LIMIT) ||
	    xdr_dec_u32(x, &a->cb_program) ||
	    xdr_dec_opaque(x, &p, &len, NFS4_NETID_MAX) || /* r_netid */
	    xdr_dec_opaque(x, &p, &len, NFS4_UADDR_MAX) || /* r_addr */
	    xdr_dec_u32(x, &a->cb_ident))
		return -EBADMSG;
	return 0;
}

static void new_verifier(uint8_t v[NFS4_VERIFIER_SIZE])
{
	static uint64_t counter;
	uint64_t n;

	if (getrandom(v, NFS4_VERIFIER_SIZE, GRND_NONBLOCK) == NFS4_VERIFIER_SIZE)
		return;
	n = ++counter ^ (uint64_t)nfs4_now() << 32; /* called under the state lock */
	memcpy(v, &n, sizeof(n));
}

/* clientaddr4 of the principal holding a name (CLID_INUSE): netid and universal address */
static void enc_clientaddr(struct xdr_out *out, const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN], uaddr[NFS4_UADDR_MAX];
	const char *netid = "tcp";
	unsigned int port = 0;

	strcpy(host, "0.0.0.0");
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
		netid = "tcp6";
	}
	snprintf(uaddr, sizeof(uaddr), "%s.%u.%u", host, port >> 8, port & 0xff);
	xdr_enc_string(out, netid, (uint32_t)strlen(netid), NFS4_NETID_MAX);
	xdr_enc_string(out, uaddr, (uint32_t)strlen(uaddr), NFS4_UADDR_MAX);
}

uint32_t nfs4_run_setclientid(struct nfs4_compound *c, void *args)
{
	struct setclientid_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *conf, *unconf, *clp;
	struct sockaddr_storage inuse;
	uint8_t confirm[NFS4_VERIFIER_SIZE];
	uint64_t clientid;
	uint32_t refused = gw_state_admit(&c->who);

	if (refused != NFS4_OK)
		return refused;
	nfs4_state_lock(st);
	conf = nfs4_client_by_name(st, a->id, a->id_len, true, 0);
	if (conf && nfs4_client_has_state(conf) && !nfs4_client_same_principal(&c->who, conf)) {
		inuse = conf->addr;
		nfs4_state_unlock(st);
		enc_clientaddr(c->out, &inuse);
		c->keep_body = true;
		return NFS4ERR_CLID_INUSE;
	}
	unconf = nfs4_client_by_name(st, a->id, a->id_len, false, 0);
	if (unconf && !unconf->busy)
		nfs4_client_expire(st, unconf, true);
	if (conf && !memcmp(conf->verf, a->verf, NFS4_VERIFIER_SIZE) &&
	    nfs4_client_same_principal(&c->who, conf)) {
		/* the same incarnation again (a callback update): same clientid */
		new_verifier(conf->upd_confirm);
		conf->upd_pending = true;
		clientid = conf->clientid;
		memcpy(confirm, conf->upd_confirm, NFS4_VERIFIER_SIZE);
		nfs4_state_unlock(st);
		goto out;
	}
	refused = gw_state_client_room(&c->who);
	if (refused != NFS4_OK) {
		nfs4_state_unlock(st);
		return refused;
	}
	clp = nfs4_client_new(st, a->id, a->id_len, 0);
	if (!clp) {
		nfs4_state_unlock(st);
		return NFS4ERR_RESOURCE;
	}
	memcpy(clp->verf, a->verf, NFS4_VERIFIER_SIZE);
	nfs4_client_set_principal(&c->who, clp);
	new_verifier(clp->confirm);
	clientid = clp->clientid;
	memcpy(confirm, clp->confirm, NFS4_VERIFIER_SIZE);
	nfs4_state_unlock(st);
out:
	xdr_enc_u64(c->out, clientid);
	xdr_enc_opaque_fixed(c->out, confirm, NFS4_VERIFIER_SIZE);
	return NFS4_OK;
}

struct setclientid_confirm_args {
	uint64_t clientid;
	uint8_t confirm[NFS4_VERIFIER_SIZE];
};

int nfs4_dec_setclientid_confirm(struct xdr_in *x, void *args)
{
	struct setclientid_confirm_args *a = args;

	if (xdr_dec_u64(x, &a->clientid) ||
	    xdr_dec_opaque_fixed_copy(x, a->confirm, NFS4_VERIFIER_SIZE))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_setclientid_confirm(struct nfs4_compound *c, void *args)
{
	struct setclientid_confirm_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp, *old;
	uint32_t status = NFS4_OK;

	nfs4_state_lock(st);
	clp = (uint32_t)(a->clientid >> 32) == st->boot ? nfs4_client_by_id(st, a->clientid) : NULL;
	if (!clp || clp->expired || clp->minor != 0) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	if (!nfs4_client_same_principal(&c->who, clp)) {
		status = NFS4ERR_CLID_INUSE;
		goto out;
	}
	if (clp->confirmed) {
		if (clp->upd_pending && !memcmp(a->confirm, clp->upd_confirm, NFS4_VERIFIER_SIZE)) {
			/* the callback update is confirmed: nothing else changes */
			memcpy(clp->confirm, clp->upd_confirm, NFS4_VERIFIER_SIZE);
			clp->upd_pending = false;
		} else if (memcmp(a->confirm, clp->confirm, NFS4_VERIFIER_SIZE)) {
			status = NFS4ERR_STALE_CLIENTID;
			goto out;
		}
		/* else a retransmission of the confirm that succeeded */
		nfs4_client_renew(clp);
		goto out;
	}
	if (memcmp(a->confirm, clp->confirm, NFS4_VERIFIER_SIZE)) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	/* the previous incarnation, if any, loses its state now */
	old = nfs4_client_by_name(st, clp->name, clp->name_len, true, 0);
	if (old) {
		if (old->busy) {
			status = NFS4ERR_DELAY;
			goto out;
		}
		nfs4_client_expire(st, old, true);
	}
	clp->confirmed = true;
	nfs4_client_renew(clp);
out:
	nfs4_state_unlock(st);
	return status;
}

struct renew_args {
	uint64_t clientid;
};

int nfs4_dec_renew(struct xdr_in *x, void *args)
{
	struct renew_args *a = args;

	return xdr_dec_u64(x, &a->clientid);
}

uint32_t nfs4_run_renew(struct nfs4_compound *c, void *args)
{
	struct renew_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp;
	uint32_t status;

	nfs4_state_lock(st);
	status = nfs4_client_lookup40(c->srv->state, a->clientid, &clp);
	nfs4_state_unlock(st);
	return status;
}
