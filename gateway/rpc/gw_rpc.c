// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RPC processing of one call record, whatever transport it came on:
 * classify it (common/rpc.c decides every RPC-level error), answer NULL,
 * and run COMPOUND through the NFSv4 engine. The reply is built in place
 * in req->reply, record mark first on a stream.
 *
 * A reply that cannot be built (the pool is exhausted) is replaced by
 * SYSTEM_ERR; if even that fails nothing is sent and the client
 * retransmits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gw_drc.h"
#include "gw_rpc.h"
#include "log.h"
#include "nfs4_compound.h"
#include "trace.h"

static const struct rpc_program gw_programs[] = {
	{
		.prog = NFS4_PROGRAM,
		.vers_low = NFS4_VERSION,
		.vers_high = NFS4_VERSION,
		.nprocs = 2,
		.flavors = RPC_FLAVOR_BIT(RPC_AUTH_NONE) | RPC_FLAVOR_BIT(RPC_AUTH_SYS),
	},
};

static void cred_of_call(const struct rpc_call *call, struct gw_cred *cred)
{
	memset(cred, 0, sizeof(*cred));
	if (call->cred_flavor == RPC_AUTH_SYS) {
		cred->uid = call->sys.uid;
		cred->gid = call->sys.gid;
		cred->ngroups = call->sys.ngids;
		memcpy(cred->groups, call->sys.gids, call->sys.ngids * sizeof(uint32_t));
	} else {
		cred->uid = GW_ANON_ID;
		cred->gid = GW_ANON_ID;
	}
}

/* An NFSv4.0 COMPOUND (by its minorversion, after the tag)? */
static bool minor0(const struct rpc_call *call)
{
	struct xdr_in x = call->args;
	const uint8_t *tag;
	uint32_t taglen, minor;

	return !xdr_dec_opaque(&x, &tag, &taglen, NFS4_TAG_MAX) && !xdr_dec_u32(&x, &minor) &&
	       minor == 0;
}

/* How many replies the 4.0 duplicate request cache may keep for @req (0: none) */
static unsigned int drc_entries(const struct gw_srv *s, const struct gw_req *req,
				const struct rpc_call *call)
{
	unsigned int n = s->drc ? gw_drc_entries(s->drc) : 0;

	return n && req->stream && req->conn && minor0(call) ? n : 0;
}

static int run_compound(struct gw_srv *s, struct gw_req *req, struct rpc_call *call,
			uint32_t *status)
{
	unsigned int drc = drc_entries(s, req, call);
	size_t off = xdr_out_len(&req->reply);
	struct nfs4_compound c;
	struct gw_drc_key k;
	int err;

	*status = NFS4_OK; /* a reply from the duplicate request cache says OK */
	if (drc) {
		memset(&k, 0, sizeof(k));
		k.xid = call->xid;
		k.prog = call->prog;
		k.vers = call->vers;
		k.proc = call->proc;
		k.peer = req->conn->peer;
		k.peer_len = req->conn->peer_len;
		err = gw_drc_lookup(s->drc, &k, req->rec, req->len, &req->reply);
		if (err < 0)
			return err;
		if (err == 1) {
			/* a retransmission: the first reply, the call not run again */
			gw_stat_add(&s->stats.drc_hits, 1);
			return 0;
		}
	}

	memset(&c, 0, sizeof(c));
	c.srv = s;
	c.conn = req->conn;
	c.call = call;
	c.out = &req->reply;
	c.resp_max = req->reply_max;
	c.req_len = req->len;
	c.flavor = call->cred_flavor;
	cred_of_call(call, &c.wire_cred);
	c.cred = c.wire_cred;

	err = rpc_enc_accepted(&req->reply, call->xid, RPC_SUCCESS);
	if (err)
		return err;
	gw_stat_add(&s->stats.compounds, 1);
	err = nfs4_compound_run(&c, &call->args);
	if (!err && drc && c.drc && !req->reply.err)
		gw_drc_insert(s->drc, &k, req->rec, req->len, &req->reply, off, drc);
	*status = c.status;
	return err;
}

/*
 * The reply to req->rec in req->reply; what the call was (*xid, *proc
 * and the COMPOUND's *status) for the rpc__reply tracepoint.
 */
static int build_reply(struct gw_srv *s, struct gw_req *req, struct xdr_mark *rm, uint32_t *xid,
		       uint32_t *proc, uint32_t *status)
{
	struct rpc_call call;
	int err = 0;

	if (req->stream) {
		err = rpc_rm_begin(&req->reply, rm);
		if (err)
			return err;
	}
	switch (rpc_classify(req->rec, req->len, gw_programs, 1, &call)) {
	case RPC_V_DROP:
	case RPC_V_REPLY: /* no backchannel calls are made, so no reply is expected */
		xdr_out_release(&req->reply);
		return -ENOMSG;
	case RPC_V_REJECT:
		gw_stat_add(&s->stats.rpc_rejected, 1);
		err = rpc_enc_reject(&req->reply, &call);
		break;
	case RPC_V_DISPATCH:
		*xid = call.xid;
		*proc = call.proc;
		if (call.proc == NFS4_PROC_NULL) {
			LTRACE(lacunad, rpc__call, call.xid, call.prog, call.vers, call.proc, 0, 0);
			gw_stat_add(&s->stats.rpc_null, 1);
			err = rpc_enc_accepted(&req->reply, call.xid, RPC_SUCCESS);
			break;
		}
		err = run_compound(s, req, &call, status);
		if (err == -EBADMSG) {
			/* the COMPOUND header itself is not XDR: start over with GARBAGE_ARGS */
			gw_stat_add(&s->stats.rpc_garbage, 1);
			xdr_out_release(&req->reply);
			if (req->stream && (err = rpc_rm_begin(&req->reply, rm)))
				return err;
			err = rpc_enc_accepted(&req->reply, call.xid, RPC_GARBAGE_ARGS);
		}
		break;
	}
	if (!err && req->reply.err)
		err = req->reply.err;
	if (err) {
		log_debug("rpc: reply to xid %#x could not be built: %s", call.xid, strerror(-err));
		xdr_out_release(&req->reply);
		if (req->stream && rpc_rm_begin(&req->reply, rm))
			return err;
		if (rpc_enc_accepted(&req->reply, call.xid, RPC_SYSTEM_ERR) || req->reply.err)
			return err;
	}
	return 0;
}

void gw_rpc_process(struct gw_srv *s, struct gw_req *req)
{
	uint32_t xid = 0, proc = 0, status = 0;
	uint64_t t0 = mx_now_ns(), ns;
	struct xdr_mark rm;

	xdr_out_init(&req->reply, req->carver, req->reply_max);
	if (build_reply(s, req, &rm, &xid, &proc, &status)) {
		xdr_out_release(&req->reply);
		return;
	}
	if (req->stream && rpc_rm_end(&req->reply, &rm)) {
		xdr_out_release(&req->reply);
		return;
	}
	ns = mx_now_ns() - t0;
	mx_hist_add(&s->stats.rpc_lat, ns);
	LTRACE(lacunad, rpc__reply, xid, proc, status, ns, xdr_out_len(&req->reply));
}
