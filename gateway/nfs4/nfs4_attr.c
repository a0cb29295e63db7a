// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NFSv4 attributes (RFC 7530 §5, RFC 8881 §5): which ones lacunad
 * supports, encoding them into fattr4 from stat(2) and statfs(2) of an
 * object, decoding and applying the ones a client sets, and the
 * comparison behind VERIFY and NVERIFY.
 *
 * Operation
 * ---------
 * Encoding. A fattr4 is a bitmap4 of the attributes present, then their
 * values in ascending attribute order as one opaque. The bitmap is the
 * request masked by what the server supports (for the COMPOUND's minor
 * version) and can encode, known before any value is written, so it goes
 * first; the opaque's length word is reserved, the values are encoded in
 * place behind it, and the length is filled in at the end. Every value
 * comes from one stat of the object, taken once; statfs is called only
 * when a statfs attribute (files_*, space_avail/free/total) is asked for,
 * and the backing filesystem's statfs only for maxlink and maxfilesize.
 * Pseudo directories have a synthetic stat and statfs (gw_obj.c), fsid
 * {0, 0}, and are read-only.
 *
 * Crossing into an export. An export's root has the export's fsid, which
 * differs from the pseudo filesystem's, so a client treats it as a mount
 * point; its mounted_on_fileid is the fileid of the pseudo directory it
 * is mounted on, which is what a READDIR of that pseudo directory shows.
 *
 * Owners are decimal ids both ways; names are not mapped.
 *
 * Setting. nfs4_dec_sattr() checks the whole bitmap before any value:
 * a bit the server does not support is NFS4ERR_ATTRNOTSUPP, a supported
 * read-only one NFS4ERR_INVAL; then it decodes the values from a cursor
 * bounded by the opaque, so a value cannot run past it and bytes left
 * after the last value are NFS4ERR_BADXDR. nfs4_apply_sattr() then makes
 * one system call per group, with the caller's credentials already on
 * the thread, so the kernel checks permissions.
 *
 * Comparing. As nfsd does, VERIFY encodes the object's values for the
 * client's bitmap and compares bytes with the client's: the encoding is
 * canonical for everything but owners, which a client sends as it got
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfs4_attr.h"

#define W0(a) (1U << (a))
#define W1(a) (1U << ((a)-32))
#define W2(a) (1U << ((a)-64))

/* RFC 7530 attributes (every minor version) */
#define SUPP0_WORD0                                                                         \
	(W0(FATTR4_SUPPORTED_ATTRS) | W0(FATTR4_TYPE) | W0(FATTR4_FH_EXPIRE_TYPE) |         \
	 W0(FATTR4_CHANGE) | W0(FATTR4_SIZE) | W0(FATTR4_LINK_SUPPORT) |                    \
	 W0(FATTR4_SYMLINK_SUPPORT) | W0(FATTR4_NAMED_ATTR) | W0(FATTR4_FSID) |             \
	 W0(FATTR4_UNIQUE_HANDLES) | W0(FATTR4_LEASE_TIME) | W0(FATTR4_RDATTR_ERROR) |      \
	 W0(FATTR4_ACLSUPPORT) | W0(FATTR4_CANSETTIME) | W0(FATTR4_CASE_INSENSITIVE) |      \
	 W0(FATTR4_CASE_PRESERVING) | W0(FATTR4_CHOWN_RESTRICTED) | W0(FATTR4_FILEHANDLE) | \
	 W0(FATTR4_FILEID) | W0(FATTR4_FILES_AVAIL) | W0(FATTR4_FILES_FREE) |               \
	 W0(FATTR4_FILES_TOTAL) | W0(FATTR4_HOMOGENEOUS) | W0(FATTR4_MAXFILESIZE) |         \
	 W0(FATTR4_MAXLINK) | W0(FATTR4_MAXNAME) | W0(FATTR4_MAXREAD) | W0(FATTR4_MAXWRITE))
#define SUPP0_WORD1                                                                       \
	(W1(FATTR4_MODE) | W1(FATTR4_NO_TRUNC) | W1(FATTR4_NUMLINKS) | W1(FATTR4_OWNER) | \
	 W1(FATTR4_OWNER_GROUP) | W1(FATTR4_RAWDEV) | W1(FATTR4_SPACE_AVAIL) |            \
	 W1(FATTR4_SPACE_FREE) | W1(FATTR4_SPACE_TOTAL) | W1(FATTR4_SPACE_USED) |         \
	 W1(FATTR4_TIME_ACCESS) | W1(FATTR4_TIME_ACCESS_SET) | W1(FATTR4_TIME_DELTA) |    \
	 W1(FATTR4_TIME_METADATA) | W1(FATTR4_TIME_MODIFY) | W1(FATTR4_TIME_MODIFY_SET) | \
	 W1(FATTR4_MOUNTED_ON_FILEID))
/* RFC 8881 additions (4.1 and 4.2) */
#define SUPP1_WORD1 W1(FATTR4_FS_LAYOUT_TYPES)
#define SUPP1_WORD2 W2(FATTR4_SUPPATTR_EXCLCREAT)
/* RFC 7862 and 8276 (4.2) */
#define SUPP2_WORD2 W2(FATTR4_XATTR_SUPPORT)
/* RFC 7862, where the export can reflink (gw_export.clone_blksize) */
#define CLONE_WORD2 W2(FATTR4_CLONE_BLKSIZE)

#define WRITABLE_WORD0 W0(FATTR4_SIZE)
#define WRITABLE_WORD1                                                 \
	(W1(FATTR4_MODE) | W1(FATTR4_OWNER) | W1(FATTR4_OWNER_GROUP) | \
	 W1(FATTR4_TIME_ACCESS_SET) | W1(FATTR4_TIME_MODIFY_SET))
#define WRITEONLY_WORD1 (W1(FATTR4_TIME_ACCESS_SET) | W1(FATTR4_TIME_MODIFY_SET))

/* attributes that need statfs(2) of the object */
#define STATFS_WORD0 (W0(FATTR4_FILES_AVAIL) | W0(FATTR4_FILES_FREE) | W0(FATTR4_FILES_TOTAL))
#define STATFS_WORD1 (W1(FATTR4_SPACE_AVAIL) | W1(FATTR4_SPACE_FREE) | W1(FATTR4_SPACE_TOTAL))
/* attributes that need statfs(2) of the backing filesystem */
#define FSLIMIT_WORD0 (W0(FATTR4_MAXFILESIZE) | W0(FATTR4_MAXLINK))

#define EXT4_MAGIC 0xEF53
#define XFS_MAGIC 0x58465342
#define BTRFS_MAGIC 0x9123683E
#define NSEC_MAX 999999999

void nfs4_attr_supported(uint32_t minor, struct nfs4_bitmap *bm)
{
	memset(bm, 0, sizeof(*bm));
	bm->w[0] = SUPP0_WORD0;
	bm->w[1] = SUPP0_WORD1;
	if (minor >= 1) {
		bm->w[1] |= SUPP1_WORD1;
		bm->w[2] |= SUPP1_WORD2;
	}
	if (minor >= 2)
		bm->w[2] |= SUPP2_WORD2;
}

/* CLONE's granularity on @o's export, 0 where CLONE is NOTSUPP */
static uint32_t clone_blksize_of(const struct gw_obj *o)
{
	return o->xp ? (uint32_t)__atomic_load_n(&o->xp->clone_blksize, __ATOMIC_ACQUIRE) : 0;
}

/* What is supported on @o's filesystem: clone_blksize only where CLONE works */
static void attr_supported_obj(const struct nfs4_compound *c, const struct gw_obj *o,
			       struct nfs4_bitmap *bm)
{
	nfs4_attr_supported(c->minor, bm);
	if (c->minor >= 2 && clone_blksize_of(o))
		bm->w[2] |= CLONE_WORD2;
}

void nfs4_attr_writable(struct nfs4_bitmap *bm)
{
	memset(bm, 0, sizeof(*bm));
	bm->w[0] = WRITABLE_WORD0;
	bm->w[1] = WRITABLE_WORD1;
}

void nfs4_attr_exclcreat(struct nfs4_bitmap *bm)
{
	nfs4_attr_writable(bm);
	bm->w[1] &= ~WRITEONLY_WORD1;
}

uint32_t nfs4_attr_check_get(const struct nfs4_bitmap *req)
{
	return (req->w[1] & WRITEONLY_WORD1) ? NFS4ERR_INVAL : NFS4_OK;
}

int nfs4_dec_attrmask(struct xdr_in *x, struct nfs4_bitmap *bm, bool *beyond)
{
	size_t pos = x->pos;
	uint32_t n, i, w;

	memset(bm, 0, sizeof(*bm));
	*beyond = false;
	if (xdr_dec_count(x, &n, NFS4_BITMAP_WIRE_MAX, 4))
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (xdr_dec_u32(x, &w)) {
			x->pos = pos;
			return -EBADMSG;
		}
		if (i < NFS4_BITMAP_MAX)
			bm->w[i] = w;
		else if (w)
			*beyond = true;
	}
	return 0;
}

static void bm_and(struct nfs4_bitmap *a, const struct nfs4_bitmap *b)
{
	unsigned int i;

	for (i = 0; i < NFS4_BITMAP_MAX; i++)
		a->w[i] &= b->w[i];
}

static bool bm_empty(const struct nfs4_bitmap *a)
{
	unsigned int i;

	for (i = 0; i < NFS4_BITMAP_MAX; i++)
		if (a->w[i])
			return false;
	return true;
}

/* Is any bit of @a missing from @b? */
static bool bm_outside(const struct nfs4_bitmap *a, const struct nfs4_bitmap *b)
{
	unsigned int i;

	for (i = 0; i < NFS4_BITMAP_MAX; i++)
		if (a->w[i] & ~b->w[i])
			return true;
	return false;
}

/* ---------------------------------------------------------------- owners */

int nfs4_owner_parse(const uint8_t *s, size_t len, uint32_t *id)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && s[i] != '@'; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > GW_ID_MAX)
			return -EINVAL;
	}
	if (i == 0)
		return -EINVAL; /* empty, or no number before '@' */
	if (i < len) {
		/* "@domain": any non-empty domain without another '@' or a NUL */
		size_t j;

		if (i + 1 == len)
			return -EINVAL;
		for (j = i + 1; j < len; j++)
			if (s[j] == '@' || s[j] == '\0')
				return -EINVAL;
	}
	*id = (uint32_t)v;
	return 0;
}

static void enc_owner(struct xdr_out *out, uint32_t id)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%" PRIu32, id);

	xdr_enc_opaque(out, buf, (uint32_t)n, sizeof(buf));
}

/* ---------------------------------------------------------------- encoding */

/* What the values of one fattr4 come from. */
struct attr_src {
	struct nfs4_compound *c;
	struct gw_obj *o;
	struct stat st;
	struct statfs sf; /* when a statfs attribute is asked for */
	uint64_t maxfilesize;
	uint32_t maxlink;
};

static uint32_t ftype_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return NF4REG;
	case S_IFDIR:
		return NF4DIR;
	case S_IFBLK:
		return NF4BLK;
	case S_IFCHR:
		return NF4CHR;
	case S_IFLNK:
		return NF4LNK;
	case S_IFSOCK:
		return NF4SOCK;
	case S_IFIFO:
		return NF4FIFO;
	default:
		return 0;
	}
}

/*
 * The fileid of the pseudo directory an export's root is mounted on;
 * any other object's own fileid.
 */
static uint64_t mounted_on_fileid(const struct nfs4_compound *c, const struct gw_obj *o)
{
	const struct gw_snap *s = c->snap;
	const struct gw_export *xp = o->xp;
	int node;

	if (!xp || o->fh.len != xp->root_fh.len || memcmp(o->fh.data, xp->root_fh.data, o->fh.len))
		return o->fileid;
	if (gw_export_node(s, xp, &node) && node > 0 && (uint32_t)node < s->npseudo)
		return s->pseudo[node].fileid;
	return o->fileid;
}

/* maxlink and maxfilesize of the filesystem holding the export's data */
static void fs_limits(struct attr_src *a)
{
	struct statfs bsf;

	a->maxlink = 255; /* what nfsd says whatever the filesystem */
	a->maxfilesize = INT64_MAX;
	if (gw_obj_is_pseudo(a->o) || fstatfs(a->o->xp->bfd, &bsf) < 0)
		return;
	switch ((uint32_t)bsf.f_type) {
	case EXT4_MAGIC:
		a->maxlink = 65000;
		/* extent-mapped files: 2^32 - 1 blocks */
		if (bsf.f_bsize > 0)
			a->maxfilesize = (((uint64_t)1 << 32) - 1) * (uint64_t)bsf.f_bsize;
		break;
	case XFS_MAGIC:
		a->maxlink = (1U << 31) - 1;
		break;
	case BTRFS_MAGIC:
		a->maxlink = 65535;
		break;
	}
}

static void enc_time(struct xdr_out *out, const struct timespec *ts)
{
	xdr_enc_i64(out, (int64_t)ts->tv_sec);
	xdr_enc_u32(out, (uint32_t)ts->tv_nsec);
}

static uint64_t fs_unit(const struct statfs *sf)
{
	return sf->f_frsize ? (uint64_t)sf->f_frsize : (uint64_t)sf->f_bsize;
}

/* Encode the value of attribute @attr. */
static void enc_value(struct xdr_out *out, const struct attr_src *a, unsigned int attr)
{
	const struct stat *st = &a->st;
	struct nfs4_bitmap bm;
	struct timespec ts;

	switch (attr) {
	case FATTR4_SUPPORTED_ATTRS:
		attr_supported_obj(a->c, a->o, &bm);
		nfs4_enc_bitmap(out, &bm);
		break;
	case FATTR4_TYPE:
		xdr_enc_u32(out, ftype_of(st->st_mode));
		break;
	case FATTR4_FH_EXPIRE_TYPE:
		xdr_enc_u32(out, FH4_PERSISTENT);
		break;
	case FATTR4_CHANGE:
		xdr_enc_u64(out, nfs4_change_of(st));
		break;
	case FATTR4_SIZE:
		xdr_enc_u64(out, (uint64_t)st->st_size);
		break;
	case FATTR4_LINK_SUPPORT:
	case FATTR4_SYMLINK_SUPPORT:
	case FATTR4_UNIQUE_HANDLES:
	case FATTR4_CANSETTIME:
	case FATTR4_CASE_PRESERVING:
	case FATTR4_CHOWN_RESTRICTED:
	case FATTR4_HOMOGENEOUS:
	case FATTR4_NO_TRUNC:
		xdr_enc_bool(out, true);
		break;
	case FATTR4_NAMED_ATTR:
	case FATTR4_CASE_INSENSITIVE:
		xdr_enc_bool(out, false);
		break;
	case FATTR4_FSID:
		xdr_enc_u64(out, a->o->xp ? a->o->xp->fsid_major : 0);
		xdr_enc_u64(out, a->o->xp ? a->o->xp->fsid_minor : 0);
		break;
	case FATTR4_LEASE_TIME:
		xdr_enc_u32(out, nfs4_cfg(a->c)->lease_time);
		break;
	case FATTR4_RDATTR_ERROR:
		xdr_enc_u32(out, NFS4_OK);
		break;
	case FATTR4_ACLSUPPORT:
		xdr_enc_u32(out, 0);
		break;
	case FATTR4_FILEHANDLE:
		xdr_enc_opaque(out, a->o->fh.data, a->o->fh.len, NFS4_FHSIZE);
		break;
	case FATTR4_FILEID:
		xdr_enc_u64(out, a->o->fileid);
		break;
	case FATTR4_FILES_AVAIL:
	case FATTR4_FILES_FREE:
		xdr_enc_u64(out, (uint64_t)a->sf.f_ffree);
		break;
	case FATTR4_FILES_TOTAL:
		xdr_enc_u64(out, (uint64_t)a->sf.f_files);
		break;
	case FATTR4_MAXFILESIZE:
		xdr_enc_u64(out, a->maxfilesize);
		break;
	case FATTR4_MAXLINK:
		xdr_enc_u32(out, a->maxlink);
		break;
	case FATTR4_MAXNAME:
		xdr_enc_u32(out, NFS4_NAME_MAX);
		break;
	case FATTR4_MAXREAD:
	case FATTR4_MAXWRITE:
		xdr_enc_u64(out, gw_io_max(nfs4_cfg(a->c) ? nfs4_cfg(a->c)->max_record
							  : GW_RECORD_DEFAULT));
		break;
	case FATTR4_MODE:
		xdr_enc_u32(out, st->st_mode & NFS4_MODE_MASK);
		break;
	case FATTR4_NUMLINKS:
		xdr_enc_u32(out, st->st_nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st->st_nlink);
		break;
	case FATTR4_OWNER:
		enc_owner(out, st->st_uid);
		break;
	case FATTR4_OWNER_GROUP:
		enc_owner(out, st->st_gid);
		break;
	case FATTR4_RAWDEV:
		xdr_enc_u32(out, major(st->st_rdev));
		xdr_enc_u32(out, minor(st->st_rdev));
		break;
	case FATTR4_SPACE_AVAIL:
		xdr_enc_u64(out, (uint64_t)a->sf.f_bavail * fs_unit(&a->sf));
		break;
	case FATTR4_SPACE_FREE:
		xdr_enc_u64(out, (uint64_t)a->sf.f_bfree * fs_unit(&a->sf));
		break;
	case FATTR4_SPACE_TOTAL:
		xdr_enc_u64(out, (uint64_t)a->sf.f_blocks * fs_unit(&a->sf));
		break;
	case FATTR4_SPACE_USED:
		xdr_enc_u64(out, (uint64_t)st->st_blocks * 512);
		break;
	case FATTR4_TIME_ACCESS:
		enc_time(out, &st->st_atim);
		break;
	case FATTR4_TIME_DELTA:
		ts.tv_sec = 0;
		ts.tv_nsec = 1; /* ext4 and XFS keep nanoseconds */
		enc_time(out, &ts);
		break;
	case FATTR4_TIME_METADATA:
		enc_time(out, &st->st_ctim);
		break;
	case FATTR4_TIME_MODIFY:
		enc_time(out, &st->st_mtim);
		break;
	case FATTR4_MOUNTED_ON_FILEID:
		xdr_enc_u64(out, mounted_on_fileid(a->c, a->o));
		break;
	case FATTR4_FS_LAYOUT_TYPES:
		xdr_enc_u32(out, 0); /* no pNFS layout */
		break;
	case FATTR4_SUPPATTR_EXCLCREAT:
		nfs4_attr_exclcreat(&bm);
		nfs4_enc_bitmap(out, &bm);
		break;
	case FATTR4_CLONE_BLKSIZE:
		xdr_enc_u32(out, clone_blksize_of(a->o));
		break;
	case FATTR4_XATTR_SUPPORT:
		xdr_enc_bool(out, !gw_obj_is_pseudo(a->o)); /* user xattrs, through lacunafs */
		break;
	}
}

uint32_t nfs4_enc_fattr(struct nfs4_compound *c, struct xdr_out *out, struct gw_obj *o,
			const struct nfs4_bitmap *req)
{
	struct attr_src a;
	struct nfs4_bitmap bm;
	struct xdr_mark m;
	unsigned int i;
	int err;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.o = o;
	attr_supported_obj(c, o, &bm);
	bm_and(&bm, req);
	bm.w[1] &= ~WRITEONLY_WORD1;

	err = gw_obj_stat(c->srv, o, &a.st);
	if (err)
		return nfs4_errno(err);
	if ((bm.w[0] & W0(FATTR4_TYPE)) && !ftype_of(a.st.st_mode))
		return NFS4ERR_SERVERFAULT;
	if ((bm.w[0] & STATFS_WORD0) || (bm.w[1] & STATFS_WORD1)) {
		err = gw_obj_statfs(o, &a.sf);
		if (err)
			return nfs4_errno(err);
	}
	if (bm.w[0] & FSLIMIT_WORD0)
		fs_limits(&a);

	nfs4_enc_bitmap(out, &bm);
	if (xdr_out_reserve(out, &m))
		return NFS4_OK; /* out->err says it */
	for (i = 0; i < 32 * NFS4_BITMAP_MAX; i++)
		if (nfs4_bm_isset(&bm, i))
			enc_value(out, &a, i);
	xdr_out_fill(&m, (uint32_t)xdr_out_since(out, &m));
	return NFS4_OK;
}

bool nfs4_enc_fattr_error(struct xdr_out *out, const struct nfs4_bitmap *req, uint32_t status)
{
	struct nfs4_bitmap bm;

	if (!nfs4_bm_isset(req, FATTR4_RDATTR_ERROR))
		return false;
	memset(&bm, 0, sizeof(bm));
	nfs4_bm_set(&bm, FATTR4_RDATTR_ERROR);
	nfs4_enc_bitmap(out, &bm);
	xdr_enc_u32(out, 4);
	xdr_enc_u32(out, status);
	return true;
}

/* ---------------------------------------------------------------- decoding */

static int dec_settime(struct xdr_in *x, uint32_t *how, struct timespec *ts, uint32_t *status)
{
	int64_t sec;
	uint32_t nsec;

	if (xdr_dec_enum(x, how, SET_TO_CLIENT_TIME4))
		return -EBADMSG;
	if (*how == SET_TO_SERVER_TIME4) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_NOW;
		return 0;
	}
	if (xdr_dec_i64(x, &sec) || xdr_dec_u32(x, &nsec))
		return -EBADMSG;
	if (nsec > NSEC_MAX)
		*status = NFS4ERR_INVAL;
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = nsec;
	return 0;
}

static int dec_owner(struct xdr_in *x, uint32_t *id, uint32_t *status)
{
	const uint8_t *p;
	uint32_t len;

	if (xdr_dec_opaque(x, &p, &len, NFS4_ATTRLIST_MAX))
		return -EBADMSG;
	if (len == 0)
		*status = NFS4ERR_INVAL; /* no name at all: not a bad name (as nfsd) */
	else if (nfs4_owner_parse(p, len, id))
		*status = NFS4ERR_BADOWNER;
	return 0;
}

/* The values of the attributes in sa->mask, in order, from @v. */
static uint32_t dec_values(struct xdr_in *v, struct nfs4_sattr *sa)
{
	uint32_t st = NFS4_OK;
	unsigned int i;
	int err = 0;

	for (i = 0; i < 32 * NFS4_BITMAP_MAX && !err && st == NFS4_OK; i++) {
		if (!nfs4_bm_isset(&sa->mask, i))
			continue;
		switch (i) {
		case FATTR4_SIZE:
			err = xdr_dec_u64(v, &sa->size);
			break;
		case FATTR4_MODE:
			err = xdr_dec_u32(v, &sa->mode);
			sa->mode &= NFS4_MODE_MASK;
			break;
		case FATTR4_OWNER:
			err = dec_owner(v, &sa->uid, &st);
			break;
		case FATTR4_OWNER_GROUP:
			err = dec_owner(v, &sa->gid, &st);
			break;
		case FATTR4_TIME_ACCESS_SET:
			err = dec_settime(v, &sa->atime_how, &sa->atime, &st);
			break;
		case FATTR4_TIME_MODIFY_SET:
			err = dec_settime(v, &sa->mtime_how, &sa->mtime, &st);
			break;
		default: /* not writable: refused before */
			return NFS4ERR_SERVERFAULT;
		}
	}
	if (err)
		return NFS4ERR_BADXDR;
	if (st == NFS4_OK && xdr_in_left(v))
		return NFS4ERR_BADXDR; /* bytes past the last value */
	return st;
}

uint32_t nfs4_dec_sattr(struct xdr_in *x, struct nfs4_sattr *sa)
{
	struct nfs4_bitmap supp, wr;
	struct xdr_in v;
	const uint8_t *p;
	uint32_t len;
	bool beyond;

	memset(sa, 0, sizeof(*sa));
	if (nfs4_dec_attrmask(x, &sa->mask, &beyond) ||
	    xdr_dec_opaque(x, &p, &len, NFS4_ATTRLIST_MAX))
		return NFS4ERR_BADXDR;
	xdr_in_init(&v, p, len);

	nfs4_attr_supported(NFS4_MINOR_MAX, &supp);
	nfs4_attr_writable(&wr);
	if (beyond || bm_outside(&sa->mask, &supp))
		return NFS4ERR_ATTRNOTSUPP;
	if (bm_outside(&sa->mask, &wr))
		return NFS4ERR_INVAL;
	return dec_values(&v, sa);
}

/* ---------------------------------------------------------------- applying */

uint32_t nfs4_apply_sattr(struct nfs4_compound *c, struct gw_obj *o, const struct nfs4_sattr *sa,
			  int fd, struct nfs4_bitmap *set)
{
	const struct nfs4_bitmap *m = &sa->mask;
	bool atime = nfs4_bm_isset(m, FATTR4_TIME_ACCESS_SET);
	bool mtime = nfs4_bm_isset(m, FATTR4_TIME_MODIFY_SET);
	bool owner = nfs4_bm_isset(m, FATTR4_OWNER);
	bool group = nfs4_bm_isset(m, FATTR4_OWNER_GROUP);
	char path[32];

	(void)c;
	memset(set, 0, sizeof(*set));
	if (bm_empty(m))
		return NFS4_OK;
	if (gw_obj_is_pseudo(o))
		return NFS4ERR_ROFS;
	gw_obj_procpath(o, path);

	if (nfs4_bm_isset(m, FATTR4_SIZE)) {
		int r;

		if (o->type == S_IFDIR)
			return NFS4ERR_ISDIR;
		if (o->type != S_IFREG)
			return NFS4ERR_INVAL;
		if (sa->size > INT64_MAX)
			return NFS4ERR_FBIG;
		if (fd >= 0)
			r = ftruncate(fd, (off_t)sa->size);
		else
			r = truncate(path, (off_t)sa->size);
		if (r < 0)
			return nfs4_errno(-errno);
		nfs4_bm_set(set, FATTR4_SIZE);
	}
	if (owner || group) {
		uid_t uid = owner ? (uid_t)sa->uid : (uid_t)-1;
		gid_t gid = group ? (gid_t)sa->gid : (gid_t)-1;

		if (fchownat(o->fd, "", uid, gid, AT_EMPTY_PATH) < 0)
			return nfs4_errno(-errno);
		if (owner)
			nfs4_bm_set(set, FATTR4_OWNER);
		if (group)
			nfs4_bm_set(set, FATTR4_OWNER_GROUP);
	}
	if (nfs4_bm_isset(m, FATTR4_MODE)) {
		/* a symlink has no mode of its own to set (nfsd ignores it too) */
		if (o->type != S_IFLNK && chmod(path, (mode_t)sa->mode) < 0)
			return nfs4_errno(-errno);
		nfs4_bm_set(set, FATTR4_MODE);
	}
	if (atime || mtime) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
		if (atime)
			ts[0] = sa->atime_how == SET_TO_SERVER_TIME4
					? (struct timespec){ .tv_nsec = UTIME_NOW }
					: sa->atime;
		if (mtime)
			ts[1] = sa->mtime_how == SET_TO_SERVER_TIME4
					? (struct timespec){ .tv_nsec = UTIME_NOW }
					: sa->mtime;
		/* the /proc link of an O_PATH fd reaches a symlink itself, not its target */
		if (utimensat(AT_FDCWD, path, ts, 0) < 0)
			return nfs4_errno(-errno);
		if (atime)
			nfs4_bm_set(set, FATTR4_TIME_ACCESS_SET);
		if (mtime)
			nfs4_bm_set(set, FATTR4_TIME_MODIFY_SET);
	}
	return NFS4_OK;
}

/* ---------------------------------------------------------------- VERIFY, NVERIFY */

uint32_t nfs4_attr_compare(struct nfs4_compound *c, struct gw_obj *o, struct xdr_in *x, bool *same)
{
	uint8_t mine[NFS4_FATTR_ENC_MAX];
	struct nfs4_bitmap bm, supp;
	const uint8_t *vals;
	uint32_t vlen, st, nw;
	struct xdr_pos pos;
	size_t len, off;
	bool beyond;

	*same = false;
	if (nfs4_dec_attrmask(x, &bm, &beyond) ||
	    xdr_dec_opaque(x, &vals, &vlen, NFS4_ATTRLIST_MAX))
		return NFS4ERR_BADXDR;
	attr_supported_obj(c, o, &supp);
	if (beyond || bm_outside(&bm, &supp))
		return NFS4ERR_ATTRNOTSUPP;
	if (nfs4_bm_isset(&bm, FATTR4_RDATTR_ERROR) || nfs4_attr_check_get(&bm) != NFS4_OK)
		return NFS4ERR_INVAL;

	/* our encoding of the same attributes, past the reply's end, then rolled back */
	xdr_out_getpos(c->out, &pos);
	st = nfs4_enc_fattr(c, c->out, o, &bm);
	len = xdr_out_len(c->out) - pos.len;
	if (st == NFS4_OK && !c->out->err && len <= sizeof(mine))
		xdr_out_copy(c->out, pos.len, mine, len);
	else if (st == NFS4_OK)
		st = nfs4_enc_status(c, c->out->err ? c->out->err : -EMSGSIZE);
	xdr_out_truncate(c->out, &pos);
	if (st != NFS4_OK)
		return st;

	/* skip our bitmap (the client's, as every bit is supported), compare the values */
	nw = xdr_get_u32(mine);
	off = 4 + 4 * (size_t)nw;
	if (off + 4 > len)
		return NFS4ERR_SERVERFAULT;
	*same = xdr_get_u32(mine + off) == vlen && len - off - 4 >= XDR_ALIGN(vlen) &&
		!memcmp(mine + off + 4, vals, vlen);
	return NFS4_OK;
}
