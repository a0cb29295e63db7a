// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The COMPOUND engine: how one COMPOUND is decoded, checked op by op and
 * answered is described in nfs4_compound.h.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "netaddr.h"
#include "log.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"
#include "trace.h"

/* Is a 4.0 COMPOUND holding @opnum worth keeping in the reply cache (it changes something)? */
static bool drc_op(uint32_t opnum)
{
	switch (opnum) {
	case OP_CLOSE:
	case OP_CREATE:
	case OP_DELEGRETURN:
	case OP_LINK:
	case OP_LOCK:
	case OP_LOCKU:
	case OP_OPEN:
	case OP_OPEN_CONFIRM:
	case OP_OPEN_DOWNGRADE:
	case OP_REMOVE:
	case OP_RENAME:
	case OP_SETATTR:
	case OP_SETCLIENTID:
	case OP_SETCLIENTID_CONFIRM:
	case OP_RELEASE_LOCKOWNER:
		return true;
	}
	return false;
}

/* the highest opcode of each minor version: anything above is OP_ILLEGAL */
static const uint32_t minor_last_op[NFS4_MINOR_MAX + 1] = {
	OP_RELEASE_LOCKOWNER,
	OP_RECLAIM_COMPLETE,
	NFS4_OP_LAST,
};

size_t nfs4_reply_room(const struct nfs4_compound *c)
{
	/* every op after this one needs at least its opcode and status */
	size_t after = c->opidx < c->nops ? c->nops - c->opidx - 1 : 0;
	size_t len;

	if (after > NFS4_OPS_MAX)
		after = NFS4_OPS_MAX; /* more are refused (TOO_MANY_OPS, RESOURCE) */
	len = xdr_out_len(c->out) + 8 * after;

	return c->resp_max > len ? c->resp_max - len : 0;
}

void nfs4_set_caller(struct nfs4_compound *c)
{
	c->who.srv = c->srv;
	c->who.cfg = nfs4_cfg(c);
	c->who.peer = c->conn ? &c->conn->peer : NULL;
	c->who.conn_id = c->conn ? c->conn->id : 0;
	c->who.minor = c->minor;
	c->who.flavor = c->flavor;
	c->who.wire_cred = &c->wire_cred;
	c->who.cred = &c->cred;
}

void nfs4_sequence_done(struct nfs4_compound *c, size_t res_off, uint32_t status)
{
	(void)status;
	nfs4_slot_done(&c->who, c->slot, c->replay ? NULL : c->out, res_off);
	c->slot = NULL;
	c->replay = NULL;
	c->replay_len = 0;
}

void nfs4_seqid_done(struct nfs4_compound *c, struct nfs4_owner *oo, uint32_t seqid,
		     uint32_t status, const struct xdr_pos *from, const struct gw_fh *fh)
{
	const struct nfs4_seqid_op op = {
		.seqid = seqid,
		.opnum = c->opnum,
		.status = status,
		.keep_body = c->keep_body,
		.out = c->out,
		.from = from->len,
		.fh = fh,
	};

	nfs4_owner_seqid_done(&c->who, oo, &op);
}

uint32_t nfs4_seqid_replay(struct nfs4_compound *c, const struct nfs4_owner *oo, struct gw_fh *fh,
			   bool *has_fh)
{
	const struct nfs4_replay *rp = &oo->replay;

	*has_fh = false;
	if (!rp->valid)
		return NFS4ERR_BAD_SEQID;
	if (rp->len)
		xdr_out_write(c->out, rp->buf, rp->len);
	c->keep_body = rp->keep_body;
	if (rp->has_fh) {
		*fh = rp->fh;
		*has_fh = true;
	}
	return rp->status;
}

uint32_t nfs4_io_fd(struct nfs4_compound *c, const struct nfs4_stateid *sid_in, struct gw_obj *o,
		    bool write, int *fd, bool *fd_owned)
{
	struct nfs4_stateid sid = *sid_in;
	uint32_t status;

	*fd = -1;
	*fd_owned = false;
	status = nfs4_resolve_current_sid(c, &sid);
	if (status != NFS4_OK)
		return status;
	return nfs4_state_io_fd(&c->who, &sid, o, write, fd, fd_owned);
}

void nfs4_set_cfh(struct nfs4_compound *c, struct gw_obj *o)
{
	if (c->cfh)
		gw_obj_put(c->cfh);
	c->cfh = o;
	c->rule = NULL;
}

static bool flavor_allowed(const struct gw_client *rule, uint32_t flavor)
{
	unsigned int i;

	for (i = 0; i < rule->opts.nsec; i++)
		if ((uint32_t)rule->opts.sec[i] == flavor)
			return true;
	return false;
}

/*
 * exports(5)'s secure, as Linux nfsd's nfsd_originating_port_ok(): a
 * secure rule takes AUTH_SYS and AUTH_NONE only from a reserved port,
 * where a client host's root, not any of its users, speaks (the uid
 * AUTH_SYS claims is only as good as that). RPCSEC_GSS proves who calls
 * whatever the port (lacunad takes no GSS yet: this is where it would
 * pass). RPC-over-RDMA connections count as reserved, as nfsd's
 * svc_rdma_recvfrom() marks every RDMA request RQ_SECURE: they come
 * through an RDMA device the client host's kernel controls, and its
 * connection manager's ports are no socket ports an unprivileged user
 * picks (docs/lacunad.conf.5.md).
 */
static bool port_ok(const struct nfs4_compound *c, const struct gw_client *rule)
{
	return !rule->opts.secure || c->flavor == RPC_AUTH_GSS || c->conn->resvport;
}

#define PORT_LOG_SEC 60

/* Count a call refused for its source port, and say so at most once a minute. */
static uint32_t port_refused(const struct nfs4_compound *c, const char *where)
{
	static _Atomic long logged;
	long now = (long)time(NULL);
	long last = atomic_load(&logged);
	char a[64];

	gw_stat_add(&c->srv->stats.insecure_port_refused, 1);
	if (now - last >= PORT_LOG_SEC && atomic_compare_exchange_strong(&logged, &last, now))
		log_warn("nfs4: request from insecure port %s refused (NFS4ERR_PERM): %s is "
			 "'secure' for it; the client should use a port below 1024, or the "
			 "export's options 'insecure' (logged once a minute)",
			 net_addr_str(&c->conn->peer, a, sizeof(a)), where);
	return NFS4ERR_PERM;
}

/* The connection's transport security; a transport that set none is plain. */
static uint8_t conn_xprtsec(const struct nfs4_compound *c)
{
	return c->conn->xprtsec ? c->conn->xprtsec : GW_XPRTSEC_NONE;
}

/*
 * exports(5)'s xprtsec=, as Linux nfsd's check_xprtsec_policy() (called
 * by check_nfsd_access()): a plain connection is admitted where "none" is
 * listed, a TLS session whose client presented no certificate where
 * "tls" is, one whose client certificate verified against tls_ca where
 * "mtls" is. "tls" alone thus refuses a client that authenticated:
 * "tls:mtls" takes both.
 */
static bool xprtsec_ok(const struct nfs4_compound *c, const struct gw_client *rule)
{
	return (gw_client_xprtsec(c->snap->cfg, rule) & conn_xprtsec(c)) != 0;
}

#define XPRTSEC_LOG_SEC 60

/*
 * Count a call refused for its transport, NFS4ERR_WRONGSEC as nfsd
 * answers NFSv4 (v3 would be NFS3ERR_ACCES), and say so at most once a
 * minute.
 */
static uint32_t xprtsec_refused(const struct nfs4_compound *c, const char *where, uint8_t admits)
{
	static _Atomic long logged;
	long now = (long)time(NULL);
	long last = atomic_load(&logged);
	uint8_t mode = conn_xprtsec(c);
	char a[64], set[GW_XPRTSEC_STR_MAX];

	gw_stat_add(&c->srv->stats.xprtsec_refused, 1);
	if (now - last >= XPRTSEC_LOG_SEC && atomic_compare_exchange_strong(&logged, &last, now))
		log_warn("nfs4: request from %s over %s%s%s%s refused (NFS4ERR_WRONGSEC): %s "
			 "admits it over %s only (xprtsec=; logged once a minute)",
			 net_addr_str(&c->conn->peer, a, sizeof(a)),
			 mode == GW_XPRTSEC_NONE ? "plain TCP" : gw_xprtsec_name(mode),
			 c->conn->tls_peer[0] ? " as '" : "", c->conn->tls_peer,
			 c->conn->tls_peer[0] ? "'" : "", where, gw_xprtsec_format(admits, set));
	return NFS4ERR_WRONGSEC;
}

/*
 * A pseudo directory is open from a port, and over a transport, when
 * some export admitting the client there is: a client only secure rules
 * admit sees none of the namespace from an unreserved port, nor a client
 * only tls exports admit over plain TCP. @port: check the port; @xprt:
 * check the transport.
 */
static uint32_t check_pseudo(const struct nfs4_compound *c, bool port, bool xprt)
{
	const struct sockaddr *peer = (const struct sockaddr *)&c->conn->peer;
	const struct gw_client *rule;
	bool admitted = false, port_passed = false;
	uint8_t admits = 0;
	size_t i;

	for (i = 0; i < c->snap->cfg->nexports; i++) {
		rule = gw_export_conf_match(&c->snap->cfg->exports[i], peer);
		if (!rule)
			continue;
		admitted = true;
		if (port && !port_ok(c, rule))
			continue;
		port_passed = true;
		if (!xprt || xprtsec_ok(c, rule))
			return NFS4_OK;
		admits |= gw_client_xprtsec(c->snap->cfg, rule);
	}
	if (!admitted)
		return NFS4ERR_ACCESS;
	if (!port_passed)
		return port_refused(c, "every export admitting it");
	return xprtsec_refused(c, "every export admitting it", admits);
}

uint32_t nfs4_check_port(struct nfs4_compound *c, const struct gw_obj *o)
{
	const struct gw_export_conf *exp;
	const struct gw_client *rule;
	uint32_t st;

	if (c->conn->resvport)
		return NFS4_OK;
	if (gw_obj_is_pseudo(o)) {
		st = check_pseudo(c, true, false);
		return st == NFS4ERR_ACCESS ? NFS4_OK : st;
	}
	exp = gw_export_conf_of(c->snap, o->xp);
	if (!exp)
		return NFS4_OK;
	rule = gw_export_conf_match(exp, (const struct sockaddr *)&c->conn->peer);
	if (!rule || port_ok(c, rule))
		return NFS4_OK;
	return port_refused(c, exp->path);
}

/*
 * Which export rule admits this client to @o, and with what identity.
 * Pseudo directories are open to every client some export admits; their
 * identity is "nobody" (nothing is done on a filesystem there).
 */
uint32_t nfs4_check_export(struct nfs4_compound *c, struct gw_obj *o)
{
	const struct sockaddr *peer = (const struct sockaddr *)&c->conn->peer;
	const struct gw_export_conf *exp;
	const struct gw_client *rule;
	/* SECINFO answers the flavors whatever the transport, as nfsd's does */
	bool secinfo = c->opnum == OP_SECINFO || c->opnum == OP_SECINFO_NO_NAME;
	uint32_t st;

	if (gw_obj_is_pseudo(o)) {
		st = check_pseudo(c, !c->conn->resvport, !secinfo);
		if (st != NFS4_OK)
			return st;
		c->rule = NULL;
		return NFS4_OK;
	}
	exp = gw_export_conf_of(c->snap, o->xp);
	if (!exp)
		return NFS4ERR_STALE; /* the export was removed by a reload */
	rule = gw_export_conf_match(exp, peer);
	if (!rule)
		return NFS4ERR_ACCESS;
	if (!port_ok(c, rule))
		return port_refused(c, exp->path);
	if (!secinfo && !xprtsec_ok(c, rule))
		return xprtsec_refused(c, exp->path, gw_client_xprtsec(c->snap->cfg, rule));
	if (!secinfo && !flavor_allowed(rule, c->flavor))
		return NFS4ERR_WRONGSEC;
	c->cred = c->wire_cred;
	gw_client_squash(rule, &c->cred);
	c->rule = rule;
	if (gw_cred_enter(&c->cred))
		return NFS4ERR_SERVERFAULT;
	return NFS4_OK;
}

/* Checks of an op's flags before it runs. */
static uint32_t op_precheck(struct nfs4_compound *c, const struct nfs4_op_desc *d)
{
	uint32_t st;

	if (c->minor >= 1) {
		if (c->opnum == OP_SEQUENCE && c->opidx > 0)
			return NFS4ERR_SEQUENCE_POS;
		if (c->opidx == 0 && c->opnum != OP_SEQUENCE) {
			if (!(d->flags & OPF_NOSESSION))
				return NFS4ERR_OP_NOT_IN_SESSION;
			if ((d->flags & OPF_SOLO) && c->nops > 1)
				return NFS4ERR_NOT_ONLY_OP;
		}
		if (c->opidx > 0 && !c->slot && !(d->flags & OPF_NOSESSION))
			return NFS4ERR_OP_NOT_IN_SESSION;
	}
	if (!(d->flags & OPF_CFH))
		return NFS4_OK;
	if (!c->cfh)
		return NFS4ERR_NOFILEHANDLE;
	if (!c->rule || (d->flags & OPF_MODIFIES) || c->opnum == OP_SECINFO ||
	    c->opnum == OP_SECINFO_NO_NAME) {
		st = nfs4_check_export(c, c->cfh);
		if (st != NFS4_OK)
			return st;
	}
	if (gw_obj_is_pseudo(c->cfh) && !(d->flags & OPF_PSEUDO_OK))
		return (d->flags & OPF_MODIFIES) ? NFS4ERR_ROFS : NFS4ERR_ISDIR;
	if ((d->flags & OPF_MODIFIES) && c->rule && !c->rule->opts.rw)
		return NFS4ERR_ROFS;
	return NFS4_OK;
}

static uint32_t run_op(struct nfs4_compound *c, struct xdr_in *args, const struct nfs4_op_desc *d)
{
	uint64_t argbuf[NFS4_ARGS_MAX / sizeof(uint64_t)];
	uint32_t st;

	memset(argbuf, 0, sizeof(argbuf));
	if (d->dec && d->dec(args, argbuf))
		return NFS4ERR_BADXDR;
	st = op_precheck(c, d);
	if (st != NFS4_OK)
		return st;
	if (d->reply_max > nfs4_reply_room(c))
		return nfs4_enc_status(c, -EMSGSIZE);
	return d->run(c, argbuf);
}

static void count_op(struct nfs4_compound *c, uint32_t opnum, uint32_t st, uint64_t ns)
{
	struct gw_stats *gs = &c->srv->stats;

	LTRACE(lacunad, op__done, c->call->xid, opnum, st, ns);
	if (opnum > NFS4_OP_LAST)
		return;
	gw_stat_add(&gs->ops[opnum], 1);
	gw_stat_add(&gs->op_status[opnum][gw_status_slot(st)], 1);
	mx_hist_add(&gs->op_lat[opnum], ns);
	if (st != NFS4_OK)
		gw_stat_add(&gs->op_errors[opnum], 1);
}

/* Answer with the slot's cached reply: everything after the RPC header. */
static void send_replay(struct nfs4_compound *c, const struct xdr_pos *start)
{
	xdr_out_truncate(c->out, start);
	xdr_out_write(c->out, c->replay, c->replay_len);
}

static void finish(struct nfs4_compound *c)
{
	if (c->cfh)
		gw_obj_put(c->cfh);
	if (c->sfh)
		gw_obj_put(c->sfh);
	c->cfh = c->sfh = NULL;
	/* the caller's identity stays in force: the next COMPOUND is likely the same caller's */
}

int nfs4_compound_run(struct nfs4_compound *c, struct xdr_in *args)
{
	const uint8_t *tag;
	uint32_t taglen, n = 0, status = NFS4_OK;
	struct xdr_mark m_status, m_count;
	struct xdr_pos start, body;
	size_t res_off;
	int err;

	if (xdr_dec_opaque(args, &tag, &taglen, NFS4_TAG_MAX) || xdr_dec_u32(args, &c->minor) ||
	    xdr_dec_u32(args, &c->nops))
		return -EBADMSG;
	LTRACE(lacunad, rpc__call, c->call->xid, c->call->prog, c->call->vers, c->call->proc,
	       c->minor, c->nops);

	xdr_out_getpos(c->out, &start);
	res_off = xdr_out_len(c->out);
	xdr_out_reserve(c->out, &m_status);
	xdr_enc_opaque(c->out, tag, taglen, NFS4_TAG_MAX);
	xdr_out_reserve(c->out, &m_count);
	if (c->out->err)
		return c->out->err;

	c->snap = gw_snap_get(c->srv);
	if (c->minor > NFS4_MINOR_MAX) {
		status = NFS4ERR_MINOR_VERS_MISMATCH;
		goto out;
	}
	if (c->minor == 0 && c->nops > NFS4_OPS_MAX) {
		status = NFS4ERR_RESOURCE;
		goto out;
	}
	nfs4_set_caller(c);
	for (c->opidx = 0; c->opidx < c->nops; c->opidx++) {
		const struct nfs4_op_desc *d;
		struct xdr_mark m_opstat;
		uint32_t opnum;
		uint64_t t0;

		if (xdr_dec_u32(args, &opnum)) {
			/* fewer ops than announced: the rest of the COMPOUND is not XDR */
			status = NFS4ERR_BADXDR;
			xdr_enc_u32(c->out, OP_ILLEGAL);
			xdr_enc_u32(c->out, status);
			n++;
			break;
		}
		if (opnum < OP_ACCESS || opnum > minor_last_op[c->minor]) {
			status = NFS4ERR_OP_ILLEGAL;
			xdr_enc_u32(c->out, OP_ILLEGAL);
			xdr_enc_u32(c->out, status);
			n++;
			break;
		}
		d = &nfs4_ops[opnum];
		c->opnum = opnum;
		if (c->minor == 0 && drc_op(opnum))
			c->drc = true;
		c->keep_body = false;
		xdr_enc_u32(c->out, opnum);
		xdr_out_reserve(c->out, &m_opstat);
		xdr_out_getpos(c->out, &body);
		if (c->out->err)
			break;
		n++;
		t0 = mx_now_ns();
		if (c->minor > d->minor_max || c->minor < d->minor_min)
			status = NFS4ERR_NOTSUPP;
		else
			status = run_op(c, args, d);
		count_op(c, opnum, status, mx_now_ns() - t0);
		if (c->replay) {
			send_replay(c, &start);
			goto out_replayed;
		}
		if (c->out->err) {
			/* the results could not be encoded: roll them back and say why */
			status = nfs4_enc_status(c, c->out->err);
			xdr_out_truncate(c->out, &body);
		} else if (status != NFS4_OK && !c->keep_body) {
			xdr_out_truncate(c->out, &body);
		}
		/* SETATTR4res carries attrsset whatever the status: an empty one */
		if (opnum == OP_SETATTR && status != NFS4_OK && !c->keep_body)
			xdr_enc_u32(c->out, 0);
		xdr_out_fill(&m_opstat, status);
		if (status != NFS4_OK) {
			log_debug("compound: %s: %s", d->name, nfs4_status_name(status));
			break;
		}
	}
out:
	c->status = status;
	xdr_out_fill(&m_status, status);
	xdr_out_fill(&m_count, n);
out_replayed:
	if (c->slot)
		nfs4_sequence_done(c, res_off, status);
	finish(c);
	gw_snap_put(c->snap);
	c->snap = NULL;
	err = c->out->err;
	return err;
}
