// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * GETATTR, SETATTR, VERIFY, NVERIFY and ACCESS (RFC 7530 §16, RFC 8881
 * §18): the operations on one object's attributes. The attributes
 * themselves (which exist, how they are encoded, set and compared) are
 * in nfs4_attr.c.
 *
 * SETATTR4res carries attrsset whatever the status, so SETATTR keeps its
 * body on errors; a fattr4 that does not decode is reported through the
 * handler for that reason, and only a stateid that does not decode fails
 * the decoder.
 *
 * ACCESS asks the kernel with faccessat2(AT_EACCESS), which checks with
 * the thread's fsuid, fsgid and groups, the caller's; plain access(2)
 * and faccessat2 without AT_EACCESS check with the real uid, root's.
 * The bits map to permissions as nfsd's tables do: for a directory
 * LOOKUP is search, MODIFY, EXTEND and DELETE are write and search; for
 * a file EXECUTE is execute, MODIFY and EXTEND are write; other types
 * get READ, EXECUTE, MODIFY and EXTEND from their mode bits.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nfs4_attr.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

/* every ACCESS4 bit, the extended-attribute ones of RFC 8276 included */
#define ACCESS4_ALL 0x1ff
#define ACCESS4_XA (ACCESS4_XAREAD | ACCESS4_XAWRITE | ACCESS4_XALIST)

/* ---------------------------------------------------------------- GETATTR */

struct getattr_args {
	struct nfs4_bitmap req;
};
_Static_assert(sizeof(struct getattr_args) <= NFS4_ARGS_MAX, "GETATTR args");

int nfs4_dec_getattr(struct xdr_in *x, void *args)
{
	struct getattr_args *a = args;
	bool beyond;

	/* attributes past what this server knows are simply not returned */
	return nfs4_dec_attrmask(x, &a->req, &beyond);
}

uint32_t nfs4_run_getattr(struct nfs4_compound *c, void *args)
{
	struct getattr_args *a = args;
	uint32_t st = nfs4_attr_check_get(&a->req);

	if (st != NFS4_OK)
		return st;
	return nfs4_enc_fattr(c, c->out, c->cfh, &a->req);
}

/* ---------------------------------------------------------------- SETATTR */

struct setattr_args {
	struct nfs4_stateid sid;
	struct nfs4_sattr sa;
	uint32_t status; /* of decoding the fattr4 */
};
_Static_assert(sizeof(struct setattr_args) <= NFS4_ARGS_MAX, "SETATTR args");

int nfs4_dec_setattr(struct xdr_in *x, void *args)
{
	struct setattr_args *a = args;

	if (nfs4_dec_stateid(x, &a->sid))
		return -EBADMSG;
	a->status = nfs4_dec_sattr(x, &a->sa);
	return 0;
}

static uint32_t setattr_do(struct nfs4_compound *c, struct setattr_args *a, struct nfs4_bitmap *set)
{
	struct gw_obj *o = c->cfh;
	bool owned = false;
	int fd = -1;
	uint32_t st;

	if (gw_obj_is_pseudo(o))
		return NFS4ERR_ROFS;
	if (nfs4_bm_isset(&a->sa.mask, FATTR4_SIZE)) {
		/* nfs4_apply_sattr refuses these too; check before looking at the stateid */
		if (o->type == S_IFDIR)
			return NFS4ERR_ISDIR;
		if (o->type != S_IFREG)
			return NFS4ERR_INVAL;
		st = nfs4_io_fd(c, &a->sid, o, true, &fd, &owned);
		if (st != NFS4_OK)
			return st;
	}
	st = nfs4_apply_sattr(c, o, &a->sa, fd, set);
	nfs4_state_io_done(c->srv, fd, owned);
	return st;
}

uint32_t nfs4_run_setattr(struct nfs4_compound *c, void *args)
{
	struct setattr_args *a = args;
	struct nfs4_bitmap set = { { 0 } };
	uint32_t st = a->status;

	if (st == NFS4_OK)
		st = setattr_do(c, a, &set);
	nfs4_enc_bitmap(c->out, &set);
	c->keep_body = st != NFS4_OK; /* attrsset goes with every status */
	return st;
}

/* ---------------------------------------------------------------- VERIFY, NVERIFY */

struct verify_args {
	struct xdr_in fattr; /* the client's fattr4, bitmap and values */
};
_Static_assert(sizeof(struct verify_args) <= NFS4_ARGS_MAX, "VERIFY args");

static int dec_verify(struct xdr_in *x, struct verify_args *a)
{
	size_t start = x->pos;
	struct nfs4_bitmap bm;
	const uint8_t *p;
	uint32_t len;
	bool beyond;

	if (nfs4_dec_attrmask(x, &bm, &beyond) || xdr_dec_opaque(x, &p, &len, NFS4_ATTRLIST_MAX)) {
		x->pos = start;
		return -EBADMSG;
	}
	xdr_in_init(&a->fattr, x->base + start, x->pos - start);
	return 0;
}

int nfs4_dec_verify(struct xdr_in *x, void *args)
{
	return dec_verify(x, args);
}

int nfs4_dec_nverify(struct xdr_in *x, void *args)
{
	return dec_verify(x, args);
}

uint32_t nfs4_run_verify(struct nfs4_compound *c, void *args)
{
	struct verify_args *a = args;
	bool same;
	uint32_t st = nfs4_attr_compare(c, c->cfh, &a->fattr, &same);

	if (st != NFS4_OK)
		return st;
	return same ? NFS4_OK : NFS4ERR_NOT_SAME;
}

uint32_t nfs4_run_nverify(struct nfs4_compound *c, void *args)
{
	struct verify_args *a = args;
	bool same;
	uint32_t st = nfs4_attr_compare(c, c->cfh, &a->fattr, &same);

	if (st != NFS4_OK)
		return st;
	return same ? NFS4ERR_SAME : NFS4_OK;
}

/* ---------------------------------------------------------------- ACCESS */

struct access_args {
	uint32_t access;
};
_Static_assert(sizeof(struct access_args) <= NFS4_ARGS_MAX, "ACCESS args");

int nfs4_dec_access(struct xdr_in *x, void *args)
{
	struct access_args *a = args;

	return xdr_dec_u32(x, &a->access);
}

/* One ACCESS4 bit and the permissions it needs. */
struct access_map {
	uint32_t bit;
	int mode; /* R_OK, W_OK, X_OK */
	bool write;
};

static const struct access_map dir_map[] = {
	{ ACCESS4_READ, R_OK, false },	       { ACCESS4_LOOKUP, X_OK, false },
	{ ACCESS4_MODIFY, W_OK | X_OK, true }, { ACCESS4_EXTEND, W_OK | X_OK, true },
	{ ACCESS4_DELETE, W_OK | X_OK, true }, { ACCESS4_XAREAD, R_OK, false },
	{ ACCESS4_XAWRITE, W_OK, true },       { ACCESS4_XALIST, R_OK, false },
	{ 0, 0, false },
};

static const struct access_map reg_map[] = {
	{ ACCESS4_READ, R_OK, false },
	{ ACCESS4_EXECUTE, X_OK, false },
	{ ACCESS4_MODIFY, W_OK, true },
	{ ACCESS4_EXTEND, W_OK, true },
	{ ACCESS4_XAREAD, R_OK, false },
	{ ACCESS4_XAWRITE, W_OK, true },
	{ ACCESS4_XALIST, R_OK, false },
	{ 0, 0, false },
};

/* symlinks, devices, fifos, sockets: writing one does not write the export */
static const struct access_map other_map[] = {
	{ ACCESS4_READ, R_OK, false },
	{ ACCESS4_EXECUTE, X_OK, false },
	{ ACCESS4_MODIFY, W_OK, false },
	{ ACCESS4_EXTEND, W_OK, false },
	{ 0, 0, false },
};

/* 0 allowed, 1 denied, or -errno */
static int may(struct gw_obj *o, int mode)
{
	if (syscall(SYS_faccessat2, o->fd, "", mode, AT_EACCESS | AT_EMPTY_PATH) == 0)
		return 0;
	switch (errno) {
	case EACCES:
	case EPERM:
	case EROFS:
	case ETXTBSY:
		return 1;
	default:
		return -errno;
	}
}

uint32_t nfs4_run_access(struct nfs4_compound *c, void *args)
{
	struct access_args *a = args;
	struct gw_obj *o = c->cfh;
	const struct access_map *map;
	uint32_t supported = 0, access = 0;
	bool ro;
	int known[8] = { 0 }; /* per mode R|W|X combination: 0 unknown, 1 allowed, 2 denied */

	if (a->access & ~ACCESS4_ALL)
		return NFS4ERR_INVAL;
	if (gw_obj_is_pseudo(o)) {
		supported = a->access & (ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY |
					 ACCESS4_EXTEND | ACCESS4_DELETE);
		access = supported & (ACCESS4_READ | ACCESS4_LOOKUP);
		goto out;
	}
	if (o->type == S_IFDIR)
		map = dir_map;
	else if (o->type == S_IFREG)
		map = reg_map;
	else
		map = other_map;
	ro = c->rule && !c->rule->opts.rw;

	for (; map->bit; map++) {
		int r;

		if (!(a->access & map->bit))
			continue;
		if (map->bit & ACCESS4_XA && c->minor < 2)
			continue; /* RFC 8276: the xattr bits are 4.2's */
		supported |= map->bit;
		if (map->write && ro)
			continue;
		if (!known[map->mode]) {
			r = may(o, map->mode);
			if (r < 0)
				return nfs4_errno(r);
			known[map->mode] = r ? 2 : 1;
		}
		if (known[map->mode] == 1)
			access |= map->bit;
	}
out:
	xdr_enc_u32(c->out, supported);
	xdr_enc_u32(c->out, access);
	return NFS4_OK;
}
