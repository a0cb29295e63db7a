// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CLONE (RFC 7862 §15.13): a range of one file made to share the blocks
 * of a range of another (or of itself) on the server, no data copied.
 *
 * Operation
 * ---------
 * SAVED_FH is the source, CURRENT_FH the destination, both regular files
 * of one export (else XDEV). The stateids are checked as COPY checks
 * them (read access to the source, write access to the destination),
 * through the same nfs4_state_io_fd(), and the fds it gives are files of
 * the lacunafs mount opened with the caller's identity. Then the ranges,
 * as §15.13.3 has them: the source range inside the source (INVAL), a
 * count of 0 meaning "to the end of the source", both offsets and the
 * count multiples of clone_blksize except for a count that reaches the
 * source's end (INVAL), no overlap of the two ranges in one file (INVAL),
 * the destination within 2^63 (FBIG).
 *
 * The clone itself is lacunafs's LACUNA_IOC_CLONE_RANGE on the
 * destination, naming the source by the backing handle its NFS handle
 * carries: lacunafs opens the source again with the caller's identity
 * (a second permission check, by the kernel), holds both inodes' range
 * locks and reflinks the backing ranges with FICLONERANGE. So the clone
 * is atomic as the RFC asks: a READ_PLUS or READ of the destination sees
 * none of it or all of it, and no WRITE lands in the source range
 * midway. The destination is then fsynced: CLONE has no stable_how and
 * no COMMIT follows it, so the new extent map must be on disk before
 * the reply, as nfsd does for its (default) sync exports.
 *
 * An export whose backing filesystem cannot reflink (ext4, XFS without
 * reflink=1, a plain directory) answers NOTSUPP, and does not show
 * clone_blksize among its supported attributes (nfs4_attr.c): its
 * clone_blksize is 0 (gw_export.c asks lacunafs once, at load).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lacuna/ioctl.h"
#include "nfs4_ops.h"
#include "nfs4_state.h"

struct clone_args {
	struct nfs4_stateid src_sid, dst_sid;
	uint64_t src_off, dst_off, count;
};

_Static_assert(sizeof(struct clone_args) <= NFS4_ARGS_MAX, "CLONE args");

int nfs4_dec_clone(struct xdr_in *x, void *args)
{
	struct clone_args *a = args;

	if (nfs4_dec_stateid(x, &a->src_sid) || nfs4_dec_stateid(x, &a->dst_sid) ||
	    xdr_dec_u64(x, &a->src_off) || xdr_dec_u64(x, &a->dst_off) || xdr_dec_u64(x, &a->count))
		return -EBADMSG;
	return 0;
}

/* The checks of §15.13.3 on the two files and ranges. */
static uint32_t clone_check(const struct clone_args *a, int sfd, int dfd, uint64_t blk)
{
	struct stat ss, ds;
	uint64_t size, len;

	if (fstat(sfd, &ss) < 0 || fstat(dfd, &ds) < 0)
		return nfs4_errno(-errno);
	if (ss.st_dev != ds.st_dev)
		return NFS4ERR_XDEV; /* two lacunafs mounts */
	size = (uint64_t)ss.st_size;
	if (a->src_off > size || a->count > size - a->src_off)
		return NFS4ERR_INVAL;
	len = a->count ? a->count : size - a->src_off;
	if (a->dst_off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - a->dst_off)
		return NFS4ERR_FBIG;
	if (a->src_off % blk || a->dst_off % blk || (len % blk && a->src_off + len != size))
		return NFS4ERR_INVAL;
	if (ss.st_ino == ds.st_ino && len && a->src_off < a->dst_off + len &&
	    a->dst_off < a->src_off + len)
		return NFS4ERR_INVAL; /* one file: the ranges overlap */
	return NFS4_OK;
}

/* LACUNA_IOC_CLONE_RANGE on @dfd from the file SAVED_FH names: 0 or -errno */
static int clone_ioctl(struct nfs4_compound *c, const struct clone_args *a, int dfd,
		       uint64_t *cloned)
{
	const struct gw_fh *fh = &c->sfh->fh;
	size_t hdr = gw_fh_hdr(fh->data);
	struct lacuna_clone cl;

	if (fh->len <= hdr || fh->len - hdr > LACUNA_FH_NAME_BYTES)
		return -EXDEV; /* a backing handle lacunafs cannot be given */
	memset(&cl, 0, sizeof(cl));
	cl.size = sizeof(cl);
	cl.version = LACUNA_ABI_VERSION;
	cl.handle_type = xdr_get_u32(fh->data + 8);
	cl.handle_bytes = (uint32_t)(fh->len - hdr);
	memcpy(cl.handle, fh->data + hdr, cl.handle_bytes);
	cl.src_offset = a->src_off;
	cl.dst_offset = a->dst_off;
	cl.length = a->count;
	if (ioctl(dfd, LACUNA_IOC_CLONE_RANGE, &cl) < 0)
		return -errno;
	*cloned = cl.cloned;
	return fsync(dfd) < 0 ? -errno : 0;
}

uint32_t nfs4_run_clone(struct nfs4_compound *c, void *args)
{
	struct clone_args *a = args;
	struct gw_srv *s = c->srv;
	bool sowned = false, downed = false;
	int sfd = -1, dfd = -1, err;
	uint64_t blk, cloned = 0;
	uint32_t status;

	if (!c->sfh)
		return NFS4ERR_NOFILEHANDLE;
	status = nfs4_regular_file(c, c->sfh);
	if (status == NFS4_OK)
		status = nfs4_regular_file(c, c->cfh);
	if (status != NFS4_OK)
		return status;
	if (c->sfh->xp != c->cfh->xp)
		return NFS4ERR_XDEV;
	blk = __atomic_load_n(&c->cfh->xp->clone_blksize, __ATOMIC_ACQUIRE);
	if (!blk) {
		gw_stat_add(&s->stats.clone_refused, 1);
		return NFS4ERR_NOTSUPP;
	}
	status = nfs4_io_fd(c, &a->src_sid, c->sfh, false, &sfd, &sowned);
	if (status != NFS4_OK)
		return status;
	status = nfs4_io_fd(c, &a->dst_sid, c->cfh, true, &dfd, &downed);
	if (status != NFS4_OK)
		goto out;
	status = clone_check(a, sfd, dfd, blk);
	if (status != NFS4_OK)
		goto out;
	err = clone_ioctl(c, a, dfd, &cloned);
	if (err == -ENOTTY || err == -EOPNOTSUPP) {
		gw_stat_add(&s->stats.clone_refused, 1);
		status = NFS4ERR_NOTSUPP;
		goto out;
	}
	if (err) {
		status = err == -ENOMEM ? NFS4ERR_DELAY : nfs4_errno(err);
		goto out;
	}
	gw_stat_add(&s->stats.clone_ops, 1);
	gw_stat_add(&s->stats.clone_bytes, (long long)cloned);
out:
	nfs4_state_io_done(s, dfd, downed);
	nfs4_state_io_done(s, sfd, sowned);
	return status;
}
