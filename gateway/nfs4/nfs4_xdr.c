// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * XDR pieces many NFSv4 operations share: stateids, bitmaps, names
 * (component4), change_info4, the change attribute, and the 4.1 current
 * stateid.
 */
#include <errno.h>
#include <string.h>

#include "nfs4_compound.h"

int nfs4_dec_stateid(struct xdr_in *x, struct nfs4_stateid *sid)
{
	size_t pos = x->pos;

	if (xdr_dec_u32(x, &sid->seqid) ||
	    xdr_dec_opaque_fixed_copy(x, sid->other, NFS4_OTHER_SIZE)) {
		x->pos = pos;
		return -EBADMSG;
	}
	return 0;
}

int nfs4_enc_stateid(struct xdr_out *out, const struct nfs4_stateid *sid)
{
	xdr_enc_u32(out, sid->seqid);
	return xdr_enc_opaque_fixed(out, sid->other, NFS4_OTHER_SIZE);
}

int nfs4_dec_bitmap(struct xdr_in *x, struct nfs4_bitmap *bm)
{
	size_t pos = x->pos;
	uint32_t n, i, w;

	memset(bm, 0, sizeof(*bm));
	if (xdr_dec_count(x, &n, NFS4_BITMAP_WIRE_MAX, 4))
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (xdr_dec_u32(x, &w)) {
			x->pos = pos;
			return -EBADMSG;
		}
		/* bits past what is understood are attributes not supported */
		if (i < NFS4_BITMAP_MAX)
			bm->w[i] = w;
	}
	return 0;
}

int nfs4_enc_bitmap(struct xdr_out *out, const struct nfs4_bitmap *bm)
{
	uint32_t n = NFS4_BITMAP_MAX, i;

	while (n > 0 && !bm->w[n - 1])
		n--;
	xdr_enc_u32(out, n);
	for (i = 0; i < n; i++)
		xdr_enc_u32(out, bm->w[i]);
	return out->err;
}

/*
 * RFC 8881 §18.13.4 (and nfsd): empty -> INVAL, longer than the
 * server's maximum -> NAMETOOLONG, "." / ".." / a '/' -> BADNAME.
 */
int nfs4_dec_component(struct xdr_in *x, char name[NFS4_NAME_MAX + 1], uint32_t *status)
{
	const uint8_t *p;
	uint32_t len;

	*status = NFS4_OK;
	name[0] = '\0';
	/* accept any length on the wire (bounded by the record) to answer NAMETOOLONG */
	if (xdr_dec_opaque(x, &p, &len, NFS4_OPAQUE_LIMIT * 4))
		return -EBADMSG;
	if (len == 0) {
		*status = NFS4ERR_INVAL;
		return 0;
	}
	if (len > NFS4_NAME_MAX) {
		*status = NFS4ERR_NAMETOOLONG;
		return 0;
	}
	if (memchr(p, '/', len) || memchr(p, '\0', len) || (len == 1 && p[0] == '.') ||
	    (len == 2 && p[0] == '.' && p[1] == '.')) {
		*status = NFS4ERR_BADNAME;
		return 0;
	}
	memcpy(name, p, len);
	name[len] = '\0';
	return 0;
}

uint32_t nfs4_regular_file(const struct nfs4_compound *c, const struct gw_obj *o)
{
	if (o->type == S_IFREG)
		return NFS4_OK;
	if (o->type == S_IFDIR)
		return NFS4ERR_ISDIR;
	if (c->minor == 0)
		return NFS4ERR_INVAL;
	return o->type == S_IFLNK ? NFS4ERR_SYMLINK : NFS4ERR_WRONG_TYPE;
}

uint32_t nfs4_enc_status(const struct nfs4_compound *c, int err)
{
	if (err == -EMSGSIZE)
		return !c->minor ? NFS4ERR_RESOURCE :
		       c->cachethis ? NFS4ERR_REP_TOO_BIG_TO_CACHE : NFS4ERR_REP_TOO_BIG;
	if (err == -ENOBUFS || err == -ENOMEM)
		return NFS4ERR_DELAY;
	return NFS4ERR_SERVERFAULT;
}

int nfs4_enc_change_info(struct xdr_out *out, bool atomic, uint64_t before, uint64_t after)
{
	xdr_enc_bool(out, atomic);
	xdr_enc_u64(out, before);
	return xdr_enc_u64(out, after);
}

/*
 * Every change to a file's data or metadata sets its ctime, which ext4
 * and XFS keep in nanoseconds: ctime in ns is the change attribute (as
 * nfsd uses without i_version). Two changes in the same clock tick look
 * like one; the Linux client revalidates on size and mtime as well.
 */
uint64_t nfs4_change_of(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec;
}

static bool sid_is_current(const struct nfs4_stateid *sid)
{
	static const uint8_t zero[NFS4_OTHER_SIZE];

	return sid->seqid == 1 && !memcmp(sid->other, zero, NFS4_OTHER_SIZE);
}

uint32_t nfs4_resolve_current_sid(struct nfs4_compound *c, struct nfs4_stateid *sid)
{
	if (c->minor == 0 || !sid_is_current(sid))
		return NFS4_OK;
	if (!c->cur_sid_set)
		return NFS4ERR_BAD_STATEID;
	*sid = c->cur_sid;
	return NFS4_OK;
}

void nfs4_set_current_sid(struct nfs4_compound *c, const struct nfs4_stateid *sid)
{
	c->cur_sid = *sid;
	c->cur_sid_set = true;
}
