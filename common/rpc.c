// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ONC RPC: the record-marking reassembler, call classification and
 * reply header encoding. How they operate, and the order in which a call
 * is checked, are described in rpc.h.
 */
#include <errno.h>
#include <string.h>

#include "rpc.h"

/* ------------------------------------------------------------ record marking */

void rpc_rec_init(struct rpc_rec *r, void *buf, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->max = max;
}

void rpc_rec_next(struct rpc_rec *r, void *buf, size_t max)
{
	if (buf) {
		r->buf = buf;
		r->max = max;
	}
	r->len = 0;
	r->frag_left = 0;
	r->nfrags = 0;
	r->mark_got = 0;
	r->last = false;
	r->ready = false;
}

/* The end of a fragment: the record is whole, or the next mark follows. */
static void rpc_rec_frag_end(struct rpc_rec *r)
{
	if (r->last)
		r->ready = true;
	else
		r->mark_got = 0;
}

/* A whole mark has arrived: check it and open the fragment's body. */
static int rpc_rec_mark(struct rpc_rec *r)
{
	uint32_t m = xdr_get_u32(r->mark);
	uint32_t flen = m & RPC_REC_FRAG_LEN_MAX;

	if (++r->nfrags > RPC_REC_FRAGS_MAX)
		return r->err = -EPROTO;
	if (flen > r->max - r->len)
		return r->err = -EMSGSIZE;
	r->last = (m & RPC_REC_LAST) != 0;
	r->frag_left = flen;
	if (!flen)
		rpc_rec_frag_end(r);
	return 0;
}

static void rpc_rec_body(struct rpc_rec *r, size_t n)
{
	r->len += n;
	r->frag_left -= (uint32_t)n;
	if (!r->frag_left)
		rpc_rec_frag_end(r);
}

ssize_t rpc_rec_feed(struct rpc_rec *r, const void *data, size_t len)
{
	const uint8_t *d = data;
	size_t done = 0, n;

	if (r->err)
		return r->err;
	while (done < len && !r->ready) {
		if (r->mark_got < sizeof(r->mark)) {
			r->mark[r->mark_got++] = d[done++];
			if (r->mark_got == sizeof(r->mark) && rpc_rec_mark(r))
				return r->err;
			continue;
		}
		n = len - done < r->frag_left ? len - done : r->frag_left;
		memcpy(r->buf + r->len, d + done, n);
		done += n;
		rpc_rec_body(r, n);
	}
	return (ssize_t)done;
}

size_t rpc_rec_space(struct rpc_rec *r, void **p)
{
	*p = NULL;
	if (r->err || r->ready)
		return 0;
	if (r->mark_got < sizeof(r->mark)) {
		*p = r->mark + r->mark_got;
		return sizeof(r->mark) - r->mark_got;
	}
	*p = r->buf + r->len;
	return r->frag_left;
}

int rpc_rec_commit(struct rpc_rec *r, size_t n)
{
	void *p;

	if (r->err)
		return r->err;
	if (n == 0)
		return 0;
	if (n > rpc_rec_space(r, &p))
		return -EINVAL;
	if (r->mark_got < sizeof(r->mark)) {
		r->mark_got += (uint8_t)n;
		return r->mark_got == sizeof(r->mark) ? rpc_rec_mark(r) : 0;
	}
	rpc_rec_body(r, n);
	return 0;
}

/* ------------------------------------------------------------ classification */

static enum rpc_verdict rpc_reject(struct rpc_call *call, uint32_t reply_stat, uint32_t stat)
{
	call->err.reply_stat = reply_stat;
	call->err.stat = stat;
	return RPC_V_REJECT;
}

static enum rpc_verdict rpc_garbage(struct rpc_call *call)
{
	return rpc_reject(call, RPC_MSG_ACCEPTED, RPC_GARBAGE_ARGS);
}

static enum rpc_verdict rpc_auth_err(struct rpc_call *call, uint32_t auth_stat)
{
	call->err.auth_stat = auth_stat;
	return rpc_reject(call, RPC_MSG_DENIED, RPC_AUTH_ERROR);
}

/* An authsys_parms filling its body exactly. */
static int rpc_dec_auth_sys(struct xdr_in *x, struct rpc_auth_sys *sys)
{
	if (xdr_dec_u32(x, &sys->stamp) ||
	    xdr_dec_string(x, &sys->machinename, &sys->machinename_len, RPC_AUTH_MACHINENAME_MAX) ||
	    xdr_dec_u32(x, &sys->uid) || xdr_dec_u32(x, &sys->gid) ||
	    xdr_dec_u32_array(x, sys->gids, &sys->ngids, RPC_AUTH_SYS_GIDS_MAX) || xdr_in_left(x))
		return -EBADMSG;
	return 0;
}

/* 0, or the verdict to return (credential then verifier). */
static int rpc_dec_auth(struct xdr_in *x, struct rpc_call *call)
{
	struct xdr_in body;
	uint32_t len;

	if (xdr_dec_u32(x, &call->cred_flavor) || xdr_dec_u32(x, &len))
		return rpc_garbage(call);
	if (len > RPC_AUTH_BODY_MAX)
		return rpc_auth_err(call, RPC_AUTH_BADCRED);
	if (xdr_dec_sub(x, len, &body))
		return rpc_garbage(call);
	switch (call->cred_flavor) {
	case RPC_AUTH_NONE:
		if (len)
			return rpc_auth_err(call, RPC_AUTH_BADCRED);
		break;
	case RPC_AUTH_SYS:
		if (rpc_dec_auth_sys(&body, &call->sys))
			return rpc_auth_err(call, RPC_AUTH_BADCRED);
		break;
	case RPC_AUTH_SHORT:
		return rpc_auth_err(call, RPC_AUTH_REJECTEDCRED);
	default:
		return rpc_auth_err(call, RPC_AUTH_BADCRED);
	}

	if (xdr_dec_u32(x, &call->verf_flavor) || xdr_dec_u32(x, &len))
		return rpc_garbage(call);
	if (len > RPC_AUTH_BODY_MAX)
		return rpc_auth_err(call, RPC_AUTH_BADVERF);
	if (xdr_dec_opaque_fixed(x, &call->verf, len))
		return rpc_garbage(call);
	call->verf_len = len;
	if (call->verf_flavor != RPC_AUTH_NONE || len)
		return rpc_auth_err(call, RPC_AUTH_BADVERF);
	return 0;
}

/* 0 with call->program set, or the verdict to return. */
static int rpc_find_program(const struct rpc_program *progs, size_t nprogs, struct rpc_call *call)
{
	const struct rpc_program *pg = NULL;
	uint32_t low = UINT32_MAX, high = 0;
	size_t i;

	for (i = 0; i < nprogs; i++) {
		if (progs[i].prog != call->prog)
			continue;
		if (call->vers >= progs[i].vers_low && call->vers <= progs[i].vers_high) {
			pg = &progs[i];
			break;
		}
		if (progs[i].vers_low < low)
			low = progs[i].vers_low;
		if (progs[i].vers_high > high)
			high = progs[i].vers_high;
	}
	if (!pg && low > high)
		return rpc_reject(call, RPC_MSG_ACCEPTED, RPC_PROG_UNAVAIL);
	if (!pg) {
		call->err.low = low;
		call->err.high = high;
		return rpc_reject(call, RPC_MSG_ACCEPTED, RPC_PROG_MISMATCH);
	}
	if (call->proc >= pg->nprocs)
		return rpc_reject(call, RPC_MSG_ACCEPTED, RPC_PROC_UNAVAIL);
	call->program = pg;
	if (!(pg->flavors & RPC_FLAVOR_BIT(call->cred_flavor)) &&
	    !(call->proc == 0 && call->cred_flavor == RPC_AUTH_NONE))
		return rpc_auth_err(call, RPC_AUTH_TOOWEAK);
	return 0;
}

enum rpc_verdict rpc_classify(const void *rec, size_t len, const struct rpc_program *progs,
			      size_t nprogs, struct rpc_call *call)
{
	struct xdr_in x;
	uint32_t mtype;
	int v;

	memset(call, 0, sizeof(*call));
	xdr_in_init(&x, rec, len);
	if (xdr_dec_u32(&x, &call->xid) || xdr_dec_u32(&x, &mtype))
		return RPC_V_DROP;
	if (mtype == RPC_REPLY) {
		xdr_in_init(&call->args, xdr_in_ptr(&x), xdr_in_left(&x));
		return RPC_V_REPLY;
	}
	if (mtype != RPC_CALL)
		return RPC_V_DROP;
	if (xdr_dec_u32(&x, &call->rpcvers))
		return rpc_garbage(call);
	if (call->rpcvers != RPC_VERS) {
		call->err.low = RPC_VERS;
		call->err.high = RPC_VERS;
		return rpc_reject(call, RPC_MSG_DENIED, RPC_MISMATCH);
	}
	if (xdr_dec_u32(&x, &call->prog) || xdr_dec_u32(&x, &call->vers) ||
	    xdr_dec_u32(&x, &call->proc))
		return rpc_garbage(call);
	v = rpc_dec_auth(&x, call);
	if (!v)
		v = rpc_find_program(progs, nprogs, call);
	if (v)
		return (enum rpc_verdict)v;
	xdr_in_init(&call->args, xdr_in_ptr(&x), xdr_in_left(&x));
	return RPC_V_DISPATCH;
}

/* ------------------------------------------------------------ replies */

static int rpc_enc_head(struct xdr_out *out, uint32_t xid, uint32_t reply_stat)
{
	xdr_enc_u32(out, xid);
	xdr_enc_u32(out, RPC_REPLY);
	return xdr_enc_u32(out, reply_stat);
}

int rpc_enc_accepted(struct xdr_out *out, uint32_t xid, uint32_t accept_stat)
{
	rpc_enc_head(out, xid, RPC_MSG_ACCEPTED);
	xdr_enc_u32(out, RPC_AUTH_NONE); /* verifier */
	xdr_enc_u32(out, 0);
	return xdr_enc_u32(out, accept_stat);
}

int rpc_enc_prog_mismatch(struct xdr_out *out, uint32_t xid, uint32_t low, uint32_t high)
{
	rpc_enc_accepted(out, xid, RPC_PROG_MISMATCH);
	xdr_enc_u32(out, low);
	return xdr_enc_u32(out, high);
}

int rpc_enc_rpc_mismatch(struct xdr_out *out, uint32_t xid, uint32_t low, uint32_t high)
{
	rpc_enc_head(out, xid, RPC_MSG_DENIED);
	xdr_enc_u32(out, RPC_MISMATCH);
	xdr_enc_u32(out, low);
	return xdr_enc_u32(out, high);
}

int rpc_enc_auth_error(struct xdr_out *out, uint32_t xid, uint32_t auth_stat)
{
	rpc_enc_head(out, xid, RPC_MSG_DENIED);
	xdr_enc_u32(out, RPC_AUTH_ERROR);
	return xdr_enc_u32(out, auth_stat);
}

int rpc_enc_reject(struct xdr_out *out, const struct rpc_call *call)
{
	const struct rpc_error *e = &call->err;

	if (e->reply_stat == RPC_MSG_DENIED && e->stat == RPC_MISMATCH)
		return rpc_enc_rpc_mismatch(out, call->xid, e->low, e->high);
	if (e->reply_stat == RPC_MSG_DENIED)
		return rpc_enc_auth_error(out, call->xid, e->auth_stat);
	if (e->stat == RPC_PROG_MISMATCH)
		return rpc_enc_prog_mismatch(out, call->xid, e->low, e->high);
	return rpc_enc_accepted(out, call->xid, e->stat);
}

int rpc_enc_call(struct xdr_out *out, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		 const struct rpc_auth_sys *sys)
{
	if (sys &&
	    (sys->machinename_len > RPC_AUTH_MACHINENAME_MAX || sys->ngids > RPC_AUTH_SYS_GIDS_MAX))
		return -EINVAL;
	xdr_enc_u32(out, xid);
	xdr_enc_u32(out, RPC_CALL);
	xdr_enc_u32(out, RPC_VERS);
	xdr_enc_u32(out, prog);
	xdr_enc_u32(out, vers);
	xdr_enc_u32(out, proc);
	if (sys) {
		xdr_enc_u32(out, RPC_AUTH_SYS);
		xdr_enc_u32(out,
			    5 * XDR_UNIT + XDR_ALIGN(sys->machinename_len) + sys->ngids * XDR_UNIT);
		xdr_enc_u32(out, sys->stamp);
		xdr_enc_string(out, sys->machinename, sys->machinename_len,
			       RPC_AUTH_MACHINENAME_MAX);
		xdr_enc_u32(out, sys->uid);
		xdr_enc_u32(out, sys->gid);
		xdr_enc_u32_array(out, sys->gids, sys->ngids, RPC_AUTH_SYS_GIDS_MAX);
	} else {
		xdr_enc_u32(out, RPC_AUTH_NONE);
		xdr_enc_u32(out, 0);
	}
	xdr_enc_u32(out, RPC_AUTH_NONE);
	return xdr_enc_u32(out, 0);
}

int rpc_rm_begin(struct xdr_out *out, struct xdr_mark *m)
{
	return xdr_out_reserve(out, m);
}

int rpc_rm_end(struct xdr_out *out, const struct xdr_mark *m)
{
	size_t n = xdr_out_since(out, m);

	if (out->err)
		return out->err;
	if (n > RPC_REC_FRAG_LEN_MAX)
		return out->err = -EMSGSIZE;
	xdr_out_fill(m, RPC_REC_LAST | (uint32_t)n);
	return 0;
}
