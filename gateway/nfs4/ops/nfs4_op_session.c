// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4.1 sessions (RFC 8881 §18.34-18.38, §18.46, §18.48, §18.50, §18.51):
 * EXCHANGE_ID, CREATE_SESSION, SEQUENCE, DESTROY_SESSION,
 * DESTROY_CLIENTID, BIND_CONN_TO_SESSION, RECLAIM_COMPLETE, TEST_STATEID
 * and FREE_STATEID.
 *
 * Operation
 * ---------
 * EXCHANGE_ID follows the case table of RFC 8881 §18.35.5 as Linux nfsd
 * does: a new record is unconfirmed until its first CREATE_SESSION, which
 * then replaces any confirmed record of the same owner. Only SP4_NONE
 * state protection is offered: SP4_MACH_CRED needs an integrity-protected
 * RPC (RPCSEC_GSS) this server does not speak, so, as nfsd, it is
 * answered NFS4ERR_INVAL; a Linux client using AUTH_SYS asks SP4_NONE
 * anyway. pNFS is not offered (USE_NON_PNFS), nor referrals.
 *
 * CREATE_SESSION has the client's own one-slot sequence: the seqid after
 * the last one runs, the last one is a retransmission answered with the
 * cached result. Channel attributes are negotiated down: requests and
 * replies up to the configured record size, at most NFS4_SLOTS_MAX slots
 * and NFS4_SESSION_OPS_MAX ops, NFS4_REPLY_CACHE_MAX bytes of cached
 * reply. Each slot's reply cache takes the session's ca_maxresponsesize_cached
 * (at least NFS4_REPLY_CACHE_MIN) and the slots of all sessions together
 * at most max_reply_cache bytes (lacunad.conf(5)): a session is granted
 * fewer slots than it asked for when the rest is taken, and none
 * (NFS4ERR_DELAY) when not even one fits, as nfsd does with its DRC
 * memory. Flags no minor version defines are INVAL. No callback is ever
 * sent (no delegations, no layouts), so the back channel's attributes are
 * accepted as they come, unless no callback could ever pass through them
 * (TOOSMALL), and the reply's flags never have CONN_BACK_CHAN, PERSIST
 * nor CONN_RDMA.
 *
 * SEQUENCE checks the session, the request against the negotiated
 * sizes, then the slot (RFC 8881 §2.10.6.1): the next seqid runs, the
 * last one is a retransmission answered from the slot's reply cache (or
 * RETRY_UNCACHED_REP), one arriving while its slot is busy is DELAY,
 * anything else SEQ_MISORDERED. A new request whose reply could not hold
 * even SEQUENCE's result within ca_maxresponsesize (with sa_cachethis
 * ca_maxresponsesize_cached) is REP_TOO_BIG (REP_TOO_BIG_TO_CACHE), its
 * slot untouched. Replies are cached whenever they fit, asked for or not
 * (nfs4_sequence_done()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "log.h"
#include "nfs4_ops.h"
#include "nfs4_recov.h"
#include "nfs4_state.h"

#define EXCHGID4_FLAG_MASK_A 0x40070103 /* flags a client may send */
#define NFS4_CB_SEC_MAX 16		/* callback_sec_parms4 entries */
#define NFS4_OID_MAX 16			/* sec_oid4 entries of SP4_SSV */
#define NFS4_SESSION_REQ_MIN 256	/* smallest ca_maxrequestsize/maxresponsesize */
#define CREATE_SESSION4_FLAG_MASK 0x7	/* PERSIST, CONN_BACK_CHAN, CONN_RDMA */
#define SEQUENCE4_RES_LEN (NFS4_SESSIONID_SIZE + 5 * 4)
#define RPCSEC_GSS 6

/* ---------------------------------------------------------------- EXCHANGE_ID */

struct exchange_id_args {
	uint8_t verf[NFS4_VERIFIER_SIZE];
	const uint8_t *owner;
	uint32_t owner_len;
	uint32_t flags;
	uint32_t how;
};
_Static_assert(sizeof(struct exchange_id_args) <= NFS4_ARGS_MAX, "EXCHANGE_ID args");

static int dec_sp_ops(struct xdr_in *x)
{
	struct nfs4_bitmap bm;

	if (nfs4_dec_bitmap(x, &bm) || nfs4_dec_bitmap(x, &bm))
		return -EBADMSG;
	return 0;
}

static int dec_oids(struct xdr_in *x)
{
	const uint8_t *p;
	uint32_t n, i, len;

	if (xdr_dec_count(x, &n, NFS4_OID_MAX, 4))
		return -EBADMSG;
	for (i = 0; i < n; i++)
		if (xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT))
			return -EBADMSG;
	return 0;
}

int nfs4_dec_exchange_id(struct xdr_in *x, void *args)
{
	struct exchange_id_args *a = args;
	const uint8_t *p;
	uint32_t n, len, u;
	int64_t sec;

	if (xdr_dec_opaque_fixed_copy(x, a->verf, NFS4_VERIFIER_SIZE) ||
	    xdr_dec_opaque(x, &a->owner, &a->owner_len, NFS4_OPAQUE_LIMIT) ||
	    xdr_dec_u32(x, &a->flags) || xdr_dec_enum(x, &a->how, SP4_SSV))
		return -EBADMSG;
	if (a->how == SP4_MACH_CRED && dec_sp_ops(x))
		return -EBADMSG;
	if (a->how == SP4_SSV && (dec_sp_ops(x) || dec_oids(x) || dec_oids(x) ||
				  xdr_dec_u32(x, &u) || xdr_dec_u32(x, &u)))
		return -EBADMSG;
	/* client_impl_id<1>: read and ignored */
	if (xdr_dec_count(x, &n, NFS4_IMPL_ID_MAX, 20))
		return -EBADMSG;
	if (n && (xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT) ||
		  xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT) || xdr_dec_i64(x, &sec) ||
		  xdr_dec_u32(x, &u)))
		return -EBADMSG;
	return 0;
}

static void enc_server_owner(struct xdr_out *out)
{
	char host[256];
	uint32_t len;

	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "lacunad");
	host[sizeof(host) - 1] = '\0';
	len = (uint32_t)strlen(host);
	/* server_owner4: so_minor_id, so_major_id; then eir_server_scope */
	xdr_enc_u64(out, 0);
	xdr_enc_opaque(out, host, len, NFS4_OPAQUE_LIMIT);
	xdr_enc_opaque(out, host, len, NFS4_OPAQUE_LIMIT);
	/* eir_server_impl_id<1> */
	xdr_enc_u32(out, 1);
	xdr_enc_opaque(out, "lacuna", 6, NFS4_OPAQUE_LIMIT);
	xdr_enc_opaque(out, "lacunad " PACKAGE_VERSION, sizeof("lacunad " PACKAGE_VERSION) - 1,
		       NFS4_OPAQUE_LIMIT);
	xdr_enc_i64(out, 0);
	xdr_enc_u32(out, 0);
}

uint32_t nfs4_run_exchange_id(struct nfs4_compound *c, void *args)
{
	struct exchange_id_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *conf, *unconf, *clp;
	bool update = a->flags & EXCHGID4_FLAG_UPD_CONFIRMED_REC_A;
	uint64_t clientid;
	uint32_t seqid, flags, status = NFS4_OK;

	if (a->flags & ~(uint32_t)EXCHGID4_FLAG_MASK_A)
		return NFS4ERR_INVAL;
	if (a->how == SP4_MACH_CRED)
		return NFS4ERR_INVAL; /* needs RPCSEC_GSS integrity (nfsd answers the same) */
	if (a->how == SP4_SSV)
		return NFS4ERR_ENCR_ALG_UNSUPP;
	status = gw_state_admit(&c->who);
	if (status != NFS4_OK)
		return status;

	nfs4_state_lock(st);
	conf = nfs4_client_by_name(st, a->owner, a->owner_len, true, c->minor);
	if (conf) {
		bool creds = nfs4_client_same_principal(&c->who, conf);
		bool verfs = !memcmp(conf->verf, a->verf, NFS4_VERIFIER_SIZE);

		if (update) {
			if (!creds) {
				status = NFS4ERR_PERM; /* case 9 */
				goto out;
			}
			if (!verfs) {
				status = NFS4ERR_NOT_SAME; /* case 8 */
				goto out;
			}
			clp = conf; /* case 6 */
			goto out_copy;
		}
		if (!creds) {
			/* case 3: another principal owns the name */
			if (nfs4_client_has_state(conf)) {
				status = NFS4ERR_CLID_INUSE;
				goto out;
			}
			if (conf->busy) {
				status = NFS4ERR_DELAY;
				goto out;
			}
			nfs4_client_expire(st, conf, true);
			goto out_new;
		}
		if (verfs) {
			clp = conf; /* case 2: a retransmission, or a new network address */
			goto out_copy;
		}
		/* case 5: the client rebooted; the old record goes at CREATE_SESSION */
	} else if (update) {
		status = NFS4ERR_NOENT; /* case 7 */
		goto out;
	}
	/* case 4: an unconfirmed record of the same owner is replaced */
	unconf = nfs4_client_by_name(st, a->owner, a->owner_len, false, c->minor);
	if (unconf && !unconf->busy)
		nfs4_client_expire(st, unconf, true);
out_new:
	status = gw_state_client_room(&c->who);
	if (status != NFS4_OK)
		goto out;
	clp = nfs4_client_new(st, a->owner, a->owner_len, c->minor);
	if (!clp) {
		status = NFS4ERR_SERVERFAULT;
		goto out;
	}
	memcpy(clp->verf, a->verf, NFS4_VERIFIER_SIZE);
	nfs4_client_set_principal(&c->who, clp);
out_copy:
	clp->exchange_flags = EXCHGID4_FLAG_USE_NON_PNFS;
	clientid = clp->clientid;
	seqid = clp->cs_seqid + 1;
	flags = clp->exchange_flags | (clp->confirmed ? EXCHGID4_FLAG_CONFIRMED_R : 0);
	nfs4_client_renew(clp);
out:
	nfs4_state_unlock(st);
	if (status != NFS4_OK)
		return status;
	xdr_enc_u64(c->out, clientid);
	xdr_enc_u32(c->out, seqid);
	xdr_enc_u32(c->out, flags);
	xdr_enc_u32(c->out, SP4_NONE);
	enc_server_owner(c->out);
	return NFS4_OK;
}

/* ---------------------------------------------------------------- CREATE_SESSION */

struct create_session_args {
	uint64_t clientid;
	uint32_t seqid, flags;
	struct nfs4_chan_attrs fore, back;
	uint32_t cb_program;
};
_Static_assert(sizeof(struct create_session_args) <= NFS4_ARGS_MAX, "CREATE_SESSION args");

static int dec_chan_attrs(struct xdr_in *x, struct nfs4_chan_attrs *ca)
{
	if (xdr_dec_u32(x, &ca->headerpad) || xdr_dec_u32(x, &ca->maxreq) ||
	    xdr_dec_u32(x, &ca->maxresp) || xdr_dec_u32(x, &ca->maxresp_cached) ||
	    xdr_dec_u32(x, &ca->maxops) || xdr_dec_u32(x, &ca->maxreqs) ||
	    xdr_dec_count(x, &ca->nird, 1, 4) || (ca->nird && xdr_dec_u32(x, &ca->ird)))
		return -EBADMSG;
	return 0;
}

static int enc_chan_attrs(struct xdr_out *out, const struct nfs4_chan_attrs *ca)
{
	xdr_enc_u32(out, ca->headerpad);
	xdr_enc_u32(out, ca->maxreq);
	xdr_enc_u32(out, ca->maxresp);
	xdr_enc_u32(out, ca->maxresp_cached);
	xdr_enc_u32(out, ca->maxops);
	xdr_enc_u32(out, ca->maxreqs);
	xdr_enc_u32(out, ca->nird);
	if (ca->nird)
		xdr_enc_u32(out, ca->ird);
	return out->err;
}

/* callback_sec_parms4: read and ignored (no callback is ever made) */
static int dec_cb_sec(struct xdr_in *x)
{
	const uint8_t *p;
	uint32_t n, i, flavor, u, len, gids[RPC_AUTH_SYS_GIDS_MAX];

	if (xdr_dec_count(x, &n, NFS4_CB_SEC_MAX, 4))
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (xdr_dec_u32(x, &flavor))
			return -EBADMSG;
		switch (flavor) {
		case 0: /* AUTH_NONE */
			break;
		case 1: /* AUTH_SYS: stamp, machinename, uid, gid, gids */
			if (xdr_dec_u32(x, &u) || xdr_dec_opaque(x, &p, &len, 255) ||
			    xdr_dec_u32(x, &u) || xdr_dec_u32(x, &u) ||
			    xdr_dec_u32_array(x, gids, &len, RPC_AUTH_SYS_GIDS_MAX))
				return -EBADMSG;
			break;
		case RPCSEC_GSS: /* service, handle_from_server, handle_from_client */
			if (xdr_dec_u32(x, &u) || xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT) ||
			    xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT))
				return -EBADMSG;
			break;
		default:
			return -EBADMSG; /* its body cannot be skipped */
		}
	}
	return 0;
}

int nfs4_dec_create_session(struct xdr_in *x, void *args)
{
	struct create_session_args *a = args;

	if (xdr_dec_u64(x, &a->clientid) || xdr_dec_u32(x, &a->seqid) ||
	    xdr_dec_u32(x, &a->flags) || dec_chan_attrs(x, &a->fore) ||
	    dec_chan_attrs(x, &a->back) || xdr_dec_u32(x, &a->cb_program) || dec_cb_sec(x))
		return -EBADMSG;
	return 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The fore channel as the server grants it (nfsd's check_forechannel_attrs) */
static uint32_t negotiate_fore(struct nfs4_compound *c, struct nfs4_chan_attrs *ca)
{
	uint32_t max = nfs4_cfg(c) ? nfs4_cfg(c)->max_record : GW_RECORD_DEFAULT;

	if (ca->maxreq < NFS4_SESSION_REQ_MIN || ca->maxresp < NFS4_SESSION_REQ_MIN)
		return NFS4ERR_TOOSMALL;
	if (ca->maxops < 2)
		return NFS4ERR_TOOSMALL;
	ca->headerpad = 0;
	ca->maxreq = min_u32(ca->maxreq, max);
	ca->maxresp = min_u32(ca->maxresp, max);
	ca->maxresp_cached = min_u32(ca->maxresp_cached, NFS4_REPLY_CACHE_MAX);
	ca->maxops = min_u32(ca->maxops, NFS4_SESSION_OPS_MAX);
	ca->maxreqs = min_u32(ca->maxreqs ? ca->maxreqs : 1, NFS4_SLOTS_MAX);
	return NFS4_OK;
}

/*
 * The back channel as the client offers it (nfsd's check_backchannel_attrs):
 * one through which no callback could ever be sent, too small for an RPC
 * call or its reply, or for CB_SEQUENCE and one more op, is TOOSMALL.
 */
static uint32_t check_back(struct nfs4_chan_attrs *ca)
{
	if (ca->maxreq < NFS4_SESSION_REQ_MIN || ca->maxresp < NFS4_SESSION_REQ_MIN)
		return NFS4ERR_TOOSMALL;
	if (ca->maxops < 2)
		return NFS4ERR_TOOSMALL;
	ca->headerpad = 0;
	ca->maxresp_cached = 0;
	return NFS4_OK;
}

/*
 * How many of the @want slots of @slot_bytes of reply cache each a new
 * session gets out of max_reply_cache (0: none left). State lock held.
 */
static uint32_t reply_cache_slots(struct nfs4_compound *c, uint32_t want, uint32_t slot_bytes)
{
	uint64_t max = nfs4_cfg(c) ? nfs4_cfg(c)->limits.max_reply_cache : GW_REPLY_CACHE_DEFAULT;
	uint64_t used = c->srv->state->reply_cache;
	uint64_t n = used < max ? (max - used) / slot_bytes : 0;

	if (n < want) {
		gw_stat_add(&c->srv->stats.reply_cache_short, 1);
		return (uint32_t)n;
	}
	return want;
}

static void new_sessionid(struct nfs4_state *st, const struct nfs4_client *clp, uint8_t *id)
{
	uint32_t rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint32_t)nfs4_now() * 2654435761u;
	if (++st->next_session == 0)
		st->next_session = 1;
	xdr_put_u32(id, st->boot);
	xdr_put_u32(id + 4, (uint32_t)clp->clientid);
	xdr_put_u32(id + 8, st->next_session);
	xdr_put_u32(id + 12, rnd);
}

static void enc_cs_res(struct xdr_out *out, const struct nfs4_cs_res *r)
{
	xdr_enc_opaque_fixed(out, r->sessionid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(out, r->seqid);
	xdr_enc_u32(out, r->flags);
	enc_chan_attrs(out, &r->fore);
	enc_chan_attrs(out, &r->back);
}

uint32_t nfs4_run_create_session(struct nfs4_compound *c, void *args)
{
	struct create_session_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp, *old;
	struct nfs4_session *ses;
	struct nfs4_cs_res res;
	uint32_t status, slot_bytes, nslots;

	/* a flag no minor version defines is INVAL (as nfsd and EXCHANGE_ID) */
	if (a->flags & ~(uint32_t)CREATE_SESSION4_FLAG_MASK)
		return NFS4ERR_INVAL;
	status = gw_state_admit(&c->who);
	if (status != NFS4_OK)
		return status;
	status = negotiate_fore(c, &a->fore);
	if (status == NFS4_OK)
		status = check_back(&a->back);
	if (status != NFS4_OK)
		return status;
	slot_bytes = a->fore.maxresp_cached > NFS4_REPLY_CACHE_MIN ? a->fore.maxresp_cached
								  : NFS4_REPLY_CACHE_MIN;

	nfs4_state_lock(st);
	clp = (uint32_t)(a->clientid >> 32) == st->boot ? nfs4_client_by_id(st, a->clientid) : NULL;
	if (!clp || clp->expired || clp->minor == 0) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	if (clp->confirmed) {
		switch (nfs4_slot_check(clp->cs_seqid, false, a->seqid)) {
		case NFS4_SEQ_NEW:
			break;
		case NFS4_SEQ_REPLAY:
			if (!clp->cs_cached) {
				status = NFS4ERR_SEQ_MISORDERED;
				goto out;
			}
			res = clp->cs_res;
			goto out_encode;
		default:
			status = NFS4ERR_SEQ_MISORDERED;
			goto out;
		}
	}
	status = gw_state_session_room(&c->who, clp, slot_bytes);
	if (status != NFS4_OK)
		goto out;
	nslots = reply_cache_slots(c, a->fore.maxreqs, slot_bytes);
	if (!nslots) {
		status = NFS4ERR_DELAY;
		goto out;
	}
	if (!clp->confirmed) {
		if (!nfs4_client_same_principal(&c->who, clp)) {
			status = NFS4ERR_CLID_INUSE;
			goto out;
		}
		/* an unconfirmed record has nothing to replay */
		if (nfs4_slot_check(clp->cs_seqid, false, a->seqid) != NFS4_SEQ_NEW) {
			status = NFS4ERR_SEQ_MISORDERED;
			goto out;
		}
		old = nfs4_client_by_name(st, clp->name, clp->name_len, true, clp->minor);
		if (old) {
			if (old->busy) {
				status = NFS4ERR_DELAY;
				goto out;
			}
			nfs4_client_expire(st, old, true);
		}
		clp->confirmed = true;
	}
	ses = calloc(1, sizeof(*ses));
	if (!ses) {
		status = NFS4ERR_DELAY;
		goto out;
	}
	ses->clp = clp;
	ses->refs = 1;
	/*
	 * None of PERSIST, CONN_BACK_CHAN, CONN_RDMA is granted (RFC 8881
	 * §18.36.4 lets the server clear what it does not do; nfsd answers
	 * them cleared too).
	 */
	ses->flags = 0;
	ses->cb_program = a->cb_program;
	ses->fore = a->fore;
	ses->fore.maxreqs = nslots;
	ses->back = a->back;
	ses->nslots = nslots;
	ses->slot_bytes = slot_bytes;
	st->reply_cache += (uint64_t)nslots * slot_bytes;
	new_sessionid(st, clp, ses->id);
	if (c->conn)
		nfs4_session_bind_conn(ses, c->conn->id);
	list_add(&ses->list, &clp->sessions);
	clp->nsessions++;

	clp->cs_seqid = a->seqid;
	memcpy(res.sessionid, ses->id, NFS4_SESSIONID_SIZE);
	res.seqid = a->seqid;
	res.flags = ses->flags;
	res.fore = ses->fore;
	res.back = ses->back;
	clp->cs_res = res;
	clp->cs_cached = true;
	nfs4_client_renew(clp);
out_encode:
	nfs4_state_unlock(st);
	enc_cs_res(c->out, &res);
	return NFS4_OK;
out:
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- SEQUENCE */

struct sequence_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seqid, slotid, highest;
	bool cachethis;
};

int nfs4_dec_sequence(struct xdr_in *x, void *args)
{
	struct sequence_args *a = args;

	if (xdr_dec_opaque_fixed_copy(x, a->sessionid, NFS4_SESSIONID_SIZE) ||
	    xdr_dec_u32(x, &a->seqid) || xdr_dec_u32(x, &a->slotid) ||
	    xdr_dec_u32(x, &a->highest) || xdr_dec_bool(x, &a->cachethis))
		return -EBADMSG;
	return 0;
}

/*
 * Does a reply to this request fit its bound, ca_maxresponsesize (with
 * sa_cachethis ca_maxresponsesize_cached), with SEQUENCE's own result and
 * the opcode and status of each op after it? Else REP_TOO_BIG (_TO_CACHE).
 */
static uint32_t sequence_fits(const struct nfs4_compound *c, const struct nfs4_session *ses,
			      bool cachethis)
{
	size_t max = c->resp_max;

	if (max > ses->fore.maxresp)
		max = ses->fore.maxresp;
	if (cachethis && max > ses->fore.maxresp_cached)
		max = ses->fore.maxresp_cached;
	if (xdr_out_len(c->out) + SEQUENCE4_RES_LEN + 8 * (size_t)(c->nops - 1) > max)
		return cachethis ? NFS4ERR_REP_TOO_BIG_TO_CACHE : NFS4ERR_REP_TOO_BIG;
	return NFS4_OK;
}

uint32_t nfs4_run_sequence(struct nfs4_compound *c, void *args)
{
	struct sequence_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_session *ses;
	struct nfs4_slot *slot;
	uint32_t status = NFS4_OK, nslots;

	nfs4_state_lock(st);
	ses = nfs4_session_find(st, a->sessionid);
	if (!ses) {
		status = NFS4ERR_BADSESSION;
		goto out;
	}
	if (c->nops > ses->fore.maxops) {
		status = NFS4ERR_TOO_MANY_OPS;
		goto out;
	}
	if (c->req_len > ses->fore.maxreq) {
		status = NFS4ERR_REQ_TOO_BIG;
		goto out;
	}
	if (a->slotid >= ses->nslots) {
		status = NFS4ERR_BADSLOT;
		goto out;
	}
	slot = &ses->slots[a->slotid];
	switch (nfs4_slot_check(slot->seqid, slot->inuse, a->seqid)) {
	case NFS4_SEQ_NEW:
		status = sequence_fits(c, ses, a->cachethis);
		if (status != NFS4_OK)
			goto out;
		slot->seqid = a->seqid;
		slot->cached = false;
		break;
	case NFS4_SEQ_REPLAY:
		if (!slot->cached) {
			status = NFS4ERR_RETRY_UNCACHED_REP;
			goto out;
		}
		c->replay = slot->buf;
		c->replay_len = slot->len;
		break;
	case NFS4_SEQ_DELAY:
		status = NFS4ERR_DELAY;
		goto out;
	default:
		status = NFS4ERR_SEQ_MISORDERED;
		goto out;
	}
	/* the slot, the session and the client are held until nfs4_sequence_done() */
	slot->inuse = true;
	ses->refs++;
	ses->clp->busy++;
	nfs4_client_renew(ses->clp);
	if (c->conn)
		nfs4_session_bind_conn(ses, c->conn->id);
	c->who.ses = ses;
	c->slot = slot;
	c->who.clp = ses->clp;
	c->cachethis = a->cachethis;
	if (c->resp_max > ses->fore.maxresp)
		c->resp_max = ses->fore.maxresp;
	/* a reply to be cached must fit the cache the client was granted (as nfsd) */
	if (c->cachethis && c->resp_max > ses->fore.maxresp_cached)
		c->resp_max = ses->fore.maxresp_cached;
	nslots = ses->nslots;
out:
	nfs4_state_unlock(st);
	if (status != NFS4_OK || c->replay)
		return status;
	xdr_enc_opaque_fixed(c->out, a->sessionid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(c->out, a->seqid);
	xdr_enc_u32(c->out, a->slotid);
	xdr_enc_u32(c->out, nslots - 1); /* sr_highest_slotid */
	xdr_enc_u32(c->out, nslots - 1); /* sr_target_highest_slotid */
	xdr_enc_u32(c->out, 0);		 /* sr_status_flags: no callbacks, nothing revoked */
	return NFS4_OK;
}

/* ---------------------------------------------------------------- DESTROY_SESSION */

struct sessionid_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
};

int nfs4_dec_destroy_session(struct xdr_in *x, void *args)
{
	struct sessionid_args *a = args;

	return xdr_dec_opaque_fixed_copy(x, a->sessionid, NFS4_SESSIONID_SIZE);
}

uint32_t nfs4_run_destroy_session(struct nfs4_compound *c, void *args)
{
	struct sessionid_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_session *ses;
	uint32_t status = NFS4_OK;
	unsigned int mine;

	nfs4_state_lock(st);
	ses = nfs4_session_find(st, a->sessionid);
	if (!ses) {
		status = NFS4ERR_BADSESSION;
		goto out;
	}
	mine = c->who.ses == ses;
	/* in its own session it must be the last op (RFC 8881 §18.37.3) */
	if (mine && c->opidx + 1 != c->nops) {
		status = NFS4ERR_NOT_ONLY_OP;
		goto out;
	}
	if (ses->refs > 1 + mine) {
		status = NFS4ERR_DELAY; /* another COMPOUND is using it */
		goto out;
	}
	nfs4_session_kill(st, ses);
out:
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- DESTROY_CLIENTID */

struct clientid_args {
	uint64_t clientid;
};

int nfs4_dec_destroy_clientid(struct xdr_in *x, void *args)
{
	struct clientid_args *a = args;

	return xdr_dec_u64(x, &a->clientid);
}

uint32_t nfs4_run_destroy_clientid(struct nfs4_compound *c, void *args)
{
	struct clientid_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_client *clp;
	uint32_t status = NFS4_OK;

	nfs4_state_lock(st);
	clp = (uint32_t)(a->clientid >> 32) == st->boot ? nfs4_client_by_id(st, a->clientid) : NULL;
	if (!clp || clp->expired || clp->minor == 0) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	if (clp->busy || nfs4_client_has_state(clp)) {
		status = NFS4ERR_CLIENTID_BUSY;
		goto out;
	}
	nfs4_client_expire(st, clp, true);
out:
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- BIND_CONN_TO_SESSION */

struct bind_conn_args {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t dir;
	bool rdma;
};

int nfs4_dec_bind_conn_to_session(struct xdr_in *x, void *args)
{
	struct bind_conn_args *a = args;

	if (xdr_dec_opaque_fixed_copy(x, a->sessionid, NFS4_SESSIONID_SIZE) ||
	    xdr_dec_u32(x, &a->dir) || xdr_dec_bool(x, &a->rdma))
		return -EBADMSG;
	return 0;
}

uint32_t nfs4_run_bind_conn_to_session(struct nfs4_compound *c, void *args)
{
	struct bind_conn_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_session *ses;
	uint32_t dir;

	switch (a->dir) {
	case CDFC4_FORE:
	case CDFC4_FORE_OR_BOTH:
		dir = CDFS4_FORE; /* no callbacks: the back channel is never used */
		break;
	case CDFC4_BACK:
		dir = CDFS4_BACK;
		break;
	case CDFC4_BACK_OR_BOTH:
		dir = CDFS4_BOTH;
		break;
	default:
		return NFS4ERR_INVAL;
	}
	nfs4_state_lock(st);
	ses = nfs4_session_find(st, a->sessionid);
	if (ses && c->conn)
		nfs4_session_bind_conn(ses, c->conn->id);
	nfs4_state_unlock(st);
	if (!ses)
		return NFS4ERR_BADSESSION;
	xdr_enc_opaque_fixed(c->out, a->sessionid, NFS4_SESSIONID_SIZE);
	xdr_enc_u32(c->out, dir);
	xdr_enc_bool(c->out, false);
	return NFS4_OK;
}

/* ---------------------------------------------------------------- RECLAIM_COMPLETE */

struct reclaim_complete_args {
	bool one_fs;
};

int nfs4_dec_reclaim_complete(struct xdr_in *x, void *args)
{
	struct reclaim_complete_args *a = args;

	return xdr_dec_bool(x, &a->one_fs);
}

uint32_t nfs4_run_reclaim_complete(struct nfs4_compound *c, void *args)
{
	struct reclaim_complete_args *a = args;
	struct nfs4_state *st = c->srv->state;
	uint32_t status = NFS4_OK;

	if (!c->who.clp)
		return NFS4ERR_OP_NOT_IN_SESSION;
	if (a->one_fs) {
		/* per file system reclaim: nothing is reclaimed here (as nfsd) */
		return c->cfh ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
	}
	nfs4_state_lock(st);
	if (c->who.clp->reclaim_done)
		status = NFS4ERR_COMPLETE_ALREADY;
	c->who.clp->reclaim_done = true;
	if (status == NFS4_OK)
		nfs4_recov_reclaim_complete(st->recov, c->who.clp);
	nfs4_state_unlock(st);
	return status;
}

/* ---------------------------------------------------------------- TEST_STATEID */

struct test_stateid_args {
	struct xdr_in sids; /* the stateids, decoded again by the handler */
	uint32_t n;
};

int nfs4_dec_test_stateid(struct xdr_in *x, void *args)
{
	struct test_stateid_args *a = args;

	if (xdr_dec_count(x, &a->n, NFS4_TEST_STATEID_MAX, 16))
		return -EBADMSG;
	xdr_in_init(&a->sids, xdr_in_ptr(x), (size_t)a->n * 16);
	return xdr_dec_skip(x, (size_t)a->n * 16);
}

uint32_t nfs4_run_test_stateid(struct nfs4_compound *c, void *args)
{
	struct test_stateid_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stateid sid;
	struct nfs4_stid *s;
	uint32_t i;

	if (4 + 4 * (size_t)a->n > nfs4_reply_room(c))
		return NFS4ERR_REP_TOO_BIG;
	xdr_enc_u32(c->out, a->n);
	nfs4_state_lock(st);
	for (i = 0; i < a->n; i++) {
		if (nfs4_dec_stateid(&a->sids, &sid))
			break;
		xdr_enc_u32(c->out,
			    nfs4_stid_lookup(&c->who, &sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK, &s));
	}
	nfs4_state_unlock(st);
	return NFS4_OK;
}

/* ---------------------------------------------------------------- FREE_STATEID */

struct free_stateid_args {
	struct nfs4_stateid sid;
};

int nfs4_dec_free_stateid(struct xdr_in *x, void *args)
{
	struct free_stateid_args *a = args;

	return nfs4_dec_stateid(x, &a->sid);
}

uint32_t nfs4_run_free_stateid(struct nfs4_compound *c, void *args)
{
	struct free_stateid_args *a = args;
	struct nfs4_state *st = c->srv->state;
	struct nfs4_stid *s;
	uint32_t status;

	status = nfs4_resolve_current_sid(c, &a->sid);
	if (status != NFS4_OK)
		return status;
	nfs4_state_lock(st);
	status = nfs4_stid_lookup(&c->who, &a->sid, NFS4_FIND_OPEN | NFS4_FIND_LOCK, &s);
	if (status != NFS4_OK)
		goto out;
	/* an open stateid goes with CLOSE; a lock stateid once it holds no lock */
	if (s->type == NFS4_STID_OPEN || nfs4_lset_held(&s->file->locks, s)) {
		status = NFS4ERR_LOCKS_HELD;
		goto out;
	}
	nfs4_stid_free(st, s);
out:
	nfs4_state_unlock(st);
	return status;
}
