/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fattr4: the attributes lacunad supports, encoding them from stat(2) and
 * statfs(2) of an object (GETATTR, READDIR, VERIFY), decoding the ones a
 * client may set (SETATTR, CREATE, OPEN) and applying those.
 *
 * Owners are numeric ids written as decimal strings ("1000"), which the
 * Linux client sends and accepts with AUTH_SYS; a "name@domain" whose
 * name is numeric is taken as that id, anything else is NFS4ERR_BADOWNER.
 */
#ifndef LACUNA_NFS4_ATTR_H
#define LACUNA_NFS4_ATTR_H

#include <time.h>

#include "nfs4_compound.h"

/*
 * Bound on one encoded fattr4 (bitmap, length and values) of every
 * supported attribute: about 480 bytes, the file handle being the
 * largest value.
 */
#define NFS4_FATTR_ENC_MAX 512

/* Decoded settable attributes. */
struct nfs4_sattr {
	struct nfs4_bitmap mask; /* attributes present */
	uint64_t size;
	uint32_t mode;
	uint32_t uid, gid;
	uint32_t atime_how, mtime_how; /* time_how4, when present */
	struct timespec atime, mtime;
};

/* The attributes this server supports (supported_attrs for minor version @minor). */
void nfs4_attr_supported(uint32_t minor, struct nfs4_bitmap *bm);
/* The writable subset: size, mode, owner, owner_group, time_access_set, time_modify_set. */
void nfs4_attr_writable(struct nfs4_bitmap *bm);
/*
 * suppattr_exclcreat: what OPEN with EXCLUSIVE4_1 may set, the writable
 * attributes but the times, which hold the create verifier (as in nfsd).
 */
void nfs4_attr_exclcreat(struct nfs4_bitmap *bm);

/*
 * May @req be asked for in GETATTR or READDIR? NFS4_OK, or NFS4ERR_INVAL
 * when it holds a write-only attribute (time_access_set, time_modify_set).
 */
uint32_t nfs4_attr_check_get(const struct nfs4_bitmap *req);

/*
 * Decode a bitmap4 of attributes: up to NFS4_BITMAP_WIRE_MAX words, those
 * past NFS4_BITMAP_MAX dropped; *beyond tells whether any of them had a
 * bit set (an attribute this server cannot support). 0 or -EBADMSG.
 * (nfs4_dec_bitmap() drops them silently; SETATTR and VERIFY must refuse
 * them with NFS4ERR_ATTRNOTSUPP.) Encode with nfs4_enc_bitmap().
 */
int nfs4_dec_attrmask(struct xdr_in *x, struct nfs4_bitmap *bm, bool *beyond);

/* A numeric owner or group, "1000" or "1000@domain": 0 or -EINVAL. */
int nfs4_owner_parse(const uint8_t *s, size_t len, uint32_t *id);

/*
 * Encode fattr4 (bitmap of what was encoded, then the values as one
 * opaque) of @o for the attributes in @req that are supported. Returns
 * an nfsstat4 (an error of stat(2)), or NFS4_OK with c->out->err set
 * when out of reply space. Write-only attributes in @req are not
 * encoded (callers refuse them first with nfs4_attr_check_get()).
 * Reads the configuration of c->snap.
 */
uint32_t nfs4_enc_fattr(struct nfs4_compound *c, struct xdr_out *out, struct gw_obj *o,
			const struct nfs4_bitmap *req);

/*
 * READDIR, for an entry whose attributes cannot be had: when @req asks
 * for rdattr_error, encode a fattr4 holding only rdattr_error = @status
 * and return true; else return false (the caller fails with @status).
 */
bool nfs4_enc_fattr_error(struct xdr_out *out, const struct nfs4_bitmap *req, uint32_t status);

/*
 * Decode an fattr4 a client sends to be set. NFS4_OK, NFS4ERR_BADXDR,
 * NFS4ERR_ATTRNOTSUPP (an attribute not supported), NFS4ERR_INVAL (a
 * read-only attribute, nseconds past 999999999), NFS4ERR_BADOWNER.
 * Whatever the status, unless it is NFS4ERR_BADXDR, @x has moved past
 * the whole fattr4.
 */
uint32_t nfs4_dec_sattr(struct xdr_in *x, struct nfs4_sattr *sa);

/*
 * Apply @sa to @o (fd: an fd open for writing, for size, or -1), with
 * the thread's credentials. @set receives the attributes actually set
 * (attrsset), also when an error stops it half-way. Order: size, owner
 * and group, mode (after chown, which may clear set-id bits), times.
 * Mode is ignored on a symlink (as nfsd does). Returns an nfsstat4.
 */
uint32_t nfs4_apply_sattr(struct nfs4_compound *c, struct gw_obj *o, const struct nfs4_sattr *sa,
			  int fd, struct nfs4_bitmap *set);

/*
 * Compare the attributes of @o with an fattr4 at @x (VERIFY/NVERIFY):
 * NFS4_OK with *same set, or an error (BADXDR, ATTRNOTSUPP, INVAL for
 * rdattr_error and write-only attributes). Our encoding of the same
 * attributes is built in c->out past its end and rolled back.
 */
uint32_t nfs4_attr_compare(struct nfs4_compound *c, struct gw_obj *o, struct xdr_in *x, bool *same);

#endif
