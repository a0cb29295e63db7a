// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The operations that set, save and return the current file handle and
 * walk names: PUTROOTFH, PUTPUBFH, PUTFH, GETFH, SAVEFH, RESTOREFH,
 * LOOKUP, LOOKUPP, and the two SECINFO operations that tell a client
 * which security flavors an export takes.
 *
 * Operation
 * ---------
 * A handle from the wire is resolved by gw_obj_from_fh(); one that this
 * server cannot have made (wrong length, version, export) is
 * NFS4ERR_BADHANDLE, one naming a file that is gone NFS4ERR_STALE.
 * PUTPUBFH is PUTROOTFH: lacunad has no separate public file handle.
 * Every op here that puts a handle (PUTFH, PUTROOTFH, LOOKUP, LOOKUPP)
 * answers NFS4ERR_PERM when the export rule admitting the client is
 * secure and the call came from an unreserved port (nfs4_check_port);
 * the rest of the rule (ACCESS, WRONGSEC, squashing) is applied by the
 * first op that uses the handle.
 *
 * Names (component4) are checked as Linux nfsd's check_filename() does:
 * empty is NFS4ERR_INVAL, "." and ".." and any name holding a '/' are
 * NFS4ERR_BADNAME, one over NFS4_NAME_MAX bytes NFS4ERR_NAMETOOLONG.
 * A LOOKUP from a pseudo directory may land on an export's root
 * (gw_obj_lookup crosses), and LOOKUPP from an export's root goes back
 * to the pseudo directory it hangs from.
 *
 * The 4.1 current stateid follows the current file handle: the
 * operations that put a new file handle make it invalid, SAVEFH saves it
 * with the file handle and RESTOREFH restores both (RFC 8881 §16.2.3.1.2).
 *
 * SECINFO and SECINFO_NO_NAME answer with the flavors of the export rule
 * that admits the client (AUTH_SYS, AUTH_NONE, in the order the rule
 * lists them); pseudo directories take both. In 4.1 and later both
 * consume the current file handle (RFC 8881 §2.6.3.1.1.8): an operation
 * after them that needs one gets NFS4ERR_NOFILEHANDLE. In 4.0 SECINFO
 * leaves it in place (RFC 7530 §16.31).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "nfs4_ops.h"

/* ---------------------------------------------------------------- helpers */

/* Is @o a directory one may look names up in? NFS4_OK, SYMLINK or NOTDIR. */
static uint32_t fh_need_dir(const struct gw_obj *o)
{
	if (o->type == S_IFDIR)
		return NFS4_OK;
	return o->type == S_IFLNK ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
}

/*
 * A component4 into @name. The status of a malformed name (empty, too
 * long, "." or "..", a '/') lands in *status for the handler to return;
 * only a record that cannot be decoded at all fails the decode.
 */
/*
 * A new current file handle (reference taken over); the current stateid
 * becomes invalid. The handle is verified as nfsd's fh_verify() does for
 * a secure export: NFS4ERR_PERM from an unreserved port.
 */
static uint32_t fh_put_new(struct nfs4_compound *c, struct gw_obj *o)
{
	nfs4_set_cfh(c, o);
	c->cur_sid_set = false;
	return nfs4_check_port(c, o);
}

/* No current file handle any more (SECINFO in 4.1+). */
static void fh_consume(struct nfs4_compound *c)
{
	nfs4_set_cfh(c, NULL);
	c->cur_sid_set = false;
}

/* ---------------------------------------------------------------- PUTROOTFH, PUTPUBFH */

uint32_t nfs4_run_putrootfh(struct nfs4_compound *c, void *args)
{
	struct gw_obj *o;

	(void)args;
	o = gw_obj_root(c->snap);
	if (!o)
		return NFS4ERR_SERVERFAULT;
	return fh_put_new(c, o);
}

uint32_t nfs4_run_putpubfh(struct nfs4_compound *c, void *args)
{
	return nfs4_run_putrootfh(c, args);
}

/* ---------------------------------------------------------------- PUTFH */

struct putfh_args {
	const uint8_t *fh;
	uint32_t len;
	bool too_long; /* over NFS4_FHSIZE: NFS4ERR_BADHANDLE, not BADXDR */
};
_Static_assert(sizeof(struct putfh_args) <= NFS4_ARGS_MAX, "putfh args");

int nfs4_dec_putfh(struct xdr_in *x, void *args)
{
	struct putfh_args *a = args;
	size_t pos = x->pos;
	uint32_t len;

	if (xdr_dec_u32(x, &len))
		return -EBADMSG;
	if (len > NFS4_FHSIZE) {
		if (xdr_dec_skip(x, len)) {
			x->pos = pos;
			return -EBADMSG;
		}
		a->too_long = true;
		return 0;
	}
	x->pos = pos;
	return xdr_dec_opaque(x, &a->fh, &a->len, NFS4_FHSIZE);
}

uint32_t nfs4_run_putfh(struct nfs4_compound *c, void *args)
{
	struct putfh_args *a = args;
	struct gw_obj *o;
	int rc;

	if (a->too_long || a->len == 0)
		return NFS4ERR_BADHANDLE;
	rc = gw_obj_from_fh(c->snap, a->fh, a->len, &o);
	if (rc)
		return nfs4_errno(rc);
	return fh_put_new(c, o);
}

/* ---------------------------------------------------------------- GETFH */

uint32_t nfs4_run_getfh(struct nfs4_compound *c, void *args)
{
	const struct gw_fh *fh = &c->cfh->fh;
	int rc;

	(void)args;
	rc = xdr_enc_opaque(c->out, fh->data, fh->len, NFS4_FHSIZE);
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}

/* ---------------------------------------------------------------- SAVEFH, RESTOREFH */

uint32_t nfs4_run_savefh(struct nfs4_compound *c, void *args)
{
	(void)args;
	if (c->sfh)
		gw_obj_put(c->sfh);
	c->sfh = gw_obj_get(c->cfh);
	c->saved_sid = c->cur_sid;
	c->saved_sid_set = c->cur_sid_set;
	return NFS4_OK;
}

uint32_t nfs4_run_restorefh(struct nfs4_compound *c, void *args)
{
	(void)args;
	if (!c->sfh)
		return NFS4ERR_RESTOREFH;
	nfs4_set_cfh(c, gw_obj_get(c->sfh));
	c->cur_sid = c->saved_sid;
	c->cur_sid_set = c->saved_sid_set;
	return NFS4_OK;
}

/* ---------------------------------------------------------------- LOOKUP, LOOKUPP */

/* LOOKUP and SECINFO: a name in the current directory */
struct name_args {
	uint32_t status; /* of the name, as nfs4_dec_component() found it */
	char name[NFS4_NAME_MAX + 1];
};
_Static_assert(sizeof(struct name_args) <= NFS4_ARGS_MAX, "name args");

static int dec_name(struct xdr_in *x, void *args)
{
	struct name_args *a = args;

	return nfs4_dec_component(x, a->name, &a->status);
}

/* The object @a names in the current directory, with a reference. */
static uint32_t lookup_name(struct nfs4_compound *c, const struct name_args *a, struct gw_obj **o)
{
	uint32_t st = a->status;
	int rc;

	if (st)
		return st;
	st = fh_need_dir(c->cfh);
	if (st)
		return st;
	rc = gw_obj_lookup(c->snap, c->cfh, a->name, o);
	return rc ? nfs4_errno(rc) : NFS4_OK;
}

int nfs4_dec_lookup(struct xdr_in *x, void *args)
{
	return dec_name(x, args);
}

uint32_t nfs4_run_lookup(struct nfs4_compound *c, void *args)
{
	struct gw_obj *o;
	uint32_t st = lookup_name(c, args, &o);

	return st == NFS4_OK ? fh_put_new(c, o) : st;
}

uint32_t nfs4_run_lookupp(struct nfs4_compound *c, void *args)
{
	struct gw_obj *o;
	uint32_t st;
	int rc;

	(void)args;
	st = fh_need_dir(c->cfh);
	if (st)
		return st;
	rc = gw_obj_parent(c->snap, c->cfh, &o);
	if (rc)
		return nfs4_errno(rc);
	return fh_put_new(c, o);
}

/* ---------------------------------------------------------------- SECINFO, SECINFO_NO_NAME */

/* secinfo4<>: the flavors of the rule admitting the client to @o. */
static uint32_t secinfo_encode(struct nfs4_compound *c, const struct gw_obj *o)
{
	static const struct gw_opts pseudo_opts = {
		.sec = { GW_SEC_SYS, GW_SEC_NONE },
		.nsec = 2,
	};
	const struct gw_opts *opts;
	const struct gw_client *rule;
	unsigned int i, n;
	int rc;

	if (gw_obj_is_pseudo(o)) {
		opts = &pseudo_opts;
	} else {
		rule = NULL;
		if (c->cfh && c->cfh->xp == o->xp)
			rule = c->rule;
		if (!rule) {
			const struct gw_export_conf *exp = gw_export_conf_of(c->snap, o->xp);

			if (exp)
				rule = gw_export_conf_match(
					exp, (const struct sockaddr *)&c->conn->peer);
		}
		if (!rule)
			return NFS4ERR_ACCESS;
		opts = &rule->opts;
	}
	n = opts->nsec < GW_SEC_MAX ? opts->nsec : GW_SEC_MAX;
	if (n == 0) {
		rc = xdr_enc_u32(c->out, 1) ?: xdr_enc_u32(c->out, RPC_AUTH_SYS);
		return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
	}
	rc = xdr_enc_u32(c->out, n);
	for (i = 0; i < n && !rc; i++) {
		/* AUTH_NONE and AUTH_SYS carry no rpcsec_gss_info */
		rc = xdr_enc_u32(c->out,
				 opts->sec[i] == GW_SEC_NONE ? RPC_AUTH_NONE : RPC_AUTH_SYS);
	}
	return rc ? nfs4_enc_status(c, rc) : NFS4_OK;
}

int nfs4_dec_secinfo(struct xdr_in *x, void *args)
{
	return dec_name(x, args);
}

uint32_t nfs4_run_secinfo(struct nfs4_compound *c, void *args)
{
	struct gw_obj *o;
	uint32_t st = lookup_name(c, args, &o);

	if (st != NFS4_OK)
		return st;
	st = secinfo_encode(c, o);
	gw_obj_put(o);
	if (st == NFS4_OK && c->minor >= 1)
		fh_consume(c);
	return st;
}

struct secinfo_no_name_args {
	uint32_t style;
};
_Static_assert(sizeof(struct secinfo_no_name_args) <= NFS4_ARGS_MAX, "secinfo_no_name args");

int nfs4_dec_secinfo_no_name(struct xdr_in *x, void *args)
{
	struct secinfo_no_name_args *a = args;

	return xdr_dec_u32(x, &a->style);
}

uint32_t nfs4_run_secinfo_no_name(struct nfs4_compound *c, void *args)
{
	struct secinfo_no_name_args *a = args;
	struct gw_obj *o;
	uint32_t st;
	int rc;

	switch (a->style) {
	case SECINFO_STYLE4_CURRENT_FH:
		st = secinfo_encode(c, c->cfh);
		break;
	case SECINFO_STYLE4_PARENT:
		st = fh_need_dir(c->cfh);
		if (st)
			return st;
		rc = gw_obj_parent(c->snap, c->cfh, &o);
		if (rc)
			return nfs4_errno(rc);
		st = secinfo_encode(c, o);
		gw_obj_put(o);
		break;
	default:
		return NFS4ERR_INVAL;
	}
	if (st == NFS4_OK)
		fh_consume(c);
	return st;
}
